// The execution boundary (executor.hpp): every check before a tool runs and every bound after it,
// and the trace record of each call.
#include "mf/tools/executor.hpp"

#include <algorithm>
#include <chrono>

#include "implementations.hpp"
#include "mf/diag/codes.hpp"
#include "mf/diag/secrets.hpp"
#include "mf/json/canonical.hpp"
#include "mf/json/reader.hpp"
#include "mf/schema/schema.hpp"

namespace mf::tools {
namespace {

using json::Value;
using Clock = std::chrono::steady_clock;

constexpr std::size_t kMaxSummaryShown = 200;

std::string quoted(std::string_view s) {
  return "\"" + std::string(s) + "\"";
}

// Pi's validation message: one line per violation, then the arguments as received.
std::string validation_message(const std::string& name, const std::vector<schema::Violation>& vs,
                               const Value& args) {
  std::string out = "Validation failed for tool " + quoted(name) + ":";
  for (const auto& v : vs) {
    out += "\n  - " + (v.instance_pointer.empty() ? std::string("root") : v.instance_pointer) +
           ": " + v.message;
  }
  out += "\n\nReceived arguments:\n" + json::canonical(args);
  return out;
}

// Cuts UTF-8 text at a code-point boundary at or below `max` bytes.
void cut_utf8(std::string& s, std::size_t max) {
  if (s.size() <= max) return;
  std::size_t end = max;
  while (end > 0 && (static_cast<unsigned char>(s[end]) & 0xC0) == 0x80) --end;
  s.resize(end);
}

std::string first_line(const std::string& text, std::size_t max) {
  std::string line = text.substr(0, text.find('\n'));
  cut_utf8(line, std::min(max, kMaxSummaryShown));
  return line;
}

bool writes(SideEffect s) {
  return s == SideEffect::ArtifactWrite || s == SideEffect::WorkspaceWrite ||
         s == SideEffect::ProcessExecution || s == SideEffect::NetworkWrite;
}

constexpr std::string_view kVerdicts[] = {"allowed", "denied"};
constexpr std::string_view kExecutionStatuses[] = {"not_executed", "success",   "soft_failure",
                                                   "hard_failure", "cancelled", "timed_out"};
constexpr std::string_view kCertainties[] = {"not_attempted", "confirmed_absent",
                                             "confirmed_complete", "completion_unknown"};

Verdict verdict(bool allowed) {
  return allowed ? Verdict::Allowed : Verdict::Denied;
}

// After the call: the output schema, then redaction, then the bounds of the output policy.
void bound_output(const ToolDescriptor& tool, const std::string& name, ToolResult& result) {
  // The output schema describes a successful call's structured result (details); an error result
  // keeps its own message.
  if (auto violations = result.is_error ? std::vector<schema::Violation>{}
                                        : schema::validate(tool.output_schema, result.details);
      !violations.empty()) {
    result =
        ToolResult::error("Tool " + quoted(name) + " returned output that fails its schema: " +
                          violations.front().instance_pointer + " " + violations.front().message);
  }
  // Redaction first: a cut through a secret would leave a piece too short to recognise.
  const auto& policy = tool.output_policy;
  if (policy.redact_secrets) {
    result.text = diag::redact_secrets(result.text);
    if (!result.details.is_null()) {
      const std::string before = json::canonical(result.details);
      const std::string after = diag::redact_secrets(before);
      if (after != before) {
        auto reparsed = json::parse(after);
        result.details = reparsed ? std::move(*reparsed) : Value();
      }
    }
  }
  if (result.text.size() > std::size_t(policy.max_output_bytes)) {
    cut_utf8(result.text, std::size_t(policy.max_output_bytes));
    result.text += "\n\n[Output cut at " + std::to_string(policy.max_output_bytes) +
                   " bytes by the execution boundary]";
  }
  if (!result.details.is_null() &&
      json::canonical(result.details).size() > std::size_t(policy.max_output_bytes)) {
    result.details = Value();
  }
}

}  // namespace

std::string_view name(Verdict v) {
  return kVerdicts[static_cast<std::size_t>(v)];
}
std::string_view name(ExecutionStatus s) {
  return kExecutionStatuses[static_cast<std::size_t>(s)];
}
std::string_view name(SideEffectCertainty c) {
  return kCertainties[static_cast<std::size_t>(c)];
}

Result<std::vector<Binding>> bindings_from_plan(const json::Value& plan) {
  std::vector<Binding> out;
  diag::Diagnostics ds;
  const Value* nodes = plan.find("nodes");
  if (nodes == nullptr || !nodes->is_array()) {
    return diag::error(diag::codes::kPlanInvalid, "plan has no nodes", "/nodes");
  }
  for (std::size_t i = 0; i < nodes->as_array().size(); ++i) {
    const Value& n = nodes->as_array()[i];
    // The node's descriptor as the plan loader reads it (mf::harness::load_plan refuses a node
    // whose descriptor_sha256 is not the digest of what it says), so a loaded plan binds.
    auto descriptor = plan_node_descriptor(n, "/nodes/" + std::to_string(i));
    if (!descriptor) {
      for (const auto& d : descriptor.diagnostics()) ds.push_back(d);
      continue;
    }
    Binding b;
    b.tool = std::move(*descriptor);
    b.node_id = n.find("node_id")->as_string();
    for (const Value& a : n.find("produced_artifact_ids")->as_array()) {
      b.produces.push_back(a.as_string());
    }
    if (const Value* t = n.find("terminal_result"); t != nullptr && t->is_string()) {
      b.terminal_result = t->as_string();
    }
    b.required = n.find("required")->as_bool();
    for (const Value& p : n.find("prerequisites")->as_array()) {
      PrerequisiteRule rule{p.find("node_id")->as_string(), {}};
      for (const Value& m : p.find("argument_matches")->as_array()) {
        rule.matches.emplace_back(m.find("prerequisite_argument")->as_string(),
                                  m.find("current_argument")->as_string());
      }
      b.prerequisites.push_back(std::move(rule));
    }
    out.push_back(std::move(b));
  }
  if (!ds.empty()) return ds;
  return out;
}

Binding binding_from_descriptor(const ToolDescriptor& d) {
  Binding b;
  b.tool = d;
  return b;
}

json::Value to_json(const ToolTraceRecord& r) {
  auto decisions = [](const std::vector<Decision>& ds) {
    json::Array out;
    for (const auto& d : ds) {
      out.push_back(json::Object{{"key", d.key}, {"decision", name(d.decision)}});
    }
    return out;
  };
  Value binding;  // null when the name bound nothing
  if (r.binding != nullptr) {
    const auto& t = r.binding->tool;
    binding = json::Object{{"tool_id", t.tool_id},
                           {"tool_version", t.version},
                           {"descriptor_sha256", t.descriptor_sha256},
                           {"implementation_id", t.implementation_id}};
  }
  Value out = json::Object{
      {"schema_version", "1.0"},
      {"call_id", r.call_id},
      {"model_tool_name", r.model_tool_name},
      {"node_id", r.node_id.empty() ? Value() : Value(r.node_id)},
      {"binding", binding},
      {"binding_resolution_status", r.binding != nullptr ? "resolved" : "uncompiled"},
      {"input_sha256", r.input_sha256},
      {"prerequisite_decisions", decisions(r.prerequisite_decisions)},
      {"capability_decisions", decisions(r.capability_decisions)},
      {"execution_status", name(r.execution_status)},
      {"retryable", r.retryable},
      {"side_effect_class",
       r.binding != nullptr ? Value(name(r.binding->tool.side_effect_class)) : Value()},
      {"idempotency", r.binding != nullptr ? Value(name(r.binding->tool.idempotency)) : Value()},
      {"side_effect_certainty", name(r.side_effect_certainty)},
      {"output_sha256", r.output_sha256.empty() ? Value() : Value(r.output_sha256)},
      {"duration_ms", r.duration_ms},
      {"summary", r.summary},
      {"denied", r.denied},
  };
  if (!r.connector.is_null()) out.set("connector", r.connector);
  return out;
}

ToolExecutor::ToolExecutor(std::vector<Binding> bindings, CallContext context,
                           ExecutorOptions options)
    : bindings_(std::move(bindings)), context_(std::move(context)), options_(std::move(options)) {}

const Binding* ToolExecutor::find_binding(const std::string& model_tool_name) const {
  // Exactly one binding carries the model-facing name.
  const auto it = std::find_if(bindings_.begin(), bindings_.end(), [&](const Binding& b) {
    return b.tool.model_tool_name == model_tool_name;
  });
  return it == bindings_.end() ? nullptr : &*it;
}

bool ToolExecutor::prerequisite_met(const PrerequisiteRule& rule, const Value& args) const {
  const auto done = successes_.find(rule.node_id);
  return done != successes_.end() &&
         std::any_of(done->second.begin(), done->second.end(), [&](const Value& prior) {
           return std::all_of(rule.matches.begin(), rule.matches.end(), [&](const auto& m) {
             const Value* a = prior.find(m.first);
             const Value* c = args.find(m.second);
             return a != nullptr && c != nullptr && *a == *c;
           });
         });
}

std::optional<std::string> ToolExecutor::check_prerequisites(const Binding& b, const Value& args,
                                                             ToolTraceRecord& rec) const {
  for (const auto& rule : b.prerequisites) {
    rec.prerequisite_decisions.push_back({rule.node_id, verdict(prerequisite_met(rule, args))});
  }
  for (const auto& d : rec.prerequisite_decisions) {
    if (d.decision == Verdict::Denied) {
      const auto prior = std::find_if(bindings_.begin(), bindings_.end(),
                                      [&](const Binding& x) { return x.node_id == d.key; });
      const std::string prior_name = prior != bindings_.end() ? prior->tool.model_tool_name : d.key;
      return "Tool " + quoted(rec.model_tool_name) + " requires a successful " +
             quoted(prior_name) + " call first" +
             (successes_.count(d.key) != 0 ? " with matching arguments" : std::string());
    }
  }
  return std::nullopt;
}

std::optional<std::string> ToolExecutor::check_capabilities(const Binding& b,
                                                            const std::string& name,
                                                            ToolTraceRecord& rec) const {
  // Every capability the descriptor needs must be granted.
  const auto& granted = options_.granted_capabilities;
  bool all_granted = true;
  for (const auto& cap : b.tool.required_capabilities) {
    const bool ok = std::find(granted.begin(), granted.end(), cap) != granted.end();
    all_granted = all_granted && ok;
    rec.capability_decisions.push_back({cap, verdict(ok)});
  }
  rec.capability_decisions.push_back({"tool:" + name, verdict(all_granted)});
  if (all_granted) return std::nullopt;
  std::string missing;
  for (const auto& d : rec.capability_decisions) {
    if (d.decision == Verdict::Denied && d.key.rfind("tool:", 0) != 0) {
      missing += (missing.empty() ? "" : ", ") + d.key;
    }
  }
  return "Tool " + quoted(name) + " needs capabilities that were not granted: " + missing;
}

void ToolExecutor::settle(const Binding& b, const ToolCall& call, const Value& args,
                          const CallContext& ctx, const ToolResult& result, ToolTraceRecord& rec) {
  const bool cancelled = ctx.cancelled();
  const bool timed_out = Clock::now() >= ctx.deadline;
  if (!result.is_error) {
    rec.execution_status = ExecutionStatus::Success;
    successes_[b.node_id.empty() ? call.name : b.node_id].push_back(args);
  } else {
    rec.execution_status = cancelled   ? ExecutionStatus::Cancelled
                           : timed_out ? ExecutionStatus::TimedOut
                                       : ExecutionStatus::SoftFailure;
    rec.retryable = !cancelled;
  }
  if (b.tool.side_effect_class == SideEffect::ReadOnly) {
    rec.side_effect_certainty = SideEffectCertainty::ConfirmedAbsent;
  } else if (!result.is_error) {
    rec.side_effect_certainty = SideEffectCertainty::ConfirmedComplete;
  } else if (result.untouched) {
    rec.side_effect_certainty = SideEffectCertainty::NotAttempted;
  } else {
    rec.side_effect_certainty = writes(b.tool.side_effect_class)
                                    ? SideEffectCertainty::CompletionUnknown
                                    : SideEffectCertainty::ConfirmedAbsent;
  }
}

Execution ToolExecutor::call(const ToolCall& call) {
  const auto started = Clock::now();
  Execution e;
  ToolTraceRecord& rec = e.record;
  rec.call_id = call.call_id;
  rec.model_tool_name = call.name;
  rec.input_sha256 = json::canonical_digest(call.arguments);
  auto finish = [&](ToolResult result) -> Execution {
    e.result = std::move(result);
    rec.output_sha256 = json::canonical_digest(to_json(e.result));
    rec.summary =
        (e.result.is_error ? "error: " : "") +
        first_line(e.result.text,
                   rec.binding ? std::size_t(rec.binding->tool.output_policy.max_summary_bytes)
                               : kMaxSummaryShown);
    if (!options_.fixed_clock) {
      rec.duration_ms =
          std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started).count();
    }
    return std::move(e);
  };
  // A refusal before entry. Its message may echo the arguments, so it never carries a secret on.
  auto deny = [&](const std::string& message,
                  ExecutionStatus status = ExecutionStatus::NotExecuted) {
    rec.denied = true;
    rec.execution_status = status;
    rec.side_effect_certainty = SideEffectCertainty::NotAttempted;
    return finish(ToolResult::error(diag::redact_secrets(message)));
  };

