// The execution boundary (docs/tools.md) through ToolExecutor: bindings from a compiled plan (and
// the refusal of a plan node edited after compilation), name resolution, argument validation,
// argument-matched prerequisites, capability grants, output bounding and redaction, terminal
// controls, artifacts, missing implementations, trace records, cancellation and edit's legacy
// arguments.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "mf/diag/codes.hpp"
#include "mf/harness/compiler.hpp"
#include "mf/harness/plan.hpp"
#include "mf/json/canonical.hpp"
#include "mf/json/reader.hpp"
#include "mf/tools/catalog.hpp"
#include "mf/tools/executor.hpp"
#include "mf/tools/pack.hpp"

namespace {

namespace fs = std::filesystem;
using mf::json::Array;
using mf::json::Object;
using mf::json::Value;
using mf::tools::Binding;
using mf::tools::Execution;
using mf::tools::ExecutorOptions;
using mf::tools::ToolCall;
using mf::tools::ToolExecutor;

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0;
}

std::string decisions(const std::vector<mf::tools::Decision>& ds) {
  std::string out;
  for (const auto& d : ds)
    out += (out.empty() ? "" : ",") + d.key + "=" + std::string(name(d.decision));
  return out;
}

// A harness over three built-in tools: read (look) -> write (save, same path) -> submit.
constexpr const char* kHarness = R"yaml(schema_version: "1.0"
kind: millforge_harness
harness_id: millforge.test.executor.v1
harness_version: 1
stage_scope:
  stage_kind_ids: [builder]
model_profile_id: profile.scripted
prompt:
  policy_id: millforge.test.executor.policy.v1
  system_instructions: |
    Read the file, write it back, then submit.
  include_request_context: false
budgets:
  max_iterations: 4
  max_validation_retries: 1
  max_tool_errors: 1
  max_prerequisite_violations: 1
  max_premature_terminal_attempts: 1
context:
  strategy_id: forge.tiered.v1
  budget_tokens: 4096
  keep_recent_iterations: 1
  phase_thresholds: [0.5, 0.75, 0.95]
graph:
  nodes:
    look:
      tool_ref: builtin.pi_compat.read@1
      required: true
    save:
      tool_ref: builtin.pi_compat.write@1
      prerequisites:
        - node_id: look
          argument_matches: {path: path}
    done:
      tool_ref: builtin.pi_compat.submit@1
      terminal_result: COMPLETE
      prerequisites:
        - node_id: save
)yaml";

constexpr const char* kProfiles =
    R"({"schema_version":"1.0","kind":"millforge_model_profiles",)"
    R"("profiles":[{"profile_id":"profile.scripted","backend":"scripted"}]})";

const std::vector<std::string> kAllCapabilities = {"artifact.read",
                                                   "artifact.write",
                                                   "terminal.intent",
                                                   "unrestricted.filesystem.read",
                                                   "unrestricted.filesystem.write",
                                                   "unrestricted.process.execute"};

Value compiled_plan() {
  auto source = mf::harness::parse_source(kHarness, mf::harness::Format::Yaml);
  EXPECT_TRUE(source.ok()) << (source.ok() ? "" : source.diagnostics().front().message);
  auto profiles = mf::json::parse_object(kProfiles);
  EXPECT_TRUE(profiles.ok());
  mf::harness::CompileRequest request;
  request.source = source.ok() ? *source : Value();
  request.catalogs.push_back({"builtin", mf::tools::builtin_catalog_json()});
  request.profiles.push_back({"profiles", profiles.ok() ? *profiles : Value()});
  auto result = mf::harness::compile(request);
  std::string why;
  for (const auto& d : result.diagnostics)
    why += "\n  " + d.code + " " + d.pointer + " " + d.message;
  EXPECT_TRUE(result.ok) << result.failure_phase << why;
  return result.plan;
}

const mf::tools::ToolDescriptor& builtin(const std::string& tool_id) {
  const auto* d = mf::tools::builtin_catalog().find(tool_id, 1);
  EXPECT_NE(d, nullptr) << tool_id;
  return *d;
}

