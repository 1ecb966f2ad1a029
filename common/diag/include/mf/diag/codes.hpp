// Stable diagnostic codes shared by every tool, and the exit class each one carries. The codes are
// listed once, in codes.def; each is documented in docs/diagnostics.md. Grep a constant to find
// where it is raised.
#pragma once

#include <cstdint>
#include <string_view>

#include "mf/diag/diagnostic.hpp"

namespace mf::diag {

// What a failure means for the process exit status (docs/diagnostics.md, "Exit codes").
enum class ExitClass : std::uint8_t {
  Rejected,   // the request or an input was refused before any work: exit 2
  Integrity,  // an input failed an integrity check: exit 1 when that check is the command's job,
              // otherwise exit 2 (the input was refused)
  Internal,   // internal, I/O or environment error: exit 3
};

namespace codes {
#define MF_CODE(name, id, exit_class) inline constexpr const char* name = id;
#include "mf/diag/codes.def"
#undef MF_CODE
}  // namespace codes

// The exit class of a code. A code not in codes.def (say, read back from another process's
// report) is Internal: it cannot be trusted to mean a refusal.
ExitClass exit_class(std::string_view code);

// Whether the job of the command is to check its input (mf-replay, mf-compile verify): an integrity
// failure is then the command's failed outcome (exit 1) rather than a refused input (exit 2).
enum class Job : std::uint8_t { Work, Check };

// The exit status for a failure with these diagnostics: the gravest class among the errors
// (Internal over Integrity over Rejected); 2 when there is no error among them.
int exit_status(const Diagnostics& ds, Job job = Job::Work);

}  // namespace mf::diag
