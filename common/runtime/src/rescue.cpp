// Rescue reads the model's text once, left to right, and never rewrites it: think blocks, code
// fences and the tool-call forms are recognised where they start in prose, and a recognised form
// consumes its whole span, so nothing inside a JSON string or a parameter value is ever taken for
// a tag, a fence or another call. docs/rescue.md has the rules and why they differ from forge's.
#include "mf/runtime/rescue.hpp"

#include <cstddef>
#include <cstdint>
#include <istream>
#include <ostream>
#include <streambuf>
#include <string>
#include <unordered_set>

#include "mf/diag/codes.hpp"
#include "mf/json/canonical.hpp"
#include "mf/json/reader.hpp"

namespace mf::runtime {

namespace {

namespace codes = diag::codes;

constexpr std::size_t kMaxTextBytes = 1u << 20;
// A JSON line holding a 1 MiB text needs at most six bytes per byte (\u00XX) plus its quotes.
constexpr std::size_t kMaxLineBytes = 8u << 20;
// Longer parameter names are not read: a bound keeps a failed XML block's scan short.
constexpr std::size_t kMaxParameterName = 256;

json::ReadLimits read_limits() {
  json::ReadLimits limits;
  limits.max_bytes = kMaxLineBytes;
  return limits;
}

// The families in the order they are preferred when a text holds calls of several.
enum class Family : std::uint8_t { Json, Bracket, QwenXml, Mistral };

struct Found {
  Family family = Family::Json;
  bool fenced = false;
  RescuedCall call;
};

// The alphabet of model-facing tool names ([A-Za-z][A-Za-z0-9_-]*, docs/formats/harness.md).
bool is_name_char(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-';
}

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

// Characters that may appear in JSON outside a string. Stopping a span at anything else ends the
// scan of prose that merely opens a brace early; stopping at '\\' matters more (see json_span_end).
bool is_json_structural(char c) {
  static constexpr std::string_view kOutsideStrings = " \t\n\r:,-+.0123456789truefalsnE";
  return kOutsideStrings.find(c) != std::string_view::npos;
}

class Scanner {
 public:
  Scanner(std::string_view text, const std::vector<std::string>& known_tools) : text_(text) {
    for (const std::string& name : known_tools) known_.insert(name);
  }

  std::vector<Found> run();

 private:
  bool known(std::string_view name) const { return known_.count(name) != 0; }
  bool at(std::size_t pos, std::string_view tag) const {
    return pos <= text_.size() && text_.size() - pos >= tag.size() &&
           text_.compare(pos, tag.size(), tag) == 0;
  }
  std::size_t skip_space(std::size_t pos) const {
    while (pos < text_.size() && is_space(text_[pos])) ++pos;
    return pos;
  }
  std::size_t name_end(std::size_t pos) const {
    while (pos < text_.size() && is_name_char(static_cast<unsigned char>(text_[pos]))) ++pos;
    return pos;
  }

  std::size_t json_span_end(std::size_t pos) const;
  std::optional<json::Value> parse_span(std::size_t begin, std::size_t end) const;
  std::optional<RescuedCall> as_call(const json::Value& v) const;

  // Each reader of a form returns the end of the span it consumed (its calls, if any, appended to
  // found_), or nothing when the form is not there and the walk moves on by one byte.
  std::optional<std::size_t> read_json(std::size_t pos);
  std::optional<std::size_t> read_bracket(std::size_t pos, std::size_t name_end);
  std::optional<std::size_t> read_mistral(std::size_t pos);
  std::optional<std::size_t> read_qwen(std::size_t pos);
  std::optional<std::size_t> read_named_arguments(std::size_t name_begin, std::size_t name_end,
                                                  std::size_t pos, Family family);

  void add(Family family, RescuedCall call) {
    found_.push_back(Found{.family = family, .fenced = fenced_, .call = std::move(call)});
  }

