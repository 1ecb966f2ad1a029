// Globs in globset's dialect (walk.hpp). They compile to RE2 (linear time, whatever the pattern)
// unless they are a plain name or `*.ext`, which are compared directly: those are most rules and
// cost a walk the most.
#include <re2/re2.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>

#include "mf/text/utf8.hpp"
#include "walk.hpp"

namespace mf::tools::walk {
namespace {

// --- Glob parsing (globset's grammar and error texts) -------------------------------------------

struct Token {
  enum class Kind : std::uint8_t {
    Literal,          // `text`: one character's bytes
    Any,              // ?
    Star,             // *
    RecursivePrefix,  // **/ at the start
    RecursiveSuffix,  // /** at the end
    RecursiveMiddle,  // /**/
    Class,            // [...]
    Alternates,       // {a,b}
  };
  Token(Kind k = Kind::Literal) : kind(k) {}  // NOLINT(google-explicit-constructor): push({kind})

  Kind kind;
  std::string text;
  bool negated = false;
  std::vector<std::pair<char32_t, char32_t>> ranges;
  std::vector<std::vector<Token>> branches;
};

// Decodes one UTF-8 character at `at`; a byte that starts no valid sequence decodes as itself, so
// a name that is not UTF-8 still compiles.
char32_t decode(std::string_view s, std::size_t at, std::size_t* width) {
  const auto b0 = static_cast<unsigned char>(s[at]);
  std::size_t n = b0 < 0x80           ? 1
                  : (b0 >> 5) == 0x6  ? 2
                  : (b0 >> 4) == 0xE  ? 3
                  : (b0 >> 3) == 0x1E ? 4
                                      : 0;
  if (n == 0 || at + n > s.size()) {
    *width = 1;
    return b0;
  }
  char32_t c = n == 1 ? b0 : n == 2 ? (b0 & 0x1F) : n == 3 ? (b0 & 0x0F) : (b0 & 0x07);
  for (std::size_t i = 1; i < n; ++i) {
    const auto b = static_cast<unsigned char>(s[at + i]);
    if ((b & 0xC0) != 0x80) {
      *width = 1;
      return b0;
    }
    c = (c << 6) | (b & 0x3F);
  }
  *width = n;
  return c;
}

std::string encode(char32_t c) {
  std::string out;
  text::append_utf8(c, out);
  return out;
}

class GlobParser {
 public:
  explicit GlobParser(std::string_view p) : p_(p) {}

  bool parse(std::vector<Token>* out, std::string* error) {
    frames_.emplace_back();
    while (at_ < p_.size()) {
      const char32_t c = bump();
      bool ok = true;
      switch (c) {
        case '?':
          push({Token::Kind::Any});
          break;
        case '*':
          star();
          break;
        case '[':
          ok = klass(error);
          break;
        case '{':
          frames_.emplace_back();
          break;
        case '}':
          if (frames_.size() > 1) {
            close_alternates();
          } else {
            literal();
          }
          break;
        case ',':
          if (frames_.size() > 1) {
            frames_.back().branches.push_back(std::move(frames_.back().tokens));
            frames_.back().tokens.clear();
          } else {
            literal();
          }
          break;
        case '\\':
          if (at_ >= p_.size()) {
            *error = "dangling '\\'";
            return false;
          }
          bump();
          literal();
          break;
        default:
          literal();
      }
      if (!ok) return false;
    }
    if (frames_.size() > 1) {
      *error = "unclosed alternate group; missing '}' (maybe escape '{' with '[{]'?)";
      return false;
    }
    *out = std::move(frames_.back().tokens);
    return true;
  }

 private:
  struct Frame {
    std::vector<Token> tokens;
    std::vector<std::vector<Token>> branches;
  };

  // As globset's bump: prev_ is always the character before the one just taken.
  char32_t bump() {
    std::size_t w = 1;
    const char32_t c = decode(p_, at_, &w);
    raw_ = p_.substr(at_, w);
    at_ += w;
    prev_ = cur_;
    cur_ = c;
    return c;
  }
  std::optional<char> peek() const {
    if (at_ >= p_.size()) return std::nullopt;
    return p_[at_];
  }
  void push(Token t) { frames_.back().tokens.push_back(std::move(t)); }
  void literal() {
    Token t;
    t.text = std::string(raw_);
    push(std::move(t));
  }
  bool in_alternates() const { return frames_.size() > 1; }

