// The scripted model (docs/formats/task.md): an ordered queue of steps read from a JSON file. Each
// call consumes one step; an exhausted script is a provider failure, which makes extra calls
// visible.
//
//   {"steps": [
//     {"content": "{\"risk\": \"...\"}", "usage": {"input_tokens": 10, "output_tokens": 5}},
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
  json::Value usage;
  std::int64_t delay_ms = 0;
};

class ScriptedModel final : public Model {
 public:
  explicit ScriptedModel(std::deque<ScriptedStep> steps) : steps_(std::move(steps)) {}
  static Result<std::unique_ptr<ScriptedModel>> parse(std::string_view bytes);

  Reply infer(const Request& request, const std::atomic<bool>& cancel) override;
  std::string name() const override { return "scripted"; }
  std::size_t remaining() const { return steps_.size(); }

 private:
  std::deque<ScriptedStep> steps_;
};

inline constexpr std::string_view kScriptExhausted = "scripted model has no response remaining";

}  // namespace mf::model
