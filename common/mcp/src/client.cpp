// The MCP client of client.hpp: a server's spec in its JSON and command-line forms, and the
// JSON-RPC session over a transport (initialize, tools/list, tools/call, cancellation).
#include "mf/mcp/client.hpp"

#include <algorithm>
#include <optional>

#include "mf/diag/codes.hpp"
#include "mf/diag/secrets.hpp"
#include "mf/json/canonical.hpp"
#include "mf/json/reader.hpp"
#include "mf/net/url.hpp"
#include "mf/text/env_name.hpp"
#include "transport.hpp"

namespace mf::mcp {
namespace {

using json::Value;
using Clock = std::chrono::steady_clock;
namespace codes = diag::codes;

constexpr std::size_t kStderrShown = 2048;
constexpr std::size_t kLineShown = 80;
constexpr auto kCancelNotice = std::chrono::milliseconds(200);

std::string shown(std::string_view text, std::size_t max) {
  std::string s(text.substr(0, max));
  while (!s.empty() && (static_cast<unsigned char>(s.back()) & 0xC0) == 0x80) s.pop_back();
  for (char& c : s) {
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';
  }
  return diag::redact_secrets(s);
}

}  // namespace

json::Value to_json(const ServerSpec& s) {
  if (!s.url.empty()) {
    Value v = json::Object{{"transport", "http"}, {"url", s.url}};
    if (!s.bearer_env.empty()) v.set("bearer_env", s.bearer_env);
    return v;
  }
  Value v = json::Object{{"command", json::Array(s.command.begin(), s.command.end())}};
  if (!s.env.empty()) v.set("env", json::Array(s.env.begin(), s.env.end()));
  v.set("transport", "stdio");
  return v;
}

namespace {

constexpr std::size_t kMaxEnv = 64;

// Sorted, without repeats; "" when every name is one, else what is wrong.
std::string normalize_env(std::vector<std::string>& names) {
  if (names.size() > kMaxEnv) return "a server is given at most 64 environment variables";
  for (const auto& n : names) {
    if (!mf::text::env_name(n)) {
      return "an environment variable name is [A-Za-z_][A-Za-z0-9_]*, at most 128 bytes";
    }
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return {};
}

// Why `url` is not an endpoint this client reaches, or "" when it is one.
std::string url_refusal(std::string_view url) {
  return net::describe(net::url_fault(url), "a server URL");
}

}  // namespace

Result<ServerSpec> server_from_json(const json::Value& v, const std::string& pointer) {
  auto bad = [&](std::string msg, std::string at) {
    return diag::error(codes::kSchema, std::move(msg), std::move(at));
  };
  if (!v.is_object()) return bad("a server must be an object", pointer);
  const Value* t = v.find("transport");
  const bool http = t != nullptr && t->is_string() && t->as_string() == "http";
  if (!http && (t == nullptr || !t->is_string() || t->as_string() != "stdio")) {
    return bad("a server's transport must be \"stdio\" or \"http\"", pointer + "/transport");
  }
  for (const auto& m : v.as_object()) {
    if (m.key != "transport" && m.key != (http ? "url" : "command") &&
        m.key != (http ? "bearer_env" : "env")) {
      return diag::error(codes::kUnknownField, "unknown member '" + m.key + "' of a server",
                         pointer + "/" + m.key);
    }
  }
  ServerSpec s;
  if (http) {
    const Value* u = v.find("url");
    if (u == nullptr || !u->is_string()) return bad("an http server needs a url", pointer + "/url");
    if (std::string why = url_refusal(u->as_string()); !why.empty()) {
      return bad(std::move(why), pointer + "/url");
    }
    s.url = u->as_string();
    if (const Value* b = v.find("bearer_env"); b != nullptr) {
      if (!b->is_string() || !mf::text::env_name(b->as_string())) {
        return bad("a server's bearer_env is the name of an environment variable",
                   pointer + "/bearer_env");
      }
      s.bearer_env = b->as_string();
    }
    return s;
  }
  const Value* c = v.find("command");
  if (c == nullptr || !c->is_array() || c->as_array().empty() || c->as_array().size() > 256) {
    return bad("a server's command must be 1..256 strings", pointer + "/command");
  }
  for (const Value& a : c->as_array()) {
    if (!a.is_string() || a.as_string().find('\0') != std::string::npos ||
        a.as_string().size() > 4096) {
      return bad("a server's command must be 1..256 strings", pointer + "/command");
    }
    s.command.push_back(a.as_string());
  }
  if (s.command.front().empty()) return bad("a server's program is empty", pointer + "/command/0");
  if (const Value* e = v.find("env"); e != nullptr) {
    if (!e->is_array()) return bad("a server's env is an array of names", pointer + "/env");
    for (const Value& n : e->as_array()) {
      if (!n.is_string()) return bad("a server's env is an array of names", pointer + "/env");
      s.env.push_back(n.as_string());
    }
    const std::vector<std::string> given = s.env;
    if (std::string why = normalize_env(s.env); !why.empty()) return bad(why, pointer + "/env");
    if (s.env != given || s.env.empty()) {
      return bad("a server's env is 1..64 names, sorted, without repeats", pointer + "/env");
    }
  }
  return s;
}

Result<ServerSpec> parse_server_argument(std::string_view text, const std::vector<std::string>& env,
                                         const std::string& bearer_env) {
  ServerSpec s;
  s.env = env;
  if (std::string why = normalize_env(s.env); !why.empty()) {
    return diag::error(codes::kUsage, "--server-env: " + why);
  }
  if (!bearer_env.empty() && !mf::text::env_name(bearer_env)) {
    return diag::error(codes::kUsage,
                       "--bearer-env: the name of an environment variable is "
                       "[A-Za-z_][A-Za-z0-9_]*, at most 128 bytes");
  }
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  if (text.starts_with("http://") || text.starts_with("https://")) {
    if (!s.env.empty()) {
      return diag::error(codes::kUsage,
                         "--server-env: an HTTP server runs elsewhere; its environment is its own");
    }
    if (std::string why = url_refusal(text); !why.empty()) {
      return diag::error(codes::kUsage, "--server: " + why);
    }
    s.url = std::string(text);
    s.bearer_env = bearer_env;
    return s;
  }
  if (!bearer_env.empty()) {
    return diag::error(codes::kUsage, "--bearer-env: only an HTTP server is sent a token");
  }
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quote != 0) {
      if (c == quote) {
        quote = 0;
      } else if (c == '\\' && quote == '"' && i + 1 < text.size()) {
        word += text[++i];
      } else {
        word += c;
      }
    } else if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (c == '\\' && i + 1 < text.size()) {
      word += text[++i];
      in_word = true;
    } else if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) s.command.push_back(std::move(word));
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (quote != 0) return diag::error(codes::kUsage, "--server: unterminated quote");
  if (in_word) s.command.push_back(std::move(word));
  if (s.command.empty()) return diag::error(codes::kUsage, "--server: no command given");
  return s;
}