class ToolsExecutor : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "mf-executor-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    base_ = tmpl;
    fs::create_directories(base_ / "ws");
    auto ws = mf::tools::Workspace::open((base_ / "ws").string());
    ASSERT_TRUE(ws.ok());
    context_.workspace = *ws;
    root_ = context_.workspace->root();
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(base_, ec);
  }
  void put(const std::string& rel, const std::string& bytes) const {
    std::ofstream out(root_ / rel, std::ios::binary | std::ios::trunc);
    out << bytes;
  }
  std::string slurp(const std::string& rel) const {
    std::ifstream in(root_ / rel, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  ToolExecutor executor(std::vector<Binding> bindings,
                        std::vector<std::string> caps = kAllCapabilities,
                        std::string artifact_dir = {}) const {
    ExecutorOptions options;
    options.granted_capabilities = std::move(caps);
    options.artifact_dir = std::move(artifact_dir);
    options.fixed_clock = true;
    return ToolExecutor(std::move(bindings), context_, options);
  }
  static std::vector<Binding> catalog_bindings() {
    std::vector<Binding> out;
    for (const auto& [key, d] : mf::tools::builtin_catalog().descriptors()) {
      out.push_back(mf::tools::binding_from_descriptor(d));
    }
    return out;
  }
  static Execution call(ToolExecutor& ex, const std::string& name, Value args) {
    static int n = 0;
    return ex.call(ToolCall{"call-" + std::to_string(++n), name, std::move(args)});
  }

  fs::path base_;
  fs::path root_;
  mf::tools::CallContext context_;
};

// --- bindings from a compiled plan
// ----------------------------------------------------------------

TEST_F(ToolsExecutor, PlanBindingsEnforcePrerequisitesWithArgumentMatches) {
  const Value plan = compiled_plan();
  ASSERT_FALSE(plan.is_null());
  auto bindings = mf::tools::bindings_from_plan(plan);
  ASSERT_TRUE(bindings.ok()) << bindings.diagnostics().front().message;
  ASSERT_EQ(bindings->size(), 3U);
  std::vector<std::string> names;
  for (const auto& b : *bindings) names.push_back(b.node_id + ":" + b.tool.model_tool_name);
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"done:submit", "look:read", "save:write"}));
  for (const auto& b : *bindings) {
    EXPECT_EQ(b.tool.descriptor_sha256, builtin(b.tool.tool_id).descriptor_sha256) << b.node_id;
  }

  put("a.txt", "alpha\n");
  ToolExecutor ex = executor(std::move(*bindings));

  // write before any read: refused before entry, nothing created.
  Execution e = call(ex, "write", Object{{"path", "a.txt"}, {"content", "new\n"}});
  EXPECT_TRUE(e.result.is_error);
  EXPECT_EQ(e.result.text, "Tool \"write\" requires a successful \"read\" call first");
  EXPECT_TRUE(e.record.denied);
  EXPECT_TRUE(e.record.retryable);
  EXPECT_EQ(e.record.node_id, "save");
  EXPECT_EQ(decisions(e.record.prerequisite_decisions), "look=denied");
  EXPECT_EQ(e.record.execution_status, "not_executed");
  EXPECT_EQ(e.record.side_effect_certainty, "not_attempted");
  EXPECT_EQ(slurp("a.txt"), "alpha\n");
  e = call(ex, "write", Object{{"path", "b.txt"}, {"content", "new\n"}});
  EXPECT_TRUE(e.record.denied);
  EXPECT_FALSE(fs::exists(root_ / "b.txt"));

  e = call(ex, "read", Object{{"path", "a.txt"}});
  ASSERT_FALSE(e.result.is_error) << e.result.text;
  EXPECT_EQ(e.result.text, "alpha\n");
  EXPECT_EQ(e.record.execution_status, "success");
  EXPECT_EQ(e.record.side_effect_certainty, "confirmed_absent");
  EXPECT_EQ(e.record.node_id, "look");

  // A read of a.txt does not license a write to b.txt.
  e = call(ex, "write", Object{{"path", "b.txt"}, {"content", "new\n"}});
  EXPECT_TRUE(e.result.is_error);
  EXPECT_TRUE(contains(e.result.text, "with matching arguments")) << e.result.text;
  EXPECT_TRUE(e.record.denied);
  EXPECT_EQ(decisions(e.record.prerequisite_decisions), "look=denied");
  EXPECT_EQ(e.record.side_effect_certainty, "not_attempted");
  EXPECT_FALSE(fs::exists(root_ / "b.txt"));

  e = call(ex, "write", Object{{"path", "a.txt"}, {"content", "new\n"}});
  ASSERT_FALSE(e.result.is_error) << e.result.text;
  EXPECT_FALSE(e.record.denied);
  EXPECT_EQ(decisions(e.record.prerequisite_decisions), "look=allowed");
  EXPECT_EQ(e.record.execution_status, "success");
  EXPECT_EQ(e.record.side_effect_certainty, "confirmed_complete");
  EXPECT_EQ(slurp("a.txt"), "new\n");

  // submit needs save, which has now succeeded.
  e = call(ex, "submit", Object{{"terminal_result", "COMPLETE"}, {"summary", "done"}});
  ASSERT_FALSE(e.result.is_error) << e.result.text;
  EXPECT_EQ(e.result.text, "Terminal intent recorded: COMPLETE");
  EXPECT_EQ(e.record.node_id, "done");
}

