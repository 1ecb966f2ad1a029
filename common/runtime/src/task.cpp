// Reading a Forge task (task.hpp): the contract and budget checked completely before a run starts.
#include "mf/runtime/task.hpp"

#include "mf/diag/codes.hpp"
#include "mf/hash/sha256.hpp"
#include "mf/json/fields.hpp"
#include "mf/json/pointer.hpp"
#include "mf/json/reader.hpp"

namespace mf::runtime {

namespace {

namespace codes = diag::codes;

constexpr std::size_t kMaxTaskBytes = 1u << 20;

void require_non_empty(json::FieldReader& r, std::string_view key,
                       const std::optional<std::string>& value) {
  if (value && value->empty()) {
    r.add(diag::error(codes::kBadIdentifier, "\"" + std::string(key) + "\" must not be empty",
                      r.pointer_of(key)));
  }
}

}  // namespace

namespace {

void read_contract(const json::Value& contract, Task& task, diag::Diagnostics& problems) {
  json::FieldReader c(contract, "/output_contract");
  if (const json::Value* fields = c.array("required_fields")) {
    const json::Array& items = fields->as_array();
    for (std::size_t i = 0; i < items.size(); ++i) {
      std::string pointer = c.pointer_of("required_fields");
      json::append_index(pointer, i);
      if (!items[i].is_string() || items[i].as_string().empty()) {
        c.add(diag::error(codes::kBadIdentifier, "required field names must be non-empty strings",
                          pointer));
      } else {
        task.contract.required_fields.push_back(items[i].as_string());
      }
    }
  }
  if (auto strict = c.boolean("reject_unknown_fields")) {
    task.contract.reject_unknown_fields = *strict;
  }
  c.reject_unknown({"required_fields", "reject_unknown_fields"});
  for (auto& d : c.take()) problems.push_back(std::move(d));
}

void read_budget(const json::Value& budget, Task& task, diag::Diagnostics& problems) {
  json::FieldReader b(budget, "/budget");
  auto calls = b.integer("max_model_calls");
  auto repairs = b.integer("max_repairs");
  auto bytes_cap = b.integer("max_output_bytes");
  b.reject_unknown({"max_model_calls", "max_repairs", "max_output_bytes"});
  if (calls && *calls < 1) {
    b.add(diag::error(codes::kBadBudget, "max_model_calls must be at least 1",
                      b.pointer_of("max_model_calls")));
  }
  if (repairs && *repairs < 0) {
    b.add(diag::error(codes::kBadBudget, "max_repairs must not be negative",
                      b.pointer_of("max_repairs")));
  }
  // A repair spends a model call: a budget with as many repairs as calls promises work it can
  // never perform.
  if (calls && repairs && *calls >= 1 && *repairs >= 0 && *repairs >= *calls) {
    b.add(diag::error(codes::kBadBudget,
                      "max_repairs (" + std::to_string(*repairs) +
                          ") must be less than max_model_calls (" + std::to_string(*calls) + ")",
                      b.pointer_of("max_repairs")));
  }
  if (bytes_cap && *bytes_cap < 1) {
    b.add(diag::error(codes::kBadBudget, "max_output_bytes must be at least 1",
                      b.pointer_of("max_output_bytes")));
  }
  if (calls) task.budget.max_model_calls = *calls;
  if (repairs) task.budget.max_repairs = *repairs;
  if (bytes_cap) task.budget.max_output_bytes = *bytes_cap;
  for (auto& d : b.take()) problems.push_back(std::move(d));
}

}  // namespace

Result<Task> parse_task(std::string_view bytes) {
  Result<json::Value> doc = json::parse_object(bytes, {.max_bytes = kMaxTaskBytes});
  if (!doc) return doc.take_diagnostics();

  Task task;
  task.sha256 = hash::sha256_hex(bytes);
  json::FieldReader top(*doc, "");
  auto id = top.string("id");
  auto objective = top.string("objective");
  require_non_empty(top, "id", id);
  require_non_empty(top, "objective", objective);
  if (const json::Value* input = top.object("input")) task.input = *input;
  auto risk = top.string("risk");
  if (risk && *risk != "low" && *risk != "medium" && *risk != "high") {
    top.add(diag::error(codes::kSchema,
                        "\"risk\" must be low, medium or high, found \"" + *risk + "\"",
                        top.pointer_of("risk")));
  }
  const json::Value* contract = top.object("output_contract");
  const json::Value* budget = top.object("budget");
  top.reject_unknown({"id", "objective", "input", "output_contract", "budget", "risk"});
  diag::Diagnostics problems = top.take();

  if (contract != nullptr) read_contract(*contract, task, problems);
  if (budget != nullptr) read_budget(*budget, task, problems);

  if (!problems.empty()) return problems;
  task.id = *id;
  task.objective = *objective;
  task.risk = *risk;
  return task;
}

json::Value budget_to_json(const Budget& b) {
  json::Value v;
  v.set("max_model_calls", b.max_model_calls);
  v.set("max_repairs", b.max_repairs);
  v.set("max_output_bytes", b.max_output_bytes);
  return v;
}

}  // namespace mf::runtime
