// mf-store's command line as values: the command and its operands, checked (arity, digests) and
// dispatched to one store command (commands.hpp) or plumbing command (plumbing.hpp). The usage
// errors name the command and what it takes; exit codes per command: docs/store.md.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "mf/diag/outcome.hpp"
#include "mf/json/reader.hpp"
#include "mf/store/commands.hpp"

namespace mf::store::commands {

struct Invocation {
  std::vector<std::string> args;                // the command, then its operands; not empty
  std::string store;                            // --store, resolved by Store::resolve_dir
  bool refs = false;                            // ls --refs
  bool dry_run = false;                         // gc --dry-run
  std::vector<std::string> export_refs;         // export --ref
  std::string output = "-";                     // export -o
  bool lines = false;                           // canon --lines
  bool json = false;                            // hash --json
  std::size_t max_bytes = json::kMaxHeldBytes;  // canon, hash --json
  Progress
      progress;  // verify: objects checked of all; import: bytes read of the file's (0: a pipe)
};

// Runs the command, its machine-readable output to `out`. A verdict of Failure (has, verify, ref
// rm) is a failed outcome; ref rm of a missing ref also says so in a remark.
diag::CommandOutcome run(const Invocation& invocation, int out);

}  // namespace mf::store::commands
