// The wire formats of the live backends (docs/live-backends.md): building a request body from a
// model::Request, and turning what a server sends back (a JSON body, or a Server-Sent Events
// stream fed in arbitrary pieces) into a model::Reply. Pure functions over bytes: no network, no
// clock, no environment. The transport (mf/net/http.hpp) and the backend (live.cpp) sit on top.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mf/diag/diagnostic.hpp"
#include "mf/json/value.hpp"
#include "mf/model/model.hpp"
#include "mf/net/sse.hpp"

namespace mf::model::wire {

enum class Api : std::uint8_t { OpenAI, Anthropic };

// What of a profile the wire format needs.
struct Settings {
  Api api = Api::OpenAI;
  std::string model;  // the provider's model id
  // The server calls tools natively (OpenAI `tools`, Anthropic `tools`). When false the tools are
  // described in a system message, calls the model made earlier are rendered as text, tool results
  // as user messages, and the reply's text goes through the loop's rescue.
  bool native_tools = true;
  bool stream = false;
  bool parallel_tool_calls = false;  // OpenAI: sent as `parallel_tool_calls` when tools are sent
  // Validated request options (an object: temperature, top_p, max_tokens, seed, stop, ...),
  // merged into the body as the provider names them (Anthropic: max_tokens defaults to 4096).
  json::Value options;
};

// The request body of one call (OpenAI: POST {base}/chat/completions; Anthropic: POST
// {base}/messages), as a JSON object. Deterministic: the same request gives the same value.
json::Value build_body(const Settings& settings, const Request& request);

// A 2xx JSON body (non-streaming). Malformed JSON, a missing choice, or an `error` member is a
// failure reply whose error says what was wrong (never the whole body).
Reply parse_body(const Settings& settings, std::string_view body);

// Assembles a streamed reply: OpenAI chat.completion.chunk deltas (content, reasoning_content,
// tool calls by index with arguments concatenated, finish_reason, a final usage chunk, `[DONE]`),
// or Anthropic message events (message_start, content_block_start/delta/stop with text_delta,
// input_json_delta, thinking_delta, message_delta, message_stop, ping, error).
class StreamDecoder {
 public:
  explicit StreamDecoder(const Settings& settings);
  // Raw response bytes as they arrive. A failure (a malformed event, an `error` event) is kept
  // and reported by finish(); feed() returns it too so the transport can stop reading.
  Status feed(std::string_view bytes);
  // The reply. A stream that ended before its terminator (OpenAI `[DONE]` or a finish_reason;
  // Anthropic message_stop) is a failure reply saying the stream was truncated.
  Reply finish();
  // True once the stream produced anything of the reply (used to tell a stall from a slow start).
  bool started() const;
  // The stream failed with the provider's own transient error event (overloaded, internal).
  bool transient() const;

