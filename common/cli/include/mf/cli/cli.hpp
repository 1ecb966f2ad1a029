// The CLI conventions of docs/cli.md, implemented once: --help (per subcommand, wrapped at 80
// columns) with examples, the man page and shell completion from the same declarations, --version
// with the build id, --quiet, exit codes, diagnostics on stderr, machine-readable output only on
// stdout.
#pragma once

#include <atomic>
#include <boost/program_options.hpp>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mf/diag/codes.hpp"
#include "mf/diag/diagnostic.hpp"
#include "mf/diag/outcome.hpp"
#include "mf/diag/secrets.hpp"

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

// A subcommand and the one line the --help overview lists it with.
struct CommandLine {
  std::string name;  // "run"
  std::string line;  // "run a suite of cases into a report"
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
  // When the first operand may be a subcommand or an input (mf-compile verify | HARNESS): the
  // subcommands. Empty: the first operand, if any, is always the subcommand. Decl::commands is
  // matched against the subcommand, "" when there is none.
  std::vector<std::string> commands{};
  // The subcommands the --help overview lists, one line each, in this order. `TOOL SUB --help` and
  // `TOOL help SUB` show SUB's usage lines (those of `usage` starting "TOOL SUB"), options and
  // examples. A subcommand named only by commands or Decl::commands is listed by its usage line.
  std::vector<CommandLine> command_lines{};
};

struct Context;

// A declared option, read back through the handle its declaration returned: the option's name is
// written once, where it is declared.
class OptionBase {
 public:
  const std::string& name() const { return name_; }  // the long name, without "--"

 protected:
  explicit OptionBase(std::string name) : name_(std::move(name)) {}

 private:
  std::string name_;
};
template <class T>
class Option : public OptionBase {
  friend class Options;
  using OptionBase::OptionBase;
};
using Flag = Option<bool>;                       // present or absent
using Text = Option<std::string>;                // one value
using Texts = Option<std::vector<std::string>>;  // repeatable
using Number = Option<std::int64_t>;             // an integer

// What a path option names, for the rules every program shares (docs/cli.md, "Output files and
// directories"). run() checks a given one before the tool's body: "-" for a directory is a usage
// error, and a missing output directory is MF-S017 (exit 2) naming it and the mkdir that fixes it.
// Nothing creates a directory the user named, except a store.
enum class Path : std::uint8_t {
  None,
  OutFile,  // a FILE written, or "-" for stdout: the directory it goes in must exist
  OutDir,   // a DIR written into: it must exist; never "-"
  Store,    // a store: made by the first command that writes to it, in a directory that exists
  InDir,    // a DIR only read from: never "-" (whether it exists is the tool's to say)
};

// How an option is declared. The checks run before the tool's body, as usage errors (exit 2).
struct Decl {
  const char* name;        // "output" or "output,o"
  const char* help;        // one line for --help
  const char* value = "";  // the value's name under --help ("FILE"); unused by flags
  // The subcommands (first operand) the option applies to; empty = all; "" = no subcommand.
  std::vector<std::string> commands{};
  std::vector<std::string> choices{};  // Text: the only values allowed
  std::int64_t min = INT64_MIN;        // Number: the smallest value allowed
  std::int64_t max = INT64_MAX;        // Number: the largest value allowed
  Path path = Path::None;              // Text: what the value names (checked before any work)
  // OutDir, Store: the subcommands that write there (empty: all it applies to); the others only
  // read it (InDir).
  std::vector<std::string> writes{};
};

// The options of one tool. Each declaration returns the handle the body reads the value with.
class Options {
 public:
  Flag flag(const Decl& d);
  Text text(const Decl& d);
  Texts texts(const Decl& d);
  Number number(const Decl& d);

 private:
  friend int run(int, char**, const Tool&, const Options&, const std::function<int(Context&)>&);
  friend struct Help;
  struct Rule {
    std::string name;
    std::vector<std::string> commands;
    std::vector<std::string> choices;
    std::int64_t min, max;
    // What help, the man page and completion show: "-j", the value's name ("" for a flag).
    std::string short_name{}, value{}, help{};
    bool takes_value = false;
    Path path = Path::None;
    std::vector<std::string> writes{};
  };
  std::string add(const Decl& d, const po::value_semantic* semantic);
  po::options_description description_;
  std::vector<Rule> rules_;
};

struct Context {
  const Tool& tool;
  po::variables_map& vars;
  bool quiet = false;
  // True when progress may be drawn: stderr is a TTY and --quiet was not given.
  bool progress() const;
  // The positional arguments in order (empty when the tool takes none or none were given).
  std::vector<std::string> positionals() const;
  bool given(const OptionBase& o) const { return vars.count(o.name()) != 0; }
  // An option's value, or `fallback` when it was not given.
  std::string get(const Text& o, std::string fallback = {}) const;
  // An option's value when it was given, else nothing.
  std::optional<std::string> if_given(const Text& o) const {
    return given(o) ? std::optional(get(o)) : std::nullopt;
  }
  std::optional<std::int64_t> if_given(const Number& o) const {
    return given(o) ? std::optional(get(o, 0)) : std::nullopt;
  }
  std::vector<std::string> get(const Texts& o) const;
  std::int64_t get(const Number& o, std::int64_t fallback) const;
  bool get(const Flag& o) const { return given(o); }
  // Deterministic mode: the flag, or MF_FIXED_CLOCK=1 in the environment.
  bool fixed_clock(const Flag& o) const;
  // The store to write to: the option, else $MF_STORE, else empty (no store).
  std::string store_dir(const Text& o) const;
};

