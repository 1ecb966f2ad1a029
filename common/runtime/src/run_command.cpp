// `mf-run --task` and `--plan` from the command line's values (run_command.hpp): options checked
// together, the run, its result written, and how a failed run ended.
#include "mf/runtime/run_command.hpp"

#include <utility>

#include "mf/diag/secrets.hpp"
#include "mf/io/file.hpp"
#include "mf/json/canonical.hpp"
#include "mf/runtime/task_run.hpp"

namespace mf::runtime {
namespace {

using diag::CommandOutcome;

// A run that ended on a reply the cache lacks (a miss under --cache read) happened: it failed
// (model_failed, with a complete trace), and its one line names the reply and how to record it.
CommandOutcome failed_on_miss(const RunOutcome& outcome) {
  CommandOutcome failed;
  failed.failed = true;
  failed.warnings = {diag::error(outcome.error_code, outcome.error)};
  return failed;
}

// Whether the ending's line leaves nothing to add about an event the trace could not take: there is
// none, or it is the run's first cause (whole, or cut with "...").
bool said_by_cause(const RunOutcome& outcome) {
  const std::string& u = outcome.unrecorded;
  if (u.empty()) return true;
  if (!outcome.cause) return false;
  const std::string_view t = outcome.cause->text;
  return t == u || (t.ends_with("...") && u.starts_with(t.substr(0, t.size() - 3)));
}

CommandOutcome plan_command(const RunArgs& args) {
  if (args.trace_content == TraceContent::Store) {
    return CommandOutcome::usage_error("--trace-content store is not available with --plan");
  }
  if (args.store_given && args.cache == model::CacheMode::Off) {
    return CommandOutcome::usage_error("--store with --plan holds the reply cache: give --cache");
  }
  PlanRunRequest request;
  request.plan_path = *args.plan_path;
  request.model_spec = args.model_spec;
  request.cache = args.cache;
  request.repeat = args.repeat;
  request.store_dir = args.store_dir;
  request.trace_path = args.trace_path;
  request.run_id = args.run_id;
  request.fixed_clock = args.fixed_clock;
  request.durability = args.durability;
  request.trace_content = args.trace_content;
  request.workspace = args.workspace;
  request.artifact_dir = args.artifact_dir;
  request.request = args.request;
  request.guardrails = args.guardrails;
  request.capabilities = args.capabilities;
  request.sandbox = args.sandbox;
  request.deadline_ms = args.deadline_ms;
  request.mac_key = args.mac_key;
  request.cancel = args.cancel;
  std::string run_id;
  Result<RunOutcome> outcome = run_plan_request(request, &run_id);
  if (!outcome) return CommandOutcome::stopped_by(outcome.take_diagnostics(), request.plan_path);
  if (!args.output.empty()) {
    Status written =
        io::write_output(args.output, json::canonical_file(plan_result(*outcome, run_id)));
    if (!written) return CommandOutcome::stopped_by(written.take_diagnostics());
  }
  if (!outcome->error_code.empty()) return failed_on_miss(*outcome);
  CommandOutcome done;
  done.failed =
      !outcome->completed() || outcome->output.find("disposition")->as_string() != "success";
  if (!said_by_cause(*outcome)) done.remarks.push_back(outcome->unrecorded);
  if (done.failed) done.summary = plan_ending(*outcome, args.trace_path);
  return done;
}

CommandOutcome task_command(const RunArgs& args) {
  if (args.trace_content == TraceContent::Store && args.store_dir.empty()) {
    return CommandOutcome::usage_error("--trace-content store needs --store DIR (or MF_STORE)");
  }
  TaskRunRequest request;
  request.task_path = args.task_path;
  request.model_spec = args.model_spec;
  request.cache = args.cache;
  request.repeat = args.repeat;
  request.trace_path = args.trace_path;
  request.run_id = args.run_id;
  request.fixed_clock = args.fixed_clock;
  request.durability = args.durability;
  request.trace_content = args.trace_content;
  request.check_evidence = args.check_evidence;
  request.store_dir = args.store_dir;
  request.mac_key = args.mac_key;
  request.cancel = args.cancel;
  Result<RunOutcome> outcome = run_task_request(request);
  if (!outcome) return CommandOutcome::stopped_by(outcome.take_diagnostics(), request.task_path);
  if (!outcome->error_code.empty()) return failed_on_miss(*outcome);
  if (!outcome->completed()) {
    CommandOutcome ended;
    ended.failed = true;
    if (!said_by_cause(*outcome)) ended.remarks.push_back(outcome->unrecorded);
    ended.summary = task_ending(*outcome, args.trace_path);
    return ended;
  }
  if (args.output.empty()) return {};
  Status written = io::write_output(args.output, json::canonical_file(outcome->output));
  if (!written) return CommandOutcome::stopped_by(written.take_diagnostics());
  return {};
}

}  // namespace

std::optional<TraceContent> parse_trace_content(std::string_view mode) {
  if (mode == "digest") return TraceContent::Digest;
  if (mode == "inline") return TraceContent::Inline;
  if (mode == "none") return TraceContent::None;
  if (mode == "store") return TraceContent::Store;
  return std::nullopt;
}

std::string check_streams(const RunArgs& args) {
  if (args.trace_path == "-" && args.output == "-") {
    return "--trace - and --output - both name stdout: give --output a FILE, or none (the trace "
           "holds the result)";
  }
  return {};
}

CommandOutcome run_command(const RunArgs& args) {
  if (std::string why = check_streams(args); !why.empty()) {
    return CommandOutcome::usage_error(std::move(why));
  }
  return args.plan_path ? plan_command(args) : task_command(args);
}

namespace {

// ": <first cause> (trace FILE, event N)", redacted and printable; "; see the trace" when the run
// recorded no cause.
std::string because(const RunOutcome& outcome, std::string_view trace_path) {
  if (!outcome.cause) return "; see the trace";
  const std::string where = trace_path.empty()  ? std::string("trace")
                            : trace_path == "-" ? std::string("trace on stdout")
                                                : "trace " + std::string(trace_path);
  return diag::printable(diag::redact_secrets(": " + outcome.cause->text + " (" + where +
                                              ", event " + std::to_string(outcome.cause->seq) +
                                              ")"));
}

}  // namespace

std::string task_ending(const RunOutcome& outcome, std::string_view trace_path) {
  return "run ended " + outcome.terminal + " after " + std::to_string(outcome.model_calls) +
         " model call(s) and " + std::to_string(outcome.repairs) + " repair(s)" +
         because(outcome, trace_path);
}

std::string plan_ending(const RunOutcome& outcome, std::string_view trace_path) {
  return "run ended " + outcome.terminal +
         (outcome.completed() ? " (" + outcome.output.find("disposition")->as_string() + ")"
                              : std::string()) +
         " after " + std::to_string(outcome.model_calls) + " model call(s) and " +
         std::to_string(outcome.tool_calls) + " tool call(s)" + because(outcome, trace_path);
}

}  // namespace mf::runtime
