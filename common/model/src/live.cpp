// The live backends (docs/live-backends.md): a model call is a request body built by the wire
// codec, answered from the reply cache or POSTed over the transport with the profile's retry
// policy, and decoded into a Reply. Transport retries have their own budget (the profile's
// max_attempts): they never spend the run's repair or guardrail budgets, which only ever see the
// final reply.
#include "live.hpp"

#include <cstdlib>
#include <thread>

#include "mf/diag/codes.hpp"
#include "mf/hash/sha256.hpp"
#include "mf/json/canonical.hpp"
#include "mf/json/reader.hpp"
#include "mf/model/live.hpp"
#include "mf/net/http.hpp"
#include "mf/store/refs.hpp"
#include "mf/store/store.hpp"

namespace mf::model {

namespace http = net::http;

namespace {

using Clock = std::chrono::steady_clock;

std::uint64_t splitmix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// Whether a failed attempt may be tried again, and why it failed.
struct Attempt {
  bool retry = false;
  std::optional<std::int64_t> retry_after_ms;
  std::string error;
};

bool retryable_status(long status) {
  return status == 408 || status == 429 || status == 500 || status == 502 || status == 503 ||
         status == 504 || status == 529;
}

bool retryable_outcome(http::Outcome o) {
  switch (o) {
    case http::Outcome::ConnectFailed:
    case http::Outcome::ConnectTimeout:
    case http::Outcome::FirstByteTimeout:
    case http::Outcome::IdleTimeout:
    case http::Outcome::TotalTimeout:
    case http::Outcome::Reset:
      return true;
    default:
      return false;
  }
}

json::Value reply_json(const Reply& r) {
  json::Value v = json::Object{};
  v.set("ok", r.ok);
  if (!r.ok) {
    v.set("error", r.error);
    return v;
  }
  v.set("content", r.content);
  json::Array calls;
  for (const auto& c : r.tool_calls) {
    json::Value call(json::Object{{"id", c.id}, {"name", c.name}, {"arguments", c.arguments}});
    if (!c.malformed.empty()) call.set("malformed", c.malformed);
    calls.push_back(std::move(call));
  }
  v.set("tool_calls", std::move(calls));
  v.set("usage", r.usage);
  v.set("reasoning", r.reasoning);
  v.set("stop_reason", r.stop_reason);
  if (!r.response_model.empty()) v.set("response_model", r.response_model);
  if (!r.response_id.empty()) v.set("response_id", r.response_id);
  return v;
}

std::optional<Reply> reply_from_json(const json::Value& v) {
  if (!v.is_object()) return std::nullopt;
  const json::Value* ok = v.find("ok");
  if (ok == nullptr || !ok->is_bool()) return std::nullopt;
  Reply r;
  r.ok = ok->as_bool();
  const auto text = [&](std::string_view key, std::string& out) {
    const json::Value* m = v.find(key);
    if (m == nullptr || !m->is_string()) return false;
    out = m->as_string();
    return true;
  };
  if (!r.ok) return text("error", r.error) ? std::optional<Reply>(r) : std::nullopt;
  const json::Value* calls = v.find("tool_calls");
  const json::Value* usage = v.find("usage");
  if (!text("content", r.content) || !text("reasoning", r.reasoning) ||
      !text("stop_reason", r.stop_reason) || calls == nullptr || !calls->is_array() ||
      usage == nullptr || !(usage->is_null() || usage->is_object())) {
    return std::nullopt;
  }
  for (const auto& c : calls->as_array()) {
    const json::Value* id = c.find("id");
    const json::Value* name = c.find("name");
    const json::Value* args = c.find("arguments");
    const json::Value* malformed = c.find("malformed");
    if (id == nullptr || name == nullptr || args == nullptr || !id->is_string() ||
        !name->is_string() || !args->is_string() ||
        (malformed != nullptr && !malformed->is_string())) {
      return std::nullopt;
    }
    r.tool_calls.push_back({id->as_string(), name->as_string(), args->as_string(),
                            malformed != nullptr ? malformed->as_string() : std::string()});
  }
  r.usage = *usage;
  // Recorded since the reply's model and id are kept; an older recording has neither.
  if (v.find("response_model") != nullptr && !text("response_model", r.response_model)) {
    return std::nullopt;
  }
  if (v.find("response_id") != nullptr && !text("response_id", r.response_id)) {
    return std::nullopt;
  }
  return r;
}

class LiveModel final : public Model {
 public:
  LiveModel(Profile profile, const OpenOptions& options)
      : profile_(std::move(profile)), options_(options) {}

  std::string name() const override {
    return profile_.wire.api == wire::Api::OpenAI ? "openai" : "anthropic";
  }

