// `mf-run --plan`'s inputs (plan_run.hpp): the request, the plan file and the artifact directory
// checked before the trace exists, then the run and its result document.
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>

#include "mf/diag/codes.hpp"
#include "mf/harness/plan.hpp"
#include "mf/io/file.hpp"
#include "mf/json/fields.hpp"
#include "mf/json/reader.hpp"
#include "mf/mcp/connector.hpp"
#include "mf/runtime/plan_run.hpp"

#include "mf/runtime/task_run.hpp"
#include "projector.hpp"
#include "run_model.hpp"

namespace mf::runtime {

namespace {

// {"instruction"?: string, "context"?: object}, from a file or inline.
Result<json::Value> read_request(const std::string& spec) {
  if (spec.empty()) return json::Value();
  Result<std::string> text = spec;
  const bool inline_json = spec.front() == '{';
  if (!inline_json) text = io::read_input(spec, 1u << 20);
  if (!text) return text.take_diagnostics();
  auto doc = json::parse_object(*text);
  if (doc) {
    json::FieldReader r(*doc, "");
    r.string("instruction", false);
    r.object("context", false);
    r.reject_unknown({"instruction", "context"});
    if (auto problems = r.take(); !problems.empty()) doc = std::move(problems);
  }
  if (!doc) {
    auto ds = doc.take_diagnostics();
    for (auto& d : ds) d.source = inline_json ? "--request" : spec;
    return ds;
  }
  return doc;
}

// The artifact directory must exist: a directory the user names is never created (docs/cli.md).
Status artifact_directory(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return diag::error(diag::codes::kOutputDirMissing,
                       "output directory '" + path + "' does not exist (--artifacts)");
  }
  return {};
}

// A plan whose tools work in the artifact directory needs one: the first node that requires
// artifact.read or artifact.write among the granted capabilities refuses the run before anything
// starts, named with the fix. Without the capability its calls are refused at the boundary anyway.
Status artifacts_given(const json::Value& plan, const std::vector<std::string>& granted) {
  for (const auto& node : plan.find("nodes")->as_array()) {
    for (const auto& c : node.find("required_capabilities")->as_array()) {
      const std::string& cap = c.as_string();
      if (cap != "artifact.read" && cap != "artifact.write") continue;
      if (std::find(granted.begin(), granted.end(), cap) == granted.end()) continue;
      const json::Value& binding = *node.find("binding");
      return diag::error(diag::codes::kUsage,
                         "the plan needs an artifact directory: node \"" +
                             node.find("node_id")->as_string() + "\" (" +
                             binding.find("tool_id")->as_string() + "@" +
                             std::to_string(*binding.find("tool_version")->as_exact_int()) +
                             ") requires " + cap + "; give --artifacts DIR");
    }
  }
  return {};
}

}  // namespace

Result<json::Value> load_plan_file(const std::string& path) {
  Result<std::string> bytes = io::read_input(path, 16u << 20);
  if (!bytes) return bytes.take_diagnostics();
  Result<json::Value> plan = harness::load_plan(*bytes, path);
  if (!plan) {
    auto ds = plan.take_diagnostics();
    for (auto& d : ds) d.source = path;
    return ds;
  }
  return plan;
}

json::Value plan_result(const RunOutcome& outcome, const std::string& run_id) {
  json::Value r;
  r.set("run_id", run_id);
  r.set("terminal", outcome.terminal);
  r.set("model_calls", outcome.model_calls);
  r.set("tool_calls", outcome.tool_calls);
  if (outcome.completed()) {
    r.set("result", outcome.output);
  } else if (!outcome.error.empty()) {
    r.set("error", outcome.error);
  } else {
    // The endings the loop decides without a message of their own.
    r.set("error", outcome.terminal == "budget_exhausted" ? "the max_iterations budget is spent"
                   : outcome.terminal == "cancelled"      ? "cancelled by a signal"
                                                          : "the deadline passed");
  }
  return r;
}