Client::Client(std::unique_ptr<detail::Transport> transport, Limits limits)
    : transport_(std::move(transport)), limits_(limits) {}

Client::~Client() {
  close();
}

void Client::close() {
  if (transport_) transport_->stop();
  if (broken_.empty()) broken_ = "the connector is closed";
}

std::string Client::stderr_tail() const {
  if (!transport_) return {};
  std::string tail = transport_->stderr_tail();
  if (tail.size() > kStderrShown) tail = tail.substr(tail.size() - kStderrShown);
  while (!tail.empty() && (static_cast<unsigned char>(tail.front()) & 0xC0) == 0x80) {
    tail.erase(0, 1);
  }
  return diag::redact_secrets(tail);
}

Result<std::unique_ptr<Client>> Client::connect(const ServerSpec& spec, const Limits& limits,
                                                const std::atomic<bool>* cancel) {
  auto transport = detail::open_transport(spec, limits);
  if (!transport) return transport.take_diagnostics();
  std::unique_ptr<Client> client(new Client(std::move(*transport), limits));
  const auto deadline = Clock::now() + std::chrono::milliseconds(limits.connect_timeout_ms);
  Value params = json::Object{
      {"capabilities", json::Object{}},
      {"clientInfo", json::Object{{"name", "millforge"}, {"version", "1.0"}}},
      {"protocolVersion", std::string(kProtocolVersions[0])},
  };
  CallOutcome init = client->request("initialize", std::move(params), deadline, cancel);
  const std::string server = shown(spec.name(), 256);
  auto unreachable = [&](const std::string& why) {
    std::string msg = "MCP server " + server + ": " + why;
    if (std::string tail = client->stderr_tail(); !tail.empty()) {
      msg += "; its stderr ends: " + shown(tail, kStderrShown);
    }
    client->close();
    return diag::error(codes::kConnectorUnreachable, msg);
  };
  if (init.status != CallStatus::Ok) {
    // A JSON-RPC error already reads "initialize failed: <its message>".
    const bool answered = init.status == CallStatus::Failed && client->broken_.empty();
    return unreachable(answered ? init.error : "initialize failed: " + init.error);
  }
  const Value* pv = init.result.find("protocolVersion");
  const Value* si = init.result.find("serverInfo");
  if (pv == nullptr || !pv->is_string() || si == nullptr || !si->is_object() ||
      si->find("name") == nullptr || !si->find("name")->is_string()) {
    return unreachable("its initialize result lacks protocolVersion or serverInfo.name");
  }
  if (std::find(std::begin(kProtocolVersions), std::end(kProtocolVersions), pv->as_string()) ==
      std::end(kProtocolVersions)) {
    client->close();
    return diag::error(codes::kConnectorProtocol,
                       "MCP server " + server + " speaks protocol version \"" +
                           shown(pv->as_string(), kLineShown) + "\", not one of 2025-11-25, " +
                           "2025-06-18, 2025-03-26, 2024-11-05");
  }
  client->info_.protocol_version = pv->as_string();
  client->info_.name = si->find("name")->as_string();
  if (const Value* v = si->find("version"); v != nullptr && v->is_string()) {
    client->info_.version = v->as_string();
  }
  if (const Value* c = init.result.find("capabilities"); c != nullptr) {
    client->info_.capabilities = *c;
  }
  client->transport_->negotiated(client->info_.protocol_version);
  const detail::Exchange note = client->transport_->exchange(
      R"({"jsonrpc":"2.0","method":"notifications/initialized"})", deadline, cancel, nullptr);
  if (note.kind != detail::Exchange::Ok) {
    return unreachable("it refused the initialized notification" +
                       (note.why.empty() ? std::string() : ": " + shown(note.why, 512)));
  }
  return client;
}

