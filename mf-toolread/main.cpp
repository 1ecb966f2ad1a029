// mf-toolread: root-confined, bounded source reading and searching; emits a SourceSlice
// (docs/toolread.md).
#include <unistd.h>

#include <cstdint>
#include <string>

#include "mf/cli/cli.hpp"
#include "mf/io/file.hpp"
#include "mf/json/canonical.hpp"
#include "mf/source/reader.hpp"

namespace {

namespace cli = mf::cli;
namespace source = mf::source;

struct Opts {
  cli::Text root, path, query;
  cli::Number start_line, end_line, max_files, max_bytes, max_matches, jobs;
};

int emit(const cli::Context& ctx, const mf::json::Value& value) {
  auto written = mf::io::write_all(STDOUT_FILENO, mf::json::canonical_file(value));
  return written ? cli::kSuccess : cli::report(ctx.tool, written.diagnostics());
}

int run_read(const cli::Context& ctx, const Opts& o) {
  if (int rc = cli::require(ctx, {o.path})) return rc;
  // --path - reads stdin, which needs no root.
  if (ctx.get(o.path) != "-") {
    if (int rc = cli::require(ctx, {o.root})) return rc;
  }
  source::SliceRequest request;
  request.root = ctx.get(o.root);
  request.path = ctx.get(o.path);
  if (ctx.given(o.start_line)) request.start_line = ctx.get(o.start_line, 0);
  if (ctx.given(o.end_line)) request.end_line = ctx.get(o.end_line, 0);
  auto slice = source::read_slice(request);
  if (!slice) return cli::report(ctx.tool, slice.diagnostics());
  return emit(ctx, source::to_json(*slice));
}

int run_search(const cli::Context& ctx, const Opts& o) {
  if (int rc = cli::require(ctx, {o.root, o.query})) return rc;
  if (ctx.get(o.path) == "-") {
    return cli::usage_error(ctx.tool,
                            "--path names a directory; '-' (stdin or stdout) stands for "
                            "a file only (search)");
  }
  source::SearchRequest request;
  request.root = ctx.get(o.root);
  request.path = ctx.get(o.path);
  request.query = ctx.get(o.query);
  // Absent limits keep the library defaults; the declarations refuse values below 1.
  const auto limit = [&](const cli::Number& n, std::uint64_t& out) {
    out = static_cast<std::uint64_t>(ctx.get(n, static_cast<std::int64_t>(out)));
  };
  limit(o.max_files, request.max_files);
  limit(o.max_bytes, request.max_bytes);
  limit(o.max_matches, request.max_matches);
  request.jobs = static_cast<std::size_t>(ctx.get(o.jobs, 0));
  auto result = source::search(request);
  if (!result) return cli::report(ctx.tool, result.diagnostics());
  return emit(ctx, source::to_json(*result));
}

}  // namespace

int main(int argc, char** argv) {
  const cli::Tool tool{
      .name = "mf-toolread",
      .summary =
          "Root-confined, line- and byte-bounded source reading and searching; emits a "
          "SourceSlice.",
      .usage =
          "mf-toolread --root DIR --path FILE [--start-line A] [--end-line B]\n"
          "       mf-toolread --path - [--start-line A] [--end-line B]\n"
          "       mf-toolread search --root DIR --query TEXT [--path SUBDIR] [--max-files N]\n"
          "                          [--max-bytes N] [--max-matches N] [--jobs N]",
      .examples =
          {
              "mf-toolread --root fixtures --path forge/task-valid.json --start-line 1 "
              "--end-line 20",
              "mf-toolread --root . --path README.md --end-line 5 | jq -r .text",
              "git show HEAD:README.md | mf-toolread --path - --start-line 3 --end-line 9",
              "mf-toolread search --root fixtures --query max_model_calls --max-matches 10",
          },
      .positional = "args",
      .details =
          "Reading prints one SourceSlice as canonical JSON: path, start_line, end_line,\n"
          "total_lines, file_sha256, bytes, text. Files over 1 MiB, non-UTF-8 files, directories,\n"
          "absolute paths and anything resolving outside the root (via '..' or a symlink) are\n"
          "refused (exit 2, MF-T0xx on stderr). At most 200 lines per read; an end line past the\n"
          "end of the file is clamped to the last line. --path - reads stdin under the same\n"
          "bounds (the slice's path is \"-\"). 'search' walks the root (or --path)\n"
          "without following symlinks, skips files over 1 MiB and binary files, and prints\n"
          "matching lines in path order (defaults: 10000 files, 64 MiB, 100 matches).\n"
          "Files are read on --jobs threads (default: the online CPUs, at most 8); the\n"
          "output is the same at every count.\n"
          "See docs/toolread.md.",
      .command_lines = {{"search", "search the files under the root for literal text"}},
  };
  cli::Options d;
  const std::vector<std::string> read_cmd{""};
  const std::vector<std::string> search_cmd{"search"};
  const Opts o{
      .root = d.text({.name = "root",
                      .help = "the confining root directory",
                      .value = "DIR",
                      .path = cli::Path::InDir}),
      .path = d.text(
          {"path",
           "file to read, relative to the root, or '-' for stdin (search: subdirectory to search)",
           "PATH|-"}),
      .query = d.text({"query", "search: literal text to find", "TEXT", search_cmd}),
      .start_line = d.number({"start-line", "first line, 1-based (default 1)", "A", read_cmd}),
      .end_line =
          d.number({"end-line", "last line, inclusive (default: the last line; at most 200 lines)",
                    "B", read_cmd}),
      .max_files = d.number(
          {"max-files", "search: files to read at most (default 10000)", "N", search_cmd, {}, 1}),
      .max_bytes = d.number({"max-bytes",
                             "search: bytes to read at most (default 67108864)",
                             "N",
                             search_cmd,
                             {},
                             1}),
      .max_matches = d.number({"max-matches",
                               "search: matching lines to report at most (default 100)",
                               "N",
                               search_cmd,
                               {},
                               1}),
      .jobs = d.number({"jobs,j",
                        "search: threads reading files (default: the online CPUs, at most 8)",
                        "N",
                        search_cmd,
                        {},
                        1}),
  };

  return cli::run(argc, argv, tool, d, [&o](cli::Context& ctx) {
    const auto args = ctx.positionals();
    if (args.empty()) return run_read(ctx, o);
    if (args[0] != "search") return cli::unknown_command(ctx.tool, args[0], {"search"});
    if (args.size() > 1) return cli::usage_error(ctx.tool, "'search' takes no operands");
    return run_search(ctx, o);
  });
}
