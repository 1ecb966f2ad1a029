// Live profiles (docs/formats/profiles.md, "Live profiles"): defaults, every rule, diagnostics with
// pointers and positions, secrets refused, and the example profiles of fixtures/profiles.
#include <gtest/gtest.h>

#include <filesystem>

#include "mf/diag/codes.hpp"
#include "mf/io/file.hpp"
#include "mf/json/canonical.hpp"
#include "mf/json/reader.hpp"
#include "profile.hpp"

namespace mf::model {
namespace {

namespace codes = diag::codes;

constexpr std::string_view kMinimal = R"({"schema_version": "1.0", "kind": "millforge_live_profile",
  "base_url": "http://127.0.0.1:8080/v1/", "model": "m"})";

// The minimal profile with `members` (a JSON object's inside) added.
std::string with(std::string_view members) {
  std::string s(kMinimal);
  s.pop_back();
  return s + ", " + std::string(members) + "}";
}

diag::Diagnostics problems(std::string_view text, wire::Api api = wire::Api::OpenAI) {
  auto p = parse_profile(text, api);
  if (p.ok()) return {};
  return p.diagnostics();
}

// The single diagnostic `text` gets, checked for code and pointer.
void expect_one(std::string_view text, const char* code, std::string_view pointer,
                wire::Api api = wire::Api::OpenAI) {
  auto ds = problems(text, api);
  ASSERT_EQ(ds.size(), 1u) << text;
  EXPECT_EQ(ds[0].code, code) << ds[0].message;
  EXPECT_EQ(ds[0].pointer, pointer) << ds[0].message;
  EXPECT_GT(ds[0].line, 0) << "no position for " << ds[0].pointer;
}

TEST(LiveProfile, MinimalGetsTheDocumentedDefaults) {
  auto p = parse_profile(kMinimal, wire::Api::OpenAI);
  ASSERT_TRUE(p.ok()) << p.diagnostics().front().message;
  EXPECT_EQ(p->base_url, "http://127.0.0.1:8080/v1");
  EXPECT_EQ(p->endpoint(), "http://127.0.0.1:8080/v1/chat/completions");
  EXPECT_EQ(p->auth, Profile::Auth::None);
  EXPECT_TRUE(p->wire.native_tools);
  EXPECT_FALSE(p->wire.stream);
  EXPECT_EQ(p->timeouts.connect_ms, 10000);
  EXPECT_EQ(p->timeouts.first_byte_ms, 120000);
  EXPECT_EQ(p->timeouts.idle_ms, 60000);
  EXPECT_EQ(p->timeouts.total_ms, 600000);
  EXPECT_EQ(p->retry.max_attempts, 3);
  EXPECT_EQ(p->retry.initial_backoff_ms, 500);
  EXPECT_EQ(p->retry.max_backoff_ms, 8000);
  EXPECT_EQ(p->max_response_bytes, 16 << 20);
  EXPECT_FALSE(p->priced);
  EXPECT_EQ(json::canonical(p->wire.options), "{}");

  auto a = parse_profile(kMinimal, wire::Api::Anthropic);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->endpoint(), "http://127.0.0.1:8080/v1/messages");
}

TEST(LiveProfile, FullProfileReadsEveryMember) {
  auto p = parse_profile(with(R"("auth": {"scheme": "header", "header": "x-api-key",
      "secret_env": "MY_KEY"}, "headers": {"anthropic-version": "2023-06-01"},
      "capabilities": {"tools": false, "streaming": true, "parallel_tool_calls": true},
      "stream": true, "options": {"temperature": 0.5, "max_tokens": 10, "stop_sequences": ["x"]},
      "timeouts_ms": {"connect": 1, "first_byte": 2, "idle": 3, "total": 4},
      "retry": {"max_attempts": 5, "initial_backoff_ms": 10, "max_backoff_ms": 20,
                "multiplier": 1.5, "jitter": 0, "seed": 9, "max_retry_after_ms": 0},
      "price_usd_per_mtok": {"input": 3, "output": 15}, "max_response_bytes": 4096)"),
                         wire::Api::Anthropic);
  ASSERT_TRUE(p.ok()) << p.diagnostics().front().message;
  EXPECT_EQ(p->auth, Profile::Auth::Header);
  EXPECT_EQ(p->auth_header, "x-api-key");
  EXPECT_EQ(p->secret_env, "MY_KEY");
  ASSERT_EQ(p->headers.size(), 1u);
  EXPECT_FALSE(p->wire.native_tools);
  EXPECT_TRUE(p->wire.stream);
  EXPECT_TRUE(p->wire.parallel_tool_calls);
  EXPECT_EQ(json::canonical(p->wire.options),
            R"({"max_tokens":10,"stop_sequences":["x"],"temperature":0.5})");
  EXPECT_EQ(p->timeouts.total_ms, 4);
  EXPECT_EQ(p->retry.max_attempts, 5);
  EXPECT_DOUBLE_EQ(p->retry.multiplier, 1.5);
  EXPECT_EQ(p->retry.seed, 9);
  EXPECT_TRUE(p->priced);
  EXPECT_DOUBLE_EQ(p->usd_per_mtok_output, 15);
  EXPECT_EQ(p->max_response_bytes, 4096);
}

