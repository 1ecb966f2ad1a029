// mf-compile: harness source + tool catalog + model profiles -> compiled plan
// (docs/formats/harness.md, docs/formats/plan.md).
#include <unistd.h>

#include "mf/cli/cli.hpp"
#include "mf/harness/command.hpp"
#include "mf/mcp/command.hpp"

namespace cli = mf::cli;

namespace {

// The options apply to compiling, not to verify; --catalog also to project.
const std::vector<std::string> kCompile{""};
const std::vector<std::string> kProject{"project"};
const std::vector<std::string> kConnector{"connector"};

struct Opts {
  cli::Texts catalog, profiles;
  cli::Text out_dir, output, store, diagnostics, format, expect_id, stage, legal_terminals,
      capabilities, emit;
  cli::Text units, input;
  cli::Flag explain;
  cli::Text server, policy, timeout_ms;
  cli::Texts server_env;
  cli::Text bearer_env;
};

// mf-compile connector (mf/mcp/command.hpp), else the harness's subcommands and the compilation.
int command(const cli::Context& ctx, const Opts& o) {
  const auto args = ctx.positionals();
  if (!args.empty() && args[0] == "connector") {
    return cli::finish(ctx, mf::mcp::connector_command({.operands = args,
                                                        .server = ctx.if_given(o.server),
                                                        .server_env = ctx.get(o.server_env),
                                                        .bearer_env = ctx.get(o.bearer_env),
                                                        .timeout_ms = ctx.if_given(o.timeout_ms),
                                                        .policy = ctx.if_given(o.policy)},
                                                       STDOUT_FILENO));
  }
  mf::harness::CommandArgs a;
  a.operands = args;
  a.compile.format = ctx.get(o.format);
  a.compile.catalogs = ctx.get(o.catalog);
  a.compile.profiles = ctx.get(o.profiles);
  a.compile.out_dir = ctx.get(o.out_dir);
  a.compile.output = ctx.get(o.output);
  a.compile.store_dir = ctx.get(o.store);
  a.compile.diagnostics = ctx.get(o.diagnostics);
  a.compile.expected_harness_id = ctx.get(o.expect_id);
  a.compile.stage = ctx.get(o.stage);
  a.compile.legal_terminals_given = ctx.given(o.legal_terminals);
  a.compile.legal_terminals = ctx.get(o.legal_terminals);
  a.compile.capabilities_given = ctx.given(o.capabilities);
  a.compile.capabilities = ctx.get(o.capabilities);
  a.compile.emit = ctx.get(o.emit);
  a.units = ctx.get(o.units);
  a.input = ctx.if_given(o.input);
  a.explain = ctx.get(o.explain);
  a.policy = ctx.if_given(o.policy);
  return cli::finish(ctx, mf::harness::command(a, STDOUT_FILENO, STDERR_FILENO));
}

}  // namespace

