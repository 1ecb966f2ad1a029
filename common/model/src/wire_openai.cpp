// The OpenAI-compatible Chat Completions wire format (wire.hpp): request bodies for OpenAI, vLLM,
// llama.cpp server, Ollama and LM Studio, a chat.completion body into a Reply, and a stream of
// chat.completion.chunk events assembled into one. Servers differ in what they leave out (null
// content, no [DONE], `reasoning` for `reasoning_content`), so every member is optional here and
// only its absence where a reply needs it is a failure.
#include <string>
#include <utility>
#include <vector>

#include "mf/diag/codes.hpp"
#include "mf/json/canonical.hpp"
#include "mf/json/reader.hpp"
#include "wire.hpp"

namespace mf::model::wire::detail {

namespace {

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

json::Value openai_usage(const json::Value* u) {
  if (u == nullptr || !u->is_object()) return json::Value();
  return usage(count(u, "prompt_tokens"), count(u, "completion_tokens"),
               count(object_member(u, "completion_tokens_details"), "reasoning_tokens"));
}

// The choice a reply is read from: index 0 (a server asked for one completion sends one).
const json::Value* first_choice(const json::Value& doc) {
  const json::Value* choices = doc.find("choices");
  if (choices == nullptr || !choices->is_array()) return nullptr;
  for (const json::Value& c : choices->as_array()) {
    if (!c.is_object()) continue;
    const json::Value* index = c.find("index");
    if (index == nullptr || (index->is_number() && index->as_exact_int() == 0)) return &c;
  }
  return nullptr;
}

// Tool-call arguments: the raw text the model wrote; a server that sends an object instead
// (some do) gets its canonical text, and a call without arguments has "" (the loop reads empty
// arguments as {}: model::no_arguments).
std::string arguments_text(const json::Value* args) {
  if (args == nullptr || args->is_null()) return "";
  if (args->is_string()) return args->as_string();
  return json::canonical(*args);
}

json::Value tool_definition(const ToolSchema& t) {
  json::Value function;
  function.set("name", t.name);
  if (!t.description.empty()) function.set("description", t.description);
  function.set("parameters", t.input_schema.is_null()
                                 ? json::Value(json::Object{{"type", "object"}})
                                 : t.input_schema);
  json::Value tool;
  tool.set("type", "function");
  tool.set("function", std::move(function));
  return tool;
}

json::Value assistant_message(const Message& m, bool native) {
  json::Value msg;
  msg.set("role", "assistant");
  if (!native) {
    std::string text = m.content;
    for (const ToolCallRequest& c : m.tool_calls) {
      if (!text.empty()) text += "\n";
      text += call_as_text(c);
    }
    msg.set("content", std::move(text));
    return msg;
  }
  if (m.tool_calls.empty()) {
    msg.set("content", m.content);
    return msg;
  }
  msg.set("content", m.content.empty() ? json::Value() : json::Value(m.content));
  json::Value calls = json::Array{};
  for (const ToolCallRequest& c : m.tool_calls) {
    json::Value function;
    function.set("name", c.name);
    function.set("arguments", c.arguments);
    json::Value call;
    call.set("id", c.id);
    call.set("type", "function");
    call.set("function", std::move(function));
    calls.push_back(std::move(call));
  }
  msg.set("tool_calls", std::move(calls));
  return msg;
}

}  // namespace

json::Value build_openai(const Settings& settings, const Request& request) {
  json::Value body = json::Object{};
  // Options first, so that no option can replace a member the codec itself writes.
  if (settings.options.is_object()) {
    for (const json::Member& m : settings.options.as_object()) body.set(m.key, m.value);
  }
  body.set("model", settings.model);
  const bool native = settings.native_tools;
  json::Value messages = json::Array{};
  for (const Message& m : request.messages) {
    if (m.role == "assistant") {
      messages.push_back(assistant_message(m, native));
    } else if (m.role == "tool") {
      json::Value msg;
      if (native) {
        msg.set("role", "tool");
        msg.set("tool_call_id", m.tool_call_id);
        msg.set("content", m.content);
      } else {
        msg.set("role", "user");
        msg.set("content", result_as_text(m));
      }
      messages.push_back(std::move(msg));
    } else {
      json::Value msg;
      msg.set("role", m.role);
      msg.set("content", m.content);
      messages.push_back(std::move(msg));
    }
  }
  if (!request.tools.empty()) {
    if (native) {
      json::Value tools = json::Array{};
      for (const ToolSchema& t : request.tools) tools.push_back(tool_definition(t));
      body.set("tools", std::move(tools));
      body.set("parallel_tool_calls", settings.parallel_tool_calls);
    } else {
      // The tool list joins the system text: the first message when it is a system message,
      // else a system message of its own in front.
      const std::string instructions = tools_instructions(request.tools);
      json::Array& list = messages.as_array();
      json::Value* role = list.empty() ? nullptr : list.front().find("role");
      if (role != nullptr && role->is_string() && role->as_string() == "system") {
        std::string& text = list.front().find("content")->as_string();
        if (!text.empty()) text += "\n\n";
        text += instructions;
      } else {
        json::Value msg;
        msg.set("role", "system");
        msg.set("content", instructions);
        list.insert(list.begin(), std::move(msg));
      }
    }
  }
  body.set("messages", std::move(messages));
  if (settings.stream) {
    body.set("stream", true);
    body.set("stream_options", json::Value(json::Object{{"include_usage", true}}));
  }
  return body;
}

Reply parse_openai(std::string_view body) {
  Result<json::Value> doc = json::parse(body);
  if (!doc) return failure(malformed("the response body", doc.diagnostics()));
  if (!doc->is_object()) return failure("the response body is not a JSON object");
  if (const json::Value* e = doc->find("error"); e != nullptr && !e->is_null()) {
    const std::string said = provider_error(*e);
    return failure("the response is an error" + (said.empty() ? std::string() : ": " + said));
  }
  const json::Value* choice = first_choice(*doc);
  if (choice == nullptr) return failure("the response has no choices");
  const json::Value* message = object_member(choice, "message");
  if (message == nullptr) return failure("the response's choice has no message");
  Reply r;
  r.ok = true;
  if (const std::string* s = string_member(message, "content")) r.content = *s;
  if (const std::string* s = string_member(message, "reasoning_content")) {
    r.reasoning = *s;
  } else if (const std::string* s = string_member(message, "reasoning")) {
    r.reasoning = *s;
  }
  if (const json::Value* calls = message->find("tool_calls"); calls && calls->is_array()) {
    for (const json::Value& c : calls->as_array()) {
      if (!c.is_object()) continue;
      ToolCallRequest call;
      if (const std::string* id = string_member(&c, "id")) call.id = *id;
      const json::Value* function = object_member(&c, "function");
      call.malformed = name_problem(function != nullptr ? function->find("name") : nullptr);
      if (call.malformed.empty()) call.name = function->find("name")->as_string();
      call.arguments = arguments_text(function != nullptr ? function->find("arguments") : nullptr);
      r.tool_calls.push_back(std::move(call));
    }
  }
  if (const std::string* s = string_member(choice, "finish_reason")) r.stop_reason = *s;
  if (const std::string* refusal = string_member(message, "refusal");
      refusal && !refusal->empty()) {
    r.content = *refusal;
    r.stop_reason = "refusal";
  }
  r.usage = openai_usage(doc->find("usage"));
  take_response_identity(&*doc, r.response_model, r.response_id);
  return r;
}

namespace {

// chat.completion.chunk events: deltas of the first choice appended as they come, tool calls
// assembled by their `index`, usage from whichever chunk carries it (with include_usage, a last
// chunk with no choices).
class OpenAiStream final : public StreamAssembler {
 public:
  Status event(std::string_view name, std::string_view data) override {
    if (done_) return {};  // nothing after [DONE] belongs to the reply
    ++events_;
    if (data == "[DONE]") {
      done_ = true;
      return {};
    }
    if (name != "error") {
      if (const json::Value* doc = cache_.match(data)) {
        apply(*doc);
        return {};
      }
    }
    Result<json::Value> doc = json::parse(data);
    if (!doc) {
      return stream_failure(
          malformed("stream event " + std::to_string(events_), doc.diagnostics()));
    }
    if (!doc->is_object()) {
      return stream_failure("stream event " + std::to_string(events_) + " is not a JSON object");
    }
    const json::Value* e = doc->find("error");
    if (name == "error" || (e != nullptr && !e->is_null())) {
      const std::string said = provider_error(e != nullptr ? *e : *doc);
      return stream_failure("the server sent an error in the stream" +
                            (said.empty() ? std::string() : ": " + said));
    }
    apply(*doc);
    if (auto path = text_slot(*doc)) cache_.learn(data, *doc, std::move(*path));
    return {};
  }