  json::Value identity() const override {
    json::Value v = json::Object{{"model_id", profile_.wire.model},
                                 {"model_sha256", profile_.sha256},
                                 {"endpoint", profile_.endpoint()}};
    if (!profile_.wire.options.as_object().empty()) v.set("model_options", profile_.wire.options);
    return v;
  }

  Reply infer(const Request& request, const std::atomic<bool>& cancel) override {
    std::string body = json::canonical(wire::build_body(profile_.wire, request));
    // The canonical bytes of {"body": <body>, "endpoint": <url>} ("body" sorts first), built
    // from the body's bytes instead of a second copy and serialisation of its tree.
    std::string keyed = "{\"body\":" + body + ",\"endpoint\":";
    json::write_string(profile_.endpoint(), keyed);
    keyed += '}';
    const std::string digest = hash::sha256_hex(keyed);
    const CacheMode mode = options_.cache;
    if (mode == CacheMode::Read || mode == CacheMode::ReadWrite) {
      auto cached = options_.replies->get(digest, options_.repeat);
      if (!cached) return failed(digest, "reply cache: " + cached.diagnostics().front().message);
      // A recorded failure replays in read mode; readwrite tries the network again.
      if (*cached && ((*cached)->ok || mode == CacheMode::Read)) {
        Reply r = std::move(**cached);
        r.source = "cache";
        r.request_sha256 = digest;
        return r;
      }
      if (mode == CacheMode::Read) {
        Reply miss = failed(digest, "reply cache miss: the reply to request " + digest +
                                        " sample " + std::to_string(options_.repeat) +
                                        " was never recorded (--cache read never calls the "
                                        "network; record it with --cache write)");
        miss.error_code = diag::codes::kCacheMiss;
        return miss;
      }
    }
    Reply reply = call(request, std::move(body), cancel);
    scrub(reply);
    reply.request_sha256 = digest;
    reply.source = "network";
    price(reply);
    // Kept in the cache by keep(), once the run has shown it can record the reply.
    const bool interrupted = cancel.load() || Clock::now() >= request.deadline;
    pending_.reset();
    if ((mode == CacheMode::Write || mode == CacheMode::ReadWrite) && !interrupted) {
      pending_ = reply;
    }
    return reply;
  }

  Status keep(const Reply& reply) override {
    if (!pending_ || pending_->request_sha256 != reply.request_sha256 ||
        reply.source != "network") {
      return {};
    }
    const Reply kept = std::move(*pending_);
    pending_.reset();
    return options_.replies->put(kept.request_sha256, options_.repeat, kept);
  }

  Status flush() override { return options_.replies ? options_.replies->flush() : Status(); }

 private:
  Reply failed(const std::string& digest, std::string error) const {
    Reply r;
    r.error = std::move(error);
    r.request_sha256 = digest;
    return r;
  }

  // A server may quote the credential back ("incorrect API key: ...", or in any member it
  // echoes: a call's name or id, the stop reason, usage): its exact value is cut from every string
  // the reply carries before the trace, the cache, stdout or a diagnostic sees it.
  void scrub(Reply& r) const {
    if (profile_.auth == Profile::Auth::None) return;
    const char* secret = std::getenv(profile_.secret_env.c_str());
    if (secret == nullptr || std::string_view(secret).size() < 4) return;
    const std::string_view s(secret);
    for_each_string(r, [&](std::string& text) {
      for (std::size_t at = text.find(s); at != std::string::npos; at = text.find(s, at)) {
        text.replace(at, s.size(), "[REDACTED]");
      }
    });
  }

  void price(Reply& r) const {
    if (!profile_.priced || !r.ok || !r.usage.is_object()) return;
    const json::Value* in = r.usage.find("input_tokens");
    const json::Value* out = r.usage.find("output_tokens");
    if (in == nullptr || out == nullptr || !in->is_number() || !out->is_number()) return;
    const double usd = (in->as_number() * profile_.usd_per_mtok_input +
                        out->as_number() * profile_.usd_per_mtok_output) /
                       1e6;
    r.usage.set("cost_usd", usd);
  }

  std::vector<std::string> headers(std::string& error) const {
    std::vector<std::string> out;
    if (profile_.auth != Profile::Auth::None) {
      const char* secret = std::getenv(profile_.secret_env.c_str());
      if (secret == nullptr || *secret == '\0') {
        error = "environment variable " + profile_.secret_env +
                " (the profile's secret_env) is not set";
        return out;
      }
      // A line break in the value would end the header and start another one.
      for (const char* c = secret; *c != '\0'; ++c) {
        if (static_cast<unsigned char>(*c) < 0x20 || *c == 0x7f) {
          error = "environment variable " + profile_.secret_env + " holds a control character";
          return out;
        }
      }
      out.push_back(profile_.auth == Profile::Auth::Bearer
                        ? "Authorization: Bearer " + std::string(secret)
                        : profile_.auth_header + ": " + std::string(secret));
    }
    bool versioned = false;
    for (const auto& [name, value] : profile_.headers) {
      out.push_back(name + ": " + value);
      versioned = versioned || name == "anthropic-version";
    }
    if (profile_.wire.api == wire::Api::Anthropic && !versioned) {
      out.emplace_back("anthropic-version: 2023-06-01");
    }
    out.emplace_back(profile_.wire.stream ? "Accept: text/event-stream"
                                          : "Accept: application/json");
    return out;
  }

