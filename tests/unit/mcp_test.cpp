// The MCP layer's pure parts (docs/connectors.md): command-line splitting, the provider digest,
// the model-facing text of a result, and admission of a snapshot under a policy; and the client
// against tests/server/mcp_misbehave.py for the faults a run sees only as tool errors.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>

#include "mf/diag/codes.hpp"
#include "mf/json/canonical.hpp"
#include "mf/json/reader.hpp"
#include "mf/mcp/client.hpp"
#include "mf/mcp/connector.hpp"

namespace {

using mf::json::Value;
namespace mcp = mf::mcp;
namespace codes = mf::diag::codes;

Value parse(const char* text) {
  auto v = mf::json::parse(text);
  EXPECT_TRUE(v);
  return *v;
}

TEST(McpServerArgument, SplitsAsAShellSplitsWords) {
  auto s = mcp::parse_server_argument(R"(node "/a b/x.js" 'it''s' c\ d  e)");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->command, (std::vector<std::string>{"node", "/a b/x.js", "its", "c d", "e"}));
  EXPECT_FALSE(mcp::parse_server_argument("node 'open"));
  EXPECT_FALSE(mcp::parse_server_argument("   "));
}

TEST(McpServerArgument, AnHttpUrlIsAnEndpointCheckedBeforeUse) {
  auto s = mcp::parse_server_argument("  http://127.0.0.1:8080/mcp?x=1 ");
  ASSERT_TRUE(s);
  EXPECT_TRUE(s->command.empty());
  EXPECT_EQ(s->url, "http://127.0.0.1:8080/mcp?x=1");
  EXPECT_EQ(s->name(), s->url);
  EXPECT_TRUE(mcp::parse_server_argument("https://example.org/mcp"));
  for (const char* bad : {"http://user:pw@host/mcp", "https:///mcp", "http://:80/x",
                          "http://host/a b", "http://host/\x01"}) {
    auto r = mcp::parse_server_argument(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.diagnostics().front().code, codes::kUsage) << bad;
    EXPECT_EQ(r.diagnostics().front().message.find("pw"), std::string::npos);
  }
  EXPECT_FALSE(mcp::parse_server_argument("http://h/" + std::string(2100, 'a')));
  // Another scheme is not a URL: it is a command line.
  auto f = mcp::parse_server_argument("ftp://host/x");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->command, std::vector<std::string>{"ftp://host/x"});
}