// The usage error for the first of `required` that was not given ("--suite is required"), or 0.
int require(const Context& ctx,
            std::initializer_list<std::reference_wrapper<const OptionBase>> required);

// Keys are read from the environment variable an option names, never from the command line, and
// are never printed. Fills `secret` (empty when the option was not given); a usage error (exit 2)
// when the variable is unset, empty or shorter than kMinSecretBytes (diag::secret_from_env).
inline constexpr std::size_t kMinSecretBytes = diag::kMinSecretBytes;
int secret_from_env(const Context& ctx, const Text& o, std::string& secret);

// Parses the command line (adding --help, --version, --quiet), handles help/version and usage
// errors (exit 2), runs `body`, and turns escaped exceptions into exit 3. Returns the process exit
// code.
int run(int argc, char** argv, const Tool& tool, const Options& options,
        const std::function<int(Context&)>& body);

// "mf-run 0.1.0 (build abc123)"
std::string version_line(const std::string& name);

// Writes `line` and its newline (added unless it ends with one) to stderr in one write(2), so
// that lines of processes sharing a stderr (make -j) never interleave within a line. Every line a
// program prints on stderr goes through here; a table of several lines goes in one call.
void say(std::string_view line);

// For usage errors found after parsing (bad subcommand, conflicting options): prints
// "<tool>: usage error: <what>" and the --help hint on stderr; returns kRejected.
int usage_error(const Tool& tool, std::string_view what);

// The usage error for a subcommand that is none of `known`: "unknown command 'X'", with the
// closest known one suggested when one is close (mf/text/suggest.hpp), else the known ones listed.
int unknown_command(const Tool& tool, std::string_view given,
                    const std::vector<std::string>& known);

// Prints diagnostics to stderr, one per line, prefixed with the tool name; returns the exit code
// their codes' exit classes imply (diag::exit_status).
int report(const Tool& tool, const diag::Diagnostics& ds, std::string_view source = {},
           diag::Job job = diag::Job::Work);

// The outcome of a command's library side on stderr, and its exit code: a usage error (with the
// --help hint), the diagnostics (about outcome.source), or the warnings, the remarks and, unless
// --quiet, the summary, each after "<tool>: "; then 1 for a failed outcome, 0 for a success.
int finish(const Context& ctx, const diag::CommandOutcome& outcome);
// The same for a library side that returns success or diagnostics (about `source`).
int finish(const Context& ctx, const Status& status, std::string_view source = {});

// The items of a comma-separated option value, in order, empty ones dropped ("a,,b" -> a, b); of a
// repeatable one, every value's items in turn.
std::vector<std::string> split_commas(std::string_view list);
std::vector<std::string> split_commas(const std::vector<std::string>& lists);

// The progress line of long work on stderr: "\r<label>: <text>" and what is left of an older,
// longer line cleared, redrawn in place. The label names the work ("mf-eval shard 2/4"), so the
// lines of two processes sharing a terminal are told apart. Drawn only when `enabled`
// (Context::progress(): a TTY, no --quiet), not before kProgressDelay seconds have passed since it
// was made (short work draws nothing) and then at most every kProgressInterval seconds; when it
// goes away, if it was ever drawn, it is ended with a newline after its last text (drawn then if it
// was not). Thread-safe.
inline constexpr double kProgressDelay = 0.5;
inline constexpr double kProgressInterval = 0.1;
class ProgressLine {
 public:
  // `seconds` is the clock (tests give their own); by default a steady one.
  ProgressLine(bool enabled, std::string label, std::function<double()> seconds = {});
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;
  ~ProgressLine();
  bool enabled() const { return enabled_; }
  void draw(std::string_view text);
  // Callbacks (done, total) drawing "N/M UNIT" or "12.0 MiB of 40.0 MiB" (a total of 0: unknown);
  // empty when the line is disabled, so the work skips its counting.
  std::function<void(std::uint64_t, std::uint64_t)> counts(std::string unit);
  std::function<void(std::uint64_t, std::uint64_t)> bytes();

 private:
  void write(std::string_view text, std::string_view end);
  const bool enabled_;
  const std::string label_;
  std::function<double()> seconds_;
  std::mutex mutex_;
  double start_ = 0, last_ = 0;
  std::string pending_;  // the last text given, drawn or not
  std::string shown_;    // the last text drawn
  bool drawn_ = false;
};

// A byte count for a progress line, in MiB with one decimal: "12.5 MiB".
std::string mebibytes(std::uint64_t bytes);

// Installs SIGINT/SIGTERM handlers (once) that set the returned flag instead of killing the
// process, so long work can end cleanly (a run still writes its terminal event).
const std::atomic<bool>& cancellation_flag();
// The signal that set the flag (the last one, if several came; SIGINT when none did).
int cancellation_signal();

}  // namespace mf::cli
