// The scripted model (docs/formats/scripted.md): an ordered queue of steps read from a JSON file.
// Each call consumes one step; an exhausted script is a provider failure, which makes extra calls
// visible.
//
//   {"steps": [
//     {"content": "{\"risk\": \"...\"}", "usage": {"input_tokens": 10, "output_tokens": 5}},
//     {"tool_calls": [{"name": "read", "arguments": {"path": "a.txt"}}]},
//     {"tool_calls": [{"id": "c9", "name": "read", "arguments": "{\"path\": "}]},  // raw text
//     {"failure": "provider timed out"},
//     {"content": "...", "delay_ms": 50}          // waits (cancellably) before answering
//   ]}
#pragma once

#include <deque>
#include <string_view>

#include "mf/model/model.hpp"

namespace mf::model {

struct ScriptedStep {
  bool failure = false;
  std::string content;  // or the failure message
  std::vector<ToolCallRequest> tool_calls;
  json::Value usage;
  std::int64_t delay_ms = 0;
};

class ScriptedModel final : public Model {
 public:
  explicit ScriptedModel(std::deque<ScriptedStep> steps) : steps_(std::move(steps)) {}
  static Result<std::unique_ptr<ScriptedModel>> parse(std::string_view bytes);
  // The steps of a scripted file (what parse() queues), for models built over a trajectory.
  static Result<std::deque<ScriptedStep>> parse_steps(std::string_view bytes);

  Reply infer(const Request& request, const std::atomic<bool>& cancel) override;
  std::string name() const override { return "scripted"; }
  std::size_t remaining() const { return steps_.size(); }

 private:
  std::deque<ScriptedStep> steps_;
};

inline constexpr std::string_view kScriptExhausted = "scripted model has no response remaining";

}  // namespace mf::model