  std::int64_t backoff_ms(std::int64_t call, std::int64_t attempt) const {
    const RetryPolicy& q = profile_.retry;
    double delay = static_cast<double>(q.initial_backoff_ms);
    for (std::int64_t i = 1; i < attempt; ++i) delay *= q.multiplier;
    delay = std::min(delay, static_cast<double>(q.max_backoff_ms));
    const std::uint64_t bits = splitmix(
        static_cast<std::uint64_t>(q.seed) ^
        splitmix(static_cast<std::uint64_t>(call) << 8 | static_cast<std::uint64_t>(attempt)));
    const double u = static_cast<double>(bits >> 11) / 9007199254740992.0;  // [0, 1)
    return static_cast<std::int64_t>(delay * (1.0 + q.jitter * (2.0 * u - 1.0)));
  }

  Attempt judge(const http::Response& r, Reply& reply, wire::StreamDecoder* decoder) const {
    Attempt a;
    const bool ok_status = r.status >= 200 && r.status < 300;
    if ((r.outcome == http::Outcome::Complete && ok_status) ||
        (r.outcome == http::Outcome::Stopped && decoder != nullptr)) {
      // A stopped stream: the decoder's own error says what was wrong.
      reply = decoder != nullptr ? decoder->finish() : wire::parse_body(profile_.wire, r.body);
      if (!reply.ok && decoder != nullptr && decoder->transient()) {
        a.error = reply.error;  // the provider's overloaded or internal error: try again
        a.retry = true;
      }
      return a;
    }
    if (r.outcome == http::Outcome::Complete) {
      if (auto salvaged = wire::salvage_error(profile_.wire, r.status, r.body)) {
        reply = std::move(*salvaged);
        return a;
      }
      a.error = wire::describe_error(r.status, r.body);
      a.retry = retryable_status(r.status);
      if (r.status == 429 || r.status == 503 || r.status == 529)
        a.retry_after_ms = r.retry_after_ms;
      return a;
    }
    a.error = r.outcome == http::Outcome::ConnectFailed && !r.detail.empty()
                  ? r.detail
                  : std::string(http::outcome_name(r.outcome));
    if (r.outcome == http::Outcome::TooLarge) {
      a.error += " (over max_response_bytes " + std::to_string(profile_.max_response_bytes) + ")";
    }
    a.retry = retryable_outcome(r.outcome);
    return a;
  }

  Reply call(const Request& request, std::string body, const std::atomic<bool>& cancel) const {
    std::string error;
    http::Request post;
    post.headers = headers(error);
    if (!error.empty()) {
      Reply r;
      r.error = std::move(error);
      return r;
    }
    post.url = profile_.endpoint();
    post.body = std::move(body);
    post.connect_ms = profile_.timeouts.connect_ms;
    post.first_byte_ms = profile_.timeouts.first_byte_ms;
    post.idle_ms = profile_.timeouts.idle_ms;
    post.total_ms = profile_.timeouts.total_ms;
    post.deadline = request.deadline;
    post.cancel = &cancel;
    post.ca_file = profile_.ca_file;
    post.max_body_bytes = profile_.max_response_bytes;
    std::string last_error;
    for (std::int64_t attempt = 1;; ++attempt) {
      std::optional<wire::StreamDecoder> decoder;
      if (profile_.wire.stream) {
        decoder.emplace(profile_.wire);
        post.sink = [&decoder](std::string_view piece, const http::Response&) {
          return decoder->feed(piece).ok();
        };
      }
      const http::Response response = http::send(post);
      Reply reply;
      const Attempt a = judge(response, reply, decoder ? &*decoder : nullptr);
      if (a.error.empty()) {
        reply.attempts = attempt;
        return reply;
      }
      last_error = a.error;
      Reply failure;
      failure.attempts = attempt;
      if (!a.retry || attempt >= profile_.retry.max_attempts) {
        failure.error = attempt > 1
                            ? last_error + " (after " + std::to_string(attempt) + " attempts)"
                            : last_error;
        return failure;
      }
      std::int64_t wait = backoff_ms(request.call, attempt);
      if (a.retry_after_ms) {
        if (*a.retry_after_ms > profile_.retry.max_retry_after_ms) {
          failure.error = last_error + " (Retry-After " + std::to_string(*a.retry_after_ms / 1000) +
                          " s is over max_retry_after_ms)";
          return failure;
        }
        wait = std::max(wait, *a.retry_after_ms);
      }
      if (!wait_for_reply(wait, request, cancel, error)) {
        failure.error = last_error + "; then " + error;
        return failure;
      }
    }
  }

