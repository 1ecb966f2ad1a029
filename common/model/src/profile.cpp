// Reading a live backend profile (profile.hpp): every field checked, with its pointer, before any
// request is made.
#include "profile.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <optional>

#include "mf/diag/codes.hpp"
#include "mf/diag/secrets.hpp"
#include "mf/hash/sha256.hpp"
#include "mf/io/file.hpp"
#include "mf/json/fields.hpp"
#include "mf/json/pointer.hpp"
#include "mf/json/reader.hpp"
#include "mf/json/source_map.hpp"
#include "mf/net/url.hpp"
#include "mf/text/env_name.hpp"

namespace mf::model {

namespace {

namespace codes = diag::codes;

constexpr std::string_view kKind = "millforge_live_profile";

// RFC 9110 token characters: what a header name may hold.
bool header_name(std::string_view s) {
  if (s.empty() || s.size() > 64) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) ||
           std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
  });
}

bool printable(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c >= 0x20 && c < 0x7f; });
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Headers the client sets itself, or that carry credentials: a profile may not name them.
bool reserved_header(std::string_view name) {
  static constexpr std::string_view kReserved[] = {"authorization",
                                                   "proxy-authorization",
                                                   "x-api-key",
                                                   "api-key",
                                                   "cookie",
                                                   "host",
                                                   "content-length",
                                                   "content-type",
                                                   "transfer-encoding",
                                                   "connection",
                                                   "accept",
                                                   "expect"};
  const std::string l = lower(name);
  return std::find(std::begin(kReserved), std::end(kReserved), l) != std::end(kReserved);
}

class Reader {
 public:
  explicit Reader(json::FieldReader& top) : top_(top) {}

  void fail(std::string pointer, std::string message, const char* code = codes::kSchema) {
    top_.add(diag::error(code, std::move(message), std::move(pointer)));
  }

  // An integer member in [lo, hi], or `fallback` when absent.
  std::int64_t integer(json::FieldReader& r, std::string_view key, std::int64_t fallback,
                       std::int64_t lo, std::int64_t hi) {
    auto v = r.integer(key, false);
    if (!v) return fallback;
    if (*v < lo || *v > hi) {
      fail(r.pointer_of(key), std::string(key) + " must be between " + std::to_string(lo) +
                                  " and " + std::to_string(hi));
      return fallback;
    }
    return *v;
  }

  double number(json::FieldReader& r, std::string_view key, double fallback, double lo, double hi) {
    const json::Value* v = r.optional(key);
    if (v == nullptr) return fallback;
    if (!v->is_number() || v->as_number() < lo || v->as_number() > hi) {
      fail(r.pointer_of(key),
           std::string(key) + " must be a number between " + num(lo) + " and " + num(hi));
      return fallback;
    }
    return v->as_number();
  }

  static std::string num(double d) {
    std::string s = std::to_string(d);
    while (s.size() > 1 && s.back() == '0') s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
    return s;
  }

 private:
  json::FieldReader& top_;
};

// Each option the request may carry, by API, with the values it accepts.
struct OptionRule {
  std::string_view name;
  enum Type : std::uint8_t { Number, Integer, Stops, Effort } type;
  double lo = 0, hi = 0;
};

constexpr OptionRule kOpenAiOptions[] = {
    {"temperature", OptionRule::Number, 0, 2},
    {"top_p", OptionRule::Number, 0, 1},
    {"top_k", OptionRule::Integer, 1, 1000},
    {"min_p", OptionRule::Number, 0, 1},
    {"max_tokens", OptionRule::Integer, 1, 1000000},
    {"seed", OptionRule::Integer, -9007199254740991.0, 9007199254740991.0},
    {"stop", OptionRule::Stops, 1, 4},
    {"presence_penalty", OptionRule::Number, -2, 2},
    {"frequency_penalty", OptionRule::Number, -2, 2},
    {"reasoning_effort", OptionRule::Effort, 0, 0},
};
constexpr OptionRule kAnthropicOptions[] = {
    {"temperature", OptionRule::Number, 0, 1},    {"top_p", OptionRule::Number, 0, 1},
    {"top_k", OptionRule::Integer, 1, 1000},      {"max_tokens", OptionRule::Integer, 1, 1000000},
    {"stop_sequences", OptionRule::Stops, 1, 16},
};

template <std::size_t N>
const OptionRule* find_rule(const OptionRule (&rules)[N], std::string_view name) {
  for (const auto& r : rules) {
    if (r.name == name) return &r;
  }
  return nullptr;
}

template <std::size_t N>
std::string names(const OptionRule (&rules)[N]) {
  std::string out;
  for (const auto& r : rules) out += (out.empty() ? "" : ", ") + std::string(r.name);
  return out;
}

