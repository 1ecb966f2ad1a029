// The MCP client of client.hpp: the JSON-RPC session over a transport (initialize, tools/list,
// tools/call, cancellation). A server's spec and its forms are in server_spec.cpp.
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
  transport_->redact(tail);  // before the cut, so that no part of a value is left at its start
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
      std::string line(text);
      transport_->redact(line);  // before the cut, so that no part of a value is left at its end
      broke = "the server sent a message that is not JSON: " + shown(line, kLineShown);
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
        transport_->redact(m);  // before the cut, so that no part of a value is left at its end
      }
      out.status = CallStatus::Failed;
      out.error = method + " failed: " + shown(m, 512);
      return detail::Step::Done;
    }
    Value* r = msg->find("result");
    if (r == nullptr || !r->is_object()) {
      broke = "the server's reply to " + method + " has no result object";
      return detail::Step::Broken;
    }
    out.status = CallStatus::Ok;
    out.result = std::move(*r);  // the message is done with: a large result is held once
    if (transport_->redacts()) {
      json::redact_strings(out.result, [this](std::string& s) { return transport_->redact(s); });
    }
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