  std::string_view text_;
  std::unordered_set<std::string_view> known_;
  std::vector<Found> found_;
  bool fenced_ = false;  // inside a ``` code block of the prose
};

// One past the bracket that closes the one at `pos`, or npos. Brackets inside strings do not
// count. The scan gives up beyond the reader's depth limit and at any byte that cannot occur
// outside a JSON string, in particular '\\': two scans that disagree about whether a byte is
// inside a string then never agree again (one of them stops at the first escape the other sees),
// so every byte is visited by at most 64 scans of each kind and the walk stays linear.
std::size_t Scanner::json_span_end(std::size_t pos) const {
  const std::size_t max_depth = read_limits().max_depth;
  std::size_t depth = 0;
  bool in_string = false;
  bool escaped = false;
  for (std::size_t i = pos; i < text_.size(); ++i) {
    const char c = text_[i];
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (++depth > max_depth) return std::string_view::npos;
    } else if (c == '}' || c == ']') {
      if (--depth == 0) return i + 1;
    } else if (!is_json_structural(c)) {
      return std::string_view::npos;
    }
  }
  return std::string_view::npos;
}

std::optional<json::Value> Scanner::parse_span(std::size_t begin, std::size_t end) const {
  if (end == std::string_view::npos) return std::nullopt;
  Result<json::Value> v = json::parse(text_.substr(begin, end - begin), read_limits());
  if (!v) return std::nullopt;
  return std::move(v).value();
}

// {"tool"|"name": NAME, "args"|"arguments"|"parameters": {...}}, optionally with the "id" and
// "type": "function" that OpenAI-, Mistral- and Llama-style calls carry. Any other member means
// the object is something else (an echoed tool definition has "description"); two spellings of
// the name or of the arguments make it ambiguous.
std::optional<RescuedCall> Scanner::as_call(const json::Value& v) const {
  if (!v.is_object()) return std::nullopt;
  const json::Value* name = nullptr;
  const json::Value* args = nullptr;
  for (const json::Member& m : v.as_object()) {
    if (m.key == "tool" || m.key == "name") {
      if (name != nullptr) return std::nullopt;
      name = &m.value;
    } else if (m.key == "args" || m.key == "arguments" || m.key == "parameters") {
      if (args != nullptr) return std::nullopt;
      args = &m.value;
    } else if (m.key == "id") {
      if (!m.value.is_string()) return std::nullopt;
    } else if (m.key == "type") {
      if (!m.value.is_string() || m.value.as_string() != "function") return std::nullopt;
    } else {
      return std::nullopt;
    }
  }
  if (name == nullptr || !name->is_string() || !known(name->as_string())) return std::nullopt;
  RescuedCall call{.name = name->as_string(), .arguments = json::Object{}};
  if (args == nullptr) return call;
  if (args->is_object()) {
    call.arguments = *args;
    return call;
  }
  // The OpenAI wire form carries the arguments as a string holding a JSON object.
  if (args->is_string()) {
    Result<json::Value> inner = json::parse_object(args->as_string(), read_limits());
    if (!inner) return std::nullopt;
    call.arguments = std::move(inner).value();
    return call;
  }
  return std::nullopt;
}

// A call object, or an array whose elements are all calls. Any other valid JSON is consumed with
// no call: a call nested inside other data is that data's content, not a request.
std::optional<std::size_t> Scanner::read_json(std::size_t pos) {
  const std::size_t first = skip_space(pos + 1);
  if (first >= text_.size()) return std::nullopt;
  if (text_[pos] == '{' ? text_[first] != '"' : text_[first] != '{') return std::nullopt;
  const std::size_t end = json_span_end(pos);
  std::optional<json::Value> v = parse_span(pos, end);
  if (!v) return std::nullopt;
  if (v->is_object()) {
    if (std::optional<RescuedCall> call = as_call(*v)) add(Family::Json, std::move(*call));
    return end;
  }
  std::vector<RescuedCall> calls;
  for (const json::Value& e : v->as_array()) {
    std::optional<RescuedCall> call = as_call(e);
    if (!call) return end;
    calls.push_back(std::move(*call));
  }
  for (RescuedCall& call : calls) add(Family::Json, std::move(call));
  return end;
}

// NAME, optional whitespace, then a JSON object of arguments starting at or after `pos`.
std::optional<std::size_t> Scanner::read_named_arguments(std::size_t name_begin,
                                                         std::size_t name_stop, std::size_t pos,
                                                         Family family) {
  pos = skip_space(pos);
  if (pos >= text_.size() || text_[pos] != '{') return std::nullopt;
  const std::size_t end = json_span_end(pos);
  std::optional<json::Value> args = parse_span(pos, end);
  if (!args) return std::nullopt;
  const std::string_view name = text_.substr(name_begin, name_stop - name_begin);
  if (known(name)) add(family, RescuedCall{.name = std::string(name), .arguments = *args});
  return end;
}

// NAME[ARGS]{...}; `pos` starts the name and `stop` ends it.
std::optional<std::size_t> Scanner::read_bracket(std::size_t pos, std::size_t stop) {
  return read_named_arguments(pos, stop, stop + std::string_view("[ARGS]").size(), Family::Bracket);
}

// [TOOL_CALLS] followed by NAME{...} (NAME[ARGS]{...} in Mistral's newer tokenizers), a call
// object, or an array of call objects.
std::optional<std::size_t> Scanner::read_mistral(std::size_t pos) {
  const std::size_t start = skip_space(pos + std::string_view("[TOOL_CALLS]").size());
  if (start >= text_.size()) return std::nullopt;
  const char c = text_[start];
  if (c == '{' || c == '[') {
    const std::size_t end = json_span_end(start);
    std::optional<json::Value> v = parse_span(start, end);
    if (!v) return std::nullopt;
    std::vector<RescuedCall> calls;
    if (v->is_object()) {
      if (std::optional<RescuedCall> call = as_call(*v)) calls.push_back(std::move(*call));
    } else {
      for (const json::Value& e : v->as_array()) {
        std::optional<RescuedCall> call = as_call(e);
        if (!call) return end;
        calls.push_back(std::move(*call));
      }
    }
    for (RescuedCall& call : calls) add(Family::Mistral, std::move(call));
    return end;
  }
  const std::size_t stop = name_end(start);
  if (stop == start) return std::nullopt;
  std::size_t args = stop;
  if (at(args, "[ARGS]")) args += std::string_view("[ARGS]").size();
  return read_named_arguments(start, stop, args, Family::Mistral);
}

// <function=NAME> (<parameter=KEY>VALUE</parameter>)* </function>, with whitespace between the
// tags. A value ends at its own closing tag; meeting another block's tag first means a tag is
// missing, and guessing where the value was meant to end could merge or cut values, so the block
// is not read. That rule also keeps the scan linear: no block can start inside another's value.
std::optional<std::size_t> Scanner::read_qwen(std::size_t pos) {
  static constexpr std::string_view kOpen = "<function=", kClose = "</function>",
                                    kParam = "<parameter=", kParamClose = "</parameter>";
  const std::size_t name_begin = pos + kOpen.size();
  const std::size_t name_stop = name_end(name_begin);
  if (name_stop == name_begin || !at(name_stop, ">")) return std::nullopt;
  struct Param {
    std::string_view key, value;
  };
  std::vector<Param> params;
  std::size_t i = name_stop + 1;
  for (;;) {
    i = skip_space(i);
    if (at(i, kClose)) break;
    if (!at(i, kParam)) return std::nullopt;
    const std::size_t key_begin = i + kParam.size();
    std::size_t k = key_begin;
    while (k < text_.size() && k - key_begin <= kMaxParameterName && text_[k] != '>' &&
           text_[k] != '<' && !is_space(text_[k])) {
      ++k;
    }
    if (k == key_begin || !at(k, ">")) return std::nullopt;
    const std::size_t value_begin = k + 1;
    std::size_t v = value_begin;
    for (;;) {
      v = text_.find('<', v);
      if (v == std::string_view::npos) return std::nullopt;
      if (at(v, kParamClose)) break;
      if (at(v, kParam) || at(v, kOpen) || at(v, kClose)) return std::nullopt;
      ++v;
    }
    params.push_back(Param{.key = text_.substr(key_begin, k - key_begin),
                           .value = text_.substr(value_begin, v - value_begin)});
    i = v + kParamClose.size();
  }
  const std::size_t end = i + kClose.size();
  const std::string_view name = text_.substr(name_begin, name_stop - name_begin);
  if (!known(name)) return end;

  json::Value args = json::Object{};
  std::unordered_set<std::string> keys;
  for (const Param& p : params) {
    // Strings enter through the strict reader like all JSON, which refuses invalid UTF-8.
    std::string quoted;
    json::write_string(p.key, quoted);
    Result<json::Value> key = json::parse(quoted, read_limits());
    if (!key || !keys.insert(key->as_string()).second) return end;
    // Qwen's template puts the value on lines of its own: one newline after the opening tag and
    // one before the closing tag are layout, not content.
    std::string_view value = p.value;
    if (value.starts_with('\n')) value.remove_prefix(1);
    if (value.ends_with('\n')) value.remove_suffix(1);
    Result<json::Value> typed = json::parse(value, read_limits());
    if (!typed) {
      quoted.clear();
      json::write_string(value, quoted);
      typed = json::parse(quoted, read_limits());
      if (!typed) return end;
    }
    args.as_object().push_back(json::Member{.key = key->as_string(), .value = *typed});
  }
  add(Family::QwenXml, RescuedCall{.name = std::string(name), .arguments = std::move(args)});
  return end;
}

std::vector<Found> Scanner::run() {
  const std::size_t n = text_.size();
  std::size_t i = 0;
  auto skip_think = [&](std::string_view close) {
    const std::size_t c = text_.find(close, i);
    // An unclosed block is reasoning up to the end of the text.
    i = c == std::string_view::npos ? n : c + close.size();
  };
  auto orphan_close = [&](std::string_view close) {
    // The opening tag was in the prompt (templates that open the reasoning block for the model):
    // everything before the close was reasoning.
    found_.clear();
    fenced_ = false;
    i += close.size();
  };
  while (i < n) {
    const char c = text_[i];
    std::optional<std::size_t> end;
    if (c == '<') {
      if (at(i, "<think>")) {
        skip_think("</think>");
        continue;
      }
      if (at(i, "</think>")) {
        orphan_close("</think>");
        continue;
      }
      if (at(i, "<function=")) end = read_qwen(i);
    } else if (c == '[') {
      if (at(i, "[THINK]")) {
        skip_think("[/THINK]");
        continue;
      }
      if (at(i, "[/THINK]")) {
        orphan_close("[/THINK]");
        continue;
      }
      end = at(i, "[TOOL_CALLS]") ? read_mistral(i) : read_json(i);
    } else if (c == '{') {
      end = read_json(i);
    } else if (c == '`' && at(i, "```")) {
      fenced_ = !fenced_;
      i += 3;
      continue;
    } else if (is_name_char(static_cast<unsigned char>(c))) {
      // Nothing starts inside a name, so the walk steps over it whole. A name glued to a
      // non-ASCII letter is part of a longer word, not a tool name.
      const std::size_t stop = name_end(i);
      const unsigned char before = i == 0 ? ' ' : static_cast<unsigned char>(text_[i - 1]);
      const bool word_start = before < 0x80 && !is_name_char(before);
      end = word_start && at(stop, "[ARGS]") ? read_bracket(i, stop) : std::nullopt;
      i = end.value_or(stop);
      continue;
    }
    i = end.value_or(i + 1);
  }
  return std::move(found_);
}

}  // namespace