  Reply finish() override {
    if (!done_ && stop_reason_.empty()) {
      return failure("the stream was truncated: it ended after " + std::to_string(events_) +
                     " events without [DONE] or a finish_reason");
    }
    Reply r;
    r.ok = true;
    r.content = std::move(content_);
    r.reasoning = std::move(reasoning_);
    r.stop_reason = std::move(stop_reason_);
    r.usage = std::move(usage_);
    r.response_model = std::move(model_);
    r.response_id = std::move(id_);
    r.tool_calls.reserve(calls_.size());
    for (Call& c : calls_) {
      // The name comes whole in one delta; a call none of whose deltas named it is refused.
      if (c.call.name.empty()) c.call.malformed = c.bad_name.empty() ? "no name" : c.bad_name;
      r.tool_calls.push_back(std::move(c.call));
    }
    if (!refusal_.empty()) {
      r.content = std::move(refusal_);
      r.stop_reason = "refusal";
    }
    return r;
  }

  bool started() const override { return started_; }

 private:
  struct Call {
    std::int64_t index = 0;
    ToolCallRequest call;
    std::string bad_name;  // what was wrong with the first unusable `name` a delta sent
  };

  // What an event adds to the reply. Applying the same event twice appends its text twice and
  // changes nothing else (ids, names, finish_reason and usage are set, not added).
  void apply(const json::Value& doc) {
    take_response_identity(&doc, model_, id_);
    if (const json::Value* choice = first_choice(doc)) take_choice(*choice);
    if (const json::Value* u = doc.find("usage"); u != nullptr && u->is_object()) {
      usage_ = openai_usage(u);
      started_ = true;
    }
  }

