// The two MCP transports of transport.hpp, stdio to a child and Streamable HTTP; they move text
// only, so the client's protocol logic is the same over both.
#include "transport.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <limits>

#include "mf/diag/codes.hpp"
#include "mf/diag/secrets.hpp"
#include "mf/net/http.hpp"
#include "mf/net/sse.hpp"
#include "mf/process/process.hpp"

namespace mf::mcp::detail {
namespace {

namespace codes = diag::codes;
namespace http = net::http;

constexpr auto kStopGrace = std::chrono::milliseconds(500);
constexpr auto kDeleteWait = std::chrono::milliseconds(500);
constexpr std::size_t kMaxSessionId = 1024;
constexpr std::size_t kBodyShown = 200;

std::string over(std::size_t bytes) {
  return "the server sent a message over " + std::to_string(bytes >> 20) + " MiB";
}

// A child on stdio: one message a line each way.
class StdioTransport final : public Transport {
 public:
  StdioTransport(std::unique_ptr<process::Server> server, const Limits& limits,
                 std::vector<std::string> injected)
      : Transport(std::move(injected)),
        server_(std::move(server)),
        max_frame_(limits.max_frame_bytes) {}
  ~StdioTransport() override { stop(); }

  Exchange exchange(const std::string& message, Clock::time_point deadline,
                    const std::atomic<bool>* cancel, const OnMessage* on) override {
    std::string line;
    line.reserve(message.size() + 1);
    line.append(message).push_back('\n');
    if (auto io = server_->write(line, deadline, cancel); io != process::Io::Ok) {
      return ended(io, "stopped reading its input");
    }
    if (on == nullptr) return {};
    for (;;) {
      const std::size_t nl = buffer_.find('\n', scanned_);
      if (nl == std::string::npos) {
        scanned_ = buffer_.size();
        if (buffer_.size() > max_frame_) return {Exchange::Broken, over(max_frame_)};
        if (auto io = server_->read(buffer_, deadline, cancel); io != process::Io::Ok) {
          return ended(io, "closed its output");
        }
        continue;
      }
      std::string_view text(buffer_.data(), nl);
      if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
      // A handler's own sends only write, so `text` stays valid while it runs.
      const Step step =
          text.find_first_not_of(" \t") == std::string_view::npos ? Step::More : (*on)(text);
      buffer_.erase(0, nl + 1);
      scanned_ = 0;
      if (step == Step::Done) return {};
      if (step == Step::Broken) return {Exchange::Broken, {}};
    }
  }

  void stop() override { server_->stop(kStopGrace); }
  std::string stderr_tail() const override { return server_->stderr_tail(); }

 private:
  Exchange ended(process::Io io, const std::string& what) {
    if (io == process::Io::TimedOut) return {Exchange::TimedOut, {}};
    if (io == process::Io::Cancelled) return {Exchange::Cancelled, {}};
    std::string why = "the server " + what;
    if (auto code = server_->exit_code()) why += " (exit code " + std::to_string(*code) + ")";
    return {Exchange::Broken, std::move(why)};
  }

  std::unique_ptr<process::Server> server_;
  std::size_t max_frame_;
  std::string buffer_;  // bytes read past the last complete line
  std::size_t scanned_ = 0;
};

bool starts_with_ci(std::string_view text, std::string_view prefix) {
  if (text.size() < prefix.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(text[i])) != prefix[i]) return false;
  }
  return true;
}

// Streamable HTTP: a POST per message, the reply as JSON or as an event stream.
class HttpTransport final : public Transport {
 public:
  HttpTransport(std::string url, std::string token, const Limits& limits)
      : Transport(token.empty() ? std::vector<std::string>{} : std::vector<std::string>{token}),
        url_(std::move(url)),
        token_(std::move(token)),
        max_frame_(limits.max_frame_bytes) {}
  ~HttpTransport() override { stop(); }

  // What the server says back may quote the request, token and all: no reason shown holds it.
  Exchange exchange(const std::string& message, Clock::time_point deadline,
                    const std::atomic<bool>* cancel, const OnMessage* on) override {
    Exchange e = send(message, deadline, cancel, on);
    redact(e.why);
    return e;
  }

