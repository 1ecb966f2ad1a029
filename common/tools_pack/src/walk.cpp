// Globs in globset's dialect, .gitignore rules as the ignore crate reads them, and the walk that
// applies them. Globs compile to RE2 (linear time, whatever the pattern) unless they are a plain
// name or `*.ext`, which are compared directly: those are most rules and cost a walk the most.
#include "walk.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <re2/re2.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>

#include "mf/tools/pack.hpp"

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
  if (c < 0x80) {
    out.push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (c >> 6)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (c >> 12)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (c >> 18)));
    out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
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

std::string_view basename_of(std::string_view path) {
  const auto slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// --- Walking ------------------------------------------------------------------------------------

struct Item {
  std::string name;
  Type type;
};

// Byte order of the full paths: a directory's name sorts as if followed by '/'.
bool item_less(const Item& a, const Item& b) {
  const std::size_t n = std::min(a.name.size(), b.name.size());
  const int c = std::memcmp(a.name.data(), b.name.data(), n);
  if (c != 0) return c < 0;
  auto next = [n](const Item& i) -> int {
    if (i.name.size() > n) return static_cast<unsigned char>(i.name[n]);
    return i.type == Type::Dir ? '/' : -1;
  };
  return next(a) < next(b);
}

// One directory's ignore files, by the ignore crate's precedence: the tool's own file (.rgignore,
// .fdignore) over .ignore over .gitignore. Only .gitignore needs a repository.
struct Level {
  IgnoreFile custom;
  IgnoreFile plain;
  IgnoreFile git;
  bool has_git = false;
  std::size_t prefix_len = 0;  // bytes of a root-relative path naming this directory and its '/'

  bool any() const { return !custom.empty() || !plain.empty() || !git.empty(); }
};

// The levels that speak for entries of one directory, innermost first.
struct Active {
  std::size_t level;
  bool git;  // its .gitignore counts (a repository is in sight, and no nearer root is between)
};

constexpr std::size_t kMaxIgnoreFileBytes = 4u << 20;

std::string read_small(int dirfd, const char* name) {
  std::string out;
  const int fd = ::openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return out;
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    out.resize(std::min<std::size_t>(static_cast<std::size_t>(st.st_size), kMaxIgnoreFileBytes));
    std::size_t got = 0;
    while (got < out.size()) {
      const ssize_t n = ::read(fd, out.data() + got, out.size() - got);
      if (n <= 0) break;
      got += static_cast<std::size_t>(n);
    }
    out.resize(got);
  }
  ::close(fd);
  return out;
}

bool has_git_entry(int dirfd) {
  struct stat st {};
  return ::fstatat(dirfd, ".git", &st, AT_SYMLINK_NOFOLLOW) == 0 &&
         (S_ISDIR(st.st_mode) || S_ISREG(st.st_mode));
}

Type type_of(int dirfd, const char* name, unsigned char d_type) {
  switch (d_type) {
    case DT_REG:
      return Type::File;
    case DT_DIR:
      return Type::Dir;
    case DT_LNK:
      return Type::Symlink;
    case DT_UNKNOWN:
      break;
    default:
      return Type::Other;
  }
  struct stat st {};
  if (::fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) return Type::Other;
  if (S_ISREG(st.st_mode)) return Type::File;
  if (S_ISDIR(st.st_mode)) return Type::Dir;
  if (S_ISLNK(st.st_mode)) return Type::Symlink;
  return Type::Other;
}

class Walker {
 public:
  Walker(const Options& options, const std::function<Action(const Entry&)>& visit)
      : options_(options), visit_(visit) {}

  Outcome run(const Workspace& ws, std::string_view start, int start_fd) {
    // The start's ancestors inside the workspace contribute their .gitignore files (rg and fd
    // read parents too), each matched relative to its own directory.
    std::size_t end = 0;  // the ancestor at hand is start[0, end): "", then "a", "a/b", ...
    while (!start.empty()) {
      const std::string prefix(start.substr(0, end));
      const int fd = ws.open_at(prefix, O_RDONLY | O_DIRECTORY);
      if (fd >= 0) {
        Level level;
        level.has_git = has_git_entry(fd);
        level.git = IgnoreFile::parse(read_small(fd, ".gitignore"));
        level.plain = IgnoreFile::parse(read_small(fd, ".ignore"));
        if (!options_.custom_ignore.empty()) {
          level.custom = IgnoreFile::parse(read_small(fd, options_.custom_ignore.c_str()));
        }
        level.prefix_len = prefix.empty() ? 0 : prefix.size() + 1;
        levels_.push_back(std::move(level));
        ::close(fd);
      }
      const auto slash = start.find('/', end == 0 ? 0 : end + 1);
      if (slash == std::string_view::npos) break;
      end = slash;
    }
    path_ = std::string(start);
    start_len_ = start.empty() ? 0 : start.size() + 1;
    directory(start_fd, 1);
    return outcome_;
  }

