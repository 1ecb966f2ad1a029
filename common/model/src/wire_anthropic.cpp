// The Anthropic Messages API wire format (wire.hpp): request bodies (a top-level system text,
// strictly alternating user/assistant messages of content blocks, tool_use and tool_result
// blocks), a message body into a Reply, and a stream of message events assembled into one.
#include <string>
#include <utility>
#include <vector>

#include "mf/diag/codes.hpp"
#include "mf/json/canonical.hpp"
#include "mf/json/reader.hpp"
#include "wire.hpp"

namespace mf::model::wire::detail {

namespace {

constexpr std::int64_t kDefaultMaxTokens = 4096;  // the API requires max_tokens

const std::string* string_member(const json::Value* object, std::string_view key) {
  if (object == nullptr) return nullptr;
  const json::Value* v = object->find(key);
  return v != nullptr && v->is_string() ? &v->as_string() : nullptr;
}

const json::Value* object_member(const json::Value* object, std::string_view key) {
  if (object == nullptr) return nullptr;
  const json::Value* v = object->find(key);
  return v != nullptr && v->is_object() ? v : nullptr;
}

// Anthropic counts cached prompt tokens apart from input_tokens; they were input all the same
// (OpenAI's prompt_tokens includes its cached tokens), so they are added in.
std::optional<std::int64_t> input_tokens(const json::Value* u) {
  std::optional<std::int64_t> n = count(u, "input_tokens");
  if (!n) return n;
  for (const char* key : {"cache_creation_input_tokens", "cache_read_input_tokens"}) {
    if (auto extra = count(u, key)) *n += *extra;
  }
  return n;
}

json::Value text_block(std::string text) {
  json::Value b;
  b.set("type", "text");
  b.set("text", std::move(text));
  return b;
}

// The conversation as the API wants it: consecutive messages of one role become one message,
// and empty text is left out (the API refuses empty text blocks and empty messages).
class Conversation {
 public:
  void add(std::string_view role, json::Array blocks) {
    if (blocks.empty()) return;
    json::Array& list = messages_.as_array();
    if (!list.empty() && *list.back().find("role") == json::Value(role)) {
      json::Array& content = list.back().find("content")->as_array();
      for (json::Value& b : blocks) content.push_back(std::move(b));
      return;
    }
    json::Value msg;
    msg.set("role", role);
    msg.set("content", std::move(blocks));
    list.push_back(std::move(msg));
  }
  json::Value take() { return std::move(messages_); }