  const Binding* bound = find_binding(call.name);
  if (bound == nullptr) return deny("Tool " + call.name + " not found");
  const Binding& b = *bound;
  rec.binding = &b;
  rec.node_id = b.node_id;
  const Implementation* impl = implementation_for(b.tool);

  // Arguments: the implementation's legacy forms are folded in first, as Pi does, then the closed
  // schema. Without legacy forms the call's own arguments are checked, not a copy of them.
  Value prepared;
  const bool prepare = impl != nullptr && impl->prepare_args != nullptr;
  if (prepare) prepared = impl->prepare_args(call.arguments);
  const Value& args = prepare ? prepared : call.arguments;
  if (auto violations = schema::validate(b.tool.input_schema, args); !violations.empty()) {
    rec.retryable = true;
    return deny(validation_message(call.name, violations, call.arguments));
  }
  if (auto refused = check_prerequisites(b, args, rec)) {
    rec.retryable = true;
    return deny(*refused);
  }
  if (auto refused = check_capabilities(b, call.name, rec)) return deny(*refused);

  // Deadline and cancellation, then the call itself.
  CallContext ctx = context_;
  ctx.deadline =
      std::min(context_.deadline, started + std::chrono::milliseconds(b.tool.timeout_ms));
  if (ctx.cancelled()) return deny("Operation aborted", ExecutionStatus::Cancelled);
  if (started >= context_.deadline) return deny("Operation aborted", ExecutionStatus::TimedOut);
  ToolResult result =
      !b.tool.connector.is_null()
          ? (options_.connectors != nullptr
                 ? options_.connectors->call(b.tool, args, ctx, rec.connector)
                 : ToolResult::refusal("No connector session is open for " + b.tool.ref()))
      : impl != nullptr
          ? impl->run(Invocation{args, ctx, options_.artifact_dir, b, options_.request})
          : ToolResult::error("No implementation is available for " + b.tool.ref() + " (" +
                              b.tool.implementation_id + ")");
  bound_output(b.tool, call.name, result);
  settle(b, call, args, ctx, result, rec);
  return finish(std::move(result));
}

}  // namespace mf::tools
