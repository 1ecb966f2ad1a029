// Millforge's request.* tools: the run's request as the model sees it, its instruction and
// context (inspect_request) and the requirements its context states (read_requirements).
#include <string>
#include <utility>

#include "mf/json/canonical.hpp"
#include "millforge_builtins.hpp"
#include "millforge_support.hpp"

namespace mf::tools {

using namespace millforge;
using json::Value;

ToolResult run_inspect_request(const Invocation& call) {
  if (!call.request.is_object()) return failure("No request is available to this run");
  const Value* instruction = member(call.request, "instruction");
  const Value* context = member(call.request, "context");
  const std::string text_instruction =
      instruction != nullptr && instruction->is_string() ? instruction->as_string() : "";
  const Value shown_context =
      context != nullptr && context->is_object() ? *context : Value(json::Object{});
  std::string summary =
      text_instruction.empty()
          ? std::string("The request has no instruction")
          : "The request's instruction has " + std::to_string(text_instruction.size()) + " bytes";
  summary += "; its context has " + std::to_string(shown_context.as_object().size()) + " member" +
             (shown_context.as_object().size() == 1 ? "" : "s");
  const std::string text =
      json::canonical(json::Object{{"instruction", text_instruction}, {"context", shown_context}});
  return success(text, summary, {{"instruction", text_instruction}, {"context", shown_context}});
}

ToolResult run_read_requirements(const Invocation& call) {
  const Value* context = member(call.request, "context");
  const Value* requirements = context != nullptr ? member(*context, "requirements") : nullptr;
  if (requirements == nullptr || requirements->is_null()) {
    return failure("The request states no requirements (its context has no \"requirements\")");
  }
  std::string text =
      requirements->is_string() ? requirements->as_string() : json::canonical(*requirements);
  std::string summary = requirements->is_array()
                            ? "The request states " +
                                  std::to_string(requirements->as_array().size()) + " requirement" +
                                  (requirements->as_array().size() == 1 ? "" : "s")
                            : std::string("The request states its requirements");
  return success(std::move(text), std::move(summary), {{"requirements", *requirements}});
}

}  // namespace mf::tools