TEST_F(ToolsExecutor, PlanNodeEditedAfterCompilationIsRefused) {
  Value plan = compiled_plan();
  ASSERT_FALSE(plan.is_null());
  ASSERT_TRUE(mf::tools::bindings_from_plan(plan).ok());
  Value& node = plan.find("nodes")->as_array().front();
  node.set("description", Value("Read anything at all, including secrets."));
  plan.set("compiled_sha256", Value(mf::harness::plan_digest(plan)));
  // Its digest is consistent again, but its descriptor no longer gives the digest the compiler
  // bound: the plan loader and the bindings refuse it alike, at the node's binding.
  auto loaded = mf::harness::load_plan(mf::json::canonical_file(plan));
  ASSERT_FALSE(loaded.ok());
  auto bindings = mf::tools::bindings_from_plan(plan);
  ASSERT_FALSE(bindings.ok());
  for (const auto& ds : {loaded.diagnostics(), bindings.diagnostics()}) {
    ASSERT_EQ(ds.size(), 1u);
    EXPECT_EQ(ds.front().code, mf::diag::codes::kCatalogIdentity) << ds.front().message;
    EXPECT_EQ(ds.front().pointer, "/nodes/0/binding/descriptor_sha256");
  }
  EXPECT_EQ(loaded.diagnostics().front().message, bindings.diagnostics().front().message);
}

// --- name resolution and arguments
// ----------------------------------------------------------------

TEST_F(ToolsExecutor, UnknownToolIsNotFound) {
  ToolExecutor ex = executor(catalog_bindings());
  Execution e = call(ex, "nope", Object{});
  EXPECT_TRUE(e.result.is_error);
  EXPECT_EQ(e.result.text, "Tool nope not found");
  EXPECT_EQ(e.record.binding, nullptr);
  EXPECT_TRUE(e.record.denied);
  EXPECT_EQ(e.record.execution_status, "not_executed");
  const Value j = mf::tools::to_json(e.record);
  EXPECT_TRUE(j.find("binding")->is_null());
  EXPECT_EQ(j.find("binding_resolution_status")->as_string(), "uncompiled");
  EXPECT_TRUE(j.find("node_id")->is_null());
  EXPECT_EQ(j.find("model_tool_name")->as_string(), "nope");
}

TEST_F(ToolsExecutor, ArgumentsAreValidatedAgainstTheClosedSchema) {
  put("a.txt", "alpha\n");
  ToolExecutor ex = executor(catalog_bindings());

  Execution e = call(ex, "read", Object{{"path", "a.txt"}, {"extra", true}});
  EXPECT_TRUE(e.result.is_error);
  EXPECT_TRUE(starts_with(e.result.text, "Validation failed for tool \"read\":")) << e.result.text;
  EXPECT_TRUE(contains(e.result.text, "\n  - ")) << e.result.text;
  EXPECT_TRUE(contains(e.result.text, "extra")) << e.result.text;
  EXPECT_TRUE(contains(e.result.text, "Received arguments:")) << e.result.text;
  EXPECT_TRUE(e.record.retryable);
  EXPECT_TRUE(e.record.denied);
  EXPECT_EQ(e.record.execution_status, "not_executed");
  EXPECT_EQ(e.record.side_effect_certainty, "not_attempted");
  EXPECT_TRUE(e.record.capability_decisions.empty());

  e = call(ex, "read", Object{{"path", 7.0}});
  EXPECT_TRUE(e.result.is_error);
  EXPECT_TRUE(starts_with(e.result.text, "Validation failed for tool \"read\":")) << e.result.text;
  EXPECT_TRUE(contains(e.result.text, "\n  - /path")) << e.result.text;
  EXPECT_TRUE(e.record.retryable);
  EXPECT_TRUE(e.record.denied);

  e = call(ex, "read", Object{});
  EXPECT_TRUE(starts_with(e.result.text, "Validation failed for tool \"read\":")) << e.result.text;
  EXPECT_TRUE(e.record.denied);
}

