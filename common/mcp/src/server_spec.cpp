// A server's spec (client.hpp's ServerSpec) in its two forms: the JSON of snapshots and plans, and
// the --server command-line argument; both refuse what a client could not or must not reach.
#include <algorithm>
#include <optional>

#include "mf/diag/codes.hpp"
#include "mf/mcp/client.hpp"
#include "mf/net/url.hpp"
#include "mf/text/env_name.hpp"
#include "mf/text/suggest.hpp"

namespace mf::mcp {

using json::Value;
namespace codes = diag::codes;

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
      return diag::error(codes::kUnknownField,
                         "unknown member '" + m.key + "' of a server" +
                             text::did_you_mean(m.key, {"transport", http ? "url" : "command",
                                                        http ? "bearer_env" : "env"}),
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
      if (!b->is_string() || !mf::text::env_name(b->as_string(), mf::text::EnvLetters::Upper)) {
        return bad("a server's bearer_env is the name of an environment variable (A-Z, 0-9, _)",
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
  // The name is pinned in the snapshot, the manifest and the plan: a lower-case word there is more
  // likely the token pasted in its place than a name.
  if (!bearer_env.empty() && !mf::text::env_name(bearer_env, mf::text::EnvLetters::Upper)) {
    return diag::error(codes::kUsage,
                       "--bearer-env: the name of the variable that holds the token is "
                       "[A-Z_][A-Z0-9_]*, at most 128 bytes, not the token itself");
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

}  // namespace mf::mcp
