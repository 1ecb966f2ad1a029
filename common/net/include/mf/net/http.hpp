// HTTP over libcurl, for the live backends and Streamable HTTP MCP servers: one request (a POST,
// or a DELETE) with timeouts (connect, first byte, idle, total, and the run's deadline),
// cancellation, a bound on the body, the response's headers, and streaming of a 2xx body into a
// sink as it arrives. Connections, DNS answers and TLS sessions are shared by every request of the
// process through one libcurl share handle, so `mf-eval run -j N` reuses connections instead of
// handshaking per call. A sink may itself send a request (an MCP client answering a server's
// request in the middle of an event stream): that one runs on a handle of its own. libcurl is
// included by http.cpp only, and loaded (dlopen) on the first load() or send(): a program that
// never sends a request never loads it. Nothing here retries: the caller decides.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mf/diag/diagnostic.hpp"

namespace mf::net::http {

struct Response;

enum class Method : std::uint8_t { Post, Delete };

struct Request {
  Method method = Method::Post;
  std::string url;
  std::vector<std::string> headers;  // "Name: value"; may hold the secret (never logged)
  std::string body;
  std::string content_type = "application/json";  // of the body; empty sends none
  std::int64_t connect_ms = 10000;
  std::int64_t first_byte_ms = 120000;
  std::int64_t idle_ms = 60000;
  std::int64_t total_ms = 600000;
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  const std::atomic<bool>* cancel = nullptr;
  std::string ca_file;
  std::int64_t max_body_bytes = std::int64_t{16} << 20;
  // Receives a 2xx body piece by piece, with the response so far (status and headers); returning
  // false stops the transfer (Outcome::Stopped). Without a sink, or for any other status, the body
  // is collected into Response::body.
  std::function<bool(std::string_view piece, const Response& response)> sink;
};

enum class Outcome : std::uint8_t {
  Complete,       // a whole response arrived (any status)
  ConnectFailed,  // refused, unreachable
  ConnectTimeout,
  FirstByteTimeout,  // connected, request sent, nothing came back in time
  IdleTimeout,       // the response started, then went silent
  TotalTimeout,      // the attempt's total time ran out
  Deadline,          // the run's deadline passed
  Cancelled,
  Reset,     // the connection broke (reset, closed early, body cut short)
  TooLarge,  // the body passed max_body_bytes
  Stopped,   // the sink refused a piece
  Failed,    // anything else (TLS, resolution, protocol): not retried
};

struct Response {
  Outcome outcome = Outcome::Failed;
  long status = 0;  // 0 when no status line arrived
  std::string body;
  std::optional<std::int64_t> retry_after_ms;  // Retry-After, seconds or an HTTP date
  bool received = false;                       // any response byte arrived
  // For failed outcomes, libcurl's reason; for ConnectFailed, the peer and why without timings
  // ("connection refused by 127.0.0.1:8080").
  std::string detail;
  // The final response's headers in arrival order, names in lower case, values trimmed; at most
  // kMaxHeaders of them, each cut at kMaxHeaderBytes.
  std::vector<std::pair<std::string, std::string>> headers;
  static constexpr std::size_t kMaxHeaders = 128;
  static constexpr std::size_t kMaxHeaderBytes = 8192;
  // The first header of that name (lower case), or nullptr.
  const std::string* header(std::string_view name) const;
};

// Loads libcurl (libcurl.so.4) once per process: the MF-H001 diagnostic when it is missing or
// lacks a function this module calls. Callers that will send check it before their work starts,
// for a precise refusal; send() without it fails with Outcome::Failed and that diagnostic's text.
Status load();

Response send(const Request& request);

// "connect timeout", "reset", ...: the outcome as the trace's error text names it.
std::string_view outcome_name(Outcome o);

}  // namespace mf::net::http
