// The layered output verifier of task mode (docs/formats/task.md). Each layer names itself in its
// violations so a result never claims more than the layers that ran: byte_budget -> json -> shape
// -> required -> unknown -> semantic. It returns every violation of the first failing layer and
// stops there.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "mf/json/value.hpp"
#include "mf/runtime/task.hpp"

namespace mf::runtime {

struct Violation {
  std::string layer;    // byte_budget | json | shape | required | unknown | semantic
  std::string path;     // JSONPath-style location in the output: "$", "$.evidence"
  std::string code;     // missing_required_field, unknown_field, ...
  std::string message;  // exact and actionable: it is sent back to the model
};

json::Value to_json(const Violation& v);
json::Value to_json(const std::vector<Violation>& vs);

// Optional semantic layer: inspects the structurally valid output and returns its violations.
using SemanticCheck = std::function<std::vector<Violation>(const json::Value& output)>;

// The semantic evidence layer: the output's `evidence` must be a locator "path:line" or
// "path:start-end" naming lines that exist in a file beneath `root`, read through the same confined
// reader as mf-toolread. Separate codes: malformed_locator, missing_file, bad_range.
SemanticCheck evidence_check(std::string root);

struct Verdict {
  std::vector<Violation> violations;  // empty when the output is accepted
  json::Value output;                 // the parsed output when accepted
};

Verdict verify_output(const Task& task, std::string_view content,
                      const SemanticCheck& semantic = {});

}  // namespace mf::runtime
