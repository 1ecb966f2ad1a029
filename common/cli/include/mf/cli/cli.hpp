// The CLI conventions of SPEC §2.1, implemented once: --help with examples, --version with the
// build id, --quiet, exit codes, diagnostics on stderr, machine-readable output only on stdout.
#pragma once

#include <atomic>
#include <boost/program_options.hpp>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "mf/diag/diagnostic.hpp"

namespace mf::cli {

namespace po = boost::program_options;

enum ExitCode : int {
  kSuccess = 0,  // the work succeeded
  // The work finished and its outcome is a failure (run failed, regression, mismatch).
  kFailure = 1,
  // The request was rejected before any work (usage, invalid input or configuration).
  kRejected = 2,
  kInternal = 3,  // internal or I/O error
};

struct Tool {
  // Every member has an initializer so mains can designate only the fields they use.
  std::string name{};                   // "mf-run"
  std::string summary{};                // one line: the tool's single job
  std::string usage{};                  // "mf-run [options] --task FILE ..."
  std::vector<std::string> examples{};  // shell lines shown under --help
  // Name of the option receiving every positional argument, if any. run() declares it (hidden, as a
  // vector<string>) unless `options` already does.
  std::string positional{};
  std::string details{};  // optional paragraphs printed after the summary under --help
};

struct Context {
  const Tool& tool;
  po::variables_map& vars;
  bool quiet = false;
  // True when progress may be drawn: stderr is a TTY and --quiet was not given.
  bool progress() const;
  // The positional arguments in order (empty when the tool takes none or none were given).
  std::vector<std::string> positionals() const;
  // A string option's value, or `fallback` when it was not given.
  std::string get(const char* name, std::string fallback = {}) const;
  // Deterministic mode: --fixed-clock, or MF_FIXED_CLOCK=1 in the environment.
  bool fixed_clock() const;
  // The store to write to: --store DIR, else $MF_STORE, else empty (no store).
  std::string store_dir() const;
};

// Parses the command line (adding --help, --version, --quiet), handles help/version and usage
// errors (exit 2), runs `body`, and turns escaped exceptions into exit 3. Returns the process exit
// code.
int run(int argc, char** argv, const Tool& tool, po::options_description options,
        const std::function<int(Context&)>& body);

// "mf-run 0.1.0 (build abc123)"
std::string version_line(const std::string& name);

// For usage errors found after parsing (bad subcommand, conflicting options): prints
// "<tool>: usage error: <what>" and the --help hint on stderr; returns kRejected.
int usage_error(const Tool& tool, std::string_view what);

// Prints diagnostics to stderr, one per line, prefixed with the tool name; returns the exit code
// they imply (kInternal for MF-I/MF-O codes, kRejected otherwise).
int report(const Tool& tool, const diag::Diagnostics& ds, std::string_view source = {});

// Installs SIGINT/SIGTERM handlers (once) that set the returned flag instead of killing the
// process, so long work can end cleanly (a run still writes its terminal event).
const std::atomic<bool>& cancellation_flag();

// For binaries whose job is not built yet: says so on stderr and returns kRejected.
int not_built(const Tool& tool, std::string_view what);

}  // namespace mf::cli