int main(int argc, char** argv) {
  const cli::Tool tool{
      .name = "mf-compile",
      .summary =
          "Compile a harness source (YAML or JSON) with tool catalogs and model profiles into a "
          "content-addressed plan (canonical JSON), or verify a compiled plan.",
      .usage =
          "mf-compile [options] HARNESS.yaml|HARNESS.json|- [--out-dir DIR | -o FILE|-]\n"
          "       mf-compile verify PLAN.compiled.json|-\n"
          "       mf-compile project --input INPUT.json [--catalog C] [--units U] [--explain]\n"
          "       mf-compile connector discover --server CMD|URL [--server-env NAME]... "
          "[--bearer-env NAME] [--timeout-ms MS]\n"
          "       mf-compile connector admit SNAPSHOT.json|- --policy POLICY.json|-\n"
          "       mf-compile custom-tools MANIFEST.json|- --policy POLICY.json|- "
          "[-o CATALOG.json|-]",
      .examples =
          {
              "mkdir -p plans && mf-compile harness.yaml --catalog tools.json --profiles "
              "profiles.json --out-dir plans/",
              "mf-compile harness.yaml --catalog tools.json -o plan.json",
              "mf-compile harness.yaml --catalog tools.json --profiles profiles.json -o - | "
              "mf-compile verify -",
              "mf-compile harness.json --catalog builtin --catalog extra.json --profiles p.json "
              "--legal-terminals COMPLETE,BLOCKED --capabilities unrestricted.filesystem.read,"
              "terminal.intent -o -",
              "mf-compile verify plans/my.harness@1.<sha>.compiled.json",
              "mf-compile harness.yaml --catalog millforge-snapshot.json --emit millforge-v1 -o - "
              "| mf-compile verify -",
              "mf-compile project --catalog tools.json --units units.json --input turn.json",
              "mf-compile project --units units.json --input turn.json --explain",
              "mf-compile connector discover --server 'npx -y "
              "@modelcontextprotocol/server-filesystem "
              "/data' > snap.json",
              "mf-compile connector discover --server http://127.0.0.1:3001/mcp > snap.json",
              "GITHUB_TOKEN=... mf-compile connector discover --server-env GITHUB_TOKEN "
              "--server 'npx -y @modelcontextprotocol/server-github' > snap.json",
              "mf-compile connector admit snap.json --policy admit.json > manifest.json",
              "mf-compile harness.yaml --catalog builtin --catalog manifest.json -o -",
              "mf-compile custom-tools tools.manifest.json --policy tools.policy.json -o "
              "tools.json",
          },
      .positional = "args",
      .details =
          "Phases run request, parse, schema, resolution, graph, capability, artifact, lowering, "
          "output; a failing phase stops the later ones (resolution, graph, capability and "
          "artifact faults are reported together) and every fault is one diagnostic "
          "(docs/diagnostics.md). With --out-dir DIR the plan is published atomically as "
          "DIR/<harness_id>@<version>.<compiled_sha256>.compiled.json (never overwriting different "
          "bytes) with its compile report beside it, and the report is printed; with -o FILE the "
          "plan is published at FILE (replacing it) and the report is printed; without either (or "
          "with -o -) the plan itself goes to stdout. --emit millforge-v1 writes Millforge's plan "
          "form (its shape, digests and bytes; docs/formats/plan.md); --legal-terminals also gives "
          "the built-in catalog one terminal_<token> control per result. Exit 0 compiled, 2 "
          "rejected, 3 output or internal error; verify checks a plan by the rules of its form "
          "(ours, or Millforge's) and exits 1 when it fails its hash or invariants. project "
          "compiles the prompt projection of one turn (the tools of the catalogs and the units "
          "of --units against --input) and prints it as canonical JSON (docs/projection.md), "
          "with --explain also a readable account on stderr; "
          "a malformed unit or input, or a mandatory unit over the budget, exits 2. "
          "connector discover starts an MCP server on stdio (--server CMD, a command line) or "
          "opens a session with a running one over Streamable HTTP (--server URL, http:// or "
          "https://), lists its tools and prints the discovery snapshot; a stdio server's "
          "environment holds only HOME, LANG, LC_ALL, LOGNAME, PATH, SHELL, TERM, TMPDIR, TZ, "
          "USER and the --server-env variables; an HTTP server is sent the token of --bearer-env; "
          "connector admit prints "
          "the tool catalog (manifest) a policy admits "
          "from a snapshot, each tool pinned to the server and its listed digest, for --catalog "
          "(docs/connectors.md). A server that cannot be reached exits 2 (MF-N001); every "
          "admission fault is one diagnostic (MF-N003..MF-N010). "
          "custom-tools compiles a custom-tool source manifest under a compiler policy into a tool "
          "catalog for --catalog, on stdout, or with -o FILE into FILE with the compilation "
          "records on stdout (docs/custom-tools.md); every fault is one diagnostic "
          "(MF-CT001..MF-CT019, exit 2).",
      .commands = {"verify", "project", "connector", "custom-tools"},
      .command_lines = {{"verify", "check a compiled plan's hash and invariants"},
                        {"project", "compile the prompt projection of one turn"},
                        {"connector", "discover an MCP server's tools; admit them under a policy"},
                        {"custom-tools", "compile a custom-tool manifest into a tool catalog"}},
  };
  cli::Options d;
  const Opts o{
      .catalog = d.texts({"catalog",
                          "tool catalog (repeatable; 'builtin' = the compiled-in catalog, "
                          "the default)",
                          "FILE",
                          {"", "project"}}),
      .profiles =
          d.texts({"profiles", "model profiles (repeatable; default: the built-in profiles)",
                   "FILE", kCompile}),
      .out_dir = d.text({.name = "out-dir",
                         .help = "publish the plan and its report into DIR (it must exist)",
                         .value = "DIR",
                         .commands = kCompile,
                         .path = cli::Path::OutDir}),
      .output = d.text({.name = "output,o",
                        .help = "write the plan (custom-tools: the catalog) to FILE, the report "
                                "then on stdout; '-' (the default): the plan on stdout",
                        .value = "FILE|-",
                        .commands = {"", "custom-tools"},
                        .path = cli::Path::OutFile}),
      .store = d.text({.name = "store",
                       .help = "also put plan and report in the store (refs "
                               "compile/<id>/<version>/...)",
                       .value = "DIR",
                       .commands = kCompile,
                       .path = cli::Path::Store}),
      .diagnostics = d.text({.name = "diagnostics",
                             .help = "also write the compile report to FILE (or stdout with '-')",
                             .value = "FILE|-",
                             .commands = kCompile,
                             .path = cli::Path::OutFile}),
      .format = d.text({"format", "source format (default: by extension; stdin is sniffed)",
                        "yaml|json", kCompile}),
      .expect_id = d.text({"expect-harness-id",
                           "refuse a source whose harness_id differs (MF-S027)", "ID", kCompile}),
      .stage = d.text({"stage",
                       "the stage kind the plan is compiled for; must be in stage_scope (MF-S028)",
                       "STAGE", kCompile}),
      .legal_terminals =
          d.text({"legal-terminals", "the terminal results the caller accepts (MF-G009, MF-S029)",
                  "A,B", kCompile}),
      .capabilities = d.text(
          {"capabilities", "the granted capability envelope (MF-C001)", "CAP,...", kCompile}),
      .emit = d.text({"emit",
                      "the plan form: mf (the default, RFC 8785) or millforge-v1 (Millforge's "
                      "plan shape and digests)",
                      "FORM", kCompile}),
      .units = d.text({"units", "project: the prompt units document", "FILE", kProject}),
      .input = d.text({"input", "project: the turn's input document", "FILE|-", kProject}),
      .explain = d.flag({"explain", "project: also a readable account of every decision, on stderr",
                         "", kProject}),
      .server = d.text({"server",
                        "connector discover: the server's command line (stdio), or the URL of "
                        "its endpoint (Streamable HTTP)",
                        "CMD|URL", kConnector}),
      .policy = d.text({"policy",
                        "connector admit: the admission policy; custom-tools: the compiler policy",
                        "FILE|-",
                        {"connector", "custom-tools"}}),
      .timeout_ms = d.text({"timeout-ms",
                            "connector discover: start, initialize and listing within MS "
                            "(default 30000)",
                            "MS", kConnector}),
      .server_env = d.texts({"server-env",
                             "connector discover: pass this variable of the environment to a "
                             "stdio server too, pinned by name (repeatable)",
                             "NAME", kConnector}),
      .bearer_env = d.text({"bearer-env",
                            "connector discover: send an HTTP server the token this variable "
                            "holds (Authorization: Bearer), pinned by name",
                            "NAME", kConnector}),
  };

  return cli::run(argc, argv, tool, d, [&o](cli::Context& ctx) { return command(ctx, o); });
}