 private:
  Exchange send(const std::string& message, Clock::time_point deadline,
                const std::atomic<bool>* cancel, const OnMessage* on) {
    if (stopped_) return {Exchange::Broken, "the connector is closed"};
    http::Request r = request(deadline, cancel);
    r.body = message;
    Step step = Step::More;
    bool typed = false;   // the body's kind is known (the first piece arrived)
    bool stream = false;  // it is an event stream
    std::string body;     // a JSON body
    net::SseParser parser(
        [&](std::string_view event, std::string_view data) -> Status {
          // An empty data field primes the stream; events of other types are not messages.
          if (on == nullptr || data.empty() || (!event.empty() && event != "message")) return {};
          step = (*on)(data);
          if (step == Step::More) return {};
          return diag::error(codes::kConnectorUnreachable, "the reply is in");  // stops the stream
        },
        max_frame_);
    Exchange failed{Exchange::Broken, {}};
    r.sink = [&](std::string_view piece, const http::Response& so_far) {
      if (!typed) {
        typed = true;
        const std::string* type = so_far.header("content-type");
        stream = type != nullptr && starts_with_ci(*type, "text/event-stream");
        // The session may be needed before this stream ends (an answer sent from a handler).
        if (!adopt_session(so_far)) {
          failed.why = "the server's session id is not 1..1024 visible ASCII characters";
          return false;
        }
      }
      if (!stream) {
        body.append(piece);
        return true;
      }
      const Status s = parser.feed(piece);
      if (!s.ok() && step == Step::More) {
        failed.why = "the server's event stream is malformed: " + s.diagnostics().front().message;
      }
      return s.ok();
    };
    const http::Response response = http::send(r);
    if (step == Step::Done) return {};
    if (step == Step::Broken) return {Exchange::Broken, {}};
    if (!failed.why.empty()) return failed;
    switch (response.outcome) {
      case http::Outcome::Complete:
        break;
      case http::Outcome::Cancelled:
        return {Exchange::Cancelled, {}};
      case http::Outcome::Deadline:
        return {Exchange::TimedOut, {}};
      case http::Outcome::TooLarge:
        return {Exchange::Broken, over(max_frame_)};
      default:
        return {Exchange::Broken, "HTTP " + std::string(http::outcome_name(response.outcome)) +
                                      ": " + response.detail};
    }
    if (!adopt_session(response)) {
      return {Exchange::Broken, "the server's session id is not 1..1024 visible ASCII characters"};
    }
    if (response.status == 404 && !session_.empty()) {
      session_.clear();  // nothing left to delete
      return {Exchange::Broken, "the server ended the session (HTTP 404)"};
    }
    if (response.status < 200 || response.status >= 300) {
      std::string why = "the server answered HTTP " + std::to_string(response.status);
      if (response.status == 401 || response.status == 403) {
        why +=
            token_.empty() ? " (it wants a token: --bearer-env NAME)" : " (the token is refused)";
      }
      if (!response.body.empty()) {
        std::string body = response.body;
        redact(body);  // before the cut, so that no part of a token is left at its end
        why += ": " + body.substr(0, kBodyShown);
      }
      return {Exchange::Broken, std::move(why)};
    }
    if (on == nullptr) return {};  // a notification or an answer: 202 Accepted, or any 2xx
    if (stream) {
      (void)parser.finish();
      if (step == Step::Done) return {};
      if (step == Step::Broken) return {Exchange::Broken, {}};
      return {Exchange::Broken, "the server's event stream ended before its reply"};
    }
    if (body.find_first_not_of(" \t\r\n") == std::string::npos) {
      return {Exchange::Broken,
              "the server answered HTTP " + std::to_string(response.status) + " without a reply"};
    }
    step = (*on)(body);
    if (step == Step::Done) return {};
    if (step == Step::Broken) return {Exchange::Broken, {}};
    return {Exchange::Broken, "the server's JSON reply is not the one awaited"};
  }

 public:
  void negotiated(const std::string& version) override { protocol_ = version; }