Result<RunOutcome> run_plan_request(PlanRunRequest& request, std::string* run_id) {
  Result<json::Value> plan = std::move(request.plan);
  if (plan->is_null()) plan = load_plan_file(request.plan_path);
  if (!plan) return plan.take_diagnostics();
  Result<std::vector<tools::Binding>> bindings = tools::bindings_from_plan(*plan);
  if (!bindings) return bindings.take_diagnostics();
  Result<json::Value> req = read_request(request.request);
  if (!req) return req.take_diagnostics();
  std::vector<std::string> granted;
  if (request.capabilities) {
    granted = *request.capabilities;
  } else {
    for (const auto& c : plan->find("required_capabilities")->as_array()) {
      granted.push_back(c.as_string());
    }
  }
  std::unique_ptr<model::Model> model = std::move(request.model);
  if (!model) {
    auto opened = detail::open_run_model(request.model_spec, request.cache, request.repeat,
                                         request.store_dir, false, request.durability);
    if (!opened) return opened.take_diagnostics();
    model = std::move(opened->model);
  }
  if (request.artifact_dir.empty() && request.check_artifacts) {
    if (Status s = artifacts_given(*plan, granted); !s) return s.take_diagnostics();
  }
  auto workspace = tools::Workspace::open(request.workspace);
  if (!workspace) return workspace.take_diagnostics();
  if (!request.artifact_dir.empty()) {
    if (Status s = artifact_directory(request.artifact_dir); !s) {
      return s.take_diagnostics();
    }
  }

  PlanRunOptions po;
  po.guardrails = request.guardrails;
  po.request = std::move(*req);
  po.artifact_dir = request.artifact_dir;
  po.parent = request.parent;
  po.capabilities = std::move(granted);
  RunOptions options;
  options.trace_content = request.trace_content;
  options.keep_content = request.keep_content;
  options.durability = request.durability == trace::Durability::Event ? "event" : "batch";
  options.cancel = request.cancel;
  // Batched durability: the files the run's tools publish are synced with the trace, not each on
  // its own (trace::WriterOptions::deferred).
  std::unique_ptr<io::SyncSet> deferred;
  if (request.durability == trace::Durability::Batch) deferred = std::make_unique<io::SyncSet>();
  tools::CallContext context;
  context.workspace = std::move(*workspace);
  context.deferred_sync = deferred.get();
  context.cancel = request.cancel;
  context.sandbox = request.sandbox;
  if (request.deadline_ms > 0) {
    options.deadline =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(request.deadline_ms);
    context.deadline = options.deadline;
  }
  // Connector tools: their servers started and checked against the plan's pins before anything
  // runs; they stop when the executor goes.
  auto connectors = mcp::Broker::open(*bindings, {}, request.cancel);
  if (!connectors) {
    auto ds = connectors.take_diagnostics();
    for (auto& d : ds) {
      if (d.source.empty() && !d.pointer.empty()) d.source = request.plan_path;
    }
    return ds;
  }
  tools::ExecutorOptions eo;
  eo.connectors = std::move(*connectors);
  eo.granted_capabilities = po.capabilities;
  eo.artifact_dir = request.artifact_dir;
  eo.fixed_clock = request.fixed_clock;
  eo.request = po.request;
  tools::ToolExecutor executor(std::move(*bindings), std::move(context), std::move(eo));
  // A first turn whose mandatory units cannot fit is refused before the trace exists.
  auto projector = detail::Projector::from_plan(*plan, po);
  if (!projector) return projector.take_diagnostics();
  if (*projector) {
    if (auto first = (*projector)->project(executor, {}); !first) {
      auto ds = first.take_diagnostics();
      for (auto& d : ds) d.source = request.plan_path;
      return ds;
    }
  }

  trace::WriterOptions wo;
  wo.run_id = request.run_id.empty() ? new_run_id() : request.run_id;
  wo.fixed_clock = request.fixed_clock;
  wo.durability = request.durability;
  wo.mac_key = request.mac_key;
  wo.deferred = deferred.get();
  if (run_id != nullptr) *run_id = wo.run_id;
  auto writer = request.trace_sink != nullptr ? trace::Writer::open_memory(request.trace_sink, wo)
                                              : trace::Writer::open(request.trace_path, wo);
  if (!writer) return writer.take_diagnostics();
  return detail::run_guarded(*plan, executor, *model, **writer, options, po, std::move(*projector));
}

}  // namespace mf::runtime
