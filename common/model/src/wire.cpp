// What the two wire formats share (wire.hpp): dispatch on the API, the stream decoder around the
// SSE parser, bounded quoting of what a server said, usage normalisation, the text form of tools
// for servers that do not call them natively, llama.cpp's salvageable 500s and error summaries.
#include <algorithm>
#include <cctype>
#include <charconv>

#include "mf/diag/codes.hpp"
#include "mf/diag/secrets.hpp"
#include "mf/json/canonical.hpp"
#include "mf/json/reader.hpp"
#include "mf/text/utf8.hpp"
#include "wire.hpp"

namespace mf::model::wire {

namespace detail {

std::string quote(std::string_view text, std::size_t max_bytes) {
  constexpr std::string_view kCut = "...";
  // Only a bounded window is looked at: a secret that starts beyond it would be cut away anyway.
  const std::size_t window = text::utf8_floor(text, 4 * max_bytes + 64);
  const bool clipped = window < text.size();
  std::string s = diag::redact_secrets(text::decode_utf8_lossy(text.substr(0, window)));
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto b = static_cast<unsigned char>(s[i]);
    if (b < 0x20 || b == 0x7F) {
      s[i] = ' ';
    } else if (b == 0xC2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) <= 0x9F) {
      s[i] = s[i + 1] = ' ';  // a C1 control (U+0080..U+009F), valid after the decoding above
    }
  }
  if (!clipped && s.size() <= max_bytes) return s;
  if (max_bytes <= kCut.size()) return std::string(text::utf8_prefix(s, max_bytes));
  std::string out(text::utf8_prefix(s, max_bytes - kCut.size()));
  out += kCut;
  return out;
}

std::string malformed(std::string_view what, const diag::Diagnostics& ds) {
  std::string out(what);
  out += " is not valid JSON";
  if (ds.empty()) return out;
  const diag::Diagnostic& d = ds.front();
  out += " (";
  if (d.line > 0) {
    out += "line " + std::to_string(d.line) + ", column " + std::to_string(d.column) + ": ";
  }
  out += quote(d.message, 120);
  out += ")";
  return out;
}

std::string provider_error(const json::Value& error) {
  if (error.is_string()) return quote(error.as_string());
  if (!error.is_object()) return {};
  const json::Value* message = error.find("message");
  if (message == nullptr || !message->is_string()) return {};
  std::string out = quote(message->as_string());
  // OpenAI gives a type and a code (either may be null), Anthropic a type: the type says more.
  for (const char* key : {"type", "code"}) {
    const json::Value* v = error.find(key);
    if (v == nullptr) continue;
    std::string tag;
    if (v->is_string()) {
      tag = v->as_string();
    } else if (auto n = v->is_number() ? v->as_exact_int() : std::nullopt) {
      tag = std::to_string(*n);
    }
    if (tag.empty()) continue;
    out += " (" + quote(tag, 60) + ")";
    break;
  }
  return out;
}

std::string name_problem(const json::Value* name) {
  if (name == nullptr) return "no name";
  if (name->is_null()) return "a null name";
  if (!name->is_string()) return "a name that is not a string";
  if (name->as_string().empty()) return "an empty name";
  return {};
}

void take_response_identity(const json::Value* object, std::string& model, std::string& id) {
  if (object == nullptr || !object->is_object()) return;
  for (auto [key, into] :
       {std::pair<std::string_view, std::string*>{"model", &model}, {"id", &id}}) {
    // The first value is kept: once known, a stream's later events (every OpenAI chunk repeats
    // both) are not searched for it again.
    if (!into->empty()) continue;
    const json::Value* v = object->find(key);
    if (v != nullptr && v->is_string()) *into = quote(v->as_string(), 256);
  }
}

Reply failure(std::string error) {
  Reply r;
  r.error = std::move(error);
  return r;
}

Status stream_failure(std::string message) {
  return diag::error(diag::codes::kMalformed, std::move(message));
}

json::Value usage(std::optional<std::int64_t> input, std::optional<std::int64_t> output,
                  std::optional<std::int64_t> reasoning) {
  if (!input || !output) return json::Value();
  json::Value u;
  u.set("input_tokens", *input);
  u.set("output_tokens", *output);
  if (reasoning) u.set("reasoning_tokens", *reasoning);
  return u;
}

std::optional<std::int64_t> count(const json::Value* object, std::string_view key) {
  if (object == nullptr) return std::nullopt;
  const json::Value* v = object->find(key);
  if (v == nullptr || !v->is_number()) return std::nullopt;
  auto n = v->as_exact_int();
  if (!n || *n < 0) return std::nullopt;
  return n;
}