// --- capabilities
// ---------------------------------------------------------------------------------

TEST_F(ToolsExecutor, CapabilitiesMustBeGranted) {
  put("a.txt", "alpha\n");
  ToolExecutor ex = executor(catalog_bindings(), {"terminal.intent"});
  Execution e = call(ex, "read", Object{{"path", "a.txt"}});
  EXPECT_TRUE(e.result.is_error);
  EXPECT_TRUE(contains(e.result.text, "unrestricted.filesystem.read")) << e.result.text;
  EXPECT_TRUE(e.record.denied);
  EXPECT_EQ(e.record.execution_status, "not_executed");
  EXPECT_EQ(e.record.side_effect_certainty, "not_attempted");
  EXPECT_EQ(decisions(e.record.capability_decisions),
            "unrestricted.filesystem.read=denied,tool:read=denied");

  e = call(ex, "submit", Object{{"terminal_result", "COMPLETE"}, {"summary", "s"}});
  EXPECT_FALSE(e.result.is_error) << e.result.text;
  EXPECT_EQ(decisions(e.record.capability_decisions),
            "terminal.intent=allowed,tool:submit=allowed");

  ToolExecutor granted = executor(catalog_bindings(), {"unrestricted.filesystem.read"});
  e = call(granted, "read", Object{{"path", "a.txt"}});
  EXPECT_FALSE(e.result.is_error) << e.result.text;
  EXPECT_EQ(decisions(e.record.capability_decisions),
            "unrestricted.filesystem.read=allowed,tool:read=allowed");
}

// --- output bounding and redaction
// ----------------------------------------------------------------

TEST_F(ToolsExecutor, OutputIsCutAtTheDescriptorsBound) {
  std::string big;
  for (int i = 0; i < 50; ++i) big += "line " + std::to_string(i) + "\n";
  put("big.txt", big);
  Binding b = mf::tools::binding_from_descriptor(builtin("builtin.pi_compat.read"));
  b.tool.output_policy.max_output_bytes = 100;
  ToolExecutor ex = executor({b});
  Execution e = call(ex, "read", Object{{"path", "big.txt"}});
  ASSERT_FALSE(e.result.is_error) << e.result.text;
  const std::string notice = "\n\n[Output cut at 100 bytes by the execution boundary]";
  EXPECT_EQ(e.result.text, big.substr(0, 100) + notice);
  EXPECT_EQ(e.record.output_sha256, mf::json::canonical_digest(mf::tools::to_json(e.result)));
}

TEST_F(ToolsExecutor, SecretsAreRedactedWhenThePolicySaysSo) {
  const std::string secret = "sk-" + std::string("abcdefghijklmnopqrstuvwxyzABCD");
  put("env.txt", "KEY=" + secret + "\n");
  Binding b = mf::tools::binding_from_descriptor(builtin("builtin.pi_compat.read"));
  b.tool.output_policy.redact_secrets = true;
  ToolExecutor ex = executor({b});
  Execution e = call(ex, "read", Object{{"path", "env.txt"}});
  ASSERT_FALSE(e.result.is_error) << e.result.text;
  EXPECT_TRUE(contains(e.result.text, "[REDACTED]")) << e.result.text;
  EXPECT_FALSE(contains(mf::json::canonical(mf::tools::to_json(e.result)), secret));
  EXPECT_FALSE(contains(e.record.summary, secret));

  // The built-in read keeps file content as it is (redact_secrets false).
  ToolExecutor plain = executor(catalog_bindings());
  e = call(plain, "read", Object{{"path", "env.txt"}});
  ASSERT_FALSE(e.result.is_error) << e.result.text;
  EXPECT_TRUE(contains(e.result.text, secret));
  EXPECT_FALSE(contains(e.result.text, "[REDACTED]"));
}

// --- terminal controls, artifacts, missing implementations
// ----------------------------------------