 private:
  json::Value messages_ = json::Array{};
};

json::Array assistant_blocks(const Message& m, bool native) {
  json::Array blocks;
  if (!native) {
    std::string text = m.content;
    for (const ToolCallRequest& c : m.tool_calls) {
      if (!text.empty()) text += "\n";
      text += call_as_text(c);
    }
    if (!text.empty()) blocks.push_back(text_block(std::move(text)));
    return blocks;
  }
  if (!m.content.empty()) blocks.push_back(text_block(m.content));
  for (const ToolCallRequest& c : m.tool_calls) {
    // `input` must be an object. Arguments that are not one are sent as {}, and what the model
    // wrote goes along as text, so that it sees its own mistake in the history.
    Result<json::Value> args = json::parse(c.arguments);
    const bool object = args.ok() && args->is_object();
    if (!object && !c.arguments.empty()) blocks.push_back(text_block(c.arguments));
    json::Value use;
    use.set("type", "tool_use");
    use.set("id", c.id);
    use.set("name", c.name);
    use.set("input", object ? std::move(*args) : json::Value(json::Object{}));
    blocks.push_back(std::move(use));
  }
  return blocks;
}

json::Value tool_definition(const ToolSchema& t) {
  json::Value tool;
  tool.set("name", t.name);
  if (!t.description.empty()) tool.set("description", t.description);
  tool.set("input_schema", t.input_schema.is_null() ? json::Value(json::Object{{"type", "object"}})
                                                    : t.input_schema);
  return tool;
}

}  // namespace

json::Value build_anthropic(const Settings& settings, const Request& request) {
  json::Value body = json::Object{};
  // Options first, so that no option can replace a member the codec itself writes.
  if (settings.options.is_object()) {
    for (const json::Member& m : settings.options.as_object()) body.set(m.key, m.value);
  }
  if (body.find("max_tokens") == nullptr) body.set("max_tokens", kDefaultMaxTokens);
  body.set("model", settings.model);
  const bool native = settings.native_tools;
  std::string system;
  auto add_system = [&](std::string_view text) {
    if (text.empty()) return;
    if (!system.empty()) system += "\n\n";
    system += text;
  };
  Conversation conversation;
  for (const Message& m : request.messages) {
    if (m.role == "system") {
      add_system(m.content);
    } else if (m.role == "assistant") {
      conversation.add("assistant", assistant_blocks(m, native));
    } else if (m.role == "tool") {
      json::Array blocks;
      if (native) {
        json::Value result;
        result.set("type", "tool_result");
        result.set("tool_use_id", m.tool_call_id);
        result.set("content", m.content);
        result.set("is_error", m.is_error);
        blocks.push_back(std::move(result));
      } else {
        blocks.push_back(text_block(result_as_text(m)));
      }
      conversation.add("user", std::move(blocks));
    } else {
      json::Array blocks;
      if (!m.content.empty()) blocks.push_back(text_block(m.content));
      conversation.add(m.role, std::move(blocks));
    }
  }
  if (!request.tools.empty()) {
    if (native) {
      json::Value tools = json::Array{};
      for (const ToolSchema& t : request.tools) tools.push_back(tool_definition(t));
      body.set("tools", std::move(tools));
    } else {
      add_system(tools_instructions(request.tools));
    }
  }
  if (!system.empty()) body.set("system", std::move(system));
  body.set("messages", conversation.take());
  if (settings.stream) body.set("stream", true);
  return body;
}

Reply parse_anthropic(std::string_view body) {
  Result<json::Value> doc = json::parse(body);
  if (!doc) return failure(malformed("the response body", doc.diagnostics()));
  if (!doc->is_object()) return failure("the response body is not a JSON object");
  const json::Value* e = doc->find("error");
  const std::string* type = string_member(&*doc, "type");
  if ((e != nullptr && !e->is_null()) || (type != nullptr && *type == "error")) {
    const std::string said = e != nullptr ? provider_error(*e) : std::string();
    return failure("the response is an error" + (said.empty() ? std::string() : ": " + said));
  }
  const json::Value* content = doc->find("content");
  if (content == nullptr || !content->is_array()) return failure("the response has no content");
  Reply r;
  r.ok = true;
  for (const json::Value& block : content->as_array()) {
    const std::string* kind = string_member(&block, "type");
    if (kind == nullptr) continue;
    if (*kind == "text") {
      if (const std::string* s = string_member(&block, "text")) r.content += *s;
    } else if (*kind == "thinking") {
      if (const std::string* s = string_member(&block, "thinking")) r.reasoning += *s;
    } else if (*kind == "tool_use") {
      ToolCallRequest call;
      if (const std::string* s = string_member(&block, "id")) call.id = *s;
      call.malformed = name_problem(block.find("name"));
      if (call.malformed.empty()) call.name = block.find("name")->as_string();
      // `input` is an object; a server that sends text instead has its text taken as written.
      const json::Value* input = block.find("input");
      if (input != nullptr && input->is_string()) {
        call.arguments = input->as_string();
      } else if (input != nullptr && !input->is_null()) {
        call.arguments = json::canonical(*input);
      }
      r.tool_calls.push_back(std::move(call));
    }
    // redacted_thinking and server-side blocks carry nothing the loop reads.
  }
  if (const std::string* s = string_member(&*doc, "stop_reason")) r.stop_reason = *s;
  const json::Value* u = object_member(&*doc, "usage");
  r.usage = usage(input_tokens(u), count(u, "output_tokens"));
  take_response_identity(&*doc, r.response_model, r.response_id);
  return r;
}

namespace {

// message_start, then per content block a content_block_start, its deltas and a
// content_block_stop, then message_delta (stop reason, output tokens) and message_stop; ping
// may come anywhere and error ends the stream.
class AnthropicStream final : public StreamAssembler {
 public:
  Status event(std::string_view name, std::string_view data) override {
    if (stopped_) return {};  // nothing after message_stop belongs to the reply
    ++events_;
    if (name != "error") {
      if (const json::Value* doc = cache_.match(data)) return apply(name, *doc);
    }
    Result<json::Value> doc = json::parse(data);
    if (!doc) {
      return stream_failure(
          malformed("stream event " + std::to_string(events_), doc.diagnostics()));
    }
    if (!doc->is_object()) {
      return stream_failure("stream event " + std::to_string(events_) + " is not a JSON object");
    }
    Status s = apply(name, *doc);
    if (s.ok()) {
      if (auto path = text_slot(*doc)) cache_.learn(data, *doc, std::move(*path));
    }
    return s;
  }

  Status apply(std::string_view name, const json::Value& doc) {
    // The data's own type names the event; the SSE event name is the fallback.
    const std::string* t = string_member(&doc, "type");
    const std::string_view type = t != nullptr ? std::string_view(*t) : name;
    if (type == "error" || name == "error") {
      const json::Value* e = doc.find("error");
      const std::string said = e != nullptr ? provider_error(*e) : std::string();
      const std::string* kind = e != nullptr ? string_member(e, "type") : nullptr;
      transient_ = kind != nullptr && (*kind == "overloaded_error" || *kind == "api_error");
      return stream_failure("the server sent an error in the stream" +
                            (said.empty() ? std::string() : ": " + said));
    }
    if (type == "content_block_delta") {
      delta(doc);
    } else if (type == "content_block_start") {
      block_start(doc);
    } else if (type == "message_start") {
      take_response_identity(object_member(&doc, "message"), model_, id_);
      const json::Value* u = object_member(object_member(&doc, "message"), "usage");
      input_ = input_tokens(u);
      output_ = count(u, "output_tokens");
    } else if (type == "message_delta") {
      if (const std::string* s = string_member(object_member(&doc, "delta"), "stop_reason")) {
        stop_reason_ = *s;
      }
      const json::Value* u = object_member(&doc, "usage");
      if (auto n = count(u, "output_tokens")) output_ = n;
      if (!input_) input_ = input_tokens(u);
      started_ = true;
    } else if (type == "message_stop") {
      stopped_ = true;
    }
    // ping, content_block_stop and event types added later carry nothing to assemble.
    return {};
  }

