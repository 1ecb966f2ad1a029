// How the library side of a command ends, for its binary to map to stderr and an exit code
// (mf::cli::finish): refused as a usage error, stopped by diagnostics, or done, its outcome a
// success or a failure. The modules behind the mf-* programs return it, so that a main declares its
// options and calls one function per subcommand.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "mf/diag/codes.hpp"
#include "mf/diag/diagnostic.hpp"

namespace mf::diag {

struct CommandOutcome {
  // A usage error: the message, printed with the program's --help hint (exit 2).
  std::string usage;
  // Otherwise, when not empty: why the work stopped, about `source` when it is set (exit by the
  // codes' classes under `job`).
  Diagnostics diagnostics;
  std::string source;
  Job job = Job::Work;
  // The work was done and its outcome is a failure (exit 1).
  bool failed = false;
  // SIGINT or SIGTERM stopped the work before its end and nothing final was written: exit
  // 128 + the signal's number, as a shell reports a process the signal ended.
  bool interrupted = false;
  // Diagnostics that did not stop the work (warnings): printed, about `source`, before the remarks.
  Diagnostics warnings;
  // Lines for stderr once the work is done, each after "<program>: ": every remark, then the
  // summary (--quiet silences progress, not these).
  std::vector<std::string> remarks;
  std::string summary;

  static CommandOutcome usage_error(std::string message) {
    CommandOutcome o;
    o.usage = std::move(message);
    return o;
  }
  static CommandOutcome stopped_by(Diagnostics ds, std::string source = {}, Job job = Job::Work) {
    CommandOutcome o;
    o.diagnostics = std::move(ds);
    o.source = std::move(source);
    o.job = job;
    return o;
  }
  // Refused or stopped: the work was not done.
  bool stopped() const { return !usage.empty() || !diagnostics.empty(); }
};

}  // namespace mf::diag