std::optional<Rescue> rescue_tool_calls(std::string_view text,
                                        const std::vector<std::string>& known_tools) {
  if (text.size() > kMaxTextBytes) return std::nullopt;
  std::vector<Found> found = Scanner(text, known_tools).run();
  for (Family family : {Family::Json, Family::Bracket, Family::QwenXml, Family::Mistral}) {
    Rescue r;
    bool all_fenced = true;
    for (Found& f : found) {
      if (f.family != family) continue;
      all_fenced = all_fenced && f.fenced;
      r.calls.push_back(std::move(f.call));
    }
    if (r.calls.empty()) continue;
    switch (family) {
      case Family::Json:
        r.format = all_fenced ? "fenced_json" : "json";
        break;
      case Family::Bracket:
        r.format = "bracket";
        break;
      case Family::QwenXml:
        r.format = "qwen_xml";
        break;
      case Family::Mistral:
        r.format = "mistral";
        break;
    }
    return r;
  }
  return std::nullopt;
}

json::Value to_json(const Rescue& r) {
  json::Array calls;
  calls.reserve(r.calls.size());
  for (const RescuedCall& c : r.calls) {
    json::Value call;
    call.set("arguments", c.arguments);
    call.set("name", c.name);
    calls.push_back(std::move(call));
  }
  json::Value j;
  j.set("calls", std::move(calls));
  j.set("format", r.format);
  return j;
}

