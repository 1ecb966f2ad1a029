// mf-replay's dispatch and the checks of options that only make sense together (replay.hpp).
#include "mf/eval/replay.hpp"

#include <filesystem>
#include <utility>

#include "mf/diag/secrets.hpp"
#include "mf/eval/campaign_traces.hpp"
#include "mf/hash/sha256.hpp"
#include "mf/runtime/replay.hpp"
#include "mf/trace/command.hpp"

namespace mf::eval {
namespace {

using diag::CommandOutcome;

// The options every verification takes, one trace or many: the MAC key and the line bound. The
// usage message when the key cannot be read, else "".
std::string verify_options(const ReplayArgs& a, trace::VerifyOptions& options) {
  if (a.mac_key_env) {
    if (std::string why = diag::secret_from_env("mac-key-env", *a.mac_key_env, options.mac_key);
        !why.empty()) {
      return why;
    }
  }
  if (a.max_line_bytes) options.max_line_bytes = static_cast<std::size_t>(*a.max_line_bytes);
  return {};
}

trace::Progress progress_of(const ReplayArgs& a, const std::string& what, const std::string& unit) {
  return a.progress ? a.progress(what, unit) : trace::Progress{};
}

// --strict and --fork-at: the loop again, from the recorded replies.
CommandOutcome rerun(const ReplayArgs& a, const std::string& path) {
  if (!a.plan) return CommandOutcome::usage_error("--plan is required");
  runtime::ReplayRequest from;
  from.trace_path = path;
  from.plan_path = *a.plan;
  from.workspace = a.workspace.value_or(".");
  from.artifact_dir = a.artifacts.value_or("");
  from.cancel = a.cancel;
  if (a.strict) {
    if (a.fork_at) return CommandOutcome::usage_error("--strict or --fork-at, not both");
    return runtime::strict_replay_command(from);
  }
  if (!a.responses) return CommandOutcome::usage_error("--responses is required");
  if (!a.trace) return CommandOutcome::usage_error("--trace is required");
  runtime::ForkRequest fork;
  fork.from = from;
  fork.fork_seq = a.fork_at.value_or(0);
  fork.model_spec = *a.responses;
  fork.trace_path = *a.trace;
  fork.run_id = a.run_id.value_or("");
  fork.fixed_clock = a.fixed_clock;
  return runtime::fork_command(fork);
}

// Many traces: several TRACE operands, a directory's *.jsonl, or the attempts of an eval report
// (--report REPORT DIR, DIR being where `mf-eval run --traces` wrote them, or --store).
CommandOutcome verify_many(const ReplayArgs& a, int out_fd) {
  if (std::string why = check_many(a); !why.empty()) return CommandOutcome::usage_error(why);
  const std::vector<std::string>& args = a.operands;
  trace::VerifyOptions options;
  if (std::string why = verify_options(a, options); !why.empty()) {
    return CommandOutcome::usage_error(why);
  }
  const auto jobs = static_cast<std::size_t>(a.jobs.value_or(0));
  if (!a.report) {
    if (a.store_given) return CommandOutcome::usage_error("--store takes --report");
    auto listed = trace::operand_traces(args);
    if (!listed) return CommandOutcome::stopped_by(listed.diagnostics());
    const trace::Progress progress =
        progress_of(a,
                    args[0] + (args.size() > 1 ? " and " + std::to_string(args.size() - 1) + " more"
                                               : std::string()),
                    "traces");
    return trace::verify_many_command(*listed, options, jobs, out_fd, a.on_error, progress);
  }
  // DIR, else --store, else $MF_STORE; DIR and --store both is ambiguous.
  const CampaignTraces from{*a.report, args.size() == 1 ? args[0] : "",
                            args.empty() ? a.store_dir : ""};
  if (args.size() > 1 || (args.empty() ? from.store.empty() : a.store_given)) {
    return CommandOutcome::usage_error("--report takes one DIR, where its traces are, or --store");
  }
  const trace::Progress progress = progress_of(a, from.report, "traces");
  return campaign_traces_command(from, options, jobs, out_fd, a.on_error, progress);
}

}  // namespace

std::string check_many(const ReplayArgs& a) {
  // What names one trace's digest, re-runs or exports one trace.
  const std::pair<const char*, bool> single[] = {
      {"expect-sha256", a.expect_sha256.has_value()},
      {"strict", a.strict},
      {"fork-at", a.fork_at.has_value()},
      {"plan", a.plan.has_value()},
      {"responses", a.responses.has_value()},
      {"trace", a.trace.has_value()},
      {"workspace", a.workspace.has_value()},
      {"artifacts", a.artifacts.has_value()},
      {"run-id", a.run_id.has_value()},
      {"fixed-clock", a.fixed_clock_given},
      {"export", a.exported.has_value()},
      {"start-unix-ms", a.start_unix_ms.has_value()},
  };
  for (const auto& [name, given] : single) {
    if (given) return "--" + std::string(name) + " takes one TRACE";
  }
  for (const std::string& operand : a.operands) {
    if (operand == "-") return "'-' (stdin) is one TRACE, not one of many";
  }
  return {};
}

CommandOutcome replay_command(const ReplayArgs& a, int out_fd) {
  const std::vector<std::string>& args = a.operands;
  std::error_code ec;
  if (args.size() > 1 || a.report || a.store_given ||
      (args.size() == 1 && std::filesystem::is_directory(args[0], ec))) {
    return verify_many(a, out_fd);
  }
  const std::string path = args.empty() ? "-" : args[0];
  if (a.exported) {
    if (a.strict || a.fork_at) {
      return CommandOutcome::usage_error("--export with --strict or --fork-at");
    }
    return trace::export_otlp_command(path, a.start_unix_ms);
  }
  if (a.strict || a.fork_at) return rerun(a, path);

  trace::VerifyOptions options;
  if (std::string why = verify_options(a, options); !why.empty()) {
    return CommandOutcome::usage_error(why);
  }
  options.expect_sha256 = a.expect_sha256.value_or("");
  hash::Digest parsed{};
  if (a.expect_sha256 && !hash::from_hex(options.expect_sha256, parsed)) {
    return CommandOutcome::usage_error("--expect-sha256 takes 64 lowercase hex digits");
  }
  const trace::Progress progress = progress_of(a, path == "-" ? "<stdin>" : path, "");
  return trace::verify_command(path, options, out_fd, progress);
}

}  // namespace mf::eval