std::optional<std::string> option_problem(const OptionRule& rule, const json::Value& v) {
  switch (rule.type) {
    case OptionRule::Number:
      if (!v.is_number() || v.as_number() < rule.lo || v.as_number() > rule.hi) {
        return "must be a number between " + Reader::num(rule.lo) + " and " + Reader::num(rule.hi);
      }
      return std::nullopt;
    case OptionRule::Integer: {
      auto i = v.is_number() ? v.as_exact_int() : std::nullopt;
      if (!i || static_cast<double>(*i) < rule.lo || static_cast<double>(*i) > rule.hi) {
        return "must be an integer between " + Reader::num(rule.lo) + " and " +
               Reader::num(rule.hi);
      }
      return std::nullopt;
    }
    case OptionRule::Stops: {
      const bool one = v.is_string() && rule.name == "stop";
      if (one)
        return v.as_string().empty() ? std::optional<std::string>("must not be empty")
                                     : std::nullopt;
      if (!v.is_array() || v.as_array().empty() ||
          v.as_array().size() > static_cast<std::size_t>(rule.hi)) {
        return "must be " + std::string(rule.name == "stop" ? "a string or " : "") +
               "an array of 1 to " + Reader::num(rule.hi) + " non-empty strings";
      }
      for (const auto& s : v.as_array()) {
        if (!s.is_string() || s.as_string().empty() || s.as_string().size() > 256) {
          return "must hold non-empty strings of at most 256 bytes";
        }
      }
      return std::nullopt;
    }
    case OptionRule::Effort:
      if (!v.is_string() ||
          (v.as_string() != "low" && v.as_string() != "medium" && v.as_string() != "high")) {
        return "must be \"low\", \"medium\" or \"high\"";
      }
      return std::nullopt;
  }
  return std::nullopt;
}

void read_base_url(json::FieldReader& r, Profile& p, Reader& rd) {
  auto url = r.string("base_url");
  if (!url) return;
  const std::string ptr = r.pointer_of("base_url");
  std::string u = *url;
  // Paths are appended to a base URL: it has no place for a query or a fragment.
  const net::UrlFault fault = net::url_fault(u, {.allow_query = false});
  if (fault == net::UrlFault::Credentials) {
    rd.fail(ptr, net::describe(fault, "base_url") + "; use auth.secret_env", codes::kSecretValue);
    return;
  }
  if (fault != net::UrlFault::None) {
    rd.fail(ptr, net::describe(fault, "base_url"));
    return;
  }
  while (!u.empty() && u.back() == '/') u.pop_back();
  p.base_url = std::move(u);
}

void read_auth(json::FieldReader& top, Profile& p, Reader& rd) {
  const json::Value* auth = top.object("auth", false);
  if (auth == nullptr) return;
  json::FieldReader a(*auth, top.pointer_of("auth"));
  auto scheme = a.string("scheme");
  if (scheme) {
    if (*scheme == "none") {
      p.auth = Profile::Auth::None;
    } else if (*scheme == "bearer") {
      p.auth = Profile::Auth::Bearer;
    } else if (*scheme == "header") {
      p.auth = Profile::Auth::Header;
    } else {
      rd.fail(a.pointer_of("scheme"), "auth.scheme must be \"bearer\", \"header\" or \"none\"");
      for (auto& d : a.take()) top.add(std::move(d));
      return;  // the other members depend on the scheme
    }
  }
  const bool needs_secret = p.auth != Profile::Auth::None;
  if (auto env = a.string("secret_env", needs_secret)) {
    if (!needs_secret) {
      rd.fail(a.pointer_of("secret_env"), "auth.scheme \"none\" takes no secret_env");
    } else if (!text::env_name(*env, text::EnvLetters::Upper)) {
      rd.fail(a.pointer_of("secret_env"),
              "secret_env must name an environment variable (A-Z, 0-9, _), not hold a secret",
              diag::find_secret(*env) ? codes::kSecretValue : codes::kSchema);
    } else {
      p.secret_env = *env;
    }
  }
  if (auto header = a.string("header", p.auth == Profile::Auth::Header)) {
    if (p.auth != Profile::Auth::Header) {
      rd.fail(a.pointer_of("header"), "auth.header goes with auth.scheme \"header\"");
    } else if (!header_name(*header)) {
      rd.fail(a.pointer_of("header"), "auth.header must be a header name (token characters)");
    } else {
      p.auth_header = *header;
    }
  }
  a.reject_unknown({"scheme", "secret_env", "header"});
  for (auto& d : a.take()) top.add(std::move(d));
}