TEST_F(ToolsExecutor, TerminalControlRecordsTheIntent) {
  ToolExecutor ex = executor(catalog_bindings());
  Execution e =
      call(ex, "submit", Object{{"terminal_result", "COMPLETE"}, {"summary", "all done"}});
  ASSERT_FALSE(e.result.is_error) << e.result.text;
  EXPECT_EQ(e.result.text, "Terminal intent recorded: COMPLETE");
  EXPECT_EQ(e.result.details,
            (Value(Object{{"terminal_result", "COMPLETE"}, {"summary", "all done"}})));
  EXPECT_EQ(e.record.execution_status, "success");
  EXPECT_EQ(e.record.side_effect_certainty, "confirmed_complete");

  // The schema only admits this control's own terminal result.
  e = call(ex, "submit", Object{{"terminal_result", "BLOCKED"}, {"summary", "x"}});
  EXPECT_TRUE(starts_with(e.result.text, "Validation failed for tool \"submit\":"))
      << e.result.text;
}

TEST_F(ToolsExecutor, ArtifactsNeedADirectoryAndAValidId) {
  ToolExecutor none = executor(catalog_bindings());
  Execution e = call(none, "write_artifact", Object{{"artifact_id", "report"}, {"content", "x"}});
  EXPECT_TRUE(e.result.is_error);
  EXPECT_EQ(e.result.text, "No artifact directory is configured for this run");
  e = call(none, "read_artifact", Object{{"artifact_id", "report"}});
  EXPECT_TRUE(e.result.is_error);
  EXPECT_EQ(e.result.text, "No artifact directory is configured for this run");

  const fs::path dir = base_ / "artifacts";
  fs::create_directories(dir);
  ToolExecutor ex = executor(catalog_bindings(), kAllCapabilities, dir.string());
  e = call(ex, "write_artifact", Object{{"artifact_id", "report_1"}, {"content", "hello\n"}});
  ASSERT_FALSE(e.result.is_error) << e.result.text;
  EXPECT_EQ(e.result.text, "Wrote artifact report_1 (6 bytes)");
  EXPECT_EQ(e.record.side_effect_certainty, "confirmed_complete");
  EXPECT_TRUE(fs::exists(dir / "report_1"));
  e = call(ex, "read_artifact", Object{{"artifact_id", "report_1"}});
  ASSERT_FALSE(e.result.is_error) << e.result.text;
  EXPECT_EQ(e.result.text, "hello\n");

  e = call(ex, "write_artifact", Object{{"artifact_id", "../x"}, {"content", "x"}});
  EXPECT_TRUE(e.result.is_error);
  EXPECT_TRUE(starts_with(e.result.text, "Invalid artifact id \"../x\"")) << e.result.text;
  EXPECT_FALSE(fs::exists(base_ / "x"));
  e = call(ex, "read_artifact", Object{{"artifact_id", "../x"}});
  EXPECT_TRUE(e.result.is_error);
  EXPECT_TRUE(starts_with(e.result.text, "Invalid artifact id \"../x\"")) << e.result.text;
  e = call(ex, "read_artifact", Object{{"artifact_id", "missing"}});
  EXPECT_TRUE(e.result.is_error);
  EXPECT_EQ(e.result.text, "Artifact not found: missing");
}

// A link in the artifact directory is followed only to another artifact: one leading out is
// refused, as the workspace refuses it, and nothing of the outside file reaches the model.
TEST_F(ToolsExecutor, ReadArtifactStaysInTheArtifactDirectory) {
  const fs::path dir = base_ / "artifacts";
  fs::create_directories(dir);
  { std::ofstream(base_ / "secret.txt") << "outside secret\n"; }
  { std::ofstream(dir / "report") << "inside\n"; }
  fs::create_symlink(base_ / "secret.txt", dir / "absolute");
  fs::create_symlink("../secret.txt", dir / "relative");
  fs::create_symlink("report", dir / "alias");
  fs::create_directories(dir / "sub");
  ToolExecutor ex = executor(catalog_bindings(), kAllCapabilities, dir.string());
  for (const char* id : {"absolute", "relative"}) {
    Execution e = call(ex, "read_artifact", Object{{"artifact_id", id}});
    EXPECT_TRUE(e.result.is_error) << id;
    EXPECT_EQ(e.result.text,
              "Artifact " + std::string(id) + " leads out of the artifact directory");
  }
  Execution e = call(ex, "read_artifact", Object{{"artifact_id", "alias"}});
  EXPECT_FALSE(e.result.is_error) << e.result.text;
  EXPECT_EQ(e.result.text, "inside\n");
  e = call(ex, "read_artifact", Object{{"artifact_id", "sub"}});
  EXPECT_EQ(e.result.text, "Artifact sub is not a regular file");
}