 private:
  bool stopping() const { return outcome_.stopped || outcome_.entry_limit; }

  bool list(int fd, std::vector<Item>& items) {
    const int dup = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (dup < 0) return false;
    DIR* dir = ::fdopendir(dup);
    if (dir == nullptr) {
      ::close(dup);
      return false;
    }
    while (const dirent* d = ::readdir(dir)) {
      const char* name = d->d_name;
      if (name[0] == '.' && (name[1] == 0 || (name[1] == '.' && name[2] == 0))) continue;
      if (++entries_ > options_.max_entries) {
        outcome_.entry_limit = true;
        break;
      }
      items.push_back({name, type_of(fd, name, d->d_type)});
    }
    ::closedir(dir);
    std::sort(items.begin(), items.end(), item_less);
    return true;
  }

  Verdict overridden(std::string_view rel, bool is_dir) const {
    const IgnoreFile* o = options_.overrides;
    if (o == nullptr || o->empty()) return Verdict::None;
    // rg's --glob reads like a .gitignore turned inside out: a glob shows, a `!glob` hides.
    switch (o->match(rel, is_dir)) {
      case Verdict::Ignore:
        return Verdict::Whitelist;
      case Verdict::Whitelist:
        return Verdict::Ignore;
      case Verdict::None:
        break;
    }
    const bool any_positive = o->whitelist_count() < o->size();
    return any_positive && !is_dir ? Verdict::Ignore : Verdict::None;
  }

  bool ignored(const std::vector<Active>& active, std::string_view rel, bool is_dir) const {
    switch (overridden(rel, is_dir)) {
      case Verdict::Ignore:
        return true;
      case Verdict::Whitelist:
        return false;
      case Verdict::None:
        break;
    }
    // Per kind of file the innermost one with an opinion decides; then the kinds in precedence.
    Verdict custom = Verdict::None;
    Verdict plain = Verdict::None;
    Verdict git = Verdict::None;
    for (const Active& a : active) {
      const Level& level = levels_[a.level];
      const std::string_view path = std::string_view(path_).substr(level.prefix_len);
      if (custom == Verdict::None && !level.custom.empty())
        custom = level.custom.match(path, is_dir);
      if (plain == Verdict::None && !level.plain.empty()) plain = level.plain.match(path, is_dir);
      if (a.git && git == Verdict::None && !level.git.empty()) git = level.git.match(path, is_dir);
    }
    const Verdict v = custom != Verdict::None ? custom : plain != Verdict::None ? plain : git;
    return v == Verdict::Ignore;
  }

  // Lists the directory open as `fd` (root-relative path in path_) whose entries lie at `depth`.
  void directory(int fd, std::size_t depth) {
    std::vector<Item> items;
    if (!list(fd, items)) return;
    Level level;
    level.prefix_len = path_.empty() ? 0 : path_.size() + 1;
    for (const auto& item : items) {
      if (item.name[0] != '.') continue;
      if (item.name == ".git" && (item.type == Type::Dir || item.type == Type::File)) {
        level.has_git = true;
      } else if (item.type != Type::File) {
        continue;
      } else if (item.name == ".gitignore") {
        level.git = IgnoreFile::parse(read_small(fd, ".gitignore"));
      } else if (item.name == ".ignore") {
        level.plain = IgnoreFile::parse(read_small(fd, ".ignore"));
      } else if (!options_.custom_ignore.empty() && item.name == options_.custom_ignore) {
        level.custom = IgnoreFile::parse(read_small(fd, item.name.c_str()));
      }
    }
    levels_.push_back(std::move(level));

    // The ignore crate's any_git and saw_git: .gitignore files count only with a repository in
    // sight (when required), and not beyond the nearest repository root.
    std::vector<Active> active;
    const bool any_git =
        !options_.require_git ||
        std::any_of(levels_.begin(), levels_.end(), [](const Level& l) { return l.has_git; });
    bool saw_git = false;
    for (std::size_t i = levels_.size(); i-- > 0;) {
      if (levels_[i].any()) active.push_back({i, any_git && !saw_git});
      saw_git = saw_git || (options_.require_git && levels_[i].has_git);
    }

    const std::size_t base = path_.size();
    for (const auto& item : items) {
      if (stopping()) break;
      if (item.type == Type::Dir && item.name == ".git") continue;  // git's own store, never
      path_.resize(base);
      if (!path_.empty()) path_.push_back('/');
      path_ += item.name;
      const std::string_view rel = std::string_view(path_).substr(start_len_);
      const bool is_dir = item.type == Type::Dir;
      if (ignored(active, rel, is_dir)) continue;
      const Action action = visit_(Entry{rel, item.name, item.type, fd});
      if (action == Action::Stop) {
        outcome_.stopped = true;
        break;
      }
      if (!is_dir || action == Action::Prune) continue;
      if (depth >= options_.max_depth) {
        outcome_.depth_limit = true;
        continue;
      }
      const int child = ::openat(fd, item.name.c_str(),
                                 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
      if (child < 0) continue;  // vanished, replaced by a link, or unreadable: skipped, as rg does
      directory(child, depth + 1);
      ::close(child);
    }
    path_.resize(base);
    levels_.pop_back();
  }

  const Options& options_;
  const std::function<Action(const Entry&)>& visit_;
  std::vector<Level> levels_;
  std::string path_;  // root-relative path of the entry at hand
  std::size_t start_len_ = 0;
  std::size_t entries_ = 0;
  Outcome outcome_;
};

}  // namespace