void read_headers(json::FieldReader& top, Profile& p, Reader& rd) {
  const json::Value* headers = top.object("headers", false);
  if (headers == nullptr) return;
  const std::string base = top.pointer_of("headers");
  for (const auto& m : headers->as_object()) {
    const std::string ptr = base + "/" + json::escape_token(m.key);
    if (!header_name(m.key)) {
      rd.fail(ptr, "header name must be token characters");
    } else if (reserved_header(m.key)) {
      rd.fail(ptr, "header \"" + m.key +
                       "\" is set by the client or carries credentials; use auth for secrets");
    } else if (!m.value.is_string() || !printable(m.value.as_string()) ||
               m.value.as_string().size() > 1024) {
      rd.fail(ptr, "header value must be printable ASCII, at most 1024 bytes");
    } else if (diag::find_secret(m.value.as_string())) {
      rd.fail(ptr, "header value looks like a secret; reference it with auth.secret_env",
              codes::kSecretValue);
    } else {
      p.headers.emplace_back(m.key, m.value.as_string());
    }
  }
  if (headers->as_object().size() > 32) rd.fail(base, "at most 32 headers");
}

void read_capabilities(json::FieldReader& top, Profile& p, bool& streaming) {
  const json::Value* caps = top.object("capabilities", false);
  streaming = false;
  if (caps == nullptr) return;
  json::FieldReader c(*caps, top.pointer_of("capabilities"));
  p.wire.native_tools = c.boolean("tools", false).value_or(true);
  streaming = c.boolean("streaming", false).value_or(false);
  p.wire.parallel_tool_calls = c.boolean("parallel_tool_calls", false).value_or(false);
  (void)c.boolean("reasoning", false);
  c.reject_unknown({"tools", "streaming", "parallel_tool_calls", "reasoning"});
  for (auto& d : c.take()) top.add(std::move(d));
}

template <std::size_t N>
void read_options(json::FieldReader& top, Profile& p, Reader& rd, const OptionRule (&rules)[N]) {
  p.wire.options = json::Object{};
  const json::Value* options = top.object("options", false);
  if (options == nullptr) return;
  const std::string base = top.pointer_of("options");
  for (const auto& m : options->as_object()) {
    const OptionRule* rule = find_rule(rules, m.key);
    if (rule == nullptr) {
      rd.fail(base + "/" + json::escape_token(m.key),
              "option \"" + m.key + "\" is not sent to this API (allowed: " + names(rules) + ")",
              codes::kUnknownField);
      continue;
    }
    if (auto problem = option_problem(*rule, m.value)) {
      rd.fail(base + "/" + m.key, m.key + " " + *problem);  // an allowed name: no escaping
      continue;
    }
    if (m.value.is_string() && diag::find_secret(m.value.as_string())) {
      rd.fail(base + "/" + m.key, "option value looks like a secret", codes::kSecretValue);
      continue;
    }
    p.wire.options.set(m.key, m.value);
  }
}

void read_timeouts(json::FieldReader& top, Profile& p, Reader& rd) {
  const json::Value* t = top.object("timeouts_ms", false);
  if (t == nullptr) return;
  json::FieldReader r(*t, top.pointer_of("timeouts_ms"));
  constexpr std::int64_t kHour = 3600000;
  p.timeouts.connect_ms = rd.integer(r, "connect", p.timeouts.connect_ms, 1, kHour);
  p.timeouts.first_byte_ms = rd.integer(r, "first_byte", p.timeouts.first_byte_ms, 1, kHour);
  p.timeouts.idle_ms = rd.integer(r, "idle", p.timeouts.idle_ms, 1, kHour);
  p.timeouts.total_ms = rd.integer(r, "total", p.timeouts.total_ms, 1, 24 * kHour);
  r.reject_unknown({"connect", "first_byte", "idle", "total"});
  for (auto& d : r.take()) top.add(std::move(d));
}

void read_retry(json::FieldReader& top, Profile& p, Reader& rd) {
  const json::Value* t = top.object("retry", false);
  if (t == nullptr) return;
  json::FieldReader r(*t, top.pointer_of("retry"));
  RetryPolicy& q = p.retry;
  q.max_attempts = rd.integer(r, "max_attempts", q.max_attempts, 1, 10);
  q.initial_backoff_ms = rd.integer(r, "initial_backoff_ms", q.initial_backoff_ms, 0, 60000);
  q.max_backoff_ms = rd.integer(r, "max_backoff_ms", q.max_backoff_ms, 0, 600000);
  q.multiplier = rd.number(r, "multiplier", q.multiplier, 1, 10);
  q.jitter = rd.number(r, "jitter", q.jitter, 0, 1);
  q.seed = rd.integer(r, "seed", q.seed, 0, 9007199254740991);
  q.max_retry_after_ms = rd.integer(r, "max_retry_after_ms", q.max_retry_after_ms, 0, 3600000);
  if (q.max_backoff_ms < q.initial_backoff_ms) {
    rd.fail(r.pointer_of("max_backoff_ms"), "max_backoff_ms must be at least initial_backoff_ms");
  }
  r.reject_unknown({"max_attempts", "initial_backoff_ms", "max_backoff_ms", "multiplier", "jitter",
                    "seed", "max_retry_after_ms"});
  for (auto& d : r.take()) top.add(std::move(d));
}