  void stop() override {
    if (stopped_) return;
    stopped_ = true;
    if (session_.empty()) return;
    http::Request r = request(Clock::now() + kDeleteWait, nullptr);
    r.method = http::Method::Delete;
    r.content_type.clear();
    (void)http::send(r);  // a server that does not end sessions answers 405: nothing to do
  }

 private:
  http::Request request(Clock::time_point deadline, const std::atomic<bool>* cancel) const {
    http::Request r;
    r.url = url_;
    r.headers.push_back("Accept: application/json, text/event-stream");
    if (!token_.empty()) r.headers.push_back("Authorization: Bearer " + token_);
    if (!session_.empty()) r.headers.push_back("Mcp-Session-Id: " + session_);
    if (!protocol_.empty()) r.headers.push_back("MCP-Protocol-Version: " + protocol_);
    r.deadline = deadline;
    r.cancel = cancel;
    // The deadline bounds the whole exchange: a tool may think for as long as it is allowed.
    constexpr auto kNever = std::numeric_limits<std::int64_t>::max() / 4;
    r.first_byte_ms = r.idle_ms = r.total_ms = kNever;
    r.max_body_bytes = static_cast<std::int64_t>(max_frame_);
    return r;
  }

  // Takes the session id the initialize reply hands out; false when it is not a valid one.
  bool adopt_session(const http::Response& response) {
    const std::string* id = response.header("mcp-session-id");
    if (id == nullptr || !session_.empty()) return true;
    if (id->empty() || id->size() > kMaxSessionId || !visible_ascii(*id)) {
      return false;
    }
    session_ = *id;
    return true;
  }

  std::string url_;
  std::string token_;
  std::size_t max_frame_;
  std::string session_;
  std::string protocol_;
  bool stopped_ = false;
};

}  // namespace

Transport::Transport(std::vector<std::string> injected) : injected_(std::move(injected)) {
  std::sort(injected_.begin(), injected_.end(),
            [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
}

bool Transport::redact(std::string& text) const {
  constexpr std::string_view kCut = "[REDACTED]";
  bool cut = false;
  for (const std::string& value : injected_) {
    for (std::size_t at = 0; (at = text.find(value, at)) != std::string::npos;) {
      text.replace(at, value.size(), kCut);
      at += kCut.size();
      cut = true;
    }
  }
  return cut;
}

Result<std::unique_ptr<Transport>> open_transport(const ServerSpec& spec, const Limits& limits) {
  if (!spec.url.empty()) {
    if (Status loaded = http::load(); !loaded) return loaded.take_diagnostics();
    std::string token;
    if (!spec.bearer_env.empty()) {
      const char* value = std::getenv(spec.bearer_env.c_str());
      token = value != nullptr ? value : "";
      // A token goes into a header line: nothing in it may end that line.
      if (token.empty() || token.size() > 8192 || !visible_ascii(token)) {
        return diag::error(
            codes::kConnectorUnreachable,
            "MCP server " + diag::redact_secrets(spec.url) + ": " + spec.bearer_env +
                " (its bearer token) is " +
                (token.empty() ? "not set" : "not 1..8192 visible ASCII characters"));
      }
    }
    return std::unique_ptr<Transport>(new HttpTransport(spec.url, std::move(token), limits));
  }
  std::vector<std::string> keep(std::begin(kServerEnv), std::end(kServerEnv));
  keep.insert(keep.end(), spec.env.begin(), spec.env.end());
  // The named variables are the ones a server is given on purpose, its credentials among them:
  // their values are read here, as the server is started with them.
  std::vector<std::string> injected;
  for (const std::string& name : spec.env) {
    const char* value = std::getenv(name.c_str());
    if (value != nullptr && std::string_view(value).size() >= kMinRedactedValue) {
      injected.emplace_back(value);
    }
  }
  auto server = process::Server::start({spec.command, {}, {}, std::move(keep)});
  if (!server) {
    auto ds = server.take_diagnostics();
    for (auto& d : ds) d.code = codes::kConnectorUnreachable;
    return ds;
  }
  return std::unique_ptr<Transport>(
      new StdioTransport(std::move(*server), limits, std::move(injected)));
}

}  // namespace mf::mcp::detail
