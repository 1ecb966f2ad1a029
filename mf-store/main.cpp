// mf-store: inspect and maintain the content-addressed store (SPEC §3.4). The plumbing commands
// `canon` and `hash` work without a store; the store commands are not built yet.
#include <unistd.h>

#include <array>
#include <string_view>

#include "mf/cli/cli.hpp"
#include "mf/io/file.hpp"
#include "mf/store/plumbing.hpp"

namespace {

namespace cli = mf::cli;
namespace po = boost::program_options;

constexpr std::array<std::string_view, 10> kStoreCommands = {
    "put", "get", "has", "ls", "ref", "verify", "gc", "export", "import", "stat"};

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

int canon(const cli::Context& ctx, const std::vector<std::string>& args) {
  if (ctx.vars.count("json") != 0)
    return cli::usage_error(ctx.tool, "--json applies to 'hash' only");
  std::string path;
  if (!single_input(ctx, args, path)) return cli::kRejected;
  mf::store::CanonOptions options;
  options.lines = ctx.vars.count("lines") != 0;
  auto done = mf::store::canon_input(path, STDOUT_FILENO, options);
  return done ? cli::kSuccess : cli::report(ctx.tool, done.diagnostics(), source_name(path));
}

int hash(const cli::Context& ctx, const std::vector<std::string>& args) {
  if (ctx.vars.count("lines") != 0)
    return cli::usage_error(ctx.tool, "--lines applies to 'canon' only");
  std::string path;
  if (!single_input(ctx, args, path)) return cli::kRejected;
  auto digest = mf::store::hash_input(path, ctx.vars.count("json") != 0);
  if (!digest) return cli::report(ctx.tool, digest.diagnostics(), source_name(path));
  auto written = mf::io::write_all(STDOUT_FILENO, *digest + "\n");
  return written ? cli::kSuccess : cli::report(ctx.tool, written.diagnostics());
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
              "mf-store hash fixtures/forge/task-valid.json",
              "mf-compile h.yaml | mf-store hash --json -",
              "mf-store canon --lines trace.jsonl > trace.canonical.jsonl",
          },
      .positional = "args",
      .details =
          "Plumbing commands (no store needed; FILE defaults to '-', stdin):\n"
          "  canon [--lines] [FILE]  print the RFC 8785 canonical form of a JSON document, or "
          "with\n"
          "                          --lines of each line of a JSONL stream, each followed by "
          "'\\n'.\n"
          "                          --lines streams: on an invalid line it exits 2 after "
          "printing\n"
          "                          exactly the lines before it, and nothing after.\n"
          "  hash [--json] [FILE]    print the lowercase hex SHA-256 of the raw bytes, or with\n"
          "                          --json of the canonical form of the JSON document.\n"
          "Store commands (not built yet): put, get, has, ls, ref, verify, gc, export, import, "
          "stat.",
  };
  po::options_description options;
  options.add_options()                                                          //
      ("store", po::value<std::string>()->value_name("DIR"),                     //
       "store directory (default: $MF_STORE, else ./.mf/store)")                 //
      ("lines", "canon: treat the input as JSONL, one document per line")        //
      ("json", "hash: digest the canonical form of the JSON document instead");  //

  return cli::run(argc, argv, tool, options, [](cli::Context& ctx) {
    const auto args = ctx.positionals();
    if (args.empty()) return cli::usage_error(ctx.tool, "missing COMMAND");
    const auto& command = args[0];
    if (command == "canon") return canon(ctx, args);
    if (command == "hash") return hash(ctx, args);
    for (auto known : kStoreCommands) {
      if (command == known) return cli::not_built(ctx.tool, "'mf-store " + command + "'");
    }
    return cli::usage_error(ctx.tool, "unknown command '" + command + "'");
  });
}