  void close_alternates() {
    Frame done = std::move(frames_.back());
    frames_.pop_back();
    done.branches.push_back(std::move(done.tokens));
    Token t{Token::Kind::Alternates};
    t.branches = std::move(done.branches);
    push(std::move(t));
  }

  // globset's parse_star: `**` is recursive only as a whole path component.
  void star() {
    const std::optional<char32_t> prev = prev_;
    if (peek() != '*') {
      push({Token::Kind::Star});
      return;
    }
    bump();
    auto two_stars = [&] {
      push({Token::Kind::Star});
      push({Token::Kind::Star});
    };
    if (frames_.back().tokens.empty()) {
      if (peek() && *peek() != '/') {
        two_stars();
      } else {
        push({Token::Kind::RecursivePrefix});
        if (peek()) bump();  // the '/'
      }
      return;
    }
    if (prev != '/' && (!in_alternates() || (prev != ',' && prev != '{'))) {
      two_stars();
      return;
    }
    bool suffix = false;
    if (!peek()) {
      suffix = true;
    } else if (in_alternates() && (*peek() == ',' || *peek() == '}')) {
      suffix = true;
    } else if (*peek() == '/') {
      bump();
    } else {
      two_stars();
      return;
    }
    Token last = std::move(frames_.back().tokens.back());
    frames_.back().tokens.pop_back();
    if (last.kind == Token::Kind::RecursivePrefix || last.kind == Token::Kind::RecursiveSuffix) {
      push(std::move(last));
    } else {
      push({suffix ? Token::Kind::RecursiveSuffix : Token::Kind::RecursiveMiddle});
    }
  }

  // globset's parse_class: `]` first is literal, `-` first or last is literal, backslash is not
  // special inside a class.
  bool klass(std::string* error) {
    Token t{Token::Kind::Class};
    if (peek() == '!' || peek() == '^') {
      bump();
      t.negated = true;
    }
    bool first = true;
    bool in_range = false;
    for (;;) {
      if (at_ >= p_.size()) {
        *error = "unclosed character class; missing ']'";
        return false;
      }
      const char32_t c = bump();
      if (c == ']' && !first) break;
      if (c == '-' && !first && !in_range) {
        in_range = true;
        first = false;
        continue;
      }
      if (in_range) {
        auto& r = t.ranges.back();
        r.second = c;
        if (r.second < r.first) {
          *error = "invalid range; '" + encode(r.first) + "' > '" + encode(r.second) + "'";
          return false;
        }
        in_range = false;
      } else {
        t.ranges.emplace_back(c, c);
      }
      first = false;
    }
    if (in_range) t.ranges.emplace_back('-', '-');
    push(std::move(t));
    return true;
  }

  std::string_view p_;
  std::size_t at_ = 0;
  std::string_view raw_;
  std::optional<char32_t> prev_;
  std::optional<char32_t> cur_;
  std::vector<Frame> frames_;
};

void append_code_point(std::string& re, char32_t c) {
  char hex[16];
  std::snprintf(hex, sizeof hex, "\\x{%X}", static_cast<unsigned>(c));
  re += hex;
}

void append_char_escaped(std::string& re, std::string_view bytes) {
  const auto c = static_cast<unsigned char>(bytes[0]);
  if (bytes.size() == 1 && c >= 0x80) {
    // A stray byte: RE2 reads patterns as UTF-8, so it stands for the code point of that value.
    append_code_point(re, c);
    return;
  }
  if (bytes.size() == 1 && !std::isalnum(c) && c != '_') re.push_back('\\');
  re.append(bytes);
}

void to_regex(const std::vector<Token>& tokens, std::string& re) {
  for (const auto& t : tokens) {
    switch (t.kind) {
      case Token::Kind::Literal:
        append_char_escaped(re, t.text);
        break;
      case Token::Kind::Any:
        re += "[^/]";
        break;
      case Token::Kind::Star:
        re += "[^/]*";
        break;
      case Token::Kind::RecursivePrefix:
        re += "(?:/?|.*/)";
        break;
      case Token::Kind::RecursiveSuffix:
        re += "/.*";
        break;
      case Token::Kind::RecursiveMiddle:
        re += "(?:/|/.*/)";
        break;
      case Token::Kind::Class:
        re += t.negated ? "[^" : "[";
        for (const auto& [lo, hi] : t.ranges) {
          append_code_point(re, lo);
          if (hi != lo) {
            re.push_back('-');
            append_code_point(re, hi);
          }
        }
        re.push_back(']');
        break;
      case Token::Kind::Alternates:
        re += "(?:";
        for (std::size_t i = 0; i < t.branches.size(); ++i) {
          if (i > 0) re.push_back('|');
          to_regex(t.branches[i], re);
        }
        re.push_back(')');
        break;
    }
  }
}

// The concatenated text of tokens[from..] when they are all literals.
std::optional<std::string> literal_tail(const std::vector<Token>& tokens, std::size_t from) {
  std::string s;
  for (std::size_t i = from; i < tokens.size(); ++i) {
    if (tokens[i].kind != Token::Kind::Literal) return std::nullopt;
    s += tokens[i].text;
  }
  return s;
}

bool ascii(std::string_view s) {
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return static_cast<unsigned char>(c) < 0x80; });
}

