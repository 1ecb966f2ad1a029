// The scripted model (scripted.hpp): its steps read from JSON, then one consumed per call.
#include "mf/model/scripted.hpp"

#include <chrono>
#include <thread>

#include "mf/diag/codes.hpp"
#include "mf/io/file.hpp"
#include "mf/json/canonical.hpp"
#include "mf/json/fields.hpp"
#include "mf/json/pointer.hpp"
#include "mf/json/reader.hpp"
#include "mf/model/sim.hpp"

namespace mf::model {

namespace {

// [{"id"?, "name", "arguments"?: object | raw JSON text}]; an object is sent as its canonical text,
// and no arguments as "" (which the loop reads as {}).
std::vector<ToolCallRequest> read_tool_calls(json::FieldReader& r, const json::Value& calls) {
  std::vector<ToolCallRequest> out;
  const json::Array& items = calls.as_array();
  for (std::size_t i = 0; i < items.size(); ++i) {
    std::string pointer = r.pointer_of("tool_calls");
    json::append_index(pointer, i);
    json::FieldReader c(items[i], pointer);
    ToolCallRequest call;
    call.id = c.string("id", false).value_or("");
    call.name = c.string("name").value_or("");
    if (const json::Value* args = items[i].find("arguments")) {
      if (args->is_string()) {
        call.arguments = args->as_string();
      } else {
        call.arguments = json::canonical(*args);
      }
    }
    c.reject_unknown({"id", "name", "arguments"});
    for (auto& d : c.take()) r.add(std::move(d));
    out.push_back(std::move(call));
  }
  return out;
}

}  // namespace

Result<std::unique_ptr<ScriptedModel>> ScriptedModel::parse(std::string_view bytes) {
  auto steps = parse_steps(bytes);
  if (!steps) return steps.take_diagnostics();
  return std::make_unique<ScriptedModel>(std::move(*steps));
}

Result<std::deque<ScriptedStep>> ScriptedModel::parse_steps(std::string_view bytes) {
  Result<json::Value> doc = json::parse_object(bytes);
  if (!doc) return doc.take_diagnostics();
  json::FieldReader top(*doc, "");
  const json::Value* steps = top.array("steps");
  top.reject_unknown({"steps"});
  diag::Diagnostics problems = top.take();
  std::deque<ScriptedStep> queue;
  if (steps != nullptr) {
    const json::Array& items = steps->as_array();
    for (std::size_t i = 0; i < items.size(); ++i) {
      std::string pointer = "/steps";
      json::append_index(pointer, i);
      json::FieldReader r(items[i], pointer);
      ScriptedStep step;
      const bool has_failure = items[i].find("failure") != nullptr;
      if (has_failure) {
        step.failure = true;
        step.content = r.string("failure").value_or("");
      } else if (items[i].find("tool_calls") != nullptr) {
        step.content = r.string("content", false).value_or("");
        if (const json::Value* calls = r.array("tool_calls")) {
          step.tool_calls = read_tool_calls(r, *calls);
        }
      } else {
        step.content = r.string("content").value_or("");
      }
      if (const json::Value* usage = r.object("usage", false)) step.usage = *usage;
      if (auto delay = r.integer("delay_ms", false)) {
        if (*delay < 0) {
          r.add(diag::error(diag::codes::kSchema, "delay_ms must not be negative",
                            r.pointer_of("delay_ms")));
        }
        step.delay_ms = *delay;
      }
      for (const char* key : {"content", "tool_calls"}) {
        if (has_failure && items[i].find(key) != nullptr) {
          r.add(diag::error(diag::codes::kSchema, "a step is either a response or a failure",
                            r.pointer_of(key)));
        }
      }
      r.reject_unknown({"content", "tool_calls", "failure", "usage", "delay_ms"});
      for (auto& d : r.take()) problems.push_back(std::move(d));
      queue.push_back(std::move(step));
    }
  }
  if (!problems.empty()) return problems;
  return queue;
}

Reply ScriptedModel::infer(const Request& request, const std::atomic<bool>& cancel) {
  Reply reply;
  if (steps_.empty()) {
    reply.error = std::string(kScriptExhausted);
    return reply;
  }
  ScriptedStep step = std::move(steps_.front());
  steps_.pop_front();
  if (!wait_for_reply(step.delay_ms, request, cancel, reply.error)) return reply;
  reply.usage = std::move(step.usage);
  if (step.failure) {
    reply.error = std::move(step.content);
  } else {
    reply.ok = true;
    reply.content = std::move(step.content);
    reply.tool_calls = std::move(step.tool_calls);
  }
  return reply;
}

bool wait_for_reply(std::int64_t delay_ms, const Request& request, const std::atomic<bool>& cancel,
                    std::string& error) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(delay_ms);
  for (;;) {
    const auto now = std::chrono::steady_clock::now();
    if (cancel.load()) {
      error = "cancelled while waiting for the model";
      return false;
    }
    if (now >= request.deadline) {
      error = "the run's deadline passed while waiting for the model";
      return false;
    }
    if (now >= until) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace mf::model
