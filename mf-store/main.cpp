// mf-store: inspect and maintain the content-addressed store (docs/store.md). The plumbing commands
// `canon` and `hash` work without a store; the store commands parse their operands here and call
// one function of mf/store/commands.hpp each. Exit codes per command: docs/store.md.
#include <unistd.h>

#include <array>
#include <cstdint>
#include <iostream>
#include <string_view>

#include "mf/cli/cli.hpp"
#include "mf/io/file.hpp"
#include "mf/store/commands.hpp"
#include "mf/store/plumbing.hpp"

namespace {

namespace cli = mf::cli;
namespace cmd = mf::store::commands;

struct Opts {
  cli::Text store, output;
  cli::Texts ref;
  cli::Flag refs, dry_run, lines, json;
  cli::Number max_bytes;
};

std::string source_name(const std::string& path) {
  return path == "-" ? "<stdin>" : path;
}
// The one input operand of a plumbing command; "-" (stdin) when omitted.
bool single_input(const cli::Context& ctx, const std::vector<std::string>& args,
                  std::string& path) {
  if (args.size() > 2) {
    cli::usage_error(ctx.tool, "'" + args[0] + "' takes at most one FILE");
    return false;
  }
  path = args.size() == 2 ? args[1] : "-";
  return true;
}

std::size_t max_bytes(const cli::Context& ctx, const Opts& o) {
  return static_cast<std::size_t>(ctx.get(o.max_bytes, std::int64_t{mf::json::kMaxHeldBytes}));
}

int canon(const cli::Context& ctx, const Opts& o, const std::vector<std::string>& args) {
  std::string path;
  if (!single_input(ctx, args, path)) return cli::kRejected;
  mf::store::CanonOptions options;
  options.lines = ctx.get(o.lines);
  options.limits.max_bytes = max_bytes(ctx, o);
  auto done = mf::store::canon_input(path, STDOUT_FILENO, options);
  return done ? cli::kSuccess : cli::report(ctx.tool, done.diagnostics(), source_name(path));
}

int hash(const cli::Context& ctx, const Opts& o, const std::vector<std::string>& args) {
  std::string path;
  if (!single_input(ctx, args, path)) return cli::kRejected;
  auto digest = mf::store::hash_input(path, ctx.get(o.json), max_bytes(ctx, o));
  if (!digest) return cli::report(ctx.tool, digest.diagnostics(), source_name(path));
  auto written = mf::io::write_all(STDOUT_FILENO, *digest + "\n");
  return written ? cli::kSuccess : cli::report(ctx.tool, written.diagnostics());
}

int done(const cli::Context& ctx, const mf::Status& status, std::string_view source = {}) {
  return status ? cli::kSuccess : cli::report(ctx.tool, status.diagnostics(), source);
}

int verdict(const cli::Context& ctx, const mf::Result<cmd::Verdict>& result) {
  if (!result) return cli::report(ctx.tool, result.diagnostics());
  return *result == cmd::Verdict::Success ? cli::kSuccess : cli::kFailure;
}

// Checks the operand count of `args` (the command name excluded) against [min, max].
bool arity(const cli::Context& ctx, const std::vector<std::string>& args, std::size_t min,
           std::size_t max, std::string_view what) {
  const std::size_t n = args.size() - 1;
  if (n >= min && n <= max) return true;
  cli::usage_error(ctx.tool, "'" + args[0] + "' takes " + std::string(what));
  return false;
}

bool digest_operands(const cli::Context& ctx, const std::vector<std::string>& operands,
                     std::vector<mf::hash::Digest>& digests) {
  std::string bad;
  if (cmd::parse_digests(operands, digests, bad)) return true;
  cli::usage_error(ctx.tool, "'" + bad + "' is not a digest (64 lowercase hex digits)");
  return false;
}

// Draws "verify N/M" on one stderr line; only called when ctx.progress() allows it.
class ProgressLine {
 public:
  void operator()(std::uint64_t done, std::uint64_t total) {
    std::cerr << "\rmf-store: verify " << done << "/" << total << " objects" << std::flush;
    drawn_ = true;
  }
  ~ProgressLine() {
    if (drawn_) std::cerr << "\n" << std::flush;
  }