TEST(LiveProfile, EnvelopeAndRequiredMembers) {
  expect_one(R"({"schema_version": "2.0", "kind": "millforge_live_profile",
    "base_url": "http://h", "model": "m"})",
             codes::kSchema, "/schema_version");
  expect_one(
      R"({"schema_version": "1.0", "kind": "profile", "base_url": "http://h", "model": "m"})",
      codes::kSchema, "/kind");
  auto ds = problems(R"({"schema_version": "1.0", "kind": "millforge_live_profile"})");
  ASSERT_EQ(ds.size(), 2u);  // both missing members, at once
  expect_one(with(R"("modle": "x")"), codes::kUnknownField, "/modle");
  // Not JSON at all: the reader's own diagnostic, with a position.
  auto bad = problems("{\"schema_version\": \"1.0\",\n  \"kind\": }");
  ASSERT_FALSE(bad.empty());
  EXPECT_EQ(bad[0].line, 2);
}

TEST(LiveProfile, BaseUrlRules) {
  const auto url = [](std::string_view u) {
    return std::string(R"({"schema_version": "1.0", "kind": "millforge_live_profile", "model": "m",
      "base_url": ")") +
           std::string(u) + "\"}";
  };
  EXPECT_TRUE(problems(url("https://api.example.com/v1")).empty());
  expect_one(url("ftp://h/v1"), codes::kSchema, "/base_url");
  expect_one(url("http:///v1"), codes::kSchema, "/base_url");
  expect_one(url("http://:8080/v1"), codes::kSchema, "/base_url");
  expect_one(url("http://h/v1?key=1"), codes::kSchema, "/base_url");
  expect_one(url("http://h/v1#x"), codes::kSchema, "/base_url");
  expect_one(url("http://h/a b"), codes::kSchema, "/base_url");
  expect_one(url("http://h/" + std::string(2048, 'a')), codes::kSchema, "/base_url");
  expect_one(url("https://user:pass@h/v1"), codes::kSecretValue, "/base_url");
}

TEST(LiveProfile, AuthRules) {
  expect_one(with(R"("auth": {"scheme": "basic", "secret_env": "K"})"), codes::kSchema,
             "/auth/scheme");
  expect_one(with(R"("auth": {"scheme": "bearer"})"), codes::kSchema, "/auth/secret_env");
  expect_one(with(R"("auth": {"scheme": "bearer", "secret_env": "lower"})"), codes::kSchema,
             "/auth/secret_env");
  expect_one(with(R"("auth": {"scheme": "none", "secret_env": "K"})"), codes::kSchema,
             "/auth/secret_env");
  expect_one(with(R"("auth": {"scheme": "header", "secret_env": "K"})"), codes::kSchema,
             "/auth/header");
  expect_one(with(R"("auth": {"scheme": "bearer", "secret_env": "K", "header": "x"})"),
             codes::kSchema, "/auth/header");
  // A key pasted where its variable's name belongs is refused as a secret, and not echoed.
  const std::string key = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD";
  auto ds = problems(with(R"("auth": {"scheme": "bearer", "secret_env": ")" + key + "\"}"));
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].code, codes::kSecretValue);
  EXPECT_EQ(ds[0].message.find(key), std::string::npos);
  expect_one(with(R"("auth": {"scheme": "bearer", "secret_env": "K", "value": "x"})"),
             codes::kUnknownField, "/auth/value");
}

