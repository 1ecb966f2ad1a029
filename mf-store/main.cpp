// mf-store: inspect and maintain the content-addressed store (docs/store.md). The plumbing commands
// `canon` and `hash` work without a store; every command's operands are checked and run by
// mf/store/invocation.hpp. Exit codes per command: docs/store.md.
#include <unistd.h>

#include <cstdint>
#include <optional>
#include <string>

#include "mf/cli/cli.hpp"
#include "mf/store/invocation.hpp"

namespace {

namespace cli = mf::cli;

struct Opts {
  cli::Text store, output;
  cli::Texts ref;
  cli::Flag refs, dry_run, lines, json;
  cli::Number max_bytes;
};

int run(const cli::Context& ctx, const Opts& o, const std::vector<std::string>& args) {
  mf::store::commands::Invocation in;
  in.args = args;
  in.store = ctx.get(o.store);
  in.refs = ctx.get(o.refs);
  in.dry_run = ctx.get(o.dry_run);
  in.export_refs = ctx.get(o.ref);
  in.output = ctx.get(o.output, "-");
  in.lines = ctx.get(o.lines);
  in.json = ctx.get(o.json);
  if (auto max = ctx.if_given(o.max_bytes)) in.max_bytes = static_cast<std::size_t>(*max);
  // verify: "N/M objects"; import: "N MiB of M MiB" (of N MiB from a pipe). The line ends before
  // the outcome is reported.
  const bool verify = args[0] == "verify", import = args[0] == "import";
  std::optional<cli::ProgressLine> line;
  line.emplace(ctx.progress() && (verify || import),
               "mf-store " + args[0] +
                   (!import                             ? ""
                    : args.size() > 1 && args[1] != "-" ? " " + args[1]
                                                        : " <stdin>"));
  in.progress = verify ? line->counts("objects") : line->bytes();
  auto outcome = mf::store::commands::run(in, STDOUT_FILENO);
  line.reset();
  return cli::finish(ctx, outcome);
}

}  // namespace

int main(int argc, char** argv) {
  const cli::Tool tool{
      .name = "mf-store",
      .summary =
          "Inspect and maintain the LMDB content-addressed store (put, get, has, ls, verify, "
          "gc, export, import, merge).",
      .usage =
          "mf-store [--store DIR] put [FILE|-]...\n"
          "mf-store [--store DIR] get DIGEST\n"
          "mf-store [--store DIR] has DIGEST...\n"
          "mf-store [--store DIR] ls [--refs]\n"
          "mf-store [--store DIR] ref set NAME DIGEST | ref get NAME | ref rm NAME\n"
          "mf-store [--store DIR] verify\n"
          "mf-store [--store DIR] gc [--dry-run]\n"
          "mf-store [--store DIR] export DIGEST... [--ref NAME]... [-o FILE]\n"
          "mf-store [--store DIR] import [FILE|-]\n"
          "mf-store [--store DIR] merge STORE...\n"
          "mf-store [--store DIR] stat\n"
          "mf-store canon [--lines] [--max-bytes N] [FILE|-]\n"
          "mf-store hash [--json] [--max-bytes N] [FILE|-]",
      .examples =
          {
              "mf-store put trace.jsonl",
              "mf-store --store /data/mf get 9f86d081...0f00a08 > trace.jsonl",
              "mf-store ref set run/r1/trace \"$(mf-store put trace.jsonl)\"",
              "mf-store export --ref campaign/c1/report -o c1.mfx && mf-store import c1.mfx",
              "mf-store --store campaign merge shard-1 shard-2 shard-3",
              "mf-store hash fixtures/forge/task-valid.json",
              "mf-compile h.yaml | mf-store hash --json -",
              "mf-store canon --lines trace.jsonl > trace.canonical.jsonl",
          },
      .positional = "args",
      .details =
          "The store is --store DIR, else $MF_STORE, else ./.mf/store; read commands never "
          "create it (details and exit codes in docs/store.md). canon and hash are plumbing: they "
          "need no store, and FILE defaults to '-', stdin. canon --lines streams: on an invalid "
          "line it exits 2 after printing exactly the lines before it, and nothing after.",
      .command_lines =
          {
              {"put", "store each file (default stdin); print each digest"},
              {"get", "write the object's bytes to stdout (re-hashed first)"},
              {"has", "print the missing digests; exit 1 if any is missing"},
              {"ls", "JSONL {\"digest\",\"size\"} per object, or {\"digest\",\"ref\"} per ref"},
              {"ref", "set, print or remove a named ref"},
              {"verify",
               "re-hash every object, check every ref; JSON summary; exit 1 on corruption or "
               "a dangling ref"},
              {"gc", "remove what no ref reaches; JSON {\"kept\",\"removed\"}"},
              {"export", "write the closure of digests and refs as a JSONL export stream"},
              {"import", "import an export stream; JSON {\"added\":N}"},
              {"merge",
               "import every object and ref of other stores (a campaign's shard stores); JSON "
               "{\"added\",\"refs\",\"stores\"}; a ref bound to two objects is refused"},
              {"stat", "JSON counts and sizes"},
              {"canon",
               "print the RFC 8785 canonical form of a JSON document, or with --lines of each "
               "line of a JSONL stream, each followed by '\\n'"},
              {"hash",
               "print the lowercase hex SHA-256 of the raw bytes, or with --json of the "
               "canonical form of the JSON document"},
          },
  };
  cli::Options d;
  const Opts o{
      .store = d.text({.name = "store",
                       .help = "store directory (default: $MF_STORE, else ./.mf/store)",
                       .value = "DIR",
                       .path = cli::Path::Store,
                       .writes = {"put", "import", "merge"}}),
      .output = d.text({.name = "output,o",
                        .help = "export: write the stream to FILE atomically (default: stdout)",
                        .value = "FILE|-",
                        .commands = {"export"},
                        .path = cli::Path::OutFile}),
      .ref = d.texts(
          {"ref", "export: also export this ref and its closure (repeatable)", "NAME", {"export"}}),
      .refs = d.flag({"refs", "ls: list refs instead of objects", "", {"ls"}}),
      .dry_run =
          d.flag({"dry-run", "gc: report what would be removed, remove nothing", "", {"gc"}}),
      .lines = d.flag(
          {"lines", "canon: treat the input as JSONL, one document per line", "", {"canon"}}),
      .json = d.flag(
          {"json", "hash: digest the canonical form of the JSON document instead", "", {"hash"}}),
      .max_bytes = d.number({"max-bytes",
                             "canon, hash --json: the largest document, or line with --lines, "
                             "held whole while it is read (default 16777216, 16 MiB)",
                             "N",
                             {"canon", "hash"},
                             {},
                             1}),
  };

  return cli::run(argc, argv, tool, d, [&o](cli::Context& ctx) {
    const auto args = ctx.positionals();
    if (args.empty()) return cli::usage_error(ctx.tool, "missing COMMAND");
    return run(ctx, o, args);
  });
}
