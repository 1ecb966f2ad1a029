// An MCP client (docs/connectors.md): JSON-RPC 2.0 over a server's stdio (one message a line) or
// over Streamable HTTP (a POST per message; the reply a JSON body or an event stream). It
// negotiates the protocol version, lists tools (following cursors) and calls them with a deadline;
// on a timeout or a cancellation it tells the server with notifications/cancelled. While it waits
// it answers the server's pings, refuses its other requests, skips notifications and replies to ids
// it never sent. A message that is not JSON, one over the frame bound, or an HTTP failure breaks
// the session: the server is stopped (or its HTTP session ended) and every later call fails.
// Nothing here blocks past a deadline, and no server process outlives its Client.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mf/diag/diagnostic.hpp"
#include "mf/json/value.hpp"

namespace mf::mcp {

namespace detail {
class Transport;
}

// The protocol versions this client speaks, newest first; it asks for the first.
inline constexpr std::string_view kProtocolVersions[] = {"2025-11-25", "2025-06-18", "2025-03-26",
                                                         "2024-11-05"};

// How a server is reached: the command that starts it on stdio, or the URL of its Streamable
// HTTP endpoint (exactly one of the two is set). A stdio server's environment holds only
// kServerEnv and the variables `env` names (sorted, no repeats), with this process's values. An
// HTTP server is sent `Authorization: Bearer <value>` when `bearer_env` names the variable that
// holds the token. What the client gives a server this way (the token, the values of `env`'s
// variables from 8 bytes on) is cut out of everything the server says before it is returned.
struct ServerSpec {
  std::vector<std::string> command;
  std::vector<std::string> env;
  std::string url;
  std::string bearer_env;
  // The program or the URL, for messages.
  const std::string& name() const { return url.empty() ? command.front() : url; }
  bool operator==(const ServerSpec&) const = default;
};
// What every stdio server gets of this process's environment (the variables that are set).
inline constexpr std::string_view kServerEnv[] = {"HOME",  "LANG", "LC_ALL", "LOGNAME", "PATH",
                                                  "SHELL", "TERM", "TMPDIR", "TZ",      "USER"};

// {"transport":"stdio","command":[...]} (with "env":[names] when it passes any) or
// {"transport":"http","url":"..."} (with "bearer_env":name when it sends a token)
json::Value to_json(const ServerSpec& s);
// Reads the forms above; faults are MF-S020/MF-S021 at `pointer`.
Result<ServerSpec> server_from_json(const json::Value& v, const std::string& pointer);
// An http:// or https:// URL is an HTTP endpoint (no credentials in it, at most 2048 bytes of
// visible ASCII); anything else is a command line, split as a shell would split words: blanks
// separate, '…' and "…" quote, \ escapes. `env` names the variables a stdio server is also given
// (`--server-env`): each [A-Za-z_][A-Za-z0-9_]*, at most 64; `bearer_env` the variable holding an
// HTTP server's token (`--bearer-env`). MF-U001 for a bad name, or one given to the other
// transport.
Result<ServerSpec> parse_server_argument(std::string_view text,
                                         const std::vector<std::string>& env = {},
                                         const std::string& bearer_env = {});

struct Limits {
  std::int64_t connect_timeout_ms = 30000;  // start, initialize and the tool listing
  std::size_t max_frame_bytes = std::size_t{64} << 20;
  std::size_t max_tools = 4096;
  std::size_t max_pages = 256;
};

struct ServerInfo {
  std::string protocol_version;
  std::string name;
  std::string version;
  json::Value capabilities;
};

enum class CallStatus : std::uint8_t { Ok, TimedOut, Cancelled, Failed };

struct CallOutcome {
  CallStatus status = CallStatus::Failed;
  json::Value result;  // the CallToolResult, when Ok
  std::string error;   // what went wrong otherwise (no secret: server text is redacted)
};

class Client {
 public:
  // Starts the server (or reaches its endpoint) and initializes the session. MF-N001 when it
  // cannot start, exits, fails over HTTP, or says something that is not MCP (the message carries
  // the end of its stderr, redacted); MF-N002 when it answers with a protocol version this client
  // does not speak.
  static Result<std::unique_ptr<Client>> connect(const ServerSpec& spec, const Limits& limits = {},
                                                 const std::atomic<bool>* cancel = nullptr);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  const ServerInfo& server() const { return info_; }

  // Every tool the server lists (tools/list, every page), as listed. MF-N001 on any failure,
  // MF-N003 past max_tools or max_pages.
  Result<std::vector<json::Value>> list_tools(const std::atomic<bool>* cancel = nullptr);

  // tools/call. Never throws; a failure is an outcome.
  CallOutcome call_tool(const std::string& name, const json::Value& arguments,
                        std::chrono::steady_clock::time_point deadline,
                        const std::atomic<bool>* cancel);

  // Stops the server (closes its stdin, then kills what is left) or ends the HTTP session.
  // Idempotent.
  void close();
  // The end of the server's stderr, redacted (at most 2 KiB).
  std::string stderr_tail() const;
  // Notifications and stray replies skipped so far (for tests and logs).
  std::uint64_t skipped() const { return skipped_; }

 private:
  Client(std::unique_ptr<detail::Transport> transport, Limits limits);
  CallOutcome request(const std::string& method, json::Value params,
                      std::chrono::steady_clock::time_point deadline,
                      const std::atomic<bool>* cancel);
  std::unique_ptr<detail::Transport> transport_;
  Limits limits_;
  ServerInfo info_;
  std::int64_t next_id_ = 1;
  std::uint64_t skipped_ = 0;
  std::string broken_;  // why the session is over; empty while it works
};

}  // namespace mf::mcp