Status rescue_lines(std::istream& in, std::ostream& out,
                    const std::vector<std::string>& known_tools) {
  std::streambuf* buf = in.rdbuf();
  if (buf == nullptr) return {};
  std::string line;
  for (std::int64_t number = 1;; ++number) {
    line.clear();
    int ch = buf->sbumpc();
    if (ch == std::char_traits<char>::eof()) return {};
    const std::string where = "line " + std::to_string(number) + ": ";
    for (; ch != std::char_traits<char>::eof() && ch != '\n'; ch = buf->sbumpc()) {
      if (line.size() == kMaxLineBytes) {
        return diag::error(codes::kTooLarge,
                           where + "longer than " + std::to_string(kMaxLineBytes) + " bytes", {},
                           number);
      }
      line.push_back(static_cast<char>(ch));
    }
    Result<json::Value> text = json::parse(line, read_limits(), number - 1);
    if (!text) {
      diag::Diagnostics ds = text.take_diagnostics();
      for (diag::Diagnostic& d : ds) {
        d.message = where + "not a JSON string: " + d.message;
        if (d.line == 0) d.line = number;
      }
      return ds;
    }
    if (!text->is_string()) {
      return diag::error(codes::kMalformed,
                         where + "expected a JSON string (the model's text), found " +
                             std::string(json::kind_name(text->kind())),
                         {}, number);
    }
    const std::optional<Rescue> r = rescue_tool_calls(text->as_string(), known_tools);
    out << (r ? json::canonical(to_json(*r)) : std::string("null")) << '\n';
    if (!out) return diag::error(codes::kWriteFailed, where + "the output cannot be written");
  }
}

}  // namespace mf::runtime