Result<std::vector<json::Value>> Client::list_tools(const std::atomic<bool>* cancel) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(limits_.connect_timeout_ms);
  std::vector<Value> tools;
  Value cursor;
  for (std::size_t page = 0;; ++page) {
    if (page == limits_.max_pages) {
      return diag::error(
          codes::kConnectorSnapshot,
          "the server lists more than " + std::to_string(limits_.max_pages) + " pages of tools");
    }
    Value params = json::Object{};
    if (!cursor.is_null()) params.set("cursor", cursor);
    CallOutcome r = request("tools/list", std::move(params), deadline, cancel);
    if (r.status != CallStatus::Ok) {
      return diag::error(codes::kConnectorUnreachable, "tools/list failed: " + r.error);
    }
    const Value* list = r.result.find("tools");
    if (list == nullptr || !list->is_array()) {
      return diag::error(codes::kConnectorUnreachable, "tools/list returned no tools array");
    }
    for (const Value& t : list->as_array()) {
      if (tools.size() == limits_.max_tools) {
        return diag::error(
            codes::kConnectorSnapshot,
            "the server lists more than " + std::to_string(limits_.max_tools) + " tools");
      }
      tools.push_back(t);
    }
    const Value* next = r.result.find("nextCursor");
    if (next == nullptr || next->is_null()) break;
    if (!next->is_string()) {
      return diag::error(codes::kConnectorUnreachable, "tools/list: nextCursor is not a string");
    }
    cursor = *next;
  }
  return tools;
}

