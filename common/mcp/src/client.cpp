#include "mf/mcp/client.hpp"

#include <algorithm>

#include "mf/diag/codes.hpp"
#include "mf/diag/secrets.hpp"
#include "mf/json/canonical.hpp"
#include "mf/json/reader.hpp"
#include "mf/process/process.hpp"

namespace mf::mcp {
namespace {

using json::Value;
using Clock = std::chrono::steady_clock;
namespace codes = diag::codes;

constexpr std::size_t kStderrShown = 2048;
constexpr std::size_t kLineShown = 80;
constexpr auto kCancelNotice = std::chrono::milliseconds(200);
constexpr auto kStopGrace = std::chrono::milliseconds(500);

std::string shown(std::string_view text, std::size_t max) {
  std::string s(text.substr(0, max));
  while (!s.empty() && (static_cast<unsigned char>(s.back()) & 0xC0) == 0x80) s.pop_back();
  for (char& c : s) {
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';
  }
  return diag::redact_secrets(s);
}

}  // namespace

struct Client::Session {
  std::unique_ptr<process::Server> server;
  std::string buffer;  // bytes read past the last complete line
  std::size_t scanned = 0;
};

json::Value to_json(const ServerSpec& s) {
  return json::Object{{"command", json::Array(s.command.begin(), s.command.end())},
                      {"transport", "stdio"}};
}

Result<ServerSpec> server_from_json(const json::Value& v, const std::string& pointer) {
  auto bad = [&](std::string msg, std::string at) {
    return diag::error(codes::kSchema, std::move(msg), std::move(at));
  };
  if (!v.is_object()) return bad("a server must be an object", pointer);
  ServerSpec s;
  for (const auto& m : v.as_object()) {
    if (m.key != "transport" && m.key != "command") {
      return diag::error(codes::kUnknownField, "unknown member '" + m.key + "' of a server",
                         pointer + "/" + m.key);
    }
  }
  const Value* t = v.find("transport");
  if (t == nullptr || !t->is_string() || t->as_string() != "stdio") {
    return bad("a server's transport must be \"stdio\"", pointer + "/transport");
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
  return s;
}

Result<ServerSpec> parse_server_argument(std::string_view text) {
  ServerSpec s;
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

Client::Client(std::unique_ptr<Session> session, Limits limits)
    : session_(std::move(session)), limits_(limits) {}

Client::~Client() {
  close();
}

void Client::close() {
  if (session_ && session_->server) session_->server->stop(kStopGrace);
  if (broken_.empty()) broken_ = "the connector is closed";
}

std::string Client::stderr_tail() const {
  if (!session_ || !session_->server) return {};
  std::string tail = session_->server->stderr_tail();
  if (tail.size() > kStderrShown) tail = tail.substr(tail.size() - kStderrShown);
  while (!tail.empty() && (static_cast<unsigned char>(tail.front()) & 0xC0) == 0x80) {
    tail.erase(0, 1);
  }
  return diag::redact_secrets(tail);
}

Result<std::unique_ptr<Client>> Client::connect(const ServerSpec& spec, const Limits& limits,
                                                const std::atomic<bool>* cancel) {
  auto server = process::Server::start({spec.command, {}, {}});
  if (!server) {
    auto ds = server.take_diagnostics();
    for (auto& d : ds) d.code = codes::kConnectorUnreachable;
    return ds;
  }
  auto session = std::make_unique<Session>();
  session->server = std::move(*server);
  std::unique_ptr<Client> client(new Client(std::move(session), limits));
  const auto deadline = Clock::now() + std::chrono::milliseconds(limits.connect_timeout_ms);
  Value params = json::Object{
      {"capabilities", json::Object{}},
      {"clientInfo", json::Object{{"name", "millforge"}, {"version", "1.0"}}},
      {"protocolVersion", std::string(kProtocolVersions[0])},
  };
  CallOutcome init = client->request("initialize", std::move(params), deadline, cancel);
  auto unreachable = [&](const std::string& why) {
    std::string msg = "MCP server " + spec.command.front() + ": " + why;
    if (std::string tail = client->stderr_tail(); !tail.empty()) {
      msg += "; its stderr ends: " + shown(tail, kStderrShown);
    }
    client->close();
    return diag::error(codes::kConnectorUnreachable, msg);
  };
  if (init.status != CallStatus::Ok) return unreachable("initialize failed: " + init.error);
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
                       "MCP server " + spec.command.front() + " speaks protocol version \"" +
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
  const std::string note = R"({"jsonrpc":"2.0","method":"notifications/initialized"})"
                           "\n";
  if (client->session_->server->write(note, deadline, cancel) != process::Io::Ok) {
    return unreachable("it stopped reading after initialize");
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
  process::Server& server = *session_->server;
  const std::int64_t id = next_id_++;
  auto fail = [&](std::string why) {
    broken_ = why;
    server.stop(kStopGrace);
    out.status = CallStatus::Failed;
    out.error = std::move(why);
    return out;
  };
  auto io_end = [&](process::Io io, const std::string& what) {
    if (io == process::Io::Closed) {
      std::string why = "the server " + what;
      if (auto code = server.exit_code()) why += " (exit code " + std::to_string(*code) + ")";
      return fail(why);
    }
    // A deadline or a cancellation: the server is told, and the session goes on.
    out.status = io == process::Io::Cancelled ? CallStatus::Cancelled : CallStatus::TimedOut;
    out.error = io == process::Io::Cancelled ? "cancelled" : "timed out";
    const std::string notice =
        json::canonical(
            json::Object{{"jsonrpc", "2.0"},
                         {"method", "notifications/cancelled"},
                         {"params", json::Object{{"reason", out.error}, {"requestId", id}}}}) +
        "\n";
    (void)server.write(notice, Clock::now() + kCancelNotice, nullptr);
    return out;
  };
  std::string line = json::canonical(json::Object{
      {"id", id}, {"jsonrpc", "2.0"}, {"method", method}, {"params", std::move(params)}});
  line += '\n';
  if (auto io = server.write(line, deadline, cancel); io != process::Io::Ok) {
    return io_end(io, "stopped reading its input");
  }
  Session& s = *session_;
  json::ReadLimits rl;
  rl.max_bytes = limits_.max_frame_bytes;
  rl.max_string_bytes = limits_.max_frame_bytes;
  for (;;) {
    const std::size_t nl = s.buffer.find('\n', s.scanned);
    if (nl == std::string::npos) {
      s.scanned = s.buffer.size();
      if (s.buffer.size() > limits_.max_frame_bytes) {
        return fail("the server sent a message over " +
                    std::to_string(limits_.max_frame_bytes >> 20) + " MiB");
      }
      if (auto io = server.read(s.buffer, deadline, cancel); io != process::Io::Ok) {
        return io_end(io, "closed its output");
      }
      continue;
    }
    std::string text = s.buffer.substr(0, nl);
    s.buffer.erase(0, nl + 1);
    s.scanned = 0;
    if (!text.empty() && text.back() == '\r') text.pop_back();
    if (text.find_first_not_of(" \t") == std::string::npos) continue;
    auto msg = json::parse_object(text, rl);
    if (!msg) return fail("the server sent a line that is not JSON: " + shown(text, kLineShown));
    const Value* mid = msg->find("id");
    if (const Value* m = msg->find("method"); m != nullptr) {
      if (mid == nullptr) {
        ++skipped_;  // a notification: progress, logging, list changes
        continue;
      }
      // A request of the server's: a ping is answered, anything else refused.
      Value reply = json::Object{{"id", *mid}, {"jsonrpc", "2.0"}};
      if (m->is_string() && m->as_string() == "ping") {
        reply.set("result", json::Object{});
      } else {
        reply.set("error", json::Object{{"code", -32601}, {"message", "Method not found"}});
      }
      if (auto io = server.write(json::canonical(reply) + "\n", deadline, cancel);
          io != process::Io::Ok) {
        return io_end(io, "stopped reading its input");
      }
      continue;
    }
    if (mid == nullptr || !mid->is_number() || mid->as_exact_int() != id) {
      ++skipped_;  // a reply to something else (a late one, or a wrong id)
      continue;
    }
    if (const Value* e = msg->find("error"); e != nullptr) {
      std::string m = "error";
      if (const Value* em = e->find("message"); em != nullptr && em->is_string()) {
        m = em->as_string();
      }
      out.status = CallStatus::Failed;
      out.error = method + " failed: " + shown(m, 512);
      return out;
    }
    const Value* r = msg->find("result");
    if (r == nullptr || !r->is_object())
      return fail("the server's reply to " + method + " has no result object");
    out.status = CallStatus::Ok;
    out.result = *r;
    return out;
  }
}

}  // namespace mf::mcp