 private:
  struct State;
  std::shared_ptr<State> state_;
};

// A non-2xx response. llama.cpp answers a reply it could not parse as a tool call with HTTP 500
// and a body whose error message carries the model's raw output ("Failed to parse input ...");
// that output is salvaged as a text reply (stop_reason "salvaged") so rescue can read it.
std::optional<Reply> salvage_error(const Settings& settings, long status, std::string_view body);

// A short, bounded (≤ 300 bytes), single-line description of a failed response for the trace
// and diagnostics: "HTTP 429: rate limited (rate_limit_error)". It quotes only the provider's
// error message and type, never headers or the request.
std::string describe_error(long status, std::string_view body);

// What the codec's sources (sse.cpp, wire.cpp, wire_openai.cpp, wire_anthropic.cpp) share. Not
// for callers: the transport and the backend use the functions above.
namespace detail {

// Every fragment of a response quoted in an error is at most this long.
inline constexpr std::size_t kMaxQuote = 200;

// `text` made safe to quote in an error, a trace or a diagnostic: valid UTF-8, secret-looking runs
// redacted, control characters turned into spaces, cut at a code-point boundary to at most
// `max_bytes` (a cut is marked with "...", within the bound).
std::string quote(std::string_view text, std::size_t max_bytes = kMaxQuote);

// "<what> is not valid JSON (line L, column C: <reader message>)" for a strict-reader failure.
std::string malformed(std::string_view what, const diag::Diagnostics& ds);

// The error a provider put in a body or an event, from the OpenAI and Anthropic shapes
// ({"message", "type" | "code"} or a plain string): "message (type)", quoted; empty when `error`
// holds no message.
std::string provider_error(const json::Value& error);

// What is wrong with a tool call's `name` (nullptr: the call has none), in the words of
// ToolCallRequest::malformed; empty for a non-empty string. Both APIs name every call, and a call
// without a usable name is refused at decode, streamed or not.
std::string name_problem(const json::Value* name);

// The response's `model` and `id` members of `object` (an OpenAI completion or chunk, an
// Anthropic message) into `model` and `id`, each quoted (at most 256 bytes), where they are still
// empty: a stream repeats them in every chunk, and the first one names the response.
void take_response_identity(const json::Value* object, std::string& model, std::string& id);

// A failure reply.
Reply failure(std::string error);
// A stream that cannot be read on (MF-S011); its message becomes the reply's error.
Status stream_failure(std::string message);

// Usage normalised to {input_tokens, output_tokens[, reasoning_tokens]}: null unless both counts
// are known.
json::Value usage(std::optional<std::int64_t> input, std::optional<std::int64_t> output,
                  std::optional<std::int64_t> reasoning = std::nullopt);
// A member of `object` that is a non-negative exact integer.
std::optional<std::int64_t> count(const json::Value* object, std::string_view key);

// Tools described in text when the server does not call them natively (Settings::native_tools).
// The system text that lists the tools and says how to call one.
std::string tools_instructions(const std::vector<ToolSchema>& tools);
// An earlier call as the JSON text the model was told to write.
std::string call_as_text(const ToolCallRequest& call);
// A tool result as the text of a user message.
std::string result_as_text(const Message& result);

json::Value build_openai(const Settings& settings, const Request& request);
json::Value build_anthropic(const Settings& settings, const Request& request);
Reply parse_openai(std::string_view body);
Reply parse_anthropic(std::string_view body);

// Stream events repeat one envelope around one changing string: every OpenAI chunk repeats its
// id, model, fingerprint and choice around a few characters of content, every Anthropic
// text_delta its type and index. Once an event has been parsed whole, the cache learns the bytes
// before and after that string; a later event with exactly those bytes around it is read by
// parsing the string alone. Every byte still goes through the strict reader: the envelope in
// the event it was learnt from (and once more with a sentinel in the string's place, which proves
// that the cut falls exactly around a value), the string in each event that reuses it.
class EnvelopeCache {
 public:
  // The value of `data` when it is the learnt envelope around a JSON string: the learnt event's
  // value with this event's string in the slot (valid until the next call); nullptr otherwise.
  const json::Value* match(std::string_view data);
  // Learns from `data`, which parsed whole to `doc`, the envelope around the string at `path`
  // (tokens from the root; the last is the member name). Does nothing when the bytes do not show
  // that string where the path says, or when learning has not been paying off.
  void learn(std::string_view data, const json::Value& doc, std::vector<std::string> path);

 private:
  std::string head_;
  std::string tail_;
  json::Value value_;
  json::Value* slot_ = nullptr;  // the string in value_; null while nothing is learnt
  std::int64_t hits_ = 0;
  std::int64_t learnt_ = 0;
};

// The per-API half of a StreamDecoder: gets each Server-Sent Event and assembles the reply.
class StreamAssembler {
 public:
  virtual ~StreamAssembler() = default;
  // A failure stops the stream; its message becomes the reply's error.
  virtual Status event(std::string_view name, std::string_view data) = 0;
  // The reply once the bytes have ended: a failure when the stream never reached its end.
  virtual Reply finish() = 0;
  virtual bool started() const = 0;
  // The stream ended with an error event saying the provider was overloaded or failed
  // internally (Anthropic's overloaded_error, api_error): worth another attempt.
  virtual bool transient() const { return false; }
};
std::unique_ptr<StreamAssembler> openai_stream();
std::unique_ptr<StreamAssembler> anthropic_stream();

}  // namespace detail

}  // namespace mf::model::wire