// --- Glob ----------------------------------------------------------------------------------------

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

// --- IgnoreFile ----------------------------------------------------------------------------------

IgnoreFile IgnoreFile::parse(std::string_view text) {
  IgnoreFile file;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) nl = text.size();
    std::string ignored_error;
    (void)file.add_line(text.substr(start, nl - start), &ignored_error);
    start = nl + 1;
  }
  return file;
}

bool IgnoreFile::add_line(std::string_view line, std::string* error) {
  const std::string original(line);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.empty() || line[0] == '#') return true;
  // Trailing whitespace goes unless the last space is escaped ("foo\ ").
  if (!(line.size() >= 2 && line.substr(line.size() - 2) == "\\ ")) {
    while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r' ||
                             line.back() == '\f' || line.back() == '\v')) {
      line.remove_suffix(1);
    }
  }
  if (line.empty()) return true;
  Rule rule;
  bool anchored = false;
  if (line.substr(0, 2) == "\\!" || line.substr(0, 2) == "\\#") {
    line.remove_prefix(1);
  } else {
    if (line[0] == '!') {
      rule.negated = true;
      line.remove_prefix(1);
    }
    if (!line.empty() && line[0] == '/') {
      anchored = true;
      line.remove_prefix(1);
    }
  }
  if (!line.empty() && line.back() == '/') {
    rule.dir_only = true;
    line.remove_suffix(1);
    if (!line.empty() && line.back() == '\\') line.remove_suffix(1);
  }
  if (line.empty()) return true;
  std::string glob(line);
  rule.basename = !anchored && glob.find('/') == std::string::npos;
  // `dir/**` means what is inside, not the directory itself.
  if (glob.size() >= 3 && glob.compare(glob.size() - 3, 3, "/**") == 0) glob += "/*";
  std::string why;
  auto compiled = Glob::compile(glob, false, &why);
  if (!compiled) {
    if (error != nullptr) *error = "error parsing glob '" + original + "': " + why;
    return false;
  }
  rule.glob = std::move(*compiled);
  rules_.push_back(std::move(rule));
  return true;
}

Verdict IgnoreFile::match(std::string_view path, bool is_dir) const {
  const std::string_view base = basename_of(path);
  for (std::size_t i = rules_.size(); i-- > 0;) {
    const Rule& r = rules_[i];
    if (r.dir_only && !is_dir) continue;
    if (r.glob.matches(r.basename ? base : path)) {
      return r.negated ? Verdict::Whitelist : Verdict::Ignore;
    }
  }
  return Verdict::None;
}

std::size_t IgnoreFile::whitelist_count() const {
  return static_cast<std::size_t>(
      std::count_if(rules_.begin(), rules_.end(), [](const Rule& r) { return r.negated; }));
}

// --- Walk ----------------------------------------------------------------------------------------

Outcome walk(const Workspace& ws, std::string_view start, int start_fd, const Options& options,
             const std::function<Action(const Entry&)>& visit) {
  return Walker(options, visit).run(ws, start, start_fd);
}

bool inside_git_repository(const Workspace& ws, std::string_view start) {
  std::string dir(start);
  for (;;) {
    const int fd = ws.open_at(dir, O_RDONLY | O_DIRECTORY);
    if (fd >= 0) {
      const bool found = has_git_entry(fd);
      ::close(fd);
      if (found) return true;
    }
    if (dir.empty()) return false;
    const auto slash = dir.rfind('/');
    dir.resize(slash == std::string::npos ? 0 : slash);
  }
}

}  // namespace mf::tools::walk