  Reply finish() override {
    if (!stopped_) {
      return failure("the stream was truncated: it ended after " + std::to_string(events_) +
                     " events without message_stop");
    }
    Reply r;
    r.ok = true;
    r.content = std::move(content_);
    r.reasoning = std::move(reasoning_);
    r.stop_reason = std::move(stop_reason_);
    r.usage = usage(input_, output_);
    r.response_model = std::move(model_);
    r.response_id = std::move(id_);
    r.tool_calls.reserve(calls_.size());
    for (Call& c : calls_) {
      // Streamed input arrives as JSON text in pieces; a call that sent none has the input of its
      // content_block_start, or none (read as {} by the loop: model::no_arguments).
      if (c.call.arguments.empty()) c.call.arguments = c.start_input;
      r.tool_calls.push_back(std::move(c.call));
    }
    return r;
  }

  bool started() const override { return started_; }
  bool transient() const override { return transient_; }

 private:
  struct Call {
    std::int64_t index = 0;
    ToolCallRequest call;
    std::string start_input;  // a non-empty `input` given whole in content_block_start
  };

  // The path of the text a content_block_delta appends (EnvelopeCache): its deltas come by the
  // hundred with nothing but that text changing.
  static std::optional<std::vector<std::string>> text_slot(const json::Value& doc) {
    const std::string* type = string_member(&doc, "type");
    if (type == nullptr || *type != "content_block_delta") return {};
    const json::Value* d = object_member(&doc, "delta");
    std::optional<std::vector<std::string>> found;
    int texts = 0;
    for (const char* key : {"text", "thinking", "partial_json"}) {
      const std::string* s = string_member(d, key);
      if (s == nullptr || s->empty()) continue;
      ++texts;
      found = std::vector<std::string>{"delta", key};
    }
    if (texts != 1) return {};
    return found;
  }

  static std::int64_t block_index(const json::Value& doc) {
    const json::Value* i = doc.find("index");
    auto n = i != nullptr && i->is_number() ? i->as_exact_int() : std::nullopt;
    return n.value_or(-1);
  }

  void block_start(const json::Value& doc) {
    const json::Value* block = object_member(&doc, "content_block");
    const std::string* kind = string_member(block, "type");
    if (kind == nullptr) return;
    started_ = true;
    if (*kind == "text") {
      if (const std::string* s = string_member(block, "text")) content_ += *s;
    } else if (*kind == "thinking") {
      if (const std::string* s = string_member(block, "thinking")) reasoning_ += *s;
    } else if (*kind == "tool_use") {
      Call c;
      c.index = block_index(doc);
      if (const std::string* s = string_member(block, "id")) c.call.id = *s;
      c.call.malformed = name_problem(block->find("name"));
      if (c.call.malformed.empty()) c.call.name = block->find("name")->as_string();
      if (const json::Value* input = block->find("input")) {
        const bool empty_object = input->is_object() && input->as_object().empty();
        if (!empty_object) c.start_input = json::canonical(*input);
      }
      calls_.push_back(std::move(c));
    }
  }

  void delta(const json::Value& doc) {
    const json::Value* d = object_member(&doc, "delta");
    const std::string* kind = string_member(d, "type");
    if (kind == nullptr) return;
    started_ = true;
    if (*kind == "text_delta") {
      if (const std::string* s = string_member(d, "text")) content_ += *s;
    } else if (*kind == "thinking_delta") {
      if (const std::string* s = string_member(d, "thinking")) reasoning_ += *s;
    } else if (*kind == "input_json_delta") {
      const std::string* s = string_member(d, "partial_json");
      const std::int64_t index = block_index(doc);
      for (auto it = calls_.rbegin(); s != nullptr && it != calls_.rend(); ++it) {
        if (it->index == index) {
          it->call.arguments += *s;
          break;
        }
      }
    }
    // signature_delta and citations_delta carry nothing the loop reads.
  }

  std::string content_;
  std::string reasoning_;
  std::string stop_reason_;
  std::string model_;  // the response's model and id, from message_start
  std::string id_;
  std::optional<std::int64_t> input_;
  std::optional<std::int64_t> output_;
  std::vector<Call> calls_;
  EnvelopeCache cache_;
  std::int64_t events_ = 0;
  bool stopped_ = false;
  bool started_ = false;
  bool transient_ = false;
};

}  // namespace

std::unique_ptr<StreamAssembler> anthropic_stream() {
  return std::make_unique<AnthropicStream>();
}

}  // namespace mf::model::wire::detail