std::string tools_instructions(const std::vector<ToolSchema>& tools) {
  std::string out =
      "You have tools. To use one, reply with a JSON object of the form "
      "{\"name\": \"<tool name>\", \"arguments\": {...}} where \"arguments\" is an object that "
      "matches the tool's input schema. Write exactly one such object per call, each on its own "
      "line, and no other text around them. The result of each call comes back in the next "
      "message.\n\nTools:";
  for (const ToolSchema& t : tools) {
    out += "\n- ";
    out += t.name;
    if (!t.description.empty()) {
      out += ": ";
      out += t.description;
    }
    out += "\n  input schema: ";
    out += t.input_schema.is_null() ? std::string("{\"type\":\"object\"}")
                                    : json::canonical(t.input_schema);
  }
  return out;
}

std::string call_as_text(const ToolCallRequest& call) {
  std::string out = "{\"name\":";
  json::write_string(call.name, out);
  out += ",\"arguments\":";
  Result<json::Value> args = json::parse(call.arguments);
  if (args) {
    json::write_canonical(*args, out);
  } else {
    json::write_string(call.arguments, out);  // what the model wrote, even when it is not JSON
  }
  out += "}";
  return out;
}

std::string result_as_text(const Message& result) {
  std::string out = result.is_error ? "Error from " : "Result of ";
  out += result.tool_name.empty() ? std::string("the tool") : result.tool_name;
  if (!result.tool_call_id.empty()) out += " (call " + result.tool_call_id + ")";
  out += ": ";
  out += result.content;
  return out;
}

namespace {

json::Value* at_path(json::Value& root, const std::vector<std::string>& path) {
  json::Value* v = &root;
  for (const std::string& token : path) {
    if (v->is_object()) {
      v = v->find(token);
    } else if (v->is_array()) {
      std::size_t i = 0;
      const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), i);
      if (ec != std::errc() || end != token.data() + token.size() || i >= v->as_array().size()) {
        return nullptr;
      }
      v = &v->as_array()[i];
    } else {
      return nullptr;
    }
    if (v == nullptr) return nullptr;
  }
  return v;
}

// What may follow a value inside a document: a separator, a closing bracket, whitespace.
bool may_follow_value(char c) {
  return c == ',' || c == '}' || c == ']' || c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

}  // namespace

const json::Value* EnvelopeCache::match(std::string_view data) {
  if (slot_ == nullptr) return nullptr;
  if (data.size() < head_.size() + tail_.size() || !data.starts_with(head_) ||
      !data.ends_with(tail_)) {
    return nullptr;
  }
  Result<json::Value> text =
      json::parse(data.substr(head_.size(), data.size() - head_.size() - tail_.size()));
  if (!text || !text->is_string()) return nullptr;
  *slot_ = std::move(*text);
  ++hits_;
  return &value_;
}

void EnvelopeCache::learn(std::string_view data, const json::Value& doc,
                          std::vector<std::string> path) {
  // An attempt costs about two parses: without hits to show for the last ones, stop trying (a
  // server that puts a different nonce in every event never repeats an envelope).
  if (path.empty() || learnt_ >= 4 + hits_ / 4) return;
  ++learnt_;
  json::Value value = doc;
  const json::Value* slot = at_path(value, path);
  if (slot == nullptr || !slot->is_string()) return;
  // Where the string sits: after the last `"name":`, written as the canonical form would write
  // it (most servers do). A guess, which the sentinel below confirms or refutes.
  std::string key;
  json::write_string(path.back(), key);
  key += ':';
  const std::size_t at = data.rfind(key);
  if (at == std::string_view::npos) return;
  std::size_t start = at + key.size();
  while (start < data.size() && data[start] == ' ') ++start;
  std::string encoded;
  json::write_string(slot->as_string(), encoded);
  if (data.substr(start, encoded.size()) != encoded) return;
  const std::string_view tail = data.substr(start + encoded.size());
  if (tail.empty() || !may_follow_value(tail.front())) return;
  // The same bytes with 0 for the string must parse to the same value with 0 at the path: then
  // the cut is exactly around one value, and any other JSON string there reads the same way.
  std::string probe(data.substr(0, start));
  probe += '0';
  probe += tail;
  Result<json::Value> sentinel = json::parse(probe);
  if (!sentinel) return;
  json::Value* zero = at_path(*sentinel, path);
  if (zero == nullptr || !zero->is_number() || zero->as_number() != 0) return;
  *zero = *slot;
  if (!(*sentinel == value)) return;
  head_.assign(data.substr(0, start));
  tail_.assign(tail);
  value_ = std::move(value);
  slot_ = at_path(value_, path);
}

}  // namespace detail

