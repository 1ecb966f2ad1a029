// `mf-replay --strict` and `--fork-at` as command outcomes (replay.hpp): the replay's summary
// printed, and a divergence told in words.
#include <utility>

#include "mf/io/file.hpp"
#include "mf/json/canonical.hpp"
#include "mf/runtime/replay.hpp"

namespace mf::runtime {
namespace {

using diag::CommandOutcome;

std::string source_name(const std::string& path) {
  return path == "-" ? "<stdin>" : path;
}

CommandOutcome print(const json::Value& doc) {
  if (Status written = io::write_output("-", json::canonical_file(doc)); !written) {
    return CommandOutcome::stopped_by(written.take_diagnostics());
  }
  return {};
}

}  // namespace

std::string divergence(const json::Value& strict_summary) {
  const auto& d = *strict_summary.find("first_difference");
  return "replay diverges at seq " + json::canonical(*d.find("seq")) + ": expected " +
         json::canonical(*d.find("expected")) + ", got " + json::canonical(*d.find("actual")) +
         " (member " + json::canonical(*d.find("member")) + ")";
}

CommandOutcome strict_replay_command(const ReplayRequest& request) {
  auto summary = strict_replay(request);
  if (!summary) {
    return CommandOutcome::stopped_by(summary.take_diagnostics(), source_name(request.trace_path));
  }
  CommandOutcome outcome = print(*summary);
  if (outcome.stopped() || identical(*summary)) return outcome;
  outcome.failed = true;
  outcome.remarks.push_back(divergence(*summary));
  return outcome;
}

CommandOutcome fork_command(ForkRequest request) {
  if (request.model_spec.find(':') == std::string::npos) {
    request.model_spec = "scripted:" + request.model_spec;
  }
  if (request.trace_path == "-")
    return CommandOutcome::usage_error("--trace - : the result is stdout");
  bool success = false;
  auto result = fork_run(request, &success);
  if (!result) {
    return CommandOutcome::stopped_by(result.take_diagnostics(),
                                      source_name(request.from.trace_path));
  }
  CommandOutcome outcome = print(*result);
  if (!outcome.stopped()) outcome.failed = !success;
  return outcome;
}

}  // namespace mf::runtime