 private:
  bool drawn_ = false;
};

int store_command(const cli::Context& ctx, const Opts& o, const std::vector<std::string>& args) {
  const std::string& command = args[0];
  const std::vector<std::string> operands(args.begin() + 1, args.end());
  const std::string dir = mf::store::Store::resolve_dir(ctx.get(o.store));
  std::vector<mf::hash::Digest> digests;

  if (command == "put") {
    return done(ctx, cmd::put(dir, operands.empty() ? std::vector<std::string>{"-"} : operands,
                              STDOUT_FILENO));
  }
  if (command == "get") {
    if (!arity(ctx, args, 1, 1, "one DIGEST") || !digest_operands(ctx, operands, digests))
      return cli::kRejected;
    return done(ctx, cmd::get(dir, digests[0], STDOUT_FILENO));
  }
  if (command == "has") {
    if (!arity(ctx, args, 1, SIZE_MAX, "one or more DIGESTs") ||
        !digest_operands(ctx, operands, digests))
      return cli::kRejected;
    return verdict(ctx, cmd::has(dir, digests, STDOUT_FILENO));
  }
  if (command == "ls") {
    if (!arity(ctx, args, 0, 0, "no operands")) return cli::kRejected;
    return done(ctx, cmd::ls(dir, ctx.get(o.refs), STDOUT_FILENO));
  }
  if (command == "ref") {
    const std::string sub = operands.empty() ? std::string() : operands[0];
    const std::vector<std::string> rest(operands.begin() + (operands.empty() ? 0 : 1),
                                        operands.end());
    if (sub == "set" && rest.size() == 2) {
      if (!digest_operands(ctx, {rest[1]}, digests)) return cli::kRejected;
      return done(ctx, cmd::ref_set(dir, rest[0], digests[0]));
    }
    if ((sub == "get" || sub == "rm") && rest.size() == 1) {
      if (sub == "get") return done(ctx, cmd::ref_get(dir, rest[0], STDOUT_FILENO));
      const auto removed = cmd::ref_rm(dir, rest[0]);
      if (removed && *removed == cmd::Verdict::Failure)
        std::cerr << "mf-store: ref " << rest[0] << " does not exist; nothing removed\n";
      return verdict(ctx, removed);
    }
    return cli::usage_error(ctx.tool, "'ref' takes 'set NAME DIGEST', 'get NAME' or 'rm NAME'");
  }
  if (command == "verify") {
    if (!arity(ctx, args, 0, 0, "no operands")) return cli::kRejected;
    ProgressLine line;
    cmd::Progress progress;
    if (ctx.progress()) progress = [&line](std::uint64_t d, std::uint64_t t) { line(d, t); };
    return verdict(ctx, cmd::verify(dir, progress, STDOUT_FILENO));
  }
  if (command == "gc") {
    if (!arity(ctx, args, 0, 0, "no operands")) return cli::kRejected;
    return done(ctx, cmd::gc(dir, ctx.get(o.dry_run), STDOUT_FILENO));
  }
  if (command == "export") {
    const auto refs = ctx.get(o.ref);
    if (operands.empty() && refs.empty())
      return cli::usage_error(ctx.tool, "'export' takes DIGESTs and/or --ref NAME");
    if (!digest_operands(ctx, operands, digests)) return cli::kRejected;
    const std::string output = ctx.get(o.output, "-");
    return done(ctx, cmd::export_stream(dir, digests, refs, output, STDOUT_FILENO));
  }
  if (command == "import") {
    std::string path;
    if (!single_input(ctx, args, path)) return cli::kRejected;
    return done(ctx, cmd::import_stream(dir, path, STDOUT_FILENO), source_name(path));
  }
  if (command == "stat") {
    if (!arity(ctx, args, 0, 0, "no operands")) return cli::kRejected;
    return done(ctx, cmd::stat(dir, STDOUT_FILENO));
  }
  return cli::usage_error(ctx.tool, "unknown command '" + command + "'");
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
    const auto& command = args[0];
    if (command == "canon") return canon(ctx, o, args);
    if (command == "hash") return hash(ctx, o, args);
    return store_command(ctx, o, args);
  });
}