json::Value build_body(const Settings& settings, const Request& request) {
  return settings.api == Api::Anthropic ? detail::build_anthropic(settings, request)
                                        : detail::build_openai(settings, request);
}

Reply parse_body(const Settings& settings, std::string_view body) {
  return settings.api == Api::Anthropic ? detail::parse_anthropic(body)
                                        : detail::parse_openai(body);
}

struct StreamDecoder::State {
  explicit State(std::unique_ptr<detail::StreamAssembler> a)
      : assembler(std::move(a)), parser([this](std::string_view event, std::string_view data) {
          return assembler->event(event, data);
        }) {}
  std::unique_ptr<detail::StreamAssembler> assembler;
  net::SseParser parser;
  Status failure;
};

StreamDecoder::StreamDecoder(const Settings& settings)
    : state_(std::make_shared<State>(settings.api == Api::Anthropic ? detail::anthropic_stream()
                                                                    : detail::openai_stream())) {}

Status StreamDecoder::feed(std::string_view bytes) {
  if (!state_->failure.ok()) return state_->failure;
  Status s = state_->parser.feed(bytes);
  if (!s) state_->failure = s;
  return s;
}

Reply StreamDecoder::finish() {
  if (state_->failure.ok()) state_->failure = state_->parser.finish();
  if (!state_->failure.ok()) {
    const diag::Diagnostics& ds = state_->failure.diagnostics();
    return detail::failure(ds.empty() ? std::string("the stream failed") : ds.front().message);
  }
  return state_->assembler->finish();
}

bool StreamDecoder::started() const {
  return state_->assembler->started();
}

bool StreamDecoder::transient() const {
  return state_->assembler->transient();
}

std::optional<Reply> salvage_error(const Settings& settings, long status, std::string_view body) {
  if (settings.api != Api::OpenAI || status != 500) return std::nullopt;
  Result<json::Value> doc = json::parse_object(body);
  if (!doc) return std::nullopt;
  const json::Value* error = doc->find("error");
  const json::Value* message = error != nullptr ? error->find("message") : nullptr;
  if (message == nullptr || !message->is_string()) return std::nullopt;
  const std::string_view m = message->as_string();
  if (!m.starts_with("Failed to parse")) return std::nullopt;
  // "Failed to parse input at pos 123: <the model's output>"
  const std::size_t pos = m.find("pos ");
  if (pos == std::string_view::npos) return std::nullopt;
  std::size_t i = pos + 4;
  const std::size_t digits = i;
  while (i < m.size() && std::isdigit(static_cast<unsigned char>(m[i])) != 0) ++i;
  if (i == digits) return std::nullopt;
  const std::size_t sep = m.find(": ", i);
  if (sep == std::string_view::npos || sep + 2 == m.size()) return std::nullopt;
  Reply r;
  r.ok = true;
  r.content = std::string(m.substr(sep + 2));
  r.stop_reason = "salvaged";
  return r;
}

std::string describe_error(long status, std::string_view body) {
  constexpr std::size_t kMax = 300;
  std::string out = "HTTP " + std::to_string(status);
  std::string said;
  bool json_body = false;
  // Only what looks like JSON is worth parsing; an HTML error page is quoted as text.
  const std::size_t first = body.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && (body[first] == '{' || body[first] == '[')) {
    if (Result<json::Value> doc = json::parse(body); doc) {
      json_body = true;
      // OpenAI and Anthropic: {"error": {...}} (or a string, as Ollama sends it); vLLM: a
      // top-level {"message", "type"}; FastAPI servers: {"detail": "..."}. A JSON body of any
      // other shape is not quoted: it may echo the request.
      if (const json::Value* e = doc->find("error")) said = detail::provider_error(*e);
      if (said.empty()) said = detail::provider_error(*doc);
      if (said.empty()) {
        if (const json::Value* d = doc->find("detail"); d != nullptr && d->is_string()) {
          said = detail::quote(d->as_string());
        }
      }
    }
  }
  if (!json_body && first != std::string_view::npos) {
    said = detail::quote(body.substr(first), 120);
  }
  if (!said.empty()) out += ": " + said;
  if (out.size() > kMax) out = std::string(text::utf8_prefix(out, kMax));
  return out;
}

}  // namespace mf::model::wire
