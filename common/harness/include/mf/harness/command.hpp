// The file side of mf-compile: read the source, catalogs and profiles, compile, and publish the
// plan and its compile report (directory, stdout or store); and the dispatch of mf-compile's
// subcommands but connector (mf/mcp/command.hpp). mf-compile/main.cpp reads its options into
// CommandArgs and maps the outcome to an exit code; everything else is here.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "mf/diag/diagnostic.hpp"
#include "mf/diag/outcome.hpp"
#include "mf/json/value.hpp"

namespace mf::harness {

struct CompileArgs {
  std::string source;                 // path or "-"
  std::string format;                 // "yaml", "json", or empty: by extension / sniffed on stdin
  std::vector<std::string> catalogs;  // paths or "builtin"; empty = the built-in catalog
  std::vector<std::string> profiles;  // paths or "builtin"; empty = the built-in profiles
  std::string out_dir;                // publish plan and report into DIR (empty: not)
  std::string output;                 // the plan's FILE, or "-"/empty for stdout
  std::string store_dir;              // also put plan and report into this store
  std::string diagnostics;            // also write the compile report to FILE or "-"
  std::string expected_harness_id;
  std::string stage;
  std::string legal_terminals;  // comma-separated; empty = not checked
  std::string capabilities;     // comma-separated granted envelope; empty = not checked
  std::string emit;             // the plan form: empty (the product's own) or "millforge-v1"
  bool legal_terminals_given = false;
  bool capabilities_given = false;
};

struct CompileOutcome {
  bool compiled = false;
  diag::Diagnostics diagnostics;  // for stderr (source faults, output faults)
  json::Value report;             // the compile report (docs/formats/plan.md)
};

// The options that only make sense together: the plan goes to one place (--out-dir or -o), and
// the plan and the compile report cannot both go to stdout. The usage message, or empty.
std::string check_compile_args(const CompileArgs& args);

// `mf-compile HARNESS`: check_compile_args, then compile_command. Its diagnostics are about the
// source ("<stdin>" for "-"); those of a compiled plan that would only refuse it (warnings) are
// printed and the compilation is a success.
diag::CommandOutcome compile_plan(const CompileArgs& args, int out_fd);

// Runs one compilation end to end. Writes the plan to `out_fd` when neither args.out_dir nor an
// args.output FILE is given; otherwise publishes plan and report into args.out_dir, or the plan at
// args.output, and writes the report to `out_fd`; never leaves a partial file.
CompileOutcome compile_command(const CompileArgs& args, int out_fd);

// mf-compile verify: loads a plan file ("-" = stdin) through the plan loader of its form (the
// product's, or Millforge's when its compiler_identity names "millforge"). On success returns a
// summary object {verified:true, form, harness_id, harness_version, compiled_sha256, ...}.
Result<json::Value> verify_command(const std::string& path);
// The same with the summary written to `out_fd` as canonical JSON; the plan's faults are the
// outcome of a check (a plan that fails its hash or invariants is a failure, exit 1), about the
// file ("<stdin>" for "-").
diag::CommandOutcome verify_plan(const std::string& path, int out_fd);

// mf-compile project: one prompt projection (docs/projection.md) of the tools of `catalogs`
// (paths or "builtin"; empty = the built-in catalog) and the units of `units` (a units document,
// or empty for none) against the input document `input`; with `explain` also a readable account to
// `explain_fd`, the canonical projection to `out_fd`.
struct ProjectArgs {
  std::vector<std::string> catalogs;
  std::string units;
  std::string input;
  bool explain = false;
};
Status project_command(const ProjectArgs& args, int out_fd, int explain_fd);

// mf-compile custom-tools: compiles a custom-tool manifest under a compiler policy (paths, one of
// them may be "-"; docs/custom-tools.md). With `out` empty or "-" the catalog goes to `out_fd`;
// otherwise it is published at `out` and the compilation report goes to `out_fd`.
Status custom_tools_command(const std::string& manifest, const std::string& policy,
                            const std::string& out, int out_fd);

// mf-compile's operands and options as given, for every subcommand but connector
// (mf/mcp/command.hpp).
struct CommandArgs {
  std::vector<std::string> operands;  // HARNESS|- (none: stdin), or a subcommand and its operands
  CompileArgs compile;                // its source is the HARNESS operand
  // project (ProjectArgs, its catalogs compile's): the units, the input, the account.
  std::string units;
  std::optional<std::string> input;
  bool explain = false;
  std::optional<std::string> policy;  // custom-tools: the compiler policy
};

// `mf-compile verify PLAN` (verify_plan), `project` (project_command, the account to `err_fd`),
// `custom-tools MANIFEST` (custom_tools_command), else `mf-compile HARNESS` (compile_plan): each
// refuses the operands and the missing options it needs as usage errors first.
diag::CommandOutcome command(const CommandArgs& args, int out_fd, int err_fd);

// The built-in model profile set (docs/formats/profiles.md).
const json::Value& builtin_profiles_json();

}  // namespace mf::harness
