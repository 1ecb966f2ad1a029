// mf-toolread: root-confined, bounded source reading and searching; emits a SourceSlice (SPEC §9).
#include <unistd.h>

#include <cstdint>
#include <string>

#include "mf/cli/cli.hpp"
#include "mf/io/file.hpp"
#include "mf/json/canonical.hpp"
#include "mf/source/reader.hpp"

namespace {

namespace cli = mf::cli;
namespace po = boost::program_options;
namespace source = mf::source;

constexpr const char* kReadOnly[] = {"start-line", "end-line"};
constexpr const char* kSearchOnly[] = {"query", "max-files", "max-bytes", "max-matches"};

std::string string_option(const cli::Context& ctx, const char* name) {
  return ctx.vars.count(name) != 0 ? ctx.vars[name].as<std::string>() : std::string();
}

int emit(const cli::Context& ctx, const mf::json::Value& value) {
  auto written = mf::io::write_all(STDOUT_FILENO, mf::json::canonical_file(value));
  return written ? cli::kSuccess : cli::report(ctx.tool, written.diagnostics());
}

int run_read(const cli::Context& ctx) {
  for (const char* name : kSearchOnly) {
    if (ctx.vars.count(name) != 0)
      return cli::usage_error(ctx.tool, std::string("--") + name + " applies to 'search' only");
  }
  if (ctx.vars.count("root") == 0) return cli::usage_error(ctx.tool, "--root is required");
  if (ctx.vars.count("path") == 0) return cli::usage_error(ctx.tool, "--path is required");
  source::SliceRequest request;
  request.root = string_option(ctx, "root");
  request.path = string_option(ctx, "path");
  if (ctx.vars.count("start-line") != 0)
    request.start_line = ctx.vars["start-line"].as<std::int64_t>();
  if (ctx.vars.count("end-line") != 0) request.end_line = ctx.vars["end-line"].as<std::int64_t>();
  auto slice = source::read_slice(request);
  if (!slice) return cli::report(ctx.tool, slice.diagnostics());
  return emit(ctx, source::to_json(*slice));
}

// A --max-* option: absent keeps the library default; below 1 is a usage error.
bool limit_option(const cli::Context& ctx, const char* name, std::uint64_t& out) {
  if (ctx.vars.count(name) == 0) return true;
  const auto value = ctx.vars[name].as<std::int64_t>();
  if (value < 1) {
    cli::usage_error(ctx.tool, std::string("--") + name + " must be at least 1");
    return false;
  }
  out = static_cast<std::uint64_t>(value);
  return true;
}

int run_search(const cli::Context& ctx) {
  for (const char* name : kReadOnly) {
    if (ctx.vars.count(name) != 0)
      return cli::usage_error(ctx.tool, std::string("--") + name + " does not apply to 'search'");
  }
  if (ctx.vars.count("root") == 0) return cli::usage_error(ctx.tool, "--root is required");
  if (ctx.vars.count("query") == 0) return cli::usage_error(ctx.tool, "--query is required");
  source::SearchRequest request;
  request.root = string_option(ctx, "root");
  request.path = string_option(ctx, "path");
  request.query = string_option(ctx, "query");
  if (!limit_option(ctx, "max-files", request.max_files) ||
      !limit_option(ctx, "max-bytes", request.max_bytes) ||
      !limit_option(ctx, "max-matches", request.max_matches)) {
    return cli::kRejected;
  }
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
          "       mf-toolread search --root DIR --query TEXT [--path SUBDIR] [--max-files N]\n"
          "                          [--max-bytes N] [--max-matches N]",
      .examples =
          {
              "mf-toolread --root fixtures --path forge/task-valid.json --start-line 1 "
              "--end-line 20",
              "mf-toolread --root . --path README.md --end-line 5 | jq -r .text",
              "mf-toolread search --root fixtures --query max_model_calls --max-matches 10",
          },
      .positional = "args",
      .details =
          "Reading prints one SourceSlice as canonical JSON: path, start_line, end_line,\n"
          "total_lines, file_sha256, bytes, text. Files over 1 MiB, non-UTF-8 files, directories,\n"
          "absolute paths and anything resolving outside the root (via '..' or a symlink) are\n"
          "refused (exit 2, MF-T0xx on stderr). At most 200 lines per read; an end line past the\n"
          "end of the file is clamped to the last line. 'search' walks the root (or --path)\n"
          "without following symlinks, skips files over 1 MiB and binary files, and prints\n"
          "matching lines in path order (defaults: 10000 files, 64 MiB, 100 matches).\n"
          "See docs/toolread.md.",
  };
  po::options_description options;
  options.add_options()                                                                      //
      ("root", po::value<std::string>()->value_name("DIR"), "the confining root directory")  //
      ("path", po::value<std::string>()->value_name("PATH"),
       "file to read (search: subdirectory to search), relative to the root")  //
      ("start-line", po::value<std::int64_t>()->value_name("A"),
       "first line, 1-based (default 1)")  //
      ("end-line", po::value<std::int64_t>()->value_name("B"),
       "last line, inclusive (default: the last line; at most 200 lines)")                     //
      ("query", po::value<std::string>()->value_name("TEXT"), "search: literal text to find")  //
      ("max-files", po::value<std::int64_t>()->value_name("N"),
       "search: files to read at most (default 10000)")  //
      ("max-bytes", po::value<std::int64_t>()->value_name("N"),
       "search: bytes to read at most (default 67108864)")  //
      ("max-matches", po::value<std::int64_t>()->value_name("N"),
       "search: matching lines to report at most (default 100)");  //

  return cli::run(argc, argv, tool, options, [](cli::Context& ctx) {
    const auto args = ctx.positionals();
    if (args.empty()) return run_read(ctx);
    if (args[0] != "search") return cli::usage_error(ctx.tool, "unknown command '" + args[0] + "'");
    if (args.size() > 1) return cli::usage_error(ctx.tool, "'search' takes no operands");
    return run_search(ctx);
  });
}
