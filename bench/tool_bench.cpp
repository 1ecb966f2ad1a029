// tool_bench: one call of the tool pack's grep or find from the command line, for
// bench/search_bench.sh to time (the tools have no CLI of their own yet).
//
//   tool_bench WORKSPACE grep|find 'JSON_ARGS' [--print] [-j N]
//
// Prints "bytes=<result text bytes> lines=<output lines> error=<0|1>" (lines counts every line
// the tool produced, past the 50KB cut too), or with --print the result text itself. Exit status:
// 0 for a result (error results included), 2 for bad usage. -j N: grep's search threads
// (CallContext::search_threads; default 0, the online CPUs).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "mf/json/reader.hpp"
#include "mf/tools/pack.hpp"

int main(int argc, char** argv) {
  bool print = false;
  long threads = 0;
  bool usage = argc < 4;
  for (int i = 4; i < argc && !usage; ++i) {
    if (std::strcmp(argv[i], "--print") == 0) {
      print = true;
    } else if (std::strcmp(argv[i], "-j") == 0 && i + 1 < argc) {
      char* end = nullptr;
      threads = std::strtol(argv[++i], &end, 10);
      usage = *end != 0 || threads < 1;
    } else {
      usage = true;
    }
  }
  if (usage) {
    std::fprintf(stderr, "usage: tool_bench WORKSPACE grep|find 'JSON_ARGS' [--print] [-j N]\n");
    return 2;
  }
  auto ws = mf::tools::Workspace::open(argv[1]);
  if (!ws) {
    std::fprintf(stderr, "tool_bench: %s\n", ws.diagnostics().front().message.c_str());
    return 2;
  }
  auto args = mf::json::parse_object(argv[3]);
  if (!args) {
    std::fprintf(stderr, "tool_bench: %s\n", args.diagnostics().front().message.c_str());
    return 2;
  }
  const std::string tool = argv[2];
  if (tool != "grep" && tool != "find") {
    std::fprintf(stderr, "tool_bench: the tool is grep or find, not %s\n", tool.c_str());
    return 2;
  }
  mf::tools::CallContext ctx;
  ctx.workspace = *ws;
  ctx.search_threads = static_cast<std::size_t>(threads);
  const mf::tools::ToolResult r =
      tool == "grep" ? mf::tools::run_grep(*args, ctx) : mf::tools::run_find(*args, ctx);
  if (print) {
    std::fwrite(r.text.data(), 1, r.text.size(), stdout);
    std::fputc('\n', stdout);
    return 0;
  }
  std::size_t lines = 0;
  const mf::json::Value* t = r.details.find("truncation");
  if (t != nullptr && t->find("totalLines") != nullptr) {
    lines = static_cast<std::size_t>(t->find("totalLines")->as_number());
  } else {
    const auto cut = r.text.find("\n\n[");
    lines = mf::tools::count_lines(std::string_view(r.text).substr(0, cut));
  }
  std::printf("bytes=%zu lines=%zu error=%d\n", r.text.size(), lines, r.is_error ? 1 : 0);
  return 0;
}