  Profile profile_;
  OpenOptions options_;
  std::optional<Reply> pending_;  // the last network reply, until the run keeps it
};

}  // namespace

Result<std::unique_ptr<Model>> open_live(wire::Api api, const std::string& path,
                                         const OpenOptions& options) {
  Result<Profile> profile = read_profile(path, api);
  if (!profile) return profile.take_diagnostics();
  if (options.cache != CacheMode::Off && !options.replies) {
    return diag::error(diag::codes::kUsage, "--cache needs a store (--store DIR or MF_STORE)");
  }
  if (options.cache != CacheMode::Read && profile->auth != Profile::Auth::None) {
    const char* secret = std::getenv(profile->secret_env.c_str());
    if (secret == nullptr || *secret == '\0') {
      auto d = diag::error(diag::codes::kSecretUnset,
                           "environment variable " + profile->secret_env +
                               " (the profile's auth.secret_env) is not set",
                           "/auth/secret_env");
      d.source = path;
      return d;
    }
  }
  // Replies read from the cache need no network; every other mode may send.
  if (options.cache != CacheMode::Read) {
    if (Status loaded = http::load(); !loaded) return loaded.take_diagnostics();
  }
  return std::unique_ptr<Model>(std::make_unique<LiveModel>(std::move(*profile), options));
}

Result<StoreSession> open_store_session(const std::string& store_dir, CacheMode cache, bool keep) {
  StoreSession out;
  out.models.cache = cache;
  if (!keep && cache == CacheMode::Off) return out;
  const store::Mode mode =
      cache == CacheMode::Read && !keep ? store::Mode::ReadOnly : store::Mode::ReadWrite;
  auto opened = store::Store::open(store::Store::resolve_dir(store_dir), mode);
  if (!opened) return opened.take_diagnostics();
  out.store = std::move(*opened);
  out.lock = std::make_shared<std::mutex>();
  if (cache != CacheMode::Off)
    out.models.replies = std::make_shared<ReplyCache>(out.store, out.lock);
  return out;
}

Result<std::optional<Reply>> ReplyCache::get(const std::string& request_sha256,
                                             std::int64_t repeat) {
  std::lock_guard<std::mutex> guard(*lock_);
  const std::string name = store::refs::model_cache(request_sha256, repeat);
  const auto parsed = [](std::string_view bytes) {
    auto value = json::parse(bytes);
    return value ? reply_from_json(*value) : std::nullopt;
  };
  for (auto held = held_.rbegin(); held != held_.rend(); ++held) {
    if (held->first == name) return parsed(held->second);
  }
  auto ref = store_->get_ref(name);
  if (!ref) return ref.take_diagnostics();
  if (!*ref) return std::optional<Reply>();
  auto bytes = store_->get(**ref);
  if (!bytes) return bytes.take_diagnostics();
  std::optional<Reply> reply = parsed(*bytes);
  if (!reply) {
    return diag::error(diag::codes::kStoreCorrupt,
                       "cached reply " + hash::to_hex(**ref) + " is not a recorded reply");
  }
  return reply;
}

Status ReplyCache::put(const std::string& request_sha256, std::int64_t repeat, const Reply& reply) {
  std::lock_guard<std::mutex> guard(*lock_);
  std::string name = store::refs::model_cache(request_sha256, repeat);
  std::string bytes = json::canonical(reply_json(reply));
  if (!interval_) {
    auto kept = store_->put_named(name, bytes);
    return kept ? Status() : Status(kept.take_diagnostics());
  }
  held_bytes_ += bytes.size();
  held_.emplace_back(std::move(name), std::move(bytes));
  constexpr std::size_t kHeldBytes = std::size_t{1} << 20;
  if (held_bytes_ < kHeldBytes && std::chrono::steady_clock::now() - committed_at_ < *interval_) {
    return {};
  }
  return flush_locked();
}

Status ReplyCache::flush() {
  std::lock_guard<std::mutex> guard(*lock_);
  return flush_locked();
}

Status ReplyCache::flush_locked() {
  if (held_.empty()) return {};
  Status done = store_->batch([&]() -> Status {
    for (const auto& [name, bytes] : held_) {
      if (auto kept = store_->put_named(name, bytes); !kept) return kept.take_diagnostics();
    }
    return {};
  });
  if (!done) return done;
  held_.clear();
  held_bytes_ = 0;
  committed_at_ = std::chrono::steady_clock::now();
  return {};
}

ReplyCache::~ReplyCache() {
  if (!held_.empty()) (void)flush();
}

}  // namespace mf::model
