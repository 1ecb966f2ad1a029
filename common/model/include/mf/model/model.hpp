// Model backends behind one interface. The run loop sees only requests and replies; a provider
// failure is a reply, not an exception, so the loop decides its terminal state.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mf/diag/diagnostic.hpp"
#include "mf/json/value.hpp"

namespace mf::model {

struct Message {
  std::string role;  // system | user | assistant
  std::string content;
};

struct Request {
  std::int64_t call = 0;  // 1-based model call number within the run
  std::vector<Message> messages;
};

struct Reply {
  bool ok = false;
  std::string content;  // assistant content when ok
  json::Value usage;    // provider-reported usage (object) or null
  std::string error;    // provider failure when !ok
};

class Model {
 public:
  virtual ~Model() = default;
  // `cancel` is polled while waiting; a cancelled call returns a failure reply.
  virtual Reply infer(const Request& request, const std::atomic<bool>& cancel) = 0;
  virtual std::string name() const = 0;  // recorded in run_started, e.g. "scripted"
};

// "scripted:FILE" -> a ScriptedModel over FILE. Other backends are rejected (exit 2) until built.
Result<std::unique_ptr<Model>> open_model(const std::string& spec);

}  // namespace mf::model