void read_price(json::FieldReader& top, Profile& p, Reader& rd) {
  const json::Value* t = top.object("price_usd_per_mtok", false);
  if (t == nullptr) return;
  json::FieldReader r(*t, top.pointer_of("price_usd_per_mtok"));
  if (r.required("input", json::Kind::Number) == nullptr ||
      r.required("output", json::Kind::Number) == nullptr) {
    for (auto& d : r.take()) top.add(std::move(d));
    return;
  }
  p.usd_per_mtok_input = rd.number(r, "input", 0, 0, 1e6);
  p.usd_per_mtok_output = rd.number(r, "output", 0, 0, 1e6);
  p.priced = true;
  r.reject_unknown({"input", "output"});
  for (auto& d : r.take()) top.add(std::move(d));
}

void read_tls(json::FieldReader& top, Profile& p, Reader& rd) {
  const json::Value* t = top.object("tls", false);
  if (t == nullptr) return;
  json::FieldReader r(*t, top.pointer_of("tls"));
  if (auto ca = r.string("ca_file", false)) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(*ca, ec)) {
      rd.fail(r.pointer_of("ca_file"), "tls.ca_file \"" + *ca + "\" is not a readable file");
    } else {
      p.ca_file = *ca;
    }
  }
  r.reject_unknown({"ca_file"});
  for (auto& d : r.take()) top.add(std::move(d));
}

}  // namespace

std::string Profile::endpoint() const {
  return base_url + (wire.api == wire::Api::OpenAI ? "/chat/completions" : "/messages");
}

Result<Profile> parse_profile(std::string_view bytes, wire::Api api) {
  Result<json::Value> doc = json::parse_object(bytes);
  if (!doc) return doc.take_diagnostics();
  Profile p;
  p.wire.api = api;
  p.sha256 = hash::sha256_hex(bytes);
  json::FieldReader top(*doc, "");
  Reader rd(top);
  if (auto v = top.string("schema_version"); v && *v != "1.0") {
    rd.fail("/schema_version", "schema_version must be \"1.0\"");
  }
  if (auto k = top.string("kind"); k && *k != kKind) {
    rd.fail("/kind", "kind must be \"" + std::string(kKind) + "\"");
  }
  read_base_url(top, p, rd);
  if (auto m = top.string("model")) {
    if (m->empty() || m->size() > 256 || !printable(*m)) {
      rd.fail("/model", "model must be 1 to 256 printable ASCII characters");
    } else {
      p.wire.model = *m;
    }
  }
  read_auth(top, p, rd);
  read_headers(top, p, rd);
  bool streaming = false;
  read_capabilities(top, p, streaming);
  p.wire.stream = top.boolean("stream", false).value_or(false);
  if (p.wire.stream && !streaming) {
    rd.fail("/stream", "stream needs capabilities.streaming: true");
  }
  if (api == wire::Api::OpenAI) {
    read_options(top, p, rd, kOpenAiOptions);
  } else {
    read_options(top, p, rd, kAnthropicOptions);
  }
  read_timeouts(top, p, rd);
  read_retry(top, p, rd);
  read_price(top, p, rd);
  read_tls(top, p, rd);
  p.max_response_bytes =
      rd.integer(top, "max_response_bytes", p.max_response_bytes, 1024, std::int64_t{1} << 30);
  if (auto d = top.optional("description"); d != nullptr && !d->is_string()) {
    rd.fail("/description", "description must be a string");
  }
  top.reject_unknown({"schema_version", "kind", "description", "base_url", "model", "auth",
                      "headers", "capabilities", "stream", "options", "timeouts_ms", "retry",
                      "price_usd_per_mtok", "tls", "max_response_bytes"});
  if (!top.ok()) {
    diag::Diagnostics ds = top.take();
    json::locate(ds, json::json_source_map(bytes, ds));
    return ds;
  }
  return p;
}

Result<Profile> read_profile(const std::string& path, wire::Api api) {
  Result<std::string> bytes = io::read_input(path, 1u << 20);
  if (!bytes) return bytes.take_diagnostics();
  Result<Profile> profile = parse_profile(*bytes, api);
  if (!profile) {
    auto ds = profile.take_diagnostics();
    for (auto& d : ds) d.source = path;
    return ds;
  }
  profile->path = path;
  return profile;
}

}  // namespace mf::model