TEST(McpServerJson, BothTransportsRoundTripAndFaultsArePointed) {
  for (const char* text : {R"({"transport":"http","url":"http://127.0.0.1:1/mcp"})",
                           R"({"transport":"stdio","command":["node","s.js"]})"}) {
    auto s = mcp::server_from_json(parse(text), "/server");
    ASSERT_TRUE(s) << text;
    EXPECT_EQ(mf::json::canonical(mcp::to_json(*s)), mf::json::canonical(parse(text)));
  }
  auto at = [](const char* text) {
    auto s = mcp::server_from_json(parse(text), "/server");
    EXPECT_FALSE(s) << text;
    return s ? std::string() : s.diagnostics().front().pointer;
  };
  EXPECT_EQ(at(R"({"transport":"http","url":"ftp://h/x"})"), "/server/url");
  EXPECT_EQ(at(R"({"transport":"http","url":"http://a:b@h/x"})"), "/server/url");
  EXPECT_EQ(at(R"({"transport":"http","url":"http://:80/x"})"), "/server/url");
  EXPECT_EQ(at(R"({"transport":"http","url":"http://h/\u0001"})"), "/server/url");
  EXPECT_EQ(at(R"({"transport":"http"})"), "/server/url");
  EXPECT_EQ(at(R"({"transport":"http","url":"http://h/x","command":["a"]})"), "/server/command");
  EXPECT_EQ(at(R"({"transport":"stdio","url":"http://h/x","command":["a"]})"), "/server/url");
  EXPECT_EQ(at(R"({"transport":"sse","url":"http://h/x"})"), "/server/transport");
}

TEST(McpProviderDigest, CoversTheDescriptorNotItsOrderOrMeta) {
  const Value a = parse(R"({"name":"e","description":"d","inputSchema":{"type":"object"}})");
  const Value b = parse(R"({"inputSchema":{"type":"object"},"description":"d","name":"e",
                            "_meta":{"x":1},"execution":{"taskSupport":"forbidden"}})");
  const Value c = parse(R"({"name":"e","description":"D","inputSchema":{"type":"object"}})");
  EXPECT_EQ(mcp::provider_sha256(a), mcp::provider_sha256(b));
  EXPECT_NE(mcp::provider_sha256(a), mcp::provider_sha256(c));
}

TEST(McpToolResult, TextBlocksJoinedOthersNamedStructuredAsDetails) {
  auto r = mcp::tool_result(parse(R"({"content":[{"type":"text","text":"a"},
      {"type":"image","data":"AAAA","mimeType":"image/png"},{"type":"text","text":"b"}],
      "structuredContent":{"sum":3}})"));
  EXPECT_FALSE(r.is_error);
  EXPECT_EQ(r.text, "a\n[image image/png, 4 bytes of base64]\nb");
  EXPECT_EQ(r.details, parse(R"({"sum":3})"));
  auto e = mcp::tool_result(parse(R"({"content":[{"type":"text","text":"no"}],"isError":true})"));
  EXPECT_TRUE(e.is_error);
  EXPECT_EQ(e.text, "no");
}

Value snapshot(const char* tools) {
  Value tl = parse(tools);
  mf::json::Array listed;
  for (const Value& t : tl.as_array()) {
    listed.push_back(mf::json::Object{{"provider_sha256", mcp::provider_sha256(t)}, {"tool", t}});
  }
  return mf::json::Object{{"capabilities", mf::json::Object{}},
                          {"kind", "millforge_connector_snapshot"},
                          {"protocol_version", "2025-06-18"},
                          {"schema_version", "1.0"},
                          {"server", parse(R"({"transport":"stdio","command":["srv"]})")},
                          {"server_name", "s"},
                          {"server_version", "1"},
                          {"tools", std::move(listed)}};
}

Value policy(const char* tools) {
  return mf::json::Object{{"allowed_capabilities", parse(R"(["c.read"])")},
                          {"connector_id", "s"},
                          {"kind", "millforge_connector_policy"},
                          {"schema_version", "1.0"},
                          {"tools", parse(tools)}};
}

TEST(McpAdmit, PinsEachToolAndDropsADraftSchemaMarker) {
  auto m = mcp::admit(snapshot(R"([{"name":"Get-It","description":"d","inputSchema":{
          "$schema":"http://json-schema.org/draft-07/schema#","type":"object"}}])"),
                      policy(R"([{"provider_tool_name":"Get-It","model_tool_name":"get_it",
          "required_capabilities":["c.read"],"side_effect_class":"read_only",
          "idempotency":"idempotent"}])"));
  ASSERT_TRUE(m) << m.diagnostics().front().message;
  const Value& t = m->find("tools")->as_array().at(0);
  EXPECT_EQ(t.find("tool_id")->as_string(), "mcp.s.get_it");
  EXPECT_EQ(t.find("input_schema")->find("$schema"), nullptr);
  EXPECT_EQ(t.find("connector")->find("provider_tool_name")->as_string(), "Get-It");
  // Each digested member is pinned on its own, so that a run can say which one drifted.
  const Value* members = t.find("connector")->find("provider_member_sha256");
  ASSERT_NE(members, nullptr);
  EXPECT_EQ(members->as_object().size(), 3u);
  EXPECT_EQ(members->find("description")->as_string(), mf::json::canonical_digest(Value("d")));
  EXPECT_NE(members->find("inputSchema"), nullptr);
  EXPECT_NE(members->find("name"), nullptr);
}

TEST(McpAdmit, EveryFaultReportedWithItsFile) {
  auto m = mcp::admit(snapshot(R"([{"name":"a","description":"","inputSchema":{"type":"object",
          "properties":{"x":{"type":"string","format":"uri"}}}}])"),
                      policy(R"([{"provider_tool_name":"a","required_capabilities":["c.write"],
          "side_effect_class":"read_only","idempotency":"idempotent"},
          {"provider_tool_name":"gone","required_capabilities":["c.read"],
          "side_effect_class":"read_only","idempotency":"idempotent"}])"));
  ASSERT_FALSE(m);
  std::map<std::string, std::string> seen;  // code -> source
  for (const auto& d : m.diagnostics()) seen[d.code] = d.source;
  EXPECT_EQ(seen[std::string(codes::kConnectorCapability)], "policy");
  EXPECT_EQ(seen[std::string(codes::kConnectorPolicy)], "policy");  // no description
  EXPECT_EQ(seen[std::string(codes::kConnectorNotListed)], "policy");
  EXPECT_EQ(seen[std::string(codes::kConnectorSchema)], "snapshot");
}

mcp::ServerSpec misbehave(const char* mode) {
  mcp::ServerSpec s;
  s.command = {"python3", std::string(MF_SOURCE_DIR) + "/tests/server/mcp_misbehave.py", "--mode",
               mode};
  return s;
}

TEST(McpClient, ATimeoutLeavesTheSessionUsable) {
  auto c = mcp::Client::connect(misbehave("ok"));
  ASSERT_TRUE(c);
  const auto soon = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
  auto slow = (*c)->call_tool("sleep", parse(R"({"ms":1500})"), soon, nullptr);
  EXPECT_EQ(slow.status, mcp::CallStatus::TimedOut);
  const auto later = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  auto ok = (*c)->call_tool("echo", parse(R"({"text":"hi"})"), later, nullptr);
  ASSERT_EQ(ok.status, mcp::CallStatus::Ok) << ok.error;
  EXPECT_EQ(mcp::tool_result(ok.result).text, "hi");
}

TEST(McpClient, AStdioServerSeesOnlyTheBaseVariablesAndTheNamedOnes) {
  ::setenv("MF_TEST_PASSED", "passed", 1);
  ::setenv("MF_TEST_KEPT_BACK", "sk-abcdefghijklmnopqrstuvwxyz0123456789", 1);
  mcp::ServerSpec spec = misbehave("ok");
  spec.env = {"MF_TEST_PASSED"};
  auto c = mcp::Client::connect(spec);
  ASSERT_TRUE(c);
  auto value = [&](const char* name) {
    const auto later = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    auto r = (*c)->call_tool("getenv", mf::json::Object{{"name", name}}, later, nullptr);
    EXPECT_EQ(r.status, mcp::CallStatus::Ok) << r.error;
    return mcp::tool_result(r.result).text;
  };
  EXPECT_EQ(value("MF_TEST_PASSED"), "passed");
  EXPECT_EQ(value("MF_TEST_KEPT_BACK"), "<unset>");
  EXPECT_EQ(value("HOME"), std::getenv("HOME"));  // PATH: a version manager may prepend to it
}

// What the client gives a server is never passed on: a named variable's value is cut out of
// results (text, structured content, member names), errors and the server's stderr.
TEST(McpClient, InjectedValuesAreCutOutOfAllTheServerSays) {
  const std::string value = "given-to-the-server-0123456789";
  ::setenv("MF_TEST_SERVER_VALUE", value.c_str(), 1);
  ::setenv("MF_TEST_SHORT", "short", 1);
  mcp::ServerSpec spec = misbehave("leak-env");
  spec.env = {"MF_TEST_SERVER_VALUE", "MF_TEST_SHORT"};
  auto c = mcp::Client::connect(spec);
  ASSERT_TRUE(c);
  const auto later = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  auto r =
      (*c)->call_tool("getenv", mf::json::Object{{"name", "MF_TEST_SERVER_VALUE"}}, later, nullptr);
  ASSERT_EQ(r.status, mcp::CallStatus::Ok) << r.error;
  EXPECT_EQ(mcp::tool_result(r.result).text, "[REDACTED]");
  EXPECT_EQ(mf::json::canonical(*r.result.find("structuredContent")), R"({"value":"[REDACTED]"})");
  auto e = (*c)->call_tool("getenv", mf::json::Object{{"name", "error:MF_TEST_SERVER_VALUE"}},
                           later, nullptr);
  EXPECT_EQ(e.status, mcp::CallStatus::Failed);
  EXPECT_NE(e.error.find("it holds [REDACTED]"), std::string::npos) << e.error;
  auto s = (*c)->call_tool("getenv", mf::json::Object{{"name", "MF_TEST_SHORT"}}, later, nullptr);
  EXPECT_EQ(mcp::tool_result(s.result).text, "short");  // under 8 bytes: left as it is
  const std::string tail = (*c)->stderr_tail();
  EXPECT_NE(tail.find("MF_TEST_SERVER_VALUE=[REDACTED]"), std::string::npos) << tail;
  EXPECT_EQ(tail.find(value), std::string::npos);
  ::unsetenv("MF_TEST_SERVER_VALUE");
  ::unsetenv("MF_TEST_SHORT");
}

TEST(McpServerArgument, EnvironmentNamesAreCheckedAndSorted) {
  auto s = mcp::parse_server_argument("srv", {"B_2", "A", "B_2"});
  ASSERT_TRUE(s);
  EXPECT_EQ(s->env, (std::vector<std::string>{"A", "B_2"}));
  EXPECT_EQ(mf::json::canonical(mcp::to_json(*s)),
            R"({"command":["srv"],"env":["A","B_2"],"transport":"stdio"})");
  EXPECT_FALSE(mcp::parse_server_argument("srv", {"1X"}));
  EXPECT_FALSE(mcp::parse_server_argument("srv", {"A=B"}));
  EXPECT_FALSE(mcp::parse_server_argument("http://h/mcp", {"A"}));
  auto h = mcp::parse_server_argument("http://h/mcp", {}, "MCP_TOKEN");
  ASSERT_TRUE(h);
  EXPECT_EQ(mf::json::canonical(mcp::to_json(*h)),
            R"({"bearer_env":"MCP_TOKEN","transport":"http","url":"http://h/mcp"})");
  EXPECT_FALSE(mcp::parse_server_argument("srv", {}, "MCP_TOKEN"));
  EXPECT_FALSE(mcp::parse_server_argument("http://h/mcp", {}, "MCP TOKEN"));
  // The token's variable is named in upper case, as a profile's secret_env is: a lower-case word
  // is more likely the token itself, which would then be pinned in the snapshot.
  auto lower = mcp::parse_server_argument("http://h/mcp", {}, "mcp_token");
  ASSERT_FALSE(lower);
  EXPECT_EQ(lower.diagnostics().front().code, "MF-U001");
  EXPECT_EQ(lower.diagnostics().front().message.find("mcp_token"), std::string::npos);
  EXPECT_FALSE(mcp::parse_server_argument("http://h/mcp", {}, "ghtok1234abcd"));
  EXPECT_TRUE(mcp::parse_server_argument("srv", {"lower_case_ok"}));  // --server-env: any case
  auto back = mcp::server_from_json(mcp::to_json(*h), "/server");
  ASSERT_TRUE(back);
  EXPECT_EQ(*back, *h);
  const std::pair<const char*, const char*> faults[] = {
      {R"({"transport":"stdio","command":["a"],"env":["B","A"]})", "/server/env"},
      {R"({"transport":"stdio","command":["a"],"env":[]})", "/server/env"},
      {R"({"transport":"stdio","command":["a"],"env":["A B"]})", "/server/env"},
      {R"({"transport":"http","url":"http://h/x","env":["A"]})", "/server/env"},
      {R"({"transport":"http","url":"http://h/x","bearer_env":"A-B"})", "/server/bearer_env"},
      {R"({"transport":"http","url":"http://h/x","bearer_env":"mcp_token"})", "/server/bearer_env"},
      {R"({"transport":"stdio","command":["a"],"bearer_env":"A"})", "/server/bearer_env"},
  };
  for (const auto& [bad, at] : faults) {
    auto r = mcp::server_from_json(parse(bad), "/server");
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.diagnostics().front().pointer, at) << bad;
  }
}

TEST(McpClient, GarbageBreaksTheSessionForGood) {
  auto c = mcp::Client::connect(misbehave("garbage-call"));
  ASSERT_TRUE(c);
  const auto later = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  auto r = (*c)->call_tool("echo", parse(R"({"text":"hi"})"), later, nullptr);
  EXPECT_EQ(r.status, mcp::CallStatus::Failed);
  EXPECT_NE(r.error.find("not JSON"), std::string::npos) << r.error;
  auto again = (*c)->call_tool("echo", parse(R"({"text":"hi"})"), later, nullptr);
  EXPECT_EQ(again.status, mcp::CallStatus::Failed);
}

TEST(McpClient, AnHttpEndpointNobodyListensOnIsUnreachable) {
  mcp::ServerSpec spec;
  spec.url = "http://127.0.0.1:1/mcp";
  auto c = mcp::Client::connect(spec);
  ASSERT_FALSE(c);
  EXPECT_EQ(c.diagnostics().front().code, codes::kConnectorUnreachable);
  EXPECT_NE(c.diagnostics().front().message.find("127.0.0.1:1"), std::string::npos);
}

TEST(McpClient, CancellationIsPromptAndTold) {
  auto c = mcp::Client::connect(misbehave("hang-call"));
  ASSERT_TRUE(c);
  std::atomic<bool> cancel{true};
  const auto start = std::chrono::steady_clock::now();
  auto r =
      (*c)->call_tool("echo", parse(R"({"text":"hi"})"), start + std::chrono::seconds(30), &cancel);
  EXPECT_EQ(r.status, mcp::CallStatus::Cancelled);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

}  // namespace
