// mf-replay's side of a recorded trace (docs/formats/trace.md): verify a trace file with its
// summary line on stdout, or export a verified trace as OTLP/JSON spans. A trace that fails the
// check is the command's failed outcome (exit 1), named after the file ("<stdin>" for "-").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "mf/diag/outcome.hpp"
#include "mf/trace/verify.hpp"

namespace mf::trace {

// `mf-replay [TRACE]`: verify_file (telling `progress` the bytes read), the summary (to_json) as
// one JSONL line on `out_fd`, then the first error when the trace is not ok.
diag::CommandOutcome verify_command(const std::string& path, const VerifyOptions& options,
                                    int out_fd, const Progress& progress = {});

// When the run started, for a trace exported without a start: `written_unix_ms`, when its last
// event was written, less that event's t_ms (0 when it has none).
std::int64_t run_start_ms(std::string_view trace, std::int64_t written_unix_ms);

// `mf-replay --export otlp-json`: the trace (at most 256 MiB) verified, then to_otlp on stdout as
// canonical JSON; a corrupt trace is refused. Events are timed after `start_unix_ms`, else after
// run_start_ms with the file's modification time (now for stdin).
diag::CommandOutcome export_otlp_command(const std::string& path,
                                         std::optional<std::int64_t> start_unix_ms);

}  // namespace mf::trace
