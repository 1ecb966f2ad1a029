// Live backend profiles (docs/formats/profiles.md, "Live profiles"): one JSON file naming an
// endpoint, its model, how to authenticate (a secret *reference*: an environment variable's name),
// what the server can do, which request options are sent, timeouts, the transport retry policy,
// prices and TLS settings. A bad profile is rejected here, before any request, with diagnostics
// that carry a pointer, a line and a column.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mf/diag/diagnostic.hpp"
#include "wire.hpp"

namespace mf::model {

struct RetryPolicy {
  std::int64_t max_attempts = 3;  // attempts per model call, the first included
  std::int64_t initial_backoff_ms = 500;
  std::int64_t max_backoff_ms = 8000;
  double multiplier = 2.0;
  double jitter = 0.2;  // each delay is scaled by a factor drawn from [1 - jitter, 1 + jitter]
  std::int64_t seed = 0;
  std::int64_t max_retry_after_ms = 60000;  // a longer Retry-After fails the call instead
};

struct Timeouts {
  std::int64_t connect_ms = 10000;
  std::int64_t first_byte_ms = 120000;  // request sent -> first response byte
  std::int64_t idle_ms = 60000;         // longest silence once the response has started
  std::int64_t total_ms = 600000;       // one attempt, start to end
};

struct Profile {
  std::string path;    // where it was read from (for messages)
  std::string sha256;  // of the profile's bytes: run_started records it (model_sha256)
  wire::Settings wire;
  std::string base_url;  // without a trailing '/'
  enum class Auth : std::uint8_t { None, Bearer, Header } auth = Auth::None;
  std::string auth_header;  // Auth::Header: the header's name
  std::string secret_env;   // Bearer/Header: the environment variable holding the secret
  std::vector<std::pair<std::string, std::string>> headers;  // extra, non-secret headers
  Timeouts timeouts;
  RetryPolicy retry;
  bool priced = false;
  double usd_per_mtok_input = 0;
  double usd_per_mtok_output = 0;
  std::string ca_file;
  std::int64_t max_response_bytes = std::int64_t{16} << 20;

  // The endpoint a call is POSTed to.
  std::string endpoint() const;
};

// Parses and validates a profile for `api` (from the model spec's prefix).
Result<Profile> parse_profile(std::string_view bytes, wire::Api api);

// Reads (at most 1 MiB) and parses the profile at `path`; its diagnostics name the file.
Result<Profile> read_profile(const std::string& path, wire::Api api);

}  // namespace mf::model
