// `mf-replay` over many traces (docs/replay.md, "Many traces"): every trace verified as one trace
// is, on a bounded number of threads, with one summary line per trace printed in the order given.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "mf/diag/diagnostic.hpp"
#include "mf/diag/outcome.hpp"
#include "mf/trace/verify.hpp"

namespace mf::trace {

struct TraceRef {
  std::string path;           // the file
  std::string attempt;        // the eval report's attempt it stands for; empty when none
  std::string expect_sha256;  // lowercase hex the bytes must hash to; empty: any
};

// The `*.jsonl` entries directly in `dir` (not in its subdirectories), as `dir/name`, sorted by
// name. MF-S013 when `dir` cannot be listed.
Result<std::vector<std::string>> traces_in(const std::string& dir);

// The traces TRACE|DIR operands name, in order: a file as itself, a directory as traces_in lists
// it. MF-S013 for a directory that cannot be listed or holds no trace.
Result<std::vector<TraceRef>> operand_traces(const std::vector<std::string>& operands);

// One trace's line: its summary (to_json) with "path" (and "attempt" when it has one); for a trace
// that could not be read, {"attempt"?, "first_error":{"code","message"}, "path",
// "status":"unreadable"}. Sets `error` to the first error, about the trace, when it did not pass.
json::Value summary_line(const TraceRef& ref, const VerifyOptions& options,
                         std::optional<diag::Diagnostic>& error);
// The same line for a trace read elsewhere: `verified` is its verification or why it could not be
// read. An empty ref.path gives a line without "path" and a diagnostic without a source, for the
// caller to name the trace's origin.
json::Value summary_line(const TraceRef& ref, Result<Summary> verified,
                         std::optional<diag::Diagnostic>& error);

// Called once per trace that did not pass, in the order of `traces`, with its first error.
using OnTraceError = std::function<void(const diag::Diagnostic&)>;

// The most traces verified at once (-j): more threads only hold more traces in memory, and the
// bound keeps what a run may hold known (docs/replay.md, "Many traces").
inline constexpr std::size_t kMaxJobs = 64;

// Trace i's line and, when it did not pass, its first error (summary_line's contract). Called
// from up to `jobs` threads at once, each i once.
using LineOf = std::function<json::Value(std::size_t i, std::optional<diag::Diagnostic>& error)>;

// The pool behind verify_many_command for `count` traces of any origin: line_of(i) on up to
// `jobs` threads (0: the number of cores; at most kMaxJobs), each line written to `out_fd` in the
// order of i, `progress` told the traces finished of `count` after each (from one thread at a
// time). Same bounds and outcome as verify_many_command.
diag::CommandOutcome verify_lines(std::size_t count, const LineOf& line_of, std::size_t jobs,
                                  int out_fd, const OnTraceError& on_error,
                                  const Progress& progress = {});

// Verifies every trace (verify_file, under `options`, each with its own expect_sha256) on up to
// `jobs` threads (0: the number of cores; at most kMaxJobs), and writes each summary_line to
// `out_fd` in the order of `traces`, whatever order they finish in. At most `jobs` traces are read
// at once, and at most 4 x `jobs` finished lines wait for an earlier one. Failed when any trace did
// not pass; stopped (exit 3) when the output cannot be written.
diag::CommandOutcome verify_many_command(const std::vector<TraceRef>& traces,
                                         const VerifyOptions& options, std::size_t jobs, int out_fd,
                                         const OnTraceError& on_error,
                                         const Progress& progress = {});

}  // namespace mf::trace
