// The MCP client's per-call cost, the same measurement as bench/mcp/sdk_client.mjs makes of the
// official TypeScript SDK: connect, then N sequential tools/call of TOOL, timing only the calls.
// usage: mcp_client N TOOL ARGS_JSON -- server-cmd [args...]|URL   (one http:// URL: Streamable
// HTTP) Prints {"calls":N,"client":"millforge","per_call_us":…,"total_us":…}.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>

#include "mf/json/canonical.hpp"
#include "mf/json/reader.hpp"
#include "mf/mcp/client.hpp"

int main(int argc, char** argv) {
  if (argc < 6 || std::strcmp(argv[4], "--") != 0) {
    std::fprintf(stderr, "usage: mcp_client N TOOL ARGS_JSON -- server-cmd [args...]\n");
    return 2;
  }
  const long calls = std::strtol(argv[1], nullptr, 10);
  auto args = mf::json::parse(argv[3]);
  if (calls < 1 || !args) {
    std::fprintf(stderr, "mcp_client: N must be positive and ARGS_JSON valid JSON\n");
    return 2;
  }
  mf::mcp::ServerSpec spec;
  if (argc == 6 && std::strncmp(argv[5], "http", 4) == 0) {
    spec.url = argv[5];
  } else {
    for (int i = 5; i < argc; ++i) spec.command.emplace_back(argv[i]);
  }
  auto client = mf::mcp::Client::connect(spec);
  if (!client) {
    std::fprintf(stderr, "mcp_client: %s\n", client.diagnostics().front().message.c_str());
    return 1;
  }
  const auto start = std::chrono::steady_clock::now();
  for (long i = 0; i < calls; ++i) {
    auto r = (*client)->call_tool(
        argv[2], *args, std::chrono::steady_clock::now() + std::chrono::seconds(30), nullptr);
    if (r.status != mf::mcp::CallStatus::Ok) {
      std::fprintf(stderr, "mcp_client: call %ld: %s\n", i, r.error.c_str());
      return 1;
    }
  }
  const auto us = std::chrono::duration_cast<std::chrono::microseconds>(
                      std::chrono::steady_clock::now() - start)
                      .count();
  std::printf("%s\n", mf::json::canonical(mf::json::Object{{"calls", calls},
                                                           {"client", "millforge"},
                                                           {"per_call_us", double(us) / calls},
                                                           {"total_us", std::int64_t(us)}})
                          .c_str());
  return 0;
}