CallOutcome Client::call_tool(const std::string& name, const json::Value& arguments,
                              Clock::time_point deadline, const std::atomic<bool>* cancel) {
  return request("tools/call", json::Object{{"arguments", arguments}, {"name", name}}, deadline,
                 cancel);
}

CallOutcome Client::request(const std::string& method, json::Value params,
                            Clock::time_point deadline, const std::atomic<bool>* cancel) {
  CallOutcome out;
  if (!broken_.empty()) {
    out.error = broken_;
    return out;
  }
  const std::int64_t id = next_id_++;
  json::ReadLimits rl;
  rl.max_bytes = limits_.max_frame_bytes;
  rl.max_string_bytes = limits_.max_frame_bytes;
  std::string broke;                                  // why a handler found the session unusable
  std::optional<detail::Exchange::Kind> interrupted;  // a deadline or cancel while answering
  const detail::OnMessage on = [&](std::string_view text) {
    auto msg = json::parse_object(text, rl);
    if (!msg) {
      broke = "the server sent a message that is not JSON: " + shown(text, kLineShown);
      return detail::Step::Broken;
    }
    const Value* mid = msg->find("id");
    if (const Value* m = msg->find("method"); m != nullptr) {
      if (mid == nullptr) {
        ++skipped_;  // a notification: progress, logging, list changes
        return detail::Step::More;
      }
      // A request of the server's: a ping is answered, anything else refused.
      Value reply = json::Object{{"id", *mid}, {"jsonrpc", "2.0"}};
      if (m->is_string() && m->as_string() == "ping") {
        reply.set("result", json::Object{});
      } else {
        reply.set("error", json::Object{{"code", -32601}, {"message", "Method not found"}});
      }
      const detail::Exchange e =
          transport_->exchange(json::canonical(reply), deadline, cancel, nullptr);
      if (e.kind == detail::Exchange::Ok) return detail::Step::More;
      if (e.kind == detail::Exchange::Broken) {
        broke = e.why;
      } else {
        interrupted = e.kind;
      }
      return detail::Step::Broken;
    }
    if (mid == nullptr || !mid->is_number() || mid->as_exact_int() != id) {
      ++skipped_;  // a reply to something else (a late one, or a wrong id)
      return detail::Step::More;
    }
    if (const Value* e = msg->find("error"); e != nullptr) {
      std::string m = "error";
      if (const Value* em = e->find("message"); em != nullptr && em->is_string()) {
        m = em->as_string();
      }
      out.status = CallStatus::Failed;
      out.error = method + " failed: " + shown(m, 512);
      return detail::Step::Done;
    }
    const Value* r = msg->find("result");
    if (r == nullptr || !r->is_object()) {
      broke = "the server's reply to " + method + " has no result object";
      return detail::Step::Broken;
    }
    out.status = CallStatus::Ok;
    out.result = *r;
    return detail::Step::Done;
  };
  const std::string message = json::canonical(json::Object{
      {"id", id}, {"jsonrpc", "2.0"}, {"method", method}, {"params", std::move(params)}});
  detail::Exchange e = transport_->exchange(message, deadline, cancel, &on);
  if (interrupted) e.kind = *interrupted;
  transport_->redact(out.error);  // a server's error message may quote the request
  transport_->redact(broke);
  if (e.kind == detail::Exchange::Ok) return out;
  if (e.kind == detail::Exchange::Broken) {
    broken_ = shown(broke.empty() ? e.why : broke, 1024);
    transport_->stop();
    out.status = CallStatus::Failed;
    out.error = broken_;
    return out;
  }
  // A deadline or a cancellation: the server is told, and the session goes on.
  const bool cancelled = e.kind == detail::Exchange::Cancelled;
  out.status = cancelled ? CallStatus::Cancelled : CallStatus::TimedOut;
  out.error = cancelled ? "cancelled" : "timed out";
  const std::string notice = json::canonical(
      json::Object{{"jsonrpc", "2.0"},
                   {"method", "notifications/cancelled"},
                   {"params", json::Object{{"reason", out.error}, {"requestId", id}}}});
  (void)transport_->exchange(notice, Clock::now() + kCancelNotice, nullptr, nullptr);
  return out;
}

}  // namespace mf::mcp
