// The HTTP transport of the live backends: one POST over libcurl, with the profile's timeouts
// (connect, first byte, idle, total, and the run's deadline), cancellation, a bound on the body,
// and streaming of a 2xx body into a sink as it arrives. Connections, DNS answers and TLS
// sessions are shared by every call of the process through one libcurl share handle, so
// `mf-eval run -j N` reuses connections instead of handshaking per call. libcurl is included by
// http.cpp only. Nothing here retries: the backend decides (live.cpp, docs/live-backends.md).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mf::model::http {

struct Post {
  std::string url;
  std::vector<std::string> headers;  // "Name: value"; may hold the secret (never logged)
  std::string body;
  std::int64_t connect_ms = 10000;
  std::int64_t first_byte_ms = 120000;
  std::int64_t idle_ms = 60000;
  std::int64_t total_ms = 600000;
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  const std::atomic<bool>* cancel = nullptr;
  std::string ca_file;
  std::int64_t max_body_bytes = std::int64_t{16} << 20;
  // Receives a 2xx body piece by piece; returning false stops the transfer (Outcome::Stopped).
  // Without a sink, or for any other status, the body is collected into Response::body.
  std::function<bool(std::string_view)> sink;
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
  std::string detail;                          // libcurl's reason, for failed outcomes
};

Response post(const Post& request);

// "connect timeout", "reset", ...: the outcome as the trace's error text names it.
std::string_view outcome_name(Outcome o);

}  // namespace mf::model::http