// A writing tool that refuses before changing anything records not_attempted; completion_unknown
// is for a failure that may have left part of a write behind.
TEST_F(ToolsExecutor, RefusedWritesAreNotAttempted) {
  put("f.txt", "hello\n");
  fs::create_directories(root_ / "dir");
  ToolExecutor ex = executor(catalog_bindings(), kAllCapabilities, (base_ / "none").string());
  const std::vector<std::pair<std::string, Object>> refusals = {
      {"write", Object{{"path", "../x"}, {"content", "x"}}},
      {"write", Object{{"path", "newdir/"}, {"content", "x"}}},
      {"write", Object{{"path", "dir"}, {"content", "x"}}},
      {"edit", Object{{"path", "missing.txt"},
                      {"edits", mf::json::Array{Object{{"oldText", "a"}, {"newText", "b"}}}}}},
      {"edit", Object{{"path", "f.txt"},
                      {"edits", mf::json::Array{Object{{"oldText", "absent"}, {"newText", "b"}}}}}},
      {"write_artifact", Object{{"artifact_id", "../x"}, {"content", "x"}}},
  };
  for (const auto& [name, args] : refusals) {
    Execution e = call(ex, name, Value(args));
    EXPECT_TRUE(e.result.is_error) << name;
    EXPECT_EQ(e.record.execution_status, "soft_failure") << name << ": " << e.result.text;
    EXPECT_EQ(e.record.side_effect_certainty, "not_attempted") << name << ": " << e.result.text;
  }
  EXPECT_EQ(slurp("f.txt"), "hello\n");
  EXPECT_FALSE(fs::exists(root_ / "newdir"));
}

TEST_F(ToolsExecutor, ToolWithoutImplementation) {
  auto doc = mf::json::parse_object(R"({"schema_version":"1.0","kind":"millforge_tool_catalog",
    "tools":[{"tool_id":"third.party.probe","version":2,"model_tool_name":"probe",
      "description":"A tool nobody implemented.",
      "input_schema":{"type":"object","properties":{"x":{"type":"string"}}},
      "required_capabilities":[],"side_effect_class":"read_only","idempotency":"idempotent",
      "implementation_id":"impl.nowhere.v9"}]})");
  ASSERT_TRUE(doc.ok());
  auto catalog = mf::tools::Catalog::from_json(*doc);
  ASSERT_TRUE(catalog.ok()) << catalog.diagnostics().front().message;
  const auto* d = catalog->find("third.party.probe", 2);
  ASSERT_NE(d, nullptr);
  ToolExecutor ex = executor({mf::tools::binding_from_descriptor(*d)});
  Execution e = call(ex, "probe", Object{{"x", "y"}});
  EXPECT_TRUE(e.result.is_error);
  EXPECT_EQ(e.result.text,
            "No implementation is available for third.party.probe@2 (impl.nowhere.v9)");
  EXPECT_FALSE(e.record.denied);
  EXPECT_EQ(decisions(e.record.capability_decisions), "tool:probe=allowed");
}

// --- records ------------------------------------------------------------------------------------

TEST_F(ToolsExecutor, RecordsCarryDigestsAndFixedDurations) {
  put("a.txt", "alpha\n");
  ToolExecutor ex = executor(catalog_bindings());
  const Value args = Object{{"path", "a.txt"}, {"limit", 1.0}};
  Execution e = ex.call(ToolCall{"call-x", "read", args});
  ASSERT_FALSE(e.result.is_error) << e.result.text;
  EXPECT_EQ(e.record.call_id, "call-x");
  EXPECT_EQ(e.record.model_tool_name, "read");
  EXPECT_EQ(e.record.input_sha256, mf::json::canonical_digest(args));
  EXPECT_EQ(e.record.output_sha256, mf::json::canonical_digest(mf::tools::to_json(e.result)));
  EXPECT_EQ(e.record.duration_ms, 0);
  EXPECT_EQ(e.record.summary, "alpha");
  ASSERT_NE(e.record.binding, nullptr);
  EXPECT_EQ(e.record.binding->tool.tool_id, "builtin.pi_compat.read");

  const Value j = mf::tools::to_json(e.record);
  EXPECT_EQ(j.find("binding_resolution_status")->as_string(), "resolved");
  EXPECT_EQ(j.find("binding")->find("descriptor_sha256")->as_string(),
            builtin("builtin.pi_compat.read").descriptor_sha256);
  EXPECT_EQ(j.find("side_effect_class")->as_string(), "read_only");
  EXPECT_EQ(j.find("idempotency")->as_string(), "idempotent");
  EXPECT_EQ(j.find("input_sha256")->as_string(), mf::json::canonical_digest(args));
  EXPECT_EQ(j.find("duration_ms")->as_number(), 0);

  // A refusal has digests too: the output digest is of the error result as returned.
  e = call(ex, "nope", Object{{"k", "v"}});
  EXPECT_EQ(e.record.input_sha256, mf::json::canonical_digest(Value(Object{{"k", "v"}})));
  EXPECT_EQ(e.record.output_sha256, mf::json::canonical_digest(mf::tools::to_json(e.result)));
  EXPECT_EQ(e.record.summary, "error: Tool nope not found");
}