TEST(LiveProfile, HeadersCannotCarryCredentials) {
  EXPECT_TRUE(problems(with(R"("headers": {"OpenAI-Organization": "org-1"})")).empty());
  for (const char* name : {"Authorization", "x-api-key", "Cookie", "Host", "Content-Length"}) {
    expect_one(with(std::string(R"("headers": {")") + name + R"(": "v"})"), codes::kSchema,
               std::string("/headers/") + name);
  }
  expect_one(with(R"("headers": {"bad name": "v"})"), codes::kSchema, "/headers/bad name");
  expect_one(with(R"("headers": {"X-Token": "Bearer abcdefghijklmnopqrstuvwxyz0123456789"})"),
             codes::kSecretValue, "/headers/X-Token");
  expect_one(with(R"("headers": {"X-A": "line\nbreak"})"), codes::kSchema, "/headers/X-A");
}

TEST(LiveProfile, OptionsAreAllowlistedPerApi) {
  EXPECT_TRUE(problems(with(R"("options": {"seed": 1, "stop": "x", "reasoning_effort": "low",
    "min_p": 0.1, "top_k": 40, "presence_penalty": -1})"))
                  .empty());
  expect_one(with(R"("options": {"temperature": 3})"), codes::kSchema, "/options/temperature");
  expect_one(with(R"("options": {"max_tokens": 0})"), codes::kSchema, "/options/max_tokens");
  expect_one(with(R"("options": {"max_tokens": 1.5})"), codes::kSchema, "/options/max_tokens");
  expect_one(with(R"("options": {"stop": ["a", "b", "c", "d", "e"]})"), codes::kSchema,
             "/options/stop");
  expect_one(with(R"("options": {"stop": [""]})"), codes::kSchema, "/options/stop");
  expect_one(with(R"("options": {"reasoning_effort": "max"})"), codes::kSchema,
             "/options/reasoning_effort");
  expect_one(with(R"("options": {"logit_bias": {}})"), codes::kUnknownField, "/options/logit_bias");
  // Anthropic has its own list and ranges.
  expect_one(with(R"("options": {"temperature": 1.5})"), codes::kSchema, "/options/temperature",
             wire::Api::Anthropic);
  expect_one(with(R"("options": {"seed": 1})"), codes::kUnknownField, "/options/seed",
             wire::Api::Anthropic);
  expect_one(with(R"("options": {"stop": ["x"]})"), codes::kUnknownField, "/options/stop",
             wire::Api::Anthropic);
}

TEST(LiveProfile, StreamNeedsTheCapability) {
  expect_one(with(R"("stream": true)"), codes::kSchema, "/stream");
  EXPECT_TRUE(problems(with(R"("stream": true, "capabilities": {"streaming": true})")).empty());
  expect_one(with(R"("capabilities": {"vision": true})"), codes::kUnknownField,
             "/capabilities/vision");
}

TEST(LiveProfile, TimeoutsRetriesPricesAndBoundsAreBounded) {
  expect_one(with(R"("timeouts_ms": {"connect": 0})"), codes::kSchema, "/timeouts_ms/connect");
  expect_one(with(R"("timeouts_ms": {"idle": 3600001})"), codes::kSchema, "/timeouts_ms/idle");
  expect_one(with(R"("retry": {"max_attempts": 11})"), codes::kSchema, "/retry/max_attempts");
  expect_one(with(R"("retry": {"initial_backoff_ms": 100, "max_backoff_ms": 50})"), codes::kSchema,
             "/retry/max_backoff_ms");
  expect_one(with(R"("retry": {"jitter": 2})"), codes::kSchema, "/retry/jitter");
  expect_one(with(R"("retry": {"multiplier": "2"})"), codes::kSchema, "/retry/multiplier");
  expect_one(with(R"("price_usd_per_mtok": {"input": -1, "output": 1})"), codes::kSchema,
             "/price_usd_per_mtok/input");
  expect_one(with(R"("price_usd_per_mtok": {"input": 1})"), codes::kSchema,
             "/price_usd_per_mtok/output");
  expect_one(with(R"("max_response_bytes": 10)"), codes::kSchema, "/max_response_bytes");
  expect_one(with(R"("tls": {"ca_file": "/nonexistent/ca.pem"})"), codes::kSchema, "/tls/ca_file");
  expect_one(with(R"("tls": {"verify": false})"), codes::kUnknownField, "/tls/verify");
}

TEST(LiveProfile, EveryProblemIsReportedAtOnce) {
  auto ds = problems(with(R"("options": {"temperature": 9, "nope": 1}, "retry": {"jitter": 5},
    "timeouts_ms": {"total": 0})"));
  EXPECT_EQ(ds.size(), 4u);
}

TEST(LiveProfile, TheExampleProfilesAreValid) {
  const std::filesystem::path dir = std::filesystem::path(MF_SOURCE_DIR) / "fixtures/profiles";
  int seen = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    const wire::Api api =
        name.rfind("anthropic", 0) == 0 ? wire::Api::Anthropic : wire::Api::OpenAI;
    auto p = read_profile(entry.path().string(), api);
    EXPECT_TRUE(p.ok()) << name << ": " << (p.ok() ? "" : p.diagnostics().front().message);
    ++seen;
  }
  EXPECT_GE(seen, 7);
}

}  // namespace
}  // namespace mf::model
