// mf-store: inspect and maintain the content-addressed store (docs/store.md). The plumbing commands
// `canon` and `hash` work without a store; every command's operands are checked and run by
// mf/store/invocation.hpp. Exit codes per command: docs/store.md.
#include <unistd.h>

#include <cstdint>
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
  // "verify N/M objects" on one stderr line, ended once the outcome is reported.
  cli::ProgressLine line;
  if (ctx.progress() && args[0] == "verify") {
    in.progress = [&line](std::uint64_t done, std::uint64_t total) {
      line.draw("mf-store: verify " + std::to_string(done) + "/" + std::to_string(total) +
                " objects");
    };
  }
  return cli::finish(ctx, mf::store::commands::run(in, STDOUT_FILENO));
}

}  // namespace

int main(int argc, char** argv) {
  const cli::Tool tool{
      .name = "mf-store",
      .summary =
          "Inspect and maintain the LMDB content-addressed store (put, get, has, ls, verify, "
          "gc, export, import).",
      .usage = "mf-store [--store DIR] COMMAND [options] [ARGS]",
      .examples =
          {
              "mf-store put trace.jsonl",
              "mf-store --store /data/mf get 9f86d081...0f00a08 > trace.jsonl",
              "mf-store ref set run/r1/trace \"$(mf-store put trace.jsonl)\"",
              "mf-store export --ref campaign/c1/report -o c1.mfx && mf-store import c1.mfx",
              "mf-store hash fixtures/forge/task-valid.json",
              "mf-compile h.yaml | mf-store hash --json -",
              "mf-store canon --lines trace.jsonl > trace.canonical.jsonl",
          },
      .positional = "args",
      .details =
          "Store commands (the store is --store DIR, else $MF_STORE, else ./.mf/store; read\n"
          "commands never create it; details and exit codes in docs/store.md):\n"
          "  put [FILE|-]...         store each file (default stdin); print each digest\n"
          "  get DIGEST              write the object's bytes to stdout (re-hashed first)\n"
          "  has DIGEST...           print the missing digests; exit 1 if any is missing\n"
          "  ls [--refs]             JSONL {\"digest\",\"size\"} per object, or "
          "{\"digest\",\"ref\"}\n"
          "  ref set NAME DIGEST | ref get NAME | ref rm NAME\n"
          "  verify                  re-hash every object, check every ref; JSON summary;\n"
          "                          exit 1 on corruption or a dangling ref\n"
          "  gc [--dry-run]          remove what no ref reaches; JSON {\"kept\",\"removed\"}\n"
          "  export DIGEST... [--ref NAME]... [-o FILE]\n"
          "                          write the closure as a JSONL export stream\n"
          "  import [FILE|-]         import an export stream; JSON {\"added\":N}\n"
          "  stat                    JSON counts and sizes\n"
          "Plumbing commands (no store needed; FILE defaults to '-', stdin):\n"
          "  canon [--lines] [FILE]  print the RFC 8785 canonical form of a JSON document, or "
          "with\n"
          "                          --lines of each line of a JSONL stream, each followed by "
          "'\\n'.\n"
          "                          --lines streams: on an invalid line it exits 2 after "
          "printing\n"
          "                          exactly the lines before it, and nothing after.\n"
          "  hash [--json] [FILE]    print the lowercase hex SHA-256 of the raw bytes, or with\n"
          "                          --json of the canonical form of the JSON document.",
  };
  cli::Options d;
  const Opts o{
      .store = d.text({"store", "store directory (default: $MF_STORE, else ./.mf/store)", "DIR"}),
      .output = d.text({"output,o",
                        "export: write the stream to FILE atomically (default: stdout)",
                        "FILE",
                        {"export"}}),
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