TEST_F(ToolsExecutor, CancellationBeforeTheCallAborts) {
  put("a.txt", "alpha\n");
  std::atomic<bool> cancel{true};
  context_.cancel = &cancel;
  ToolExecutor ex = executor(catalog_bindings());
  Execution e = call(ex, "write", Object{{"path", "c.txt"}, {"content", "x"}});
  EXPECT_TRUE(e.result.is_error);
  EXPECT_EQ(e.result.text, "Operation aborted");
  EXPECT_EQ(e.record.execution_status, "cancelled");
  EXPECT_EQ(e.record.side_effect_certainty, "not_attempted");
  EXPECT_FALSE(fs::exists(root_ / "c.txt"));
  e = call(ex, "read", Object{{"path", "a.txt"}});
  EXPECT_EQ(e.result.text, "Operation aborted");
  EXPECT_EQ(e.record.execution_status, "cancelled");
}

// The run's deadline is checked before entry, like cancellation (docs/tools.md, "deadline ... and
// cancellation | Operation aborted"): a call made after it has passed must not reach the tool.
TEST_F(ToolsExecutor, ExpiredRunDeadlineRefusesBeforeEntry) {
  context_.deadline = std::chrono::steady_clock::now() - std::chrono::seconds(5);
  ToolExecutor ex = executor(catalog_bindings());
  Execution e = call(ex, "write", Object{{"path", "late.txt"}, {"content", "x"}});
  EXPECT_TRUE(e.result.is_error) << e.result.text;
  EXPECT_EQ(e.result.text, "Operation aborted");
  EXPECT_EQ(e.record.side_effect_certainty, "not_attempted");
  EXPECT_NE(e.record.execution_status, "success");
  EXPECT_FALSE(fs::exists(root_ / "late.txt"));
}

// --- edit's legacy arguments
// ----------------------------------------------------------------------

TEST_F(ToolsExecutor, EditAcceptsLegacyArguments) {
  put("e.txt", "one\ntwo\nthree\n");
  ToolExecutor ex = executor(catalog_bindings());
  const Value legacy = Object{{"path", "e.txt"}, {"oldText", "two"}, {"newText", "TWO"}};
  Execution e = call(ex, "edit", legacy);
  ASSERT_FALSE(e.result.is_error) << e.result.text;
  EXPECT_EQ(slurp("e.txt"), "one\nTWO\nthree\n");
  EXPECT_EQ(e.record.execution_status, "success");
  // The record digests the arguments as the model sent them.
  EXPECT_EQ(e.record.input_sha256, mf::json::canonical_digest(legacy));

  // The current form works too; an unknown member is still refused by the closed schema.
  e = call(
      ex, "edit",
      Object{{"path", "e.txt"}, {"edits", Array{Object{{"oldText", "one"}, {"newText", "ONE"}}}}});
  ASSERT_FALSE(e.result.is_error) << e.result.text;
  EXPECT_EQ(slurp("e.txt"), "ONE\nTWO\nthree\n");
  e = call(ex, "edit", Object{{"path", "e.txt"}, {"oldText", "x"}, {"newText", "y"}, {"z", 1.0}});
  EXPECT_TRUE(starts_with(e.result.text, "Validation failed for tool \"edit\":")) << e.result.text;
  EXPECT_EQ(slurp("e.txt"), "ONE\nTWO\nthree\n");
}

}  // namespace
