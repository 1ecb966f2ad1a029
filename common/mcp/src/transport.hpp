// How the MCP client's messages reach a server and come back (docs/connectors.md):
// - stdio: the server is a child process; one JSON message a line each way.
// - Streamable HTTP: each message is a POST to the server's endpoint; the reply is a JSON body or
//   an event stream whose `data` fields are messages. The session id the server hands out with the
//   initialize reply goes back on every later request, and the session is ended with a DELETE.
// A transport moves text only: the client parses, matches ids and answers the server's requests.
// An exchange may run a handler per incoming message while the reply is awaited, and the handler
// may send messages of its own (the answer to a server's ping in the middle of an event stream).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "mf/diag/diagnostic.hpp"
#include "mf/mcp/client.hpp"

namespace mf::mcp::detail {

using Clock = std::chrono::steady_clock;

// Printable ASCII without spaces: what a URL, a session id or a token on a header line may hold.
inline bool visible_ascii(std::string_view s) {
  for (const char c : s) {
    if (c <= 0x20 || c >= 0x7F) return false;
  }
  return true;
}

// What a handler makes of one incoming message.
enum class Step : std::uint8_t {
  More,    // not the reply awaited: keep reading
  Done,    // the reply: the exchange is over
  Broken,  // the handler found the session unusable (it says why itself)
};
using OnMessage = std::function<Step(std::string_view message)>;

struct Exchange {
  enum Kind : std::uint8_t { Ok, Broken, TimedOut, Cancelled } kind = Ok;
  std::string why;  // for Broken: what the server did (redacted by the client before it is shown)
};

class Transport {
 public:
  // `injected`: the values this client gives the server (an HTTP token, the values of a stdio
  // server's named variables), cut out of everything the server says before anyone sees it.
  explicit Transport(std::vector<std::string> injected);
  virtual ~Transport() = default;
  // Sends `message` (one JSON-RPC message, no line end). With a handler, delivers every message
  // that comes back until the handler says Done or Broken; without one, returns once the message
  // is delivered.
  virtual Exchange exchange(const std::string& message, Clock::time_point deadline,
                            const std::atomic<bool>* cancel, const OnMessage* on) = 0;
  // The protocol version initialize settled on (HTTP sends it on every later request).
  virtual void negotiated(const std::string& version) { (void)version; }
  // Ends the session and whatever runs it. Idempotent.
  virtual void stop() = 0;
  // The end of a child server's stderr (stdio only).
  virtual std::string stderr_tail() const { return {}; }
  // Replaces every injected value in `text` with "[REDACTED]"; true when there was one.
  bool redact(std::string& text) const;
  // Whether there is anything to cut.
  bool redacts() const { return !injected_.empty(); }

 private:
  std::vector<std::string> injected_;  // longest first, so no part of a longer one is left
};

// A variable's value shorter than this is not cut out of what a server says: a flag such as "1"
// or "true" would blank every occurrence in unrelated text, and a credential is longer.
inline constexpr std::size_t kMinRedactedValue = 8;

// Starts the server of `spec` (stdio) or prepares its endpoint (HTTP). MF-N001 when a stdio
// server cannot be started.
Result<std::unique_ptr<Transport>> open_transport(const ServerSpec& spec, const Limits& limits);

}  // namespace mf::mcp::detail
