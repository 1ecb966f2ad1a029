#include "mf/tools/executor.hpp"

#include <algorithm>
#include <chrono>

#include "edit_core.hpp"
#include "mf/diag/codes.hpp"
#include "mf/diag/secrets.hpp"
#include "mf/io/file.hpp"
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

bool valid_artifact_id(std::string_view s) {
  if (s.empty() || s.size() > 64 || s[0] < 'a' || s[0] > 'z') return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
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

}  // namespace

Result<std::vector<Binding>> bindings_from_plan(const json::Value& plan) {
  std::vector<Binding> out;
  diag::Diagnostics ds;
  const Value* nodes = plan.find("nodes");
  if (nodes == nullptr || !nodes->is_array()) {
    return diag::error(diag::codes::kPlanInvalid, "plan has no nodes", "/nodes");
  }
  for (const Value& n : nodes->as_array()) {
    // Each node's descriptor goes back through the catalog loader: the digest in its binding must
    // be the digest of what the node now says, so a node edited after compilation cannot run.
    const Value& binding = *n.find("binding");
    Value descriptor = json::Object{
        {"tool_id", *binding.find("tool_id")},
        {"version", *binding.find("tool_version")},
        {"model_tool_name", *n.find("model_tool_name")},
        {"description", *n.find("description")},
        {"input_schema", *n.find("input_schema")},
        {"output_schema", *n.find("output_schema")},
        {"required_capabilities", *n.find("required_capabilities")},
        {"side_effect_class", *n.find("side_effect_class")},
        {"idempotency", *n.find("idempotency")},
        {"timeout_ms", *n.find("timeout_ms")},
        {"output_policy", *n.find("output_policy")},
        {"implementation_id", *binding.find("implementation_id")},
        {"descriptor_sha256", *binding.find("descriptor_sha256")},
    };
    auto catalog = Catalog::from_json(json::Object{{"schema_version", "1.0"},
                                                   {"kind", "millforge_tool_catalog"},
                                                   {"tools", json::Array{descriptor}}});
    if (!catalog) {
      for (const auto& d : catalog.diagnostics()) ds.push_back(d);
      continue;
    }
    Binding b;
    b.tool = catalog->descriptors().begin()->second;
    b.node_id = n.find("node_id")->as_string();
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
  return Binding{d, {}, {}};
}

json::Value to_json(const ToolTraceRecord& r) {
  auto decisions = [](const std::vector<Decision>& ds) {
    json::Array out;
    for (const auto& d : ds) out.push_back(json::Object{{"key", d.key}, {"decision", d.decision}});
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
  return json::Object{
      {"schema_version", "1.0"},
      {"call_id", r.call_id},
      {"model_tool_name", r.model_tool_name},
      {"node_id", r.node_id.empty() ? Value() : Value(r.node_id)},
      {"binding", binding},
      {"binding_resolution_status", r.binding != nullptr ? "resolved" : "uncompiled"},
      {"input_sha256", r.input_sha256},
      {"prerequisite_decisions", decisions(r.prerequisite_decisions)},
      {"capability_decisions", decisions(r.capability_decisions)},
      {"execution_status", r.execution_status},
      {"retryable", r.retryable},
      {"side_effect_class",
       r.binding != nullptr ? Value(name(r.binding->tool.side_effect_class)) : Value()},
      {"idempotency", r.binding != nullptr ? Value(name(r.binding->tool.idempotency)) : Value()},
      {"side_effect_certainty", r.side_effect_certainty},
      {"output_sha256", r.output_sha256.empty() ? Value() : Value(r.output_sha256)},
      {"duration_ms", r.duration_ms},
      {"summary", r.summary},
      {"denied", r.denied},
  };
}

ToolExecutor::ToolExecutor(std::vector<Binding> bindings, CallContext context,
                           ExecutorOptions options)
    : bindings_(std::move(bindings)), context_(std::move(context)), options_(std::move(options)) {}

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
  auto deny = [&](std::string message, const char* status = "not_executed") {
    rec.denied = true;
    rec.execution_status = status;
    rec.side_effect_certainty = "not_attempted";
    return finish(ToolResult::error(diag::redact_secrets(message)));
  };

  // Binding: exactly one binding carries the model-facing name.
  const auto it = std::find_if(bindings_.begin(), bindings_.end(), [&](const Binding& b) {
    return b.tool.model_tool_name == call.name;
  });
  if (it == bindings_.end()) return deny("Tool " + call.name + " not found");
  const Binding& b = *it;
  rec.binding = &b;
  rec.node_id = b.node_id;

  // Arguments: edit's legacy forms are folded in first, as Pi does, then the closed schema.
  Value args = call.arguments;
  if (b.tool.implementation_id == "impl.builtin.pi_compat.edit.v1") {
    args = prepare_edit_arguments(args);
  }
  if (auto violations = schema::validate(b.tool.input_schema, args); !violations.empty()) {
    rec.retryable = true;
    return deny(validation_message(call.name, violations, call.arguments));
  }

  // Prerequisites, against this executor's own history of successful calls.
  for (const auto& rule : b.prerequisites) {
    const auto done = successes_.find(rule.node_id);
    const bool met =
        done != successes_.end() &&
        std::any_of(done->second.begin(), done->second.end(), [&](const Value& prior) {
          return std::all_of(rule.matches.begin(), rule.matches.end(), [&](const auto& m) {
            const Value* a = prior.find(m.first);
            const Value* c = args.find(m.second);
            return a != nullptr && c != nullptr && *a == *c;
          });
        });
    rec.prerequisite_decisions.push_back({rule.node_id, met ? "allowed" : "denied"});
  }
  for (const auto& d : rec.prerequisite_decisions) {
    if (d.decision == "denied") {
      rec.retryable = true;
      const auto prior = std::find_if(bindings_.begin(), bindings_.end(),
                                      [&](const Binding& x) { return x.node_id == d.key; });
      const std::string prior_name = prior != bindings_.end() ? prior->tool.model_tool_name : d.key;
      return deny("Tool " + quoted(call.name) + " requires a successful " + quoted(prior_name) +
                  " call first" +
                  (successes_.count(d.key) != 0 ? " with matching arguments" : std::string()));
    }
  }

  // Capabilities: every one the descriptor needs must be granted.
  const auto& granted = options_.granted_capabilities;
  bool all_granted = true;
  for (const auto& cap : b.tool.required_capabilities) {
    const bool ok = std::find(granted.begin(), granted.end(), cap) != granted.end();
    all_granted = all_granted && ok;
    rec.capability_decisions.push_back({cap, ok ? "allowed" : "denied"});
  }
  rec.capability_decisions.push_back({"tool:" + call.name, all_granted ? "allowed" : "denied"});
  if (!all_granted) {
    std::string missing;
    for (const auto& d : rec.capability_decisions) {
      if (d.decision == "denied" && d.key.rfind("tool:", 0) != 0) {
        missing += (missing.empty() ? "" : ", ") + d.key;
      }
    }
    return deny("Tool " + quoted(call.name) +
                " needs capabilities that were not granted: " + missing);
  }

  // Deadline and cancellation, then the call itself.
  CallContext ctx = context_;
  ctx.deadline =
      std::min(context_.deadline, started + std::chrono::milliseconds(b.tool.timeout_ms));
  if (ctx.cancelled()) return deny("Operation aborted", "cancelled");
  if (started >= context_.deadline) return deny("Operation aborted", "timed_out");
  ToolResult result = dispatch(b, args, ctx);

  // After: output schema, bounds, redaction.
  // The tool's own output is content + details; is_error is the boundary's verdict.
  Value shape = to_json(result);
  shape = json::Object{{"content", *shape.find("content")}, {"details", *shape.find("details")}};
  if (auto violations = schema::validate(b.tool.output_schema, shape); !violations.empty()) {
    result =
        ToolResult::error("Tool " + quoted(call.name) + " returned output that fails its schema: " +
                          violations.front().instance_pointer + " " + violations.front().message);
  }
  // Redaction first: a cut through a secret would leave a piece too short to recognise.
  const auto& policy = b.tool.output_policy;
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

  const bool cancelled = ctx.cancelled();
  const bool timed_out = Clock::now() >= ctx.deadline;
  if (!result.is_error) {
    rec.execution_status = "success";
    successes_[b.node_id.empty() ? call.name : b.node_id].push_back(args);
  } else {
    rec.execution_status = cancelled ? "cancelled" : timed_out ? "timed_out" : "soft_failure";
    rec.retryable = !cancelled;
  }
  if (b.tool.side_effect_class == SideEffect::ReadOnly) {
    rec.side_effect_certainty = "confirmed_absent";
  } else if (!result.is_error) {
    rec.side_effect_certainty = "confirmed_complete";
  } else {
    rec.side_effect_certainty =
        writes(b.tool.side_effect_class) ? "completion_unknown" : "confirmed_absent";
  }
  return finish(std::move(result));
}

ToolResult ToolExecutor::dispatch(const Binding& b, const json::Value& args,
                                  const CallContext& ctx) {
  const std::string& impl = b.tool.implementation_id;
  static const std::map<std::string, ToolResult (*)(const Value&, const CallContext&)> kPack = {
      {"impl.builtin.pi_compat.read.v1", run_read}, {"impl.builtin.pi_compat.write.v1", run_write},
      {"impl.builtin.pi_compat.edit.v1", run_edit}, {"impl.builtin.pi_compat.ls.v1", run_ls},
      {"impl.builtin.pi_compat.grep.v1", run_grep}, {"impl.builtin.pi_compat.find.v1", run_find},
      {"impl.builtin.pi_compat.bash.v1", run_bash},
  };
  if (auto it = kPack.find(impl); it != kPack.end()) return it->second(args, ctx);
  if (b.tool.side_effect_class == SideEffect::Terminal) {
    const Value* terminal = args.find("terminal_result");
    const Value* summary = args.find("summary");
    if (terminal == nullptr || !terminal->is_string()) {
      return ToolResult::error("Terminal controls need a terminal_result");
    }
    return ToolResult{
        false, "Terminal intent recorded: " + terminal->as_string(),
        json::Object{{"terminal_result", *terminal}, {"summary", summary ? *summary : Value("")}}};
  }
  if (impl == "impl.builtin.artifact.read.v1" || impl == "impl.builtin.artifact.write.v1") {
    if (options_.artifact_dir.empty()) {
      return ToolResult::error("No artifact directory is configured for this run");
    }
    const std::string id = args.find("artifact_id")->as_string();
    if (!valid_artifact_id(id)) {
      return ToolResult::error("Invalid artifact id " + quoted(id) +
                               ": use lowercase letters, digits and _");
    }
    const std::string path = options_.artifact_dir + "/" + id;
    if (impl == "impl.builtin.artifact.write.v1") {
      const std::string& content = args.find("content")->as_string();
      if (Status s = io::publish_atomic(path, content, io::Clobber::Replace); !s) {
        return ToolResult::error("Could not write artifact " + id + ": " +
                                 s.diagnostics().front().message);
      }
      return ToolResult{
          false, "Wrote artifact " + id + " (" + std::to_string(content.size()) + " bytes)", {}};
    }
    auto text = io::read_input(path);
    if (!text) return ToolResult::error("Artifact not found: " + id);
    return ToolResult{false, std::move(*text), {}};
  }
  return ToolResult::error("No implementation is available for " + b.tool.ref() + " (" + impl +
                           ")");
}

}  // namespace mf::tools
