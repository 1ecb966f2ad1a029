// The Forge task (docs/formats/task.md): product configuration validated completely before a run
// starts. An invalid task is a rejected request (exit 2) and never produces a trace.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "mf/diag/diagnostic.hpp"
#include "mf/json/value.hpp"

namespace mf::runtime {

struct OutputContract {
  std::vector<std::string> required_fields;
  bool reject_unknown_fields = true;
};

struct Budget {
  std::int64_t max_model_calls = 1;
  std::int64_t max_repairs = 0;
  std::int64_t max_output_bytes = 4096;
};

struct Task {
  std::string id;
  std::string objective;
  json::Value input;  // free-form object handed to the model
  OutputContract contract;
  Budget budget;
  std::string risk;    // low | medium | high
  std::string sha256;  // digest of the task file's exact bytes
};

// Strictly parses and validates task bytes; every problem is reported, each with its pointer.
Result<Task> parse_task(std::string_view bytes);

json::Value budget_to_json(const Budget& b);

}  // namespace mf::runtime