bool equal(std::string_view a, std::string_view b, bool fold) {
  if (a.size() != b.size()) return false;
  if (!fold) return a == b;
  for (std::size_t i = 0; i < a.size(); ++i) {
    auto x = static_cast<unsigned char>(a[i]);
    auto y = static_cast<unsigned char>(b[i]);
    if (x >= 'A' && x <= 'Z') x = static_cast<unsigned char>(x + 32);
    if (y >= 'A' && y <= 'Z') y = static_cast<unsigned char>(y + 32);
    if (x != y) return false;
  }
  return true;
}

}  // namespace

std::optional<Glob> Glob::compile(std::string_view pattern, bool case_insensitive,
                                  std::string* error) {
  std::vector<Token> tokens;
  std::string why;
  if (!GlobParser(pattern).parse(&tokens, &why)) {
    if (error != nullptr) *error = why;
    return std::nullopt;
  }
  Glob g;
  auto fast = [&](Kind kind, std::string text) {
    if (case_insensitive && !ascii(text)) return false;
    g.kind_ = kind;
    g.literal_ = std::move(text);
    g.fold_ = case_insensitive;
    return true;
  };
  using K = Token::Kind;
  const bool prefix = !tokens.empty() && tokens[0].kind == K::RecursivePrefix;
  if (prefix && tokens.size() == 1) {
    g.kind_ = Kind::All;
    return g;
  }
  if (auto all = literal_tail(tokens, 0); all && fast(Kind::Exact, *all)) return g;
  if (!tokens.empty() && tokens[0].kind == K::Star) {
    if (auto tail = literal_tail(tokens, 1);
        tail && tail->find('/') == std::string::npos && fast(Kind::Suffix, *tail)) {
      return g;
    }
  }
  if (prefix) {
    if (auto tail = literal_tail(tokens, 1);
        tail && tail->find('/') == std::string::npos && fast(Kind::BaseExact, *tail)) {
      return g;
    }
    if (tokens.size() > 1 && tokens[1].kind == K::Star) {
      if (auto tail = literal_tail(tokens, 2);
          tail && tail->find('/') == std::string::npos && fast(Kind::BaseSuffix, *tail)) {
        return g;
      }
    }
  }
  std::string re = "(?s)";
  to_regex(tokens, re);
  RE2::Options options;
  options.set_log_errors(false);
  options.set_case_sensitive(!case_insensitive);
  auto compiled = std::make_shared<RE2>(re, options);
  if (!compiled->ok()) {
    if (error != nullptr) *error = compiled->error();
    return std::nullopt;
  }
  g.kind_ = Kind::Regex;
  g.re_ = std::move(compiled);
  return g;
}

bool Glob::matches(std::string_view s) const {
  switch (kind_) {
    case Kind::All:
      return true;
    case Kind::Exact:
      return equal(s, literal_, fold_);
    case Kind::Suffix:
      return s.size() >= literal_.size() &&
             equal(s.substr(s.size() - literal_.size()), literal_, fold_) &&
             s.substr(0, s.size() - literal_.size()).find('/') == std::string_view::npos;
    case Kind::BaseExact:
      return equal(basename_of(s), literal_, fold_);
    case Kind::BaseSuffix: {
      const std::string_view base = basename_of(s);
      return base.size() >= literal_.size() &&
             equal(base.substr(base.size() - literal_.size()), literal_, fold_);
    }
    case Kind::Regex:
      return RE2::FullMatch(re2::StringPiece(s.data(), s.size()), *re_);
  }
  return false;
}

}  // namespace mf::tools::walk