  // The path of the one text an event appends, when it appends exactly one: such an event's
  // envelope is worth learning (EnvelopeCache), since the next events will likely repeat it.
  static std::optional<std::vector<std::string>> text_slot(const json::Value& doc) {
    if (const json::Value* u = doc.find("usage"); u != nullptr && !u->is_null()) return {};
    const json::Value* choices = doc.find("choices");
    if (choices == nullptr || !choices->is_array() || choices->as_array().size() != 1) return {};
    const json::Value* delta = object_member(&choices->as_array()[0], "delta");
    if (delta == nullptr) return {};
    std::optional<std::vector<std::string>> found;
    int texts = 0;
    auto consider = [&](const json::Value* v, std::vector<std::string> path) {
      if (v == nullptr || !v->is_string() || v->as_string().empty()) return;
      ++texts;
      found = std::move(path);
    };
    for (const char* key : {"content", "reasoning_content", "reasoning", "refusal"}) {
      consider(delta->find(key), {"choices", "0", "delta", key});
    }
    if (const json::Value* calls = delta->find("tool_calls"); calls && calls->is_array()) {
      for (std::size_t k = 0; k < calls->as_array().size(); ++k) {
        const json::Value* function = object_member(&calls->as_array()[k], "function");
        consider(
            function != nullptr ? function->find("arguments") : nullptr,
            {"choices", "0", "delta", "tool_calls", std::to_string(k), "function", "arguments"});
      }
    }
    if (texts != 1) return {};
    return found;
  }

  static void append(std::string& to, const json::Value* delta, std::string_view key) {
    if (const std::string* s = string_member(delta, key)) to += *s;
  }

  void take_choice(const json::Value& choice) {
    if (const json::Value* delta = object_member(&choice, "delta")) {
      const std::size_t before = content_.size() + reasoning_.size() + refusal_.size();
      append(content_, delta, "content");
      if (string_member(delta, "reasoning_content") != nullptr) {
        append(reasoning_, delta, "reasoning_content");
      } else {
        append(reasoning_, delta, "reasoning");
      }
      append(refusal_, delta, "refusal");
      if (content_.size() + reasoning_.size() + refusal_.size() != before) started_ = true;
      if (const json::Value* calls = delta->find("tool_calls"); calls && calls->is_array()) {
        take_tool_calls(calls->as_array());
      }
    }
    if (const std::string* s = string_member(&choice, "finish_reason"); s && !s->empty()) {
      stop_reason_ = *s;
      started_ = true;
    }
  }

  void take_tool_calls(const json::Array& deltas) {
    for (std::size_t k = 0; k < deltas.size(); ++k) {
      const json::Value& d = deltas[k];
      if (!d.is_object()) continue;
      started_ = true;
      const json::Value* index = d.find("index");
      std::optional<std::int64_t> i = index != nullptr && index->is_number()
                                          ? index->as_exact_int()
                                          : std::optional<std::int64_t>(std::int64_t(k));
      if (!i) continue;
      Call& c = slot(*i);
      if (const std::string* id = string_member(&d, "id"); id && c.call.id.empty()) {
        c.call.id = *id;
      }
      const json::Value* function = object_member(&d, "function");
      // The name comes whole in the call's first delta; later deltas repeat it or leave it out.
      if (const json::Value* name = function != nullptr ? function->find("name") : nullptr;
          name != nullptr && c.call.name.empty()) {
        std::string problem = name_problem(name);
        if (problem.empty()) {
          c.call.name = name->as_string();
        } else if (c.bad_name.empty()) {
          c.bad_name = std::move(problem);
        }
      }
      if (const json::Value* args = function != nullptr ? function->find("arguments") : nullptr) {
        if (args->is_string()) {
          c.call.arguments += args->as_string();
        } else if (!args->is_null()) {
          c.call.arguments = json::canonical(*args);
        }
      }
    }
  }

  Call& slot(std::int64_t index) {
    // Calls are few and the latest is the one being streamed: search from the back.
    for (auto it = calls_.rbegin(); it != calls_.rend(); ++it) {
      if (it->index == index) return *it;
    }
    calls_.push_back(Call{index, {}, {}});
    return calls_.back();
  }

  std::string content_;
  std::string reasoning_;
  std::string refusal_;
  std::string stop_reason_;
  std::string model_;  // the response's model and id, from its first chunk
  std::string id_;
  json::Value usage_;
  std::vector<Call> calls_;
  EnvelopeCache cache_;
  std::int64_t events_ = 0;
  bool done_ = false;
  bool started_ = false;
};

}  // namespace

std::unique_ptr<StreamAssembler> openai_stream() {
  return std::make_unique<OpenAiStream>();
}

}  // namespace mf::model::wire::detail
