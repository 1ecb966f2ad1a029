// `mf-replay --report` (docs/replay.md, "Many traces"): the trace of every attempt of an eval
// report, from the directory `mf-eval run --traces` wrote or the store `mf-eval run --store` kept,
// each verified against the report's trace_sha256; a trace in the directory that the report does
// not name is a failure too.
#pragma once

#include <cstddef>
#include <string>

#include "mf/diag/outcome.hpp"
#include "mf/trace/many.hpp"
#include "mf/trace/verify.hpp"

namespace mf::eval {

struct CampaignTraces {
  std::string report;  // the eval report
  std::string dir;     // where `mf-eval run --traces DIR` wrote the traces; or
  std::string store;   // the store `mf-eval run --store` kept them in, opened read-only once
};

// One line per attempt, in the report's order, as trace::verify_lines writes them: the summary
// with "attempt" and "path" (a directory's file) or "object" (the store object's digest); a trace
// that holds another attempt's bytes says whose. Then, from a directory, one line per `*.jsonl` in
// it that the report does not name, sorted by name: {"path","status":"extra"} (MF-V002 on stderr).
// Stopped before any line when the report is invalid, the directory cannot be listed or the store
// cannot be opened. `progress` is told the attempts' traces verified of all.
diag::CommandOutcome campaign_traces_command(const CampaignTraces& from,
                                             const trace::VerifyOptions& options, std::size_t jobs,
                                             int out_fd, const trace::OnTraceError& on_error,
                                             const trace::Progress& progress = {});

}  // namespace mf::eval
