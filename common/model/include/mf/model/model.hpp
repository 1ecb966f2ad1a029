// Model backends behind one interface. The run loop sees only requests and replies; a provider
// failure is a reply, not an exception, so the loop decides its terminal state.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mf/diag/diagnostic.hpp"
#include "mf/json/value.hpp"

namespace mf::model {

// One tool call as the model emitted it. `arguments` is the raw JSON text the model wrote: it may
// be empty (no_arguments), malformed, or not an object, and the run loop decides what that costs.
struct ToolCallRequest {
  std::string id;  // the model's call id; empty when it gave none (the loop assigns one)
  std::string name;
  std::string arguments;
  // Non-empty when the decoder refused the call: what is wrong with it ("no name", "a null name",
  // "an empty name", "a name that is not a string"). The name is then empty, and the loop answers
  // the reply with a correction instead of running anything.
  std::string malformed{};
};

// A call whose arguments are empty or only JSON whitespace takes no arguments: the run loop reads
// them as {} (forge reads "" so too). This is the one rule for it, applied by the loop to every
// reply whatever decoded it (OpenAI or Anthropic, streamed or not, scripted, sim, cached), so a
// decoder passes on what the model sent and an absent member as "".
inline bool no_arguments(std::string_view arguments) {
  return arguments.find_first_not_of(" \t\n\r") == std::string_view::npos;
}

// A tool as the model sees it (its schema is the plan node's closed input schema).
struct ToolSchema {
  std::string name;
  std::string description;
  json::Value input_schema;
};

struct Message {
  std::string role;  // system | user | assistant | tool
  std::string content;
  std::vector<ToolCallRequest> tool_calls;  // assistant: the calls it made
  std::string tool_call_id;                 // tool: the call this result answers
  std::string tool_name;                    // tool: the tool that answered
  bool is_error = false;                    // tool: the call failed or was refused

  static Message text(std::string role, std::string content) {
    Message m;
    m.role = std::move(role);
    m.content = std::move(content);
    return m;
  }
};

struct Request {
  std::int64_t call = 0;  // 1-based model call number within the run
  std::vector<Message> messages;
  std::vector<ToolSchema> tools;  // empty in task mode
  // The run's deadline: a backend gives up waiting at this point (a failure reply).
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
};

struct Reply {
  bool ok = false;
  std::string content;                      // assistant text when ok (may be empty)
  std::vector<ToolCallRequest> tool_calls;  // native tool calls when ok
  // Provider-reported usage, normalised to {input_tokens, output_tokens[, reasoning_tokens]
  // [, cost_usd]} (an object), or null.
  json::Value usage;
  std::string error;  // provider failure when !ok
  // Live backends (docs/live-backends.md); empty or zero for scripted and sim models.
  std::string reasoning{};    // the model's reasoning text (reasoning_content, thinking blocks)
  std::string stop_reason{};  // the provider's finish/stop reason (stop, tool_calls, refusal, ...)
  std::string source{};       // "network" or "cache": where this reply came from
  std::int64_t attempts = 0;  // transport attempts spent on this call (retries + 1)
  std::string request_sha256{};  // the digest of the request the cache keys on
  // The response's own `model` and `id` as the provider returned them (OpenAI chat completions
  // and Anthropic messages, streamed or not); empty when it gave none.
  std::string response_model{};
  std::string response_id{};
  // A failure that is a rejected request rather than a provider failure (a cache miss in read
  // mode): its diagnostic code, which decides the exit class.
  std::string error_code{};
};

// Calls `f` on every string a reply carries, usage included (member names and values), so that a
// pass over them (the live backends cut their credential from each) cannot miss one. A string
// member added to Reply or ToolCallRequest joins this list.
template <class F>
void for_each_string(Reply& r, F&& f) {
  for (std::string* s : {&r.content, &r.error, &r.reasoning, &r.stop_reason, &r.source,
                         &r.request_sha256, &r.error_code, &r.response_model, &r.response_id}) {
    f(*s);
  }
  for (ToolCallRequest& c : r.tool_calls) {
    for (std::string* s : {&c.id, &c.name, &c.arguments, &c.malformed}) f(*s);
  }
  const auto walk = [&f](auto& self, json::Value& v) -> void {
    if (v.is_string()) {
      f(v.as_string());
    } else if (v.is_array()) {
      for (json::Value& item : v.as_array()) self(self, item);
    } else if (v.is_object()) {
      for (json::Member& m : v.as_object()) {
        f(m.key);
        self(self, m.value);
      }
    }
  };
  walk(walk, r.usage);
}

class Model {
 public:
  virtual ~Model() = default;
  // `cancel` is polled while waiting; a cancelled call returns a failure reply.
  virtual Reply infer(const Request& request, const std::atomic<bool>& cancel) = 0;
  // Called by the run loop once it has checked that `reply` (what infer returned) can be recorded
  // and just before it records it: a live backend keeps the reply in its cache only then, so the
  // cache never holds a reply that a run could not record. A failure means the reply was not
  // kept; the loop records that failure instead of the reply.
  virtual Status keep(const Reply& /*reply*/) { return {}; }
  // Called by the run loop once, at the run's end, just before the trace is closed: a backend that
  // kept replies without making them durable (batched durability) makes them durable now.
  virtual Status flush() { return {}; }
  virtual std::string name() const = 0;  // recorded in run_started, e.g. "scripted"
  // The rest of what run_started records of the model (docs/formats/trace.md): `model_id`,
  // `model_sha256` (of the live profile, the script or the sim's trajectory), and for a live
  // profile its `endpoint` and the request `model_options` it sets. An object; its members are
  // merged into run_started.
  virtual json::Value identity() const { return identity_; }
  void set_identity(json::Value identity) { identity_ = std::move(identity); }

 private:
  json::Value identity_ = json::Object{};
};

// The identity of a model read from a file (a script, a sim trajectory): its id is the file's
// name without its directory, followed by `suffix` (a sim's parameters), and its digest the
// SHA-256 of `bytes`.
json::Value file_identity(std::string_view path, std::string_view bytes, std::string_view suffix);

// Waits `delay_ms` (a scripted step's delay) unless `cancel` is set or the request's deadline
// passes first; then `error` says why and the result is false.
bool wait_for_reply(std::int64_t delay_ms, const Request& request, const std::atomic<bool>& cancel,
                    std::string& error);

class ReplyCache;

// How live backends use the reply cache (docs/live-backends.md, "Record and replay").
enum class CacheMode : std::uint8_t { Off, Read, Write, ReadWrite };
std::optional<CacheMode> parse_cache_mode(std::string_view text);  // off|read|write|readwrite

// True for "openai:..." and "anthropic:...": the specs that name a live profile.
bool is_live_spec(std::string_view spec);

struct OpenOptions {
  CacheMode cache = CacheMode::Off;
  std::shared_ptr<ReplyCache> replies;  // required unless cache is Off
  std::int64_t repeat =
      0;  // the sample index: the cache keys on it beside the request; a sim adds it to its seed
};

// "scripted:FILE", "sim:FILE?...", "openai:PROFILE.json" or "anthropic:PROFILE.json". A bad spec,
// file or profile is rejected before any call (exit 2); so is a live profile whose secret
// variable is unset, unless the cache is read-only (a replay needs no key).
Result<std::unique_ptr<Model>> open_model(const std::string& spec, const OpenOptions& options = {});

}  // namespace mf::model
