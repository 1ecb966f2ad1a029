// Millforge's builtin.* tools (docs/tools.md, "Millforge built-ins"): their descriptors, each
// implementation through the execution boundary (happy paths, refusals, adversarial paths and
// patches), the patch parser and applier on their own, and the four builtin harnesses compiled and
// driven along their prerequisite order by an executor built from the compiled plan.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "mf/harness/command.hpp"
#include "mf/harness/compiler.hpp"
#include "mf/hash/sha256.hpp"
#include "mf/io/file.hpp"
#include "mf/json/canonical.hpp"
#include "mf/tools/catalog.hpp"
#include "mf/tools/executor.hpp"
#include "mf/tools/pack.hpp"
#include "millforge_builtins.hpp"

namespace {

namespace fs = std::filesystem;
using mf::json::Array;
using mf::json::Object;
using mf::json::Value;
using mf::tools::Binding;
using mf::tools::Execution;
using mf::tools::ExecutorOptions;
using mf::tools::ToolCall;
using mf::tools::ToolDescriptor;
using mf::tools::ToolExecutor;

const std::string kRoot = MF_SOURCE_DIR;

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

std::string canon(const Value& v) {
  return mf::json::canonical(v);
}

std::string status_of(const Execution& e) {
  const Value* s = e.result.details.find("status");
  return s != nullptr && s->is_string() ? s->as_string() : std::string("<none>");
}

const ToolDescriptor& builtin(const std::string& tool_id) {
  const ToolDescriptor* d = mf::tools::builtin_catalog().find(tool_id, 1);
  EXPECT_NE(d, nullptr) << tool_id;
  return *d;
}

const std::vector<std::string> kAllCapabilities = {
    "artifact.read",    "artifact.write",  "process.static_check",        "process.test",
    "request.read",     "terminal.intent", "workspace.diff.read",         "workspace.read",
    "workspace.search", "workspace.write", "unrestricted.filesystem.read"};

class MillforgeBuiltins : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "mf-millforge-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    base_ = tmpl;
    fs::create_directories(base_ / "ws");
    fs::create_directories(base_ / "artifacts");
    fs::create_directories(base_ / "outside");
    auto ws = mf::tools::Workspace::open((base_ / "ws").string());
    ASSERT_TRUE(ws.ok());
    context_.workspace = *ws;
    root_ = context_.workspace->root();
    artifacts_ = fs::canonical(base_ / "artifacts");
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(base_, ec);
  }

  void put(const fs::path& path, const std::string& bytes) const {
    fs::create_directories(path.parent_path());
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << bytes;
  }
  void put_ws(const std::string& rel, const std::string& bytes) const { put(root_ / rel, bytes); }
  static std::string slurp(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  std::string ws_file(const std::string& rel) const { return slurp(root_ / rel); }

  // A binding of a catalog descriptor, optionally placed on a plan node.
  static Binding bind(const std::string& tool_id, std::string node_id = {},
                      std::vector<std::string> produces = {}, std::string terminal = {}) {
    Binding b = mf::tools::binding_from_descriptor(builtin(tool_id));
    b.node_id = std::move(node_id);
    b.produces = std::move(produces);
    b.terminal_result = std::move(terminal);
    return b;
  }
  ToolExecutor executor(std::vector<Binding> bindings, Value request = Value(),
                        std::vector<std::string> caps = kAllCapabilities) const {
    ExecutorOptions options;
    options.granted_capabilities = std::move(caps);
    options.artifact_dir = artifacts_.string();
    options.request = std::move(request);
    options.fixed_clock = true;
    return ToolExecutor(std::move(bindings), context_, options);
  }
  // One call of one tool, through a fresh executor.
  Execution once(const std::string& tool_id, Value args, Value request = Value()) const {
    ToolExecutor ex = executor({bind(tool_id)}, std::move(request));
    return ex.call(ToolCall{"call-1", builtin(tool_id).model_tool_name, std::move(args)});
  }
  static Execution call(ToolExecutor& ex, const std::string& name, Value args) {
    static int n = 0;
    return ex.call(ToolCall{"call-" + std::to_string(++n), name, std::move(args)});
  }

  fs::path base_;
  fs::path root_;
  fs::path artifacts_;
  mf::tools::CallContext context_;
};

// --- descriptors --------------------------------------------------------------------------------

struct Expected {
  const char* tool_id;
  const char* model_name;
  std::vector<std::string> capabilities;
  mf::tools::SideEffect side_effect;
  mf::tools::Idempotency idempotency;
  std::int64_t timeout_ms;
};

TEST(MillforgeBuiltinsCatalog, DescriptorsFollowMillforgesFacts) {
  using mf::tools::Idempotency;
  using mf::tools::SideEffect;
  constexpr auto kRead = SideEffect::ReadOnly;
  constexpr auto kArtifact = SideEffect::ArtifactWrite;
  constexpr auto kSame = Idempotency::Idempotent;
  constexpr auto kKeyed = Idempotency::IdempotentWithKey;
  constexpr auto kOnce = Idempotency::NonIdempotent;
  // Millforge's builtins.py, less builtin.artifact.read (ours differs, checked below).
  const Expected expected[] = {
      {"builtin.request.inspect", "inspect_request", {"request.read"}, kRead, kSame, 300000},
      {"builtin.request.read_requirements",
       "read_request_requirements",
       {"request.read"},
       kRead,
       kSame,
       300000},
      {"builtin.workspace.list_files",
       "list_workspace_files",
       {"workspace.read"},
       kRead,
       kSame,
       300000},
      {"builtin.workspace.read_file",
       "read_workspace_file",
       {"workspace.read"},
       kRead,
       kSame,
       300000},
      {"builtin.workspace.search_text",
       "search_workspace_text",
       {"workspace.read", "workspace.search"},
       kRead,
       kSame,
       300000},
      {"builtin.workspace.write_file",
       "write_workspace_file",
       {"workspace.write"},
       SideEffect::WorkspaceWrite,
       kKeyed,
       300000},
      {"builtin.workspace.apply_patch",
       "apply_workspace_patch",
       {"workspace.write"},
       SideEffect::WorkspaceWrite,
       kKeyed,
       300000},
      {"builtin.workspace.read_diff",
       "read_workspace_diff",
       {"workspace.diff.read"},
       kRead,
       kSame,
       300000},
      {"builtin.shell.run_tests",
       "run_test_profile",
       {"process.test"},
       SideEffect::ProcessExecution,
       kKeyed,
       1800000},
      {"builtin.shell.run_static_check",
       "run_static_check_profile",
       {"process.static_check"},
       SideEffect::ProcessExecution,
       kKeyed,
       1800000},
      {"builtin.artifact.read_plan", "read_plan_artifact", {"artifact.read"}, kRead, kSame, 300000},
      {"builtin.artifact.read_patch_summary",
       "read_patch_summary_artifact",
       {"artifact.read"},
       kRead,
       kSame,
       300000},
      {"builtin.artifact.read_test_results",
       "read_test_results_artifact",
       {"artifact.read"},
       kRead,
       kSame,
       300000},
      {"builtin.artifact.read_workspace_diff",
       "read_workspace_diff_artifact",
       {"artifact.read"},
       kRead,
       kSame,
       300000},
      {"builtin.artifact.read_checker_verdict",
       "read_checker_verdict_artifact",
       {"artifact.read"},
       kRead,
       kSame,
       300000},
      {"builtin.artifact.write_plan",
       "write_plan_artifact",
       {"artifact.write"},
       kArtifact,
       kKeyed,
       300000},
      {"builtin.artifact.write_patch_summary",
       "write_patch_summary_artifact",
       {"artifact.write"},
       kArtifact,
       kKeyed,
       300000},
      {"builtin.artifact.write_test_results",
       "write_test_results_artifact",
       {"artifact.write"},
       kArtifact,
       kKeyed,
       300000},
      {"builtin.artifact.write_workspace_diff",
       "write_workspace_diff_artifact",
       {"artifact.write", "workspace.diff.read"},
       kArtifact,
       kKeyed,
       300000},
      {"builtin.artifact.write_checker_verdict",
       "write_checker_verdict_artifact",
       {"artifact.write"},
       kArtifact,
       kKeyed,
       300000},
      {"builtin.artifact.write_arbiter_verdict",
       "write_arbiter_verdict_artifact",
       {"artifact.write"},
       kArtifact,
       kKeyed,
       300000},
      {"builtin.artifact.write_verdict",
       "write_verdict_artifact",
       {"artifact.write"},
       kArtifact,
       kKeyed,
       300000},
      {"builtin.terminal.submit",
       "submit_terminal_intent",
       {"terminal.intent"},
       SideEffect::Terminal,
       kOnce,
       30000},
      {"builtin.terminal.reject",
       "reject_terminal_intent",
       {"terminal.intent"},
       SideEffect::Terminal,
       kOnce,
       30000},
      {"builtin.terminal.escalate",
       "escalate_terminal_intent",
       {"terminal.intent"},
       SideEffect::Terminal,
       kOnce,
       30000},
  };
  EXPECT_EQ(std::size(expected), 25u);
  const Value status_enum = Array{"success", "soft_failure", "hard_failure"};
  for (const auto& e : expected) {
    SCOPED_TRACE(e.tool_id);
    const ToolDescriptor& d = builtin(e.tool_id);
    EXPECT_EQ(d.model_tool_name, e.model_name);
    EXPECT_EQ(d.required_capabilities, e.capabilities);
    EXPECT_EQ(d.side_effect_class, e.side_effect);
    EXPECT_EQ(d.idempotency, e.idempotency);
    // The executor finds each one's own implementation, not a fallback.
    const mf::tools::Implementation* impl = mf::tools::implementation_for(d);
    ASSERT_NE(impl, nullptr);
    EXPECT_EQ(impl->id, d.implementation_id);
    EXPECT_EQ(d.timeout_ms, e.timeout_ms);
    EXPECT_EQ(d.output_policy.max_output_bytes, 1 << 20);
    EXPECT_EQ(d.output_policy.max_summary_bytes, 8192);
    EXPECT_TRUE(d.output_policy.redact_secrets);
    EXPECT_EQ(d.implementation_id, std::string("impl.") + e.tool_id + ".v1");
    const Value* required = d.output_schema.find("required");
    ASSERT_NE(required, nullptr);
    for (const char* key : {"status", "summary"}) {
      EXPECT_NE(std::find(required->as_array().begin(), required->as_array().end(), Value(key)),
                required->as_array().end())
          << key;
    }
    const Value* status = d.output_schema.find("properties")->find("status");
    ASSERT_NE(status, nullptr);
    EXPECT_EQ(*status->find("enum"), status_enum);
    // Closed: an undeclared member in a successful result fails the output schema.
    EXPECT_EQ(*d.output_schema.find("additionalProperties"), Value(false));
  }
  // Millforge's inputs.
  auto required = [](const char* id) { return *builtin(id).input_schema.find("required"); };
  auto properties = [](const char* id) {
    std::vector<std::string> keys;
    for (const auto& m : builtin(id).input_schema.find("properties")->as_object()) {
      keys.push_back(m.key);
    }
    std::sort(keys.begin(), keys.end());
    return keys;
  };
  using Keys = std::vector<std::string>;
  EXPECT_EQ(required("builtin.workspace.list_files"), Value(Array{"root"}));
  EXPECT_EQ(properties("builtin.workspace.list_files"), (Keys{"glob", "max_results", "root"}));
  EXPECT_EQ(required("builtin.workspace.search_text"), Value(Array{"query"}));
  EXPECT_EQ(properties("builtin.workspace.search_text"),
            (Keys{"glob", "max_results", "query", "root"}));
  EXPECT_EQ(required("builtin.workspace.write_file"), Value(Array{"path", "content"}));
  EXPECT_EQ(properties("builtin.workspace.write_file"),
            (Keys{"content", "expected_sha256", "path"}));
  EXPECT_EQ(builtin("builtin.workspace.read_diff").input_schema.find("required"), nullptr);
  EXPECT_EQ(properties("builtin.workspace.read_diff"), (Keys{"max_bytes", "paths"}));
  for (const char* id :
       {"builtin.artifact.read_plan", "builtin.artifact.read_patch_summary",
        "builtin.artifact.read_test_results", "builtin.artifact.read_workspace_diff",
        "builtin.artifact.read_checker_verdict", "builtin.artifact.write_workspace_diff"}) {
    EXPECT_EQ(properties(id), Keys{}) << id;
  }
  EXPECT_EQ(required("builtin.artifact.write_checker_verdict"), Value(Array{"verdict"}));
  EXPECT_EQ(required("builtin.artifact.write_arbiter_verdict"), Value(Array{"verdict"}));
  EXPECT_EQ(required("builtin.terminal.reject"), Value(Array{"terminal_result", "summary"}));
  EXPECT_EQ(properties("builtin.terminal.reject"),
            (Keys{"artifact_refs", "summary", "terminal_result"}));
  EXPECT_EQ(required("builtin.terminal.escalate"),
            Value(Array{"terminal_result", "summary", "blocker"}));
  EXPECT_EQ(properties("builtin.terminal.escalate"),
            (Keys{"artifact_refs", "blocker", "summary", "terminal_result"}));
  // Each fixed reader names its one artifact in its output schema.
  EXPECT_EQ(*builtin("builtin.artifact.read_test_results")
                 .output_schema.find("properties")
                 ->find("artifact_id")
                 ->find("enum"),
            Value(Array{"test_results"}));
  EXPECT_EQ(*builtin("builtin.shell.run_tests").input_schema.find("required"),
            Value(Array{"profile"}));
  EXPECT_EQ(*builtin("builtin.terminal.submit").input_schema.find("required"),
            Value(Array{"terminal_result", "summary"}));
  EXPECT_NE(
      builtin("builtin.terminal.submit").input_schema.find("properties")->find("artifact_refs"),
      nullptr);
  // The existing artifact reader, which the builder, checker and arbiter bind, is unchanged.
  EXPECT_EQ(*builtin("builtin.artifact.read").input_schema.find("required"),
            Value(Array{"artifact_id"}));
  EXPECT_EQ(builtin("builtin.artifact.read").output_schema, Value(true));
}

// --- request.* ----------------------------------------------------------------------------------

TEST_F(MillforgeBuiltins, InspectRequestReturnsTheInstructionAndCanonicalContext) {
  const Value request = Object{{"instruction", "Fix the parser"},
                               {"context", Object{{"zeta", 1}, {"alpha", Array{"x"}}}}};
  Execution e = once("builtin.request.inspect", Object{}, request);
  ASSERT_FALSE(e.result.is_error) << e.result.text;
  EXPECT_EQ(e.result.text,
            R"({"context":{"alpha":["x"],"zeta":1},"instruction":"Fix the parser"})");
  EXPECT_EQ(status_of(e), "success");
  EXPECT_EQ(*e.result.details.find("instruction"), Value("Fix the parser"));
  EXPECT_EQ(canon(*e.result.details.find("context")), R"({"alpha":["x"],"zeta":1})");
  EXPECT_EQ(e.record.side_effect_certainty, "confirmed_absent");

  // Either member may be missing; a request that is not there at all is a soft failure.
  e = once("builtin.request.inspect", Object{}, Object{{"instruction", "only this"}});
  ASSERT_FALSE(e.result.is_error) << e.result.text;
  EXPECT_EQ(*e.result.details.find("context"), Value(Object{}));
  e = once("builtin.request.inspect", Object{}, Object{{"context", Object{{"k", "v"}}}});
  ASSERT_FALSE(e.result.is_error) << e.result.text;
  EXPECT_EQ(*e.result.details.find("instruction"), Value(""));
  e = once("builtin.request.inspect", Object{});
  EXPECT_TRUE(e.result.is_error);
  EXPECT_EQ(status_of(e), "soft_failure");
  EXPECT_EQ(e.record.execution_status, "soft_failure");

  // Inputs are closed.
  e = once("builtin.request.inspect", Object{{"verbose", true}}, request);
  EXPECT_TRUE(e.record.denied);
}

TEST_F(MillforgeBuiltins, ReadRequirementsReturnsTheContextsRequirements) {
  const Value reqs = Array{"keep the API", "add a test"};
  Execution e = once("builtin.request.read_requirements", Object{},
                     Object{{"context", Object{{"requirements", reqs}}}});
  ASSERT_FALSE(e.result.is_error) << e.result.text;
  EXPECT_EQ(*e.result.details.find("requirements"), reqs);
  EXPECT_EQ(e.result.text, R"(["keep the API","add a test"])");
  EXPECT_EQ(*e.result.details.find("summary"), Value("The request states 2 requirements"));

  e = once("builtin.request.read_requirements", Object{},
           Object{{"context", Object{{"requirements", "Be fast."}}}});
  ASSERT_FALSE(e.result.is_error);
  EXPECT_EQ(e.result.text, "Be fast.");

  for (const Value& request : {Value(), Value(Object{{"instruction", "x"}}),
                               Value(Object{{"context", Object{{"requirements", nullptr}}}})}) {
    e = once("builtin.request.read_requirements", Object{}, request);
    EXPECT_TRUE(e.result.is_error);
    EXPECT_TRUE(contains(e.result.text, "no requirements")) << e.result.text;
    EXPECT_EQ(status_of(e), "soft_failure");
    EXPECT_EQ(e.record.execution_status, "soft_failure");
  }
}

// --- workspace.read_file ------------------------------------------------------------------------

TEST_F(MillforgeBuiltins, ReadFileReadsConfinedAndBounded) {
  put_ws("src/a.txt", "hello\nworld\n");
  Execution e = once("builtin.workspace.read_file", Object{{"path", "src/a.txt"}});
  ASSERT_FALSE(e.result.is_error) << e.result.text;
  EXPECT_EQ(e.result.text, "hello\nworld\n");
  EXPECT_EQ(*e.result.details.find("content"), Value("hello\nworld\n"));
  EXPECT_EQ(*e.result.details.find("truncated"), Value(false));
  EXPECT_EQ(*e.result.details.find("size"), Value(12));
  EXPECT_EQ(*e.result.details.find("path"), Value("src/a.txt"));

  // max_bytes cuts on a code-point boundary: "é" is two bytes, and a cut through it keeps none.
  put_ws("u.txt", "ab\xC3\xA9z");
  e = once("builtin.workspace.read_file", Object{{"path", "u.txt"}, {"max_bytes", 3}});
  ASSERT_FALSE(e.result.is_error) << e.result.text;
  EXPECT_EQ(*e.result.details.find("content"), Value("ab"));
  EXPECT_EQ(*e.result.details.find("truncated"), Value(true));
  EXPECT_TRUE(contains(e.result.text, "[Showing the first 3 bytes of 5;")) << e.result.text;

  // The default bound is 32 KiB.
  put_ws("big.txt", std::string(40000, 'x'));
  e = once("builtin.workspace.read_file", Object{{"path", "big.txt"}});
  ASSERT_FALSE(e.result.is_error);
  EXPECT_EQ(e.result.details.find("content")->as_string().size(), 32768u);

  e = once("builtin.workspace.read_file", Object{{"path", "big.txt"}, {"max_bytes", 2000000}});
  EXPECT_TRUE(e.record.denied) << "above the schema's maximum";
}

TEST_F(MillforgeBuiltins, ReadFileRefusesEscapesLinksOutAndNonFiles) {
  put(base_ / "outside" / "secret.txt", "top secret\n");
  fs::create_symlink(base_ / "outside" / "secret.txt", root_ / "link.txt");
  fs::create_symlink(base_ / "outside", root_ / "dirlink");
  fs::create_directories(root_ / "sub");
  const std::string outside_abs = (fs::canonical(base_ / "outside") / "secret.txt").string();
  for (const std::string& path :
       {std::string("../outside/secret.txt"), outside_abs, std::string("link.txt"),
        std::string("dirlink/secret.txt"), std::string("~/x")}) {
    SCOPED_TRACE(path);
    Execution e = once("builtin.workspace.read_file", Object{{"path", path}});
    ASSERT_TRUE(e.result.is_error);
    EXPECT_TRUE(contains(e.result.text, "Path escapes the workspace")) << e.result.text;
    EXPECT_FALSE(contains(e.result.text, "top secret"));
    EXPECT_EQ(status_of(e), "soft_failure");
  }
  Execution e = once("builtin.workspace.read_file", Object{{"path", "sub"}});
  EXPECT_TRUE(e.result.is_error);
  EXPECT_TRUE(contains(e.result.text, "EISDIR")) << e.result.text;
  e = once("builtin.workspace.read_file", Object{{"path", "missing.txt"}});
  EXPECT_TRUE(e.result.is_error);
  EXPECT_TRUE(contains(e.result.text, "ENOENT")) << e.result.text;
  ASSERT_EQ(::mkfifo((root_ / "fifo").c_str(), 0600), 0);
  e = once("builtin.workspace.read_file", Object{{"path", "fifo"}});
  EXPECT_TRUE(e.result.is_error);
  EXPECT_TRUE(contains(e.result.text, "Not a regular file")) << e.result.text;
  // Without the capability, nothing is read.
  ToolExecutor ex = executor({bind("builtin.workspace.read_file")}, Value(), {"request.read"});
  e = call(ex, "read_workspace_file", Object{{"path", "sub"}});
  EXPECT_TRUE(e.record.denied);
  EXPECT_TRUE(contains(e.result.text, "workspace.read")) << e.result.text;
}

// --- the patch format ---------------------------------------------------------------------------

TEST(MillforgeBuiltinsPatchFormat, ParsesGitAndPlainHeaders) {
  auto parsed = mf::tools::parse_patch(
      "commentary before the diff\n"
      "- a bullet in a commit message\n"
      "diff --git a/src/x.c b/src/x.c\n"
      "index 123..456 100644\n"
      "--- a/src/x.c\t2024-01-01 00:00:00\n"
      "+++ b/src/x.c\t2024-01-02 00:00:00\n"
      "@@ -1,2 +1,2 @@ int main()\n"
      " keep\n"
      "-old\n"
      "+new\n"
      "--- /dev/null\n"
      "+++ b/new.txt\n"
      "@@ -0,0 +1 @@\n"
      "+fresh\n"
      "\\ No newline at end of file\n"
      "--- plain.txt\n"
      "+++ plain.txt\n"
      "@@ -3 +3,0 @@\n"
      "-gone\n"
      "-- \n"
      "2.43.0\n");
  ASSERT_TRUE(parsed.error.empty()) << parsed.error;
  ASSERT_EQ(parsed.files.size(), 3u);
  EXPECT_EQ(parsed.files[0].old_path, "src/x.c");
  EXPECT_EQ(parsed.files[0].new_path, "src/x.c");
  ASSERT_EQ(parsed.files[0].hunks.size(), 1u);
  EXPECT_EQ(parsed.files[0].hunks[0].old_lines, (std::vector<std::string>{"keep", "old"}));
  EXPECT_EQ(parsed.files[0].hunks[0].new_lines, (std::vector<std::string>{"keep", "new"}));
  EXPECT_EQ(parsed.files[1].old_path, "");
  EXPECT_EQ(parsed.files[1].new_path, "new.txt");
  EXPECT_TRUE(parsed.files[1].hunks[0].new_no_newline);
  EXPECT_FALSE(parsed.files[1].hunks[0].old_no_newline);
  EXPECT_EQ(parsed.files[2].old_path, "plain.txt");
  EXPECT_EQ(parsed.files[2].hunks[0].old_start, 3u);
  EXPECT_TRUE(parsed.files[2].hunks[0].new_lines.empty());
}

TEST(MillforgeBuiltinsPatchFormat, RefusesMalformedPatches) {
  struct Case {
    const char* what;
    const char* patch;
    const char* message;
  };
  const Case cases[] = {
      {"no file sections", "just words\n", "no ---/+++ file sections"},
      {"a hunk without headers", "@@ -1 +1 @@\n-a\n+b\n", "without a ---/+++ file header"},
      {"--- without +++", "--- a\nnot a header\n", "must be followed by a +++"},
      {"a header without hunks", "--- a/x\n+++ b/x\n", "no hunks for x"},
      {"a malformed hunk header", "--- x\n+++ x\n@@ -1,a +1 @@\n", "malformed hunk header"},
      {"a hunk short of its counts", "--- x\n+++ x\n@@ -1,3 +1,3 @@\n a\n", "ends before"},
      {"a line beyond the counts", "--- x\n+++ x\n@@ -1 +1 @@\n-a\n+b\n+c\n", "outside any hunk"},
      {"a wrong line kind", "--- x\n+++ x\n@@ -1,2 +1,2 @@\n a\n*b\n", "does not fit"},
      {"a rename", "--- a/x\n+++ b/y\n@@ -1 +1 @@\n-a\n+b\n", "renames are not supported"},
      {"both sides /dev/null", "--- /dev/null\n+++ /dev/null\n@@ -0,0 +1 @@\n+a\n", "both sides"},
      {"a quoted path", "--- \"a/x y\"\n+++ \"b/x y\"\n@@ -1 +1 @@\n-a\n+b\n", "quoted paths"},
      {"a line after the end marker", "--- x\n+++ x\n@@ -1,2 +1,2 @@\n-a\n\\ No newline\n b\n+c\n",
       "follows"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    auto parsed = mf::tools::parse_patch(c.patch);
    EXPECT_TRUE(parsed.files.empty());
    EXPECT_TRUE(contains(parsed.error, c.message)) << parsed.error;
  }
}

TEST(MillforgeBuiltinsPatchFormat, AppliesHunksWithOffsetsAndEndOfFileRules) {
  auto apply = [](std::string_view original, const std::string& patch) {
    auto parsed = mf::tools::parse_patch(patch);
    EXPECT_TRUE(parsed.error.empty()) << parsed.error;
    if (parsed.files.empty()) return mf::tools::PatchOutcome{{}, "unparsed"};
    return mf::tools::apply_hunks(original, parsed.files[0].hunks, "f");
  };
  // Two hunks; the file has gained two lines above the first since the diff was made.
  auto r = apply("x\ny\na\nb\nc\nd\ne\nf\ng\n",
                 "--- f\n+++ f\n@@ -1,2 +1,2 @@\n a\n-b\n+B\n@@ -5,2 +5,3 @@\n e\n+E2\n f\n");
  ASSERT_TRUE(r.error.empty()) << r.error;
  EXPECT_EQ(r.content, "x\ny\na\nB\nc\nd\ne\nE2\nf\ng\n");

  // A stated line far past the end: the search starts at the end and finds the line.
  r = apply("a\nb\n", "--- f\n+++ f\n@@ -999999999 +999999999 @@\n-a\n+A\n");
  ASSERT_TRUE(r.error.empty()) << r.error;
  EXPECT_EQ(r.content, "A\nb\n");

  // A context line that is not in the file: the hunk does not apply.
  r = apply("a\nb\n", "--- f\n+++ f\n@@ -1,2 +1,2 @@\n a\n-c\n+C\n");
  EXPECT_TRUE(contains(r.error, "Hunk 1 of f")) << r.error;
  EXPECT_TRUE(contains(r.error, "does not apply")) << r.error;
  // Hunks apply in order: a second hunk cannot match above the first.
  r = apply("a\nb\nc\n", "--- f\n+++ f\n@@ -3 +3 @@\n-c\n+C\n@@ -1 +1 @@\n-a\n+A\n");
  EXPECT_TRUE(contains(r.error, "Hunk 2 of f")) << r.error;

  // The end of the file: the marker must agree with the file, and sets how the result ends.
  r = apply("a\nb", "--- f\n+++ f\n@@ -2 +2 @@\n-b\n\\ No newline at end of file\n+b\n");
  ASSERT_TRUE(r.error.empty()) << r.error;
  EXPECT_EQ(r.content, "a\nb\n");
  r = apply("a\nb\n", "--- f\n+++ f\n@@ -2 +2 @@\n-b\n\\ No newline at end of file\n+B\n");
  EXPECT_FALSE(r.error.empty()) << "the file does end with a newline";
  r = apply("a\nb", "--- f\n+++ f\n@@ -2 +2 @@\n-b\n+B\n");
  EXPECT_FALSE(r.error.empty()) << "the file does not end with a newline";
  r = apply("a\nb\n", "--- f\n+++ f\n@@ -1,2 +1,2 @@\n a\n-b\n+B\n\\ No newline at end of file\n");
  ASSERT_TRUE(r.error.empty()) << r.error;
  EXPECT_EQ(r.content, "a\nB");
  // Pure insertion after line 1, and deletion of the last lines.
  r = apply("a\nb\n", "--- f\n+++ f\n@@ -1,0 +2 @@\n+ins\n");
  ASSERT_TRUE(r.error.empty()) << r.error;
  EXPECT_EQ(r.content, "a\nins\nb\n");
  r = apply("a\nb\nc\n", "--- f\n+++ f\n@@ -2,2 +2,0 @@\n-b\n-c\n");
  ASSERT_TRUE(r.error.empty()) << r.error;
  EXPECT_EQ(r.content, "a\n");
  // CR is content: a CRLF file needs a CRLF patch.
  r = apply("a\r\nb\r\n", "--- f\n+++ f\n@@ -1 +1 @@\n-a\n+A\n");
  EXPECT_FALSE(r.error.empty());
  r = apply("a\r\nb\r\n", "--- f\n+++ f\n@@ -1 +1 @@\n-a\r\n+A\r\n");
  ASSERT_TRUE(r.error.empty()) << r.error;
  EXPECT_EQ(r.content, "A\r\nb\r\n");
}

// --- workspace.apply_patch ----------------------------------------------------------------------

TEST_F(MillforgeBuiltins, ApplyPatchModifiesCreatesAndDeletes) {
  put_ws("src/lib.c", "int a = 1;\nint b = 2;\nint c = 3;\n");
  put_ws("old.txt", "bye\n");
  ASSERT_EQ(::chmod((root_ / "src/lib.c").c_str(), 0751), 0);
  const std::string patch =
      "diff --git a/src/lib.c b/src/lib.c\n"
      "--- a/src/lib.c\n"
      "+++ b/src/lib.c\n"
      "@@ -1,3 +1,3 @@\n"
      " int a = 1;\n"
      "-int b = 2;\n"
      "+int b = 20;\n"
      " int c = 3;\n"
      "--- /dev/null\n"
      "+++ b/docs/new/notes.md\n"
      "@@ -0,0 +1,2 @@\n"
      "+# Notes\n"
      "+b is now 20\n"
      "--- a/old.txt\n"
      "+++ /dev/null\n"
      "@@ -1 +0,0 @@\n"
      "-bye\n";
  Execution e = once("builtin.workspace.apply_patch", Object{{"patch", patch}});
  ASSERT_FALSE(e.result.is_error) << e.result.text;
  EXPECT_EQ(ws_file("src/lib.c"), "int a = 1;\nint b = 20;\nint c = 3;\n");
  EXPECT_EQ(ws_file("docs/new/notes.md"), "# Notes\nb is now 20\n");
  EXPECT_FALSE(fs::exists(root_ / "old.txt"));
  struct stat st {};
  ASSERT_EQ(::stat((root_ / "src/lib.c").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0751u) << "the file keeps its mode";
  EXPECT_EQ(*e.result.details.find("changed_paths"),
            (Value(Array{"src/lib.c", "docs/new/notes.md", "old.txt"})));
  EXPECT_EQ(*e.result.details.find("hunks"), Value(3));
  EXPECT_EQ(e.result.text,
            "Applied 3 hunks to 3 files\nM src/lib.c\nA docs/new/notes.md\nD old.txt");
  EXPECT_EQ(e.record.side_effect_certainty, "confirmed_complete");
  // No temporary file is left beside the patched ones.
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(root_ / "src")) {
    names.push_back(entry.path().filename().string());
  }
  EXPECT_EQ(names, std::vector<std::string>{"lib.c"});
}

TEST_F(MillforgeBuiltins, ApplyPatchWritesNothingWhenAnyHunkFails) {
  put_ws("a.txt", "one\ntwo\n");
  put_ws("b.txt", "three\nfour\n");
  const std::string patch =
      "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n-one\n+ONE\n two\n"
      "--- /dev/null\n+++ b/c.txt\n@@ -0,0 +1 @@\n+new\n"
      "--- a/b.txt\n+++ b/b.txt\n@@ -1,2 +1,2 @@\n-three\n+THREE\n fuor\n";
  Execution e = once("builtin.workspace.apply_patch", Object{{"patch", patch}});
  ASSERT_TRUE(e.result.is_error);
  EXPECT_TRUE(contains(e.result.text, "Hunk 1 of b.txt")) << e.result.text;
  EXPECT_EQ(status_of(e), "soft_failure");
  EXPECT_EQ(e.record.side_effect_certainty, "not_attempted");
  EXPECT_EQ(ws_file("a.txt"), "one\ntwo\n");
  EXPECT_EQ(ws_file("b.txt"), "three\nfour\n");
  EXPECT_FALSE(fs::exists(root_ / "c.txt"));
}

TEST_F(MillforgeBuiltins, ApplyPatchRefusesAdversarialPaths) {
  put(base_ / "outside" / "target.txt", "outside\n");
  put_ws("inside.txt", "inside\n");
  fs::create_symlink(base_ / "outside" / "target.txt", root_ / "out-link.txt");
  fs::create_symlink(root_ / "inside.txt", root_ / "in-link.txt");
  fs::create_symlink(base_ / "outside", root_ / "out-dir");
  put_ws("dir/file.txt", "f\n");
  const std::string outside_abs = fs::canonical(base_ / "outside" / "target.txt").string();
  const std::string inside_abs = (root_ / "inside.txt").string();
  auto modify = [](const std::string& path) {
    return "--- " + path + "\n+++ " + path + "\n@@ -1 +1 @@\n-outside\n+owned\n";
  };
  struct Case {
    std::string what;
    std::string patch;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"../ escape", modify("../outside/target.txt"), "Path escapes the workspace"},
      {"../ escape behind git prefixes",
       "--- a/../outside/target.txt\n+++ b/../outside/target.txt\n@@ -1 +1 @@\n-outside\n+owned\n",
       "Path escapes the workspace"},
      {"deep ../ escape", modify("dir/../../outside/target.txt"), "Path escapes the workspace"},
      {"absolute path outside", modify(outside_abs), "Absolute paths are not allowed"},
      {"absolute path inside", modify(inside_abs), "Absolute paths are not allowed"},
      {"symlink to a file outside", modify("out-link.txt"), "is a symbolic link"},
      {"symlink to a file inside", modify("in-link.txt"), "is a symbolic link"},
      {"directory symlink leading out", modify("out-dir/target.txt"), "Path escapes the workspace"},
      {"creation through a directory symlink",
       "--- /dev/null\n+++ b/out-dir/planted.txt\n@@ -0,0 +1 @@\n+x\n",
       "Path escapes the workspace"},
      {"creation over a symlink", "--- /dev/null\n+++ b/out-link.txt\n@@ -0,0 +1 @@\n+x\n",
       "already exists"},
      {"creation over a file", "--- /dev/null\n+++ b/inside.txt\n@@ -0,0 +1 @@\n+x\n",
       "already exists"},
      {"the workspace root", modify("."), "cannot change the workspace root"},
      {"a directory", modify("dir"), "Not a regular file"},
      {"a missing file", modify("nope.txt"), "ENOENT"},
      {"a home path", modify("~/x"), "Path escapes the workspace"},
      {"one file twice",
       "--- inside.txt\n+++ inside.txt\n@@ -1 +1 @@\n-inside\n+a\n"
       "--- ./inside.txt\n+++ ./inside.txt\n@@ -1 +1 @@\n-inside\n+b\n",
       "changes inside.txt twice"},
      {"a deletion that leaves content", "--- a/dir/file.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-g\n",
       "does not apply"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    Execution e = once("builtin.workspace.apply_patch", Object{{"patch", c.patch}});
    ASSERT_TRUE(e.result.is_error);
    EXPECT_TRUE(contains(e.result.text, c.message)) << e.result.text;
    EXPECT_EQ(e.record.side_effect_certainty, "not_attempted");
  }
  EXPECT_EQ(slurp(base_ / "outside" / "target.txt"), "outside\n");
  EXPECT_FALSE(fs::exists(base_ / "outside" / "planted.txt"));
  EXPECT_EQ(ws_file("inside.txt"), "inside\n");
  EXPECT_TRUE(fs::is_symlink(root_ / "in-link.txt"));
  EXPECT_TRUE(fs::is_symlink(root_ / "out-link.txt"));
  EXPECT_EQ(ws_file("dir/file.txt"), "f\n");
}

// --- shell profiles -----------------------------------------------------------------------------

Value profiles_request(Object profiles) {
  return Object{{"instruction", "run"},
                {"context", Object{{"shell_profiles", std::move(profiles)}}}};
}

Value argv(std::initializer_list<const char*> words) {
  Array out;
  for (const char* w : words) out.push_back(w);
  return Object{{"argv", std::move(out)}};
}

TEST_F(MillforgeBuiltins, RunTestsRunsTheNamedProfileInTheWorkspace) {
  const Value request = profiles_request({{"unit", argv({"sh", "-c", "pwd; echo ok >&2"})},
                                          {"bad", argv({"sh", "-c", "echo broken; exit 3"})}});
  Execution e = once("builtin.shell.run_tests", Object{{"profile", "unit"}}, request);
  ASSERT_FALSE(e.result.is_error) << e.result.text;
  EXPECT_EQ(status_of(e), "success");
  EXPECT_EQ(*e.result.details.find("exit_code"), Value(0));
  EXPECT_EQ(*e.result.details.find("output"), Value(root_.string() + "\nok\n"));
  EXPECT_EQ(*e.result.details.find("truncated"), Value(false));
  EXPECT_TRUE(contains(e.result.text, "Profile unit passed (exit code 0)")) << e.result.text;
  EXPECT_EQ(e.record.execution_status, "success");

  e = once("builtin.shell.run_tests", Object{{"profile", "bad"}}, request);
  ASSERT_TRUE(e.result.is_error);
  EXPECT_EQ(status_of(e), "soft_failure");
  EXPECT_EQ(*e.result.details.find("exit_code"), Value(3));
  EXPECT_EQ(*e.result.details.find("output"), Value("broken\n"));
  EXPECT_TRUE(contains(e.result.text, "broken\n\n\nProfile bad failed: exit code 3"))
      << e.result.text;
  EXPECT_EQ(e.record.execution_status, "soft_failure");
  EXPECT_EQ(e.record.side_effect_certainty, "completion_unknown");
}

TEST_F(MillforgeBuiltins, ShellProfilesRefuseWhatTheRequestDoesNotDefine) {
  fs::path marker = base_ / "ran";
  const std::string touch = "touch " + marker.string();
  struct Case {
    std::string what;
    Value request;
    std::string profile;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"no request", Value(), "unit", "defines no shell profiles"},
      {"no profiles", Object{{"context", Object{}}}, "unit", "defines no shell profiles"},
      {"unknown profile", profiles_request({{"unit", argv({"true"})}, {"lint", argv({"true"})}}),
       "sh -c '" + touch + "'",
       "Unknown profile \"sh -c '" + touch + "'\"; the request defines: unit, lint"},
      {"argv not a list", profiles_request({{"unit", Object{{"argv", "sh -c " + touch}}}}), "unit",
       "must be an object {\"argv\""},
      {"an extra member",
       profiles_request({{"unit", Object{{"argv", Array{"true"}}, {"shell", true}}}}), "unit",
       "must be an object {\"argv\""},
      {"empty argv", profiles_request({{"unit", Object{{"argv", Array{}}}}}), "unit",
       "must be an object {\"argv\""},
      {"a non-string word", profiles_request({{"unit", Object{{"argv", Array{"echo", 1}}}}}),
       "unit", "every argv entry must be a string"},
      {"no program", profiles_request({{"unit", argv({""})}}), "unit", "names no program"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    Execution e = once("builtin.shell.run_tests", Object{{"profile", c.profile}}, c.request);
    ASSERT_TRUE(e.result.is_error);
    EXPECT_TRUE(contains(e.result.text, c.message)) << e.result.text;
    EXPECT_EQ(e.record.side_effect_certainty, "not_attempted");
  }
  // A program that does not exist fails to start: a hard failure with nothing run.
  Execution e = once("builtin.shell.run_tests", Object{{"profile", "unit"}},
                     profiles_request({{"unit", argv({"/nonexistent/mf-no-such-program"})}}));
  ASSERT_TRUE(e.result.is_error);
  EXPECT_EQ(status_of(e), "hard_failure");
  EXPECT_FALSE(fs::exists(marker));

  // Under the bwrap sandbox profiles are refused rather than run unconfined.
  context_.sandbox = true;
  e = once("builtin.shell.run_tests", Object{{"profile", "unit"}},
           profiles_request({{"unit", argv({"sh", "-c", touch.c_str()})}}));
  ASSERT_TRUE(e.result.is_error);
  EXPECT_TRUE(contains(e.result.text, "bwrap sandbox")) << e.result.text;
  EXPECT_FALSE(fs::exists(marker));
}

TEST_F(MillforgeBuiltins, ShellOutputIsATailAndTheDeadlineKillsTheRun) {
  const Value request = profiles_request({{"loud", argv({"sh", "-c",
                                                         "i=0; while [ $i -lt 3000 ]; do "
                                                         "echo line-$i-xxxxxxxxxxxxxxxxxxxxxxxxx; "
                                                         "i=$((i+1)); done"})},
                                          {"slow", argv({"sh", "-c", "sleep 30"})}});
  Execution e = once("builtin.shell.run_static_check", Object{{"profile", "loud"}}, request);
  ASSERT_FALSE(e.result.is_error) << e.result.text.substr(0, 200);
  const std::string& output = e.result.details.find("output")->as_string();
  EXPECT_EQ(*e.result.details.find("truncated"), Value(true));
  EXPECT_LE(output.size(), 32u * 1024);
  EXPECT_TRUE(contains(output, "line-2999-")) << "the tail is kept";
  EXPECT_FALSE(contains(output, "line-0-")) << "the head is not";

  context_.deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(500);
  const auto started = std::chrono::steady_clock::now();
  e = once("builtin.shell.run_tests", Object{{"profile", "slow"}}, request);
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(10));
  ASSERT_TRUE(e.result.is_error);
  EXPECT_EQ(status_of(e), "hard_failure");
  EXPECT_TRUE(contains(e.result.text, "timed out")) << e.result.text;
  EXPECT_EQ(e.record.execution_status, "timed_out");
}

TEST_F(MillforgeBuiltins, EachShellToolNeedsItsOwnCapability) {
  const Value request = profiles_request({{"unit", argv({"true"})}});
  ToolExecutor ex =
      executor({bind("builtin.shell.run_tests"), bind("builtin.shell.run_static_check")}, request,
               {"process.test"});
  EXPECT_FALSE(call(ex, "run_test_profile", Object{{"profile", "unit"}}).result.is_error);
  Execution e = call(ex, "run_static_check_profile", Object{{"profile", "unit"}});
  EXPECT_TRUE(e.record.denied);
  EXPECT_TRUE(contains(e.result.text, "process.static_check")) << e.result.text;
}

// --- artifact writers ---------------------------------------------------------------------------

TEST_F(MillforgeBuiltins, ArtifactWritersWriteTheirArtifact) {
  struct Case {
    const char* tool_id;
    const char* field;
    const char* artifact;
  };
  for (const Case& c : {Case{"builtin.artifact.write_plan", "plan", "plan"},
                        Case{"builtin.artifact.write_patch_summary", "summary", "patch_summary"},
                        Case{"builtin.artifact.write_test_results", "results", "test_results"}}) {
    SCOPED_TRACE(c.tool_id);
    const std::string content = std::string("# ") + c.artifact + "\n\nbody\n";
    // On a plan node that produces it.
    ToolExecutor ex = executor({bind(c.tool_id, "node", {c.artifact})});
    Execution e = call(ex, builtin(c.tool_id).model_tool_name, Object{{c.field, content}});
    ASSERT_FALSE(e.result.is_error) << e.result.text;
    EXPECT_EQ(slurp(artifacts_ / c.artifact), content);
    EXPECT_EQ(*e.result.details.find("artifact_id"), Value(c.artifact));
    EXPECT_EQ(*e.result.details.find("bytes"), Value(static_cast<int>(content.size())));
    EXPECT_EQ(status_of(e), "success");
    fs::remove(artifacts_ / c.artifact);

    // A plan node that does not list the artifact cannot write it.
    ToolExecutor other = executor({bind(c.tool_id, "node", {"something_else"})});
    e = call(other, builtin(c.tool_id).model_tool_name, Object{{c.field, content}});
    ASSERT_TRUE(e.result.is_error);
    EXPECT_TRUE(contains(e.result.text, std::string("does not produce artifact ") + c.artifact))
        << e.result.text;
    EXPECT_FALSE(fs::exists(artifacts_ / c.artifact));
  }
  // A call outside a plan (mf-run tool) writes the tool's artifact.
  Execution e = once("builtin.artifact.write_plan", Object{{"plan", "p"}});
  ASSERT_FALSE(e.result.is_error) << e.result.text;
  EXPECT_EQ(slurp(artifacts_ / "plan"), "p");
  // Without an artifact directory nothing is written.
  ExecutorOptions options;
  options.granted_capabilities = kAllCapabilities;
  ToolExecutor no_dir({bind("builtin.artifact.write_plan")}, context_, options);
  e = call(no_dir, "write_plan_artifact", Object{{"plan", "p"}});
  ASSERT_TRUE(e.result.is_error);
  EXPECT_TRUE(contains(e.result.text, "No artifact directory")) << e.result.text;
}

TEST_F(MillforgeBuiltins, WriteVerdictWritesTheNodesVerdict) {
  // Two produced verdicts: the call names one.
  ToolExecutor both = executor(
      {bind("builtin.artifact.write_verdict", "verdict", {"arbiter_verdict", "checker_verdict"})});
  Execution e = call(both, "write_verdict_artifact", Object{{"verdict", "accept"}});
  ASSERT_TRUE(e.result.is_error);
  EXPECT_TRUE(contains(e.result.text, "produces arbiter_verdict, checker_verdict"))
      << e.result.text;
  e = call(both, "write_verdict_artifact",
           Object{{"verdict", "accept"}, {"artifact_id", "checker_verdict"}});
  ASSERT_FALSE(e.result.is_error) << e.result.text;
  EXPECT_EQ(slurp(artifacts_ / "checker_verdict"), "accept");
  EXPECT_FALSE(fs::exists(artifacts_ / "arbiter_verdict"));
  e = call(both, "write_verdict_artifact", Object{{"verdict", "x"}, {"artifact_id", "plan"}});
  EXPECT_TRUE(e.record.denied) << "outside the schema's enum";

  // One produced verdict: it is the default; naming another is refused.
  ToolExecutor one =
      executor({bind("builtin.artifact.write_verdict", "verdict", {"arbiter_verdict"})});
  e = call(one, "write_verdict_artifact", Object{{"verdict", "reject"}});
  ASSERT_FALSE(e.result.is_error) << e.result.text;
  EXPECT_EQ(slurp(artifacts_ / "arbiter_verdict"), "reject");
  e = call(one, "write_verdict_artifact",
           Object{{"verdict", "x"}, {"artifact_id", "checker_verdict"}});
  ASSERT_TRUE(e.result.is_error);
  EXPECT_TRUE(contains(e.result.text, "does not produce artifact checker_verdict"))
      << e.result.text;
  EXPECT_EQ(slurp(artifacts_ / "checker_verdict"), "accept");
}

TEST_F(MillforgeBuiltins, ArtifactWritesNeverFollowALinkOut) {
  put(base_ / "outside" / "victim", "keep\n");
  fs::create_symlink(base_ / "outside" / "victim", artifacts_ / "plan");
  Execution e = once("builtin.artifact.write_plan", Object{{"plan", "new"}});
  ASSERT_TRUE(e.result.is_error);
  EXPECT_TRUE(contains(e.result.text, "Could not write artifact plan")) << e.result.text;
  EXPECT_EQ(status_of(e), "soft_failure");
  EXPECT_EQ(slurp(base_ / "outside" / "victim"), "keep\n");
  EXPECT_TRUE(fs::is_symlink(artifacts_ / "plan"));
}

// --- terminal.submit ----------------------------------------------------------------------------

TEST_F(MillforgeBuiltins, SubmitRecordsTheNodesTerminalResult) {
  put(artifacts_ / "plan", "the plan");
  ToolExecutor ex = executor({bind("builtin.terminal.submit", "complete", {}, "PLANNER_COMPLETE")});
  Execution e = call(ex, "submit_terminal_intent",
                     Object{{"terminal_result", "BUILDER_COMPLETE"}, {"summary", "s"}});
  ASSERT_TRUE(e.result.is_error);
  EXPECT_TRUE(contains(e.result.text, "submits PLANNER_COMPLETE, not BUILDER_COMPLETE"))
      << e.result.text;
  e = call(ex, "submit_terminal_intent",
           Object{{"terminal_result", "PLANNER_COMPLETE"},
                  {"summary", "planned"},
                  {"artifact_refs", Array{"missing"}}});
  ASSERT_TRUE(e.result.is_error);
  EXPECT_TRUE(contains(e.result.text, "artifact missing, which does not exist")) << e.result.text;
  e = call(ex, "submit_terminal_intent",
           Object{{"terminal_result", "PLANNER_COMPLETE"},
                  {"summary", "planned"},
                  {"artifact_refs", Array{"../plan"}}});
  ASSERT_TRUE(e.result.is_error);
  EXPECT_TRUE(contains(e.result.text, "Invalid artifact id")) << e.result.text;
  e = call(ex, "submit_terminal_intent", Object{{"terminal_result", "PLANNER_COMPLETE"}});
  EXPECT_TRUE(e.record.denied) << "summary is required";

  e = call(ex, "submit_terminal_intent",
           Object{{"terminal_result", "PLANNER_COMPLETE"},
                  {"summary", "planned"},
                  {"artifact_refs", Array{"plan"}}});
  ASSERT_FALSE(e.result.is_error) << e.result.text;
  EXPECT_EQ(e.result.text, "Terminal intent recorded: PLANNER_COMPLETE");
  EXPECT_EQ(canon(e.result.details),
            R"({"artifact_refs":["plan"],"status":"success","summary":"planned",)"
            R"("terminal_result":"PLANNER_COMPLETE"})");
  ASSERT_NE(e.record.binding, nullptr);
  EXPECT_EQ(e.record.binding->tool.side_effect_class, mf::tools::SideEffect::Terminal);
}

// --- workspace.list_files -----------------------------------------------------------------------

std::vector<std::string> strings(const Value* v) {
  std::vector<std::string> out;
  if (v == nullptr || !v->is_array()) return out;
  for (const Value& item : v->as_array()) out.push_back(item.as_string());
  return out;
}

using Paths = std::vector<std::string>;

TEST_F(MillforgeBuiltins, ListFilesListsEveryRegularFileInPathOrder) {
  put_ws("b.txt", "b");
  put_ws("src/main.py", "m");
  put_ws("src/deep/util.py", "u");
  put_ws(".hidden", "h");
  put_ws("build/out.o", "o");
  put_ws(".gitignore", "build/\n*.txt\n");
  put_ws(".git/config", "[core]\n");
  fs::create_directories(root_ / "empty");
  fs::create_symlink(root_ / "b.txt", root_ / "b-link.txt");
  Execution e = once("builtin.workspace.list_files", Object{{"root", "."}});
  ASSERT_FALSE(e.result.is_error) << e.result.text;
  EXPECT_EQ(status_of(e), "success");
  // Ignored files are listed, git's store and links are not.
  const Paths all = {".gitignore",  ".hidden",          "b.txt",
                     "build/out.o", "src/deep/util.py", "src/main.py"};
  EXPECT_EQ(strings(e.result.details.find("paths")), all);
  EXPECT_EQ(*e.result.details.find("truncated"), Value(false));
  EXPECT_EQ(e.result.text,
            ".gitignore\n.hidden\nb.txt\nbuild/out.o\nsrc/deep/util.py\nsrc/main.py");
  EXPECT_EQ(*e.result.details.find("summary"), Value("Listed 6 files under ."));

  // A glob matches the workspace-relative path or the file name.
  e = once("builtin.workspace.list_files", Object{{"root", "."}, {"glob", "*.py"}});
  EXPECT_EQ(strings(e.result.details.find("paths")), (Paths{"src/deep/util.py", "src/main.py"}));
  e = once("builtin.workspace.list_files", Object{{"root", "."}, {"glob", "src/*.py"}});
  EXPECT_EQ(strings(e.result.details.find("paths")), (Paths{"src/main.py"}));
  e = once("builtin.workspace.list_files", Object{{"root", "."}, {"glob", "src/**"}});
  EXPECT_EQ(strings(e.result.details.find("paths")), (Paths{"src/deep/util.py", "src/main.py"}));
  // Paths stay workspace-relative under a narrower root.
  e = once("builtin.workspace.list_files", Object{{"root", "src/deep"}});
  EXPECT_EQ(strings(e.result.details.find("paths")), (Paths{"src/deep/util.py"}));
  e = once("builtin.workspace.list_files", Object{{"root", "empty"}});
  ASSERT_FALSE(e.result.is_error) << e.result.text;
  EXPECT_EQ(strings(e.result.details.find("paths")), Paths{});
  EXPECT_EQ(e.result.text, "No files found under empty");

  // max_results: exactly as many is not a cut, fewer is.
  e = once("builtin.workspace.list_files", Object{{"root", "src"}, {"max_results", 2}});
  EXPECT_EQ(*e.result.details.find("truncated"), Value(false));
  e = once("builtin.workspace.list_files", Object{{"root", "."}, {"max_results", 2}});
  EXPECT_EQ(strings(e.result.details.find("paths")), (Paths{".gitignore", ".hidden"}));
  EXPECT_EQ(*e.result.details.find("truncated"), Value(true));
  EXPECT_TRUE(contains(e.result.text, "[The first 2 files;")) << e.result.text;
  e = once("builtin.workspace.list_files", Object{{"root", "."}, {"max_results", 1001}});
  EXPECT_TRUE(e.record.denied) << "above the schema's maximum";
  e = once("builtin.workspace.list_files", Object{});
  EXPECT_TRUE(e.record.denied) << "root is required";

  e = once("builtin.workspace.list_files", Object{{"root", "."}, {"glob", "src/[a"}});
  ASSERT_TRUE(e.result.is_error);
  EXPECT_TRUE(contains(e.result.text, "error parsing glob 'src/[a'")) << e.result.text;
  e = once("builtin.workspace.list_files", Object{{"root", "b.txt"}});
  ASSERT_TRUE(e.result.is_error);
  EXPECT_EQ(e.result.text, "Not a directory: b.txt");
  EXPECT_EQ(status_of(e), "soft_failure");
  e = once("builtin.workspace.list_files", Object{{"root", "nope"}});
  ASSERT_TRUE(e.result.is_error);
  EXPECT_TRUE(contains(e.result.text, "Path not found")) << e.result.text;
}

// Every way out of the workspace is refused, and nothing outside is listed or read, as root too:
// containment is the kernel's (RESOLVE_BENEATH), which root does not bypass.
TEST_F(MillforgeBuiltins, ListFilesAndSearchRefuseEveryWayOut) {
  put(base_ / "outside" / "secret.txt", "needle: top secret\n");
  put_ws("inside.txt", "needle inside\n");
  fs::create_symlink(base_ / "outside", root_ / "dirlink");
  fs::create_symlink(base_ / "outside" / "secret.txt", root_ / "filelink.txt");
  const std::string outside_abs = fs::canonical(base_ / "outside").string();
  for (const std::string& root :
       {std::string(".."), std::string("../outside"), std::string("sub/../../outside"), outside_abs,
        std::string("/"), std::string("dirlink"), std::string("~"), std::string("~/"),
        std::string("@../outside"), "file://" + outside_abs}) {
    SCOPED_TRACE(root);
    Execution e = once("builtin.workspace.list_files", Object{{"root", root}});
    ASSERT_TRUE(e.result.is_error);
    EXPECT_TRUE(contains(e.result.text, "Path escapes the workspace")) << e.result.text;
    EXPECT_FALSE(contains(e.result.text, "secret"));
    EXPECT_EQ(status_of(e), "soft_failure");
    e = once("builtin.workspace.search_text", Object{{"query", "needle"}, {"root", root}});
    ASSERT_TRUE(e.result.is_error);
    EXPECT_TRUE(contains(e.result.text, "Path escapes the workspace")) << e.result.text;
    EXPECT_FALSE(contains(e.result.text, "top secret"));
  }
  // Links inside are never followed: neither listed nor searched.
  Execution e = once("builtin.workspace.list_files", Object{{"root", "."}});
  EXPECT_EQ(strings(e.result.details.find("paths")), (Paths{"inside.txt"}));
  e = once("builtin.workspace.search_text", Object{{"query", "needle"}});
  ASSERT_FALSE(e.result.is_error) << e.result.text;
  EXPECT_EQ(canon(*e.result.details.find("matches")),
            R"([{"line":1,"path":"inside.txt","snippet":"needle inside"}])");
  EXPECT_FALSE(contains(e.result.text, "top secret"));
  // An absolute path inside the workspace names the same directory.
  e = once("builtin.workspace.list_files", Object{{"root", root_.string()}});
  EXPECT_EQ(strings(e.result.details.find("paths")), (Paths{"inside.txt"}));
}

// --- workspace.search_text ----------------------------------------------------------------------

TEST_F(MillforgeBuiltins, SearchTextFindsLiteralLines) {
  put_ws("a.txt", "one needle\ntwo\r\nthree needle.*\rfour\nneedle");
  put_ws("src/b.py", "# Needle\nx = 'needle'\n");
  put_ws("ignored.log", "needle in an ignored file\n");
  put_ws(".gitignore", "*.log\n");
  put_ws(".git/HEAD", "needle in git's store\n");
  put_ws("bad.txt", "\xFF needle \xFE\n");
  Execution e = once("builtin.workspace.search_text", Object{{"query", "needle"}});
  ASSERT_FALSE(e.result.is_error) << e.result.text;
  EXPECT_EQ(status_of(e), "success");
  // Lines end at \n, \r\n and \r; matching is literal and case-sensitive; invalid UTF-8 is
  // replaced; ignore files hide nothing.
  EXPECT_EQ(canon(*e.result.details.find("matches")),
            R"([{"line":1,"path":"a.txt","snippet":"one needle"},)"
            R"({"line":3,"path":"a.txt","snippet":"three needle.*"},)"
            R"({"line":5,"path":"a.txt","snippet":"needle"},)"
            R"({"line":1,"path":"bad.txt","snippet":")"
            "\xEF\xBF\xBD needle \xEF\xBF\xBD"
            R"("},)"
            R"({"line":1,"path":"ignored.log","snippet":"needle in an ignored file"},)"
            R"({"line":2,"path":"src/b.py","snippet":"x = 'needle'"}])");
  EXPECT_EQ(*e.result.details.find("truncated"), Value(false));
  EXPECT_TRUE(contains(e.result.text, "a.txt:3: three needle.*\n")) << e.result.text;
  EXPECT_EQ(*e.result.details.find("summary"), Value("Found 6 matching lines"));

  // A regex-looking query is a literal.
  e = once("builtin.workspace.search_text", Object{{"query", "needle.*"}});
  EXPECT_EQ(e.result.details.find("matches")->as_array().size(), 1u);
  e = once("builtin.workspace.search_text", Object{{"query", "needle"}, {"glob", "*.py"}});
  EXPECT_EQ(canon(*e.result.details.find("matches")),
            R"([{"line":2,"path":"src/b.py","snippet":"x = 'needle'"}])");
  e = once("builtin.workspace.search_text", Object{{"query", "needle"}, {"root", "src"}});
  EXPECT_EQ(e.result.details.find("matches")->as_array().size(), 1u);
  e = once("builtin.workspace.search_text", Object{{"query", "absent"}});
  ASSERT_FALSE(e.result.is_error);
  EXPECT_EQ(e.result.text, "No matches found");
  EXPECT_EQ(*e.result.details.find("matches"), Value(Array{}));

  e = once("builtin.workspace.search_text", Object{{"query", "needle"}, {"max_results", 2}});
  EXPECT_EQ(e.result.details.find("matches")->as_array().size(), 2u);
  EXPECT_EQ(*e.result.details.find("truncated"), Value(true));
  EXPECT_TRUE(contains(e.result.text, "[The first 2 matching lines;")) << e.result.text;
  e = once("builtin.workspace.search_text", Object{{"query", ""}});
  EXPECT_TRUE(e.record.denied) << "an empty query";

  // A snippet is the line's first 512 characters (code points, not bytes).
  std::string long_line = "needle ";
  for (int i = 0; i < 600; ++i) long_line += "\xC3\xA9";  // é
  put_ws("long.txt", long_line + "\n");
  e = once("builtin.workspace.search_text", Object{{"query", "needle"}, {"glob", "long.txt"}});
  ASSERT_EQ(e.result.details.find("matches")->as_array().size(), 1u);
  const std::string& snippet =
      e.result.details.find("matches")->as_array()[0].find("snippet")->as_string();
  EXPECT_EQ(snippet.size(), 7u + 2u * 505u);
  EXPECT_EQ(snippet, long_line.substr(0, 7 + 2 * 505));
}

TEST_F(MillforgeBuiltins, SearchTextNeedsBothCapabilities) {
  put_ws("a.txt", "needle\n");
  ToolExecutor ex = executor({bind("builtin.workspace.search_text")}, Value(), {"workspace.read"});
  Execution e = call(ex, "search_workspace_text", Object{{"query", "needle"}});
  EXPECT_TRUE(e.record.denied);
  EXPECT_TRUE(contains(e.result.text, "workspace.search")) << e.result.text;
}

// --- workspace.write_file -----------------------------------------------------------------------

TEST_F(MillforgeBuiltins, WriteFileWritesAtomicallyWithAnExpectedDigest) {
  // sha256("hello\n")
  const std::string hello = "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03";
  Execution e = once("builtin.workspace.write_file",
                     Object{{"path", "new/dir/a.txt"}, {"content", "hello\n"}});
  ASSERT_FALSE(e.result.is_error) << e.result.text;
  EXPECT_EQ(ws_file("new/dir/a.txt"), "hello\n");
  EXPECT_EQ(status_of(e), "success");
  EXPECT_EQ(*e.result.details.find("path"), Value("new/dir/a.txt"));
  EXPECT_EQ(*e.result.details.find("content_sha256"), Value(hello));
  EXPECT_EQ(e.result.text, "Created new/dir/a.txt (6 bytes)");
  EXPECT_EQ(e.record.side_effect_certainty, "confirmed_complete");

  // Replacing keeps the file's mode.
  ASSERT_EQ(::chmod((root_ / "new/dir/a.txt").c_str(), 0640), 0);
  e = once(
      "builtin.workspace.write_file",
      Object{{"path", "./new/dir/a.txt"}, {"content", "second\n"}, {"expected_sha256", hello}});
  ASSERT_FALSE(e.result.is_error) << e.result.text;
  EXPECT_EQ(ws_file("new/dir/a.txt"), "second\n");
  EXPECT_EQ(e.result.text, "Replaced new/dir/a.txt (7 bytes)");
  struct stat st {};
  ASSERT_EQ(::stat((root_ / "new/dir/a.txt").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);

  // A stale digest refuses the write and leaves the file.
  e = once("builtin.workspace.write_file",
           Object{{"path", "new/dir/a.txt"}, {"content", "third\n"}, {"expected_sha256", hello}});
  ASSERT_TRUE(e.result.is_error);
  EXPECT_TRUE(contains(e.result.text, "has changed: its SHA-256 is " +
                                          mf::hash::sha256_hex("second\n") + ", not the expected " +
                                          hello))
      << e.result.text;
  EXPECT_EQ(ws_file("new/dir/a.txt"), "second\n");
  EXPECT_EQ(e.record.side_effect_certainty, "not_attempted");
  // As Millforge: a new file has no digest to expect.
  e = once("builtin.workspace.write_file",
           Object{{"path", "fresh.txt"}, {"content", ""}, {"expected_sha256", hello}});
  ASSERT_FALSE(e.result.is_error) << e.result.text;
  EXPECT_TRUE(fs::is_regular_file(root_ / "fresh.txt"));

  // A hard link to an outside file: the workspace name is replaced, the outside name keeps its
  // bytes.
  put(base_ / "outside" / "linked.txt", "outside bytes\n");
  fs::create_hard_link(base_ / "outside" / "linked.txt", root_ / "hard.txt");
  e = once("builtin.workspace.write_file", Object{{"path", "hard.txt"}, {"content", "mine\n"}});
  ASSERT_FALSE(e.result.is_error) << e.result.text;
  EXPECT_EQ(ws_file("hard.txt"), "mine\n");
  EXPECT_EQ(slurp(base_ / "outside" / "linked.txt"), "outside bytes\n");
}

TEST_F(MillforgeBuiltins, WriteFileRefusesEveryWayOut) {
  put(base_ / "outside" / "target.txt", "outside\n");
  put_ws("inside.txt", "inside\n");
  fs::create_symlink(base_ / "outside" / "target.txt", root_ / "out-link.txt");
  fs::create_symlink(root_ / "inside.txt", root_ / "in-link.txt");
  fs::create_symlink(base_ / "outside" / "missing.txt", root_ / "dangling.txt");
  fs::create_symlink(base_ / "outside", root_ / "out-dir");
  fs::create_directories(root_ / "dir");
  ASSERT_EQ(::mkfifo((root_ / "fifo").c_str(), 0600), 0);
  const std::string outside_abs = fs::canonical(base_ / "outside").string() + "/target.txt";
  struct Case {
    std::string path;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"../outside/target.txt", "Path escapes the workspace"},
      {"dir/../../outside/target.txt", "Path escapes the workspace"},
      {outside_abs, "Path escapes the workspace"},
      {"/etc/mf-planted", "Path escapes the workspace"},
      {"~/planted", "Path escapes the workspace"},
      {"file://" + outside_abs, "Path escapes the workspace"},
      {"out-dir/target.txt", "Path escapes the workspace"},
      {"out-dir/planted.txt", "Path escapes the workspace"},
      {"out-dir/new/planted.txt", "Path escapes the workspace"},
      {"out-link.txt", "is a symbolic link"},
      {"in-link.txt", "is a symbolic link"},
      {"dangling.txt", "is a symbolic link"},
      {".", "cannot change the workspace root"},
      {"dir", "Not a regular file"},
      {"dir/", "cannot change a directory"},
      {"fifo", "Not a regular file"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.path);
    Execution e =
        once("builtin.workspace.write_file", Object{{"path", c.path}, {"content", "owned\n"}});
    ASSERT_TRUE(e.result.is_error);
    EXPECT_TRUE(contains(e.result.text, c.message)) << e.result.text;
    EXPECT_EQ(status_of(e), "soft_failure");
    EXPECT_EQ(e.record.side_effect_certainty, "not_attempted");
  }
  EXPECT_EQ(slurp(base_ / "outside" / "target.txt"), "outside\n");
  EXPECT_EQ(fs::directory_iterator(base_ / "outside") != fs::directory_iterator(), true);
  EXPECT_FALSE(fs::exists(base_ / "outside" / "planted.txt"));
  EXPECT_FALSE(fs::exists(base_ / "outside" / "new"));
  EXPECT_FALSE(fs::exists(base_ / "outside" / "missing.txt"));
  EXPECT_FALSE(fs::exists("/etc/mf-planted"));
  EXPECT_EQ(ws_file("inside.txt"), "inside\n");
  EXPECT_TRUE(fs::is_symlink(root_ / "out-link.txt"));
  EXPECT_TRUE(fs::is_symlink(root_ / "in-link.txt"));
  // Without the capability nothing is written.
  ToolExecutor ex = executor({bind("builtin.workspace.write_file")}, Value(), {"workspace.read"});
  Execution e = call(ex, "write_workspace_file", Object{{"path", "x.txt"}, {"content", "x"}});
  EXPECT_TRUE(e.record.denied);
  EXPECT_FALSE(fs::exists(root_ / "x.txt"));
}

// --- workspace.read_diff and the workspace_diff artifact ----------------------------------------

class MillforgeBuiltinsGit : public MillforgeBuiltins {
 protected:
  void SetUp() override {
    MillforgeBuiltins::SetUp();
    if (std::system("git --version >/dev/null 2>&1") != 0) GTEST_SKIP() << "git is not installed";
  }
  // Runs git in `dir`; the test fails when it does.
  static void git(const fs::path& dir, const std::string& args) {
    const std::string command = "git -C '" + dir.string() +
                                "' -c user.name=t -c user.email=t@example.com " + args +
                                " >/dev/null 2>&1";
    ASSERT_EQ(std::system(command.c_str()), 0) << command;
  }
  void commit_all(const fs::path& dir) {
    git(dir, "add -A");
    git(dir, "commit -q -m base");
  }
};

// A write tool may write the repository's configuration and attributes like any workspace file.
// A filter driver planted there would make git diff run a command outside every boundary: the
// read is refused and nothing runs.
TEST_F(MillforgeBuiltinsGit, ReadDiffRefusesAFilterDriverPlantedInTheRepository) {
  git(root_, "init -q");
  put_ws("a.txt", "one\n");
  commit_all(root_);
  const fs::path marker = root_.parent_path() / ("filter-ran-" + root_.filename().string());
  fs::remove(marker);
  git(root_, "config filter.evil.clean 'touch " + marker.string() + "; cat'");
  put_ws(".gitattributes", "*.txt filter=evil\n");
  put_ws("a.txt", "two\n");
  Execution e = once("builtin.workspace.read_diff", Object{});
  ASSERT_TRUE(e.result.is_error) << e.result.text;
  EXPECT_TRUE(contains(e.result.text, "filter driver (filter.evil.clean)")) << e.result.text;
  EXPECT_FALSE(fs::exists(marker)) << "git ran the planted filter";
  // Nor through a file the configuration includes, or a worktree's own configuration.
  git(root_, "config --unset filter.evil.clean");
  put_ws("more.cfg", "[filter \"evil\"]\n\tclean = touch " + marker.string() + "; cat\n");
  git(root_, "config include.path ../more.cfg");
  e = once("builtin.workspace.read_diff", Object{});
  ASSERT_TRUE(e.result.is_error) << e.result.text;
  EXPECT_TRUE(contains(e.result.text, "filter driver (filter.evil.clean)")) << e.result.text;
  git(root_, "config --unset include.path");
  git(root_, "config core.repositoryformatversion 1");
  git(root_, "config extensions.worktreeConfig true");
  git(root_, "config --worktree filter.evil.clean 'touch " + marker.string() + "; cat'");
  e = once("builtin.workspace.read_diff", Object{});
  ASSERT_TRUE(e.result.is_error) << e.result.text;
  EXPECT_TRUE(contains(e.result.text, "filter driver (filter.evil.clean)")) << e.result.text;
  EXPECT_FALSE(fs::exists(marker)) << "git ran the planted filter";
  // Without the configuration the attributes name nothing to run, and the diff is read.
  git(root_, "config --worktree --unset filter.evil.clean");
  e = once("builtin.workspace.read_diff", Object{});
  ASSERT_FALSE(e.result.is_error) << e.result.text;
  EXPECT_TRUE(contains(e.result.details.find("diff")->as_string(), "+two\n"));
  EXPECT_FALSE(fs::exists(marker));
}

TEST_F(MillforgeBuiltinsGit, ReadDiffShowsTheWorkTreesChanges) {
  git(root_, "init -q");
  put_ws("a.txt", "one\ntwo\n");
  put_ws("src/b.txt", "bee\n");
  commit_all(root_);
  Execution e = once("builtin.workspace.read_diff", Object{});
  ASSERT_FALSE(e.result.is_error) << e.result.text;
  EXPECT_EQ(*e.result.details.find("diff"), Value(""));
  EXPECT_EQ(e.result.text, "No uncommitted changes");
  EXPECT_EQ(*e.result.details.find("diff_sha256"), Value(mf::hash::sha256_hex("")));

  put_ws("a.txt", "one\n2\n");
  put_ws("src/b.txt", "bee\nmore\n");
  e = once("builtin.workspace.read_diff", Object{});
  ASSERT_FALSE(e.result.is_error) << e.result.text;
  const std::string diff = e.result.details.find("diff")->as_string();
  EXPECT_TRUE(contains(diff, "diff --git a/a.txt b/a.txt\n")) << diff;
  EXPECT_TRUE(contains(diff, "-two\n+2\n")) << diff;
  EXPECT_TRUE(contains(diff, "+more\n")) << diff;
  EXPECT_EQ(e.result.text, diff);
  EXPECT_EQ(*e.result.details.find("truncated"), Value(false));
  EXPECT_EQ(*e.result.details.find("diff_sha256"), Value(mf::hash::sha256_hex(diff)));
  EXPECT_EQ(status_of(e), "success");
  EXPECT_EQ(e.record.side_effect_certainty, "confirmed_absent");

  // Only the named paths; a pathspec is a literal path, never a pattern.
  e = once("builtin.workspace.read_diff", Object{{"paths", Array{"src"}}});
  ASSERT_FALSE(e.result.is_error) << e.result.text;
  EXPECT_TRUE(contains(e.result.details.find("diff")->as_string(), "+more\n"));
  EXPECT_FALSE(contains(e.result.details.find("diff")->as_string(), "a.txt"));
  e = once("builtin.workspace.read_diff", Object{{"paths", Array{"*.txt"}}});
  ASSERT_FALSE(e.result.is_error) << e.result.text;
  EXPECT_EQ(*e.result.details.find("diff"), Value(""));

  // max_bytes cuts the diff and says so.
  e = once("builtin.workspace.read_diff", Object{{"max_bytes", 20}});
  ASSERT_FALSE(e.result.is_error) << e.result.text;
  EXPECT_EQ(*e.result.details.find("diff"), Value(diff.substr(0, 20)));
  EXPECT_EQ(*e.result.details.find("truncated"), Value(true));
  EXPECT_TRUE(contains(e.result.text,
                       "[Showing the first 20 bytes of " + std::to_string(diff.size()) + ";"))
      << e.result.text;
  // A read leaves git's index alone.
  const auto index_time = fs::last_write_time(root_ / ".git" / "index");
  e = once("builtin.workspace.read_diff", Object{});
  EXPECT_EQ(fs::last_write_time(root_ / ".git" / "index"), index_time);
}

TEST_F(MillforgeBuiltinsGit, ReadDiffStaysInsideTheWorkspace) {
  // The workspace is a subdirectory of a repository whose other files changed: refused, since
  // git would show them.
  git(base_, "init -q");
  put(base_ / "outside" / "secret.txt", "secret v1\n");
  put_ws("a.txt", "a\n");
  commit_all(base_);
  put(base_ / "outside" / "secret.txt", "secret v2\n");
  Execution e = once("builtin.workspace.read_diff", Object{});
  ASSERT_TRUE(e.result.is_error);
  EXPECT_TRUE(contains(e.result.text, "not a git repository")) << e.result.text;
  EXPECT_FALSE(contains(e.result.text, "secret"));
  EXPECT_EQ(status_of(e), "soft_failure");

  // A repository of its own: paths that lead out are refused before git runs.
  git(root_, "init -q");
  commit_all(root_);
  fs::create_symlink(base_ / "outside", root_ / "out-dir");
  const std::string outside_abs = fs::canonical(base_ / "outside").string();
  for (const std::string& path :
       {std::string("../outside/secret.txt"), std::string(".."), outside_abs + "/secret.txt",
        std::string("out-dir/secret.txt"), std::string("~/x")}) {
    SCOPED_TRACE(path);
    e = once("builtin.workspace.read_diff", Object{{"paths", Array{"a.txt", path}}});
    ASSERT_TRUE(e.result.is_error);
    EXPECT_TRUE(contains(e.result.text, "Path escapes the workspace")) << e.result.text;
    EXPECT_FALSE(contains(e.result.text, "secret v"));
  }
  // Under the sandbox git is not run at all.
  context_.sandbox = true;
  e = once("builtin.workspace.read_diff", Object{});
  ASSERT_TRUE(e.result.is_error);
  EXPECT_TRUE(contains(e.result.text, "bwrap sandbox")) << e.result.text;
}

TEST_F(MillforgeBuiltinsGit, WorkspaceDiffArtifactRoundTrips) {
  git(root_, "init -q");
  put_ws("a.txt", "one\n");
  commit_all(root_);
  put_ws("a.txt", "uno\n");
  ToolExecutor ex =
      executor({bind("builtin.artifact.write_workspace_diff", "record", {"workspace_diff"}),
                bind("builtin.artifact.read_workspace_diff")});
  Execution e = call(ex, "write_workspace_diff_artifact", Object{});
  ASSERT_FALSE(e.result.is_error) << e.result.text;
  const std::string stored = slurp(artifacts_ / "workspace_diff");
  EXPECT_TRUE(contains(stored, "-one\n+uno\n")) << stored;
  EXPECT_EQ(*e.result.details.find("artifact_id"), Value("workspace_diff"));
  EXPECT_EQ(*e.result.details.find("bytes"), Value(static_cast<int>(stored.size())));
  e = call(ex, "read_workspace_diff_artifact", Object{});
  ASSERT_FALSE(e.result.is_error) << e.result.text;
  EXPECT_EQ(*e.result.details.find("content"), Value(stored));
  EXPECT_EQ(*e.result.details.find("content_sha256"), Value(mf::hash::sha256_hex(stored)));

  // A node that does not produce it runs no git and writes nothing.
  fs::remove(artifacts_ / "workspace_diff");
  ToolExecutor other =
      executor({bind("builtin.artifact.write_workspace_diff", "record", {"plan"})});
  e = call(other, "write_workspace_diff_artifact", Object{});
  ASSERT_TRUE(e.result.is_error);
  EXPECT_TRUE(contains(e.result.text, "does not produce artifact workspace_diff")) << e.result.text;
  EXPECT_FALSE(fs::exists(artifacts_ / "workspace_diff"));
  // It needs both capabilities.
  ToolExecutor narrow =
      executor({bind("builtin.artifact.write_workspace_diff")}, Value(), {"artifact.write"});
  e = call(narrow, "write_workspace_diff_artifact", Object{});
  EXPECT_TRUE(e.record.denied);
  EXPECT_TRUE(contains(e.result.text, "workspace.diff.read")) << e.result.text;
}

// --- the fixed artifact readers -----------------------------------------------------------------

TEST_F(MillforgeBuiltins, FixedReadersReadTheirArtifact) {
  struct Case {
    const char* tool_id;
    const char* artifact;
  };
  for (const Case& c : {Case{"builtin.artifact.read_plan", "plan"},
                        Case{"builtin.artifact.read_patch_summary", "patch_summary"},
                        Case{"builtin.artifact.read_test_results", "test_results"},
                        Case{"builtin.artifact.read_workspace_diff", "workspace_diff"},
                        Case{"builtin.artifact.read_checker_verdict", "checker_verdict"}}) {
    SCOPED_TRACE(c.tool_id);
    Execution e = once(c.tool_id, Object{});
    ASSERT_TRUE(e.result.is_error);
    EXPECT_EQ(e.result.text, std::string("Artifact not found: ") + c.artifact);
    EXPECT_EQ(status_of(e), "soft_failure");
    const std::string content = std::string("the ") + c.artifact + "\n";
    put(artifacts_ / c.artifact, content);
    e = once(c.tool_id, Object{});
    ASSERT_FALSE(e.result.is_error) << e.result.text;
    EXPECT_EQ(e.result.text, content);
    EXPECT_EQ(canon(e.result.details),
              canon(Object{{"artifact_id", c.artifact},
                           {"content", content},
                           {"content_sha256", mf::hash::sha256_hex(content)},
                           {"status", "success"},
                           {"summary", "Read artifact " + std::string(c.artifact) + " (" +
                                           std::to_string(content.size()) + " bytes)"},
                           {"truncated", false}}));
    e = once(c.tool_id, Object{{"artifact_id", "plan"}});
    EXPECT_TRUE(e.record.denied) << "no arguments";
  }
  // At most 32 KiB, cut on a character boundary; the digest is of the whole artifact.
  const std::string big = std::string(32767, 'x') + "\xC3\xA9" + "tail";
  put(artifacts_ / "plan", big);
  Execution e = once("builtin.artifact.read_plan", Object{});
  ASSERT_FALSE(e.result.is_error) << e.result.text;
  EXPECT_EQ(*e.result.details.find("content"), Value(std::string(32767, 'x')));
  EXPECT_EQ(*e.result.details.find("truncated"), Value(true));
  EXPECT_EQ(*e.result.details.find("content_sha256"), Value(mf::hash::sha256_hex(big)));
  EXPECT_TRUE(contains(e.result.text, "[Showing the first 32768 bytes of 32773;")) << e.result.text;
  // A link out of the artifact directory is not followed.
  put(base_ / "outside" / "secret", "top secret");
  fs::remove(artifacts_ / "plan");
  fs::create_symlink(base_ / "outside" / "secret", artifacts_ / "plan");
  e = once("builtin.artifact.read_plan", Object{});
  ASSERT_TRUE(e.result.is_error);
  EXPECT_TRUE(contains(e.result.text, "leads out of the artifact directory")) << e.result.text;
  EXPECT_FALSE(contains(e.result.text, "top secret"));
}

TEST_F(MillforgeBuiltins, VerdictWritersWriteTheirVerdict) {
  for (const char* artifact : {"checker_verdict", "arbiter_verdict"}) {
    SCOPED_TRACE(artifact);
    const std::string tool_id = std::string("builtin.artifact.write_") + artifact;
    ToolExecutor ex = executor({bind(tool_id, "node", {artifact})});
    Execution e = call(ex, builtin(tool_id).model_tool_name, Object{{"verdict", "accept"}});
    ASSERT_FALSE(e.result.is_error) << e.result.text;
    EXPECT_EQ(slurp(artifacts_ / artifact), "accept");
    EXPECT_EQ(*e.result.details.find("artifact_id"), Value(artifact));
    EXPECT_EQ(*e.result.details.find("bytes"), Value(6));
    fs::remove(artifacts_ / artifact);
    ToolExecutor other = executor({bind(tool_id, "node", {"plan"})});
    e = call(other, builtin(tool_id).model_tool_name, Object{{"verdict", "accept"}});
    ASSERT_TRUE(e.result.is_error);
    EXPECT_TRUE(contains(e.result.text, std::string("does not produce artifact ") + artifact));
    EXPECT_FALSE(fs::exists(artifacts_ / artifact));
  }
}

// --- terminal.reject and terminal.escalate ------------------------------------------------------

TEST_F(MillforgeBuiltins, RejectAndEscalateRecordTheNodesTerminalResult) {
  put(artifacts_ / "checker_verdict", "fail");
  ToolExecutor ex = executor({bind("builtin.terminal.reject", "reject", {}, "CHECKER_REJECTED"),
                              bind("builtin.terminal.escalate", "escalate", {}, "ESCALATED")});
  Execution e = call(ex, "reject_terminal_intent",
                     Object{{"terminal_result", "CHECKER_COMPLETE"}, {"summary", "no"}});
  ASSERT_TRUE(e.result.is_error);
  EXPECT_TRUE(contains(e.result.text, "submits CHECKER_REJECTED, not CHECKER_COMPLETE"))
      << e.result.text;
  e = call(ex, "reject_terminal_intent",
           Object{{"terminal_result", "CHECKER_REJECTED"},
                  {"summary", "tests fail"},
                  {"artifact_refs", Array{"checker_verdict"}}});
  ASSERT_FALSE(e.result.is_error) << e.result.text;
  EXPECT_EQ(e.result.text, "Terminal intent recorded: CHECKER_REJECTED");
  EXPECT_EQ(canon(e.result.details),
            R"({"artifact_refs":["checker_verdict"],"status":"success","summary":"tests fail",)"
            R"("terminal_result":"CHECKER_REJECTED"})");

  e = call(ex, "escalate_terminal_intent",
           Object{{"terminal_result", "ESCALATED"}, {"summary", "stuck"}});
  EXPECT_TRUE(e.record.denied) << "blocker is required";
  e = call(ex, "escalate_terminal_intent",
           Object{{"terminal_result", "ESCALATED"},
                  {"summary", "stuck"},
                  {"blocker", "the spec contradicts itself"},
                  {"artifact_refs", Array{"missing"}}});
  ASSERT_TRUE(e.result.is_error);
  EXPECT_TRUE(contains(e.result.text, "artifact missing, which does not exist")) << e.result.text;
  e = call(ex, "escalate_terminal_intent",
           Object{{"terminal_result", "ESCALATED"},
                  {"summary", "stuck"},
                  {"blocker", "the spec contradicts itself"}});
  ASSERT_FALSE(e.result.is_error) << e.result.text;
  EXPECT_EQ(canon(e.result.details),
            R"({"blocker":"the spec contradicts itself","status":"success","summary":"stuck",)"
            R"("terminal_result":"ESCALATED"})");
  ASSERT_NE(e.record.binding, nullptr);
  EXPECT_EQ(e.record.binding->tool.side_effect_class, mf::tools::SideEffect::Terminal);
}

// --- the configured terminal vocabulary ---------------------------------------------------------

const mf::json::Value* tool_in(const Value& doc, const std::string& tool_id) {
  for (const Value& t : doc.find("tools")->as_array()) {
    if (t.find("tool_id")->as_string() == tool_id) return &t;
  }
  return nullptr;
}

TEST(MillforgeTerminalVocabulary, OneToolPerLegalTerminal) {
  const std::string long_id(64, 'R');  // over 48 bytes: cut and suffixed
  const std::string just_fits = std::string(47, 'A') + "B";
  auto doc = mf::tools::builtin_catalog_json({"COMPLETE", "NEEDS_REVIEW", long_id, just_fits});
  ASSERT_TRUE(doc.ok()) << doc.diagnostics().front().message;
  const std::size_t base = mf::tools::builtin_catalog_json().find("tools")->as_array().size();
  EXPECT_EQ(doc->find("tools")->as_array().size(), base + 4);
  // The built-in tools are all still there, unchanged.
  EXPECT_NE(tool_in(*doc, "builtin.pi_compat.submit"), nullptr);
  EXPECT_EQ(*tool_in(*doc, "builtin.terminal.submit"),
            *tool_in(mf::tools::builtin_catalog_json(), "builtin.terminal.submit"));

  const std::string long_token =
      std::string(39, 'r') + "_" + mf::hash::sha256_hex(long_id).substr(0, 8);
  EXPECT_EQ(mf::tools::terminal_token(long_id), long_token);
  EXPECT_EQ(mf::tools::terminal_token(just_fits), std::string(47, 'a') + "b");
  EXPECT_EQ(mf::tools::terminal_token("NEEDS_REVIEW"), "needs_review");

  auto catalog = mf::tools::Catalog::from_json(*doc);
  ASSERT_TRUE(catalog.ok());
  struct Case {
    std::string result;
    std::string token;
  };
  for (const Case& c : {Case{"COMPLETE", "complete"}, Case{"NEEDS_REVIEW", "needs_review"},
                        Case{long_id, long_token}, Case{just_fits, std::string(47, 'a') + "b"}}) {
    SCOPED_TRACE(c.result);
    const ToolDescriptor* d = catalog->find("builtin.pi_compat.terminal." + c.token, 1);
    ASSERT_NE(d, nullptr);
    EXPECT_EQ(d->model_tool_name, "terminal_" + c.token);
    EXPECT_EQ(d->required_capabilities, std::vector<std::string>{"terminal.intent"});
    EXPECT_EQ(d->side_effect_class, mf::tools::SideEffect::Terminal);
    EXPECT_EQ(d->idempotency, mf::tools::Idempotency::NonIdempotent);
    EXPECT_EQ(d->timeout_ms, 30000);
    EXPECT_EQ(d->implementation_id, std::string(mf::tools::kConfiguredTerminalImplementation));
    const Value* props = d->input_schema.find("properties");
    EXPECT_EQ(*props->find("terminal_result")->find("enum"), Value(Array{c.result}));
    EXPECT_EQ(*props->find("summary")->find("minLength"), Value(1));
    EXPECT_EQ(*d->input_schema.find("required"), Value(Array{"terminal_result", "summary"}));
    EXPECT_EQ(*d->input_schema.find("additionalProperties"), Value(false));
    const mf::tools::Implementation* impl = mf::tools::implementation_for(*d);
    ASSERT_NE(impl, nullptr);
    EXPECT_EQ(impl->id, mf::tools::kConfiguredTerminalImplementation);
  }
  // No legal terminals: the built-in catalog as it is.
  auto none = mf::tools::builtin_catalog_json(std::vector<std::string>{});
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(*none, mf::tools::builtin_catalog_json());
}

TEST(MillforgeTerminalVocabulary, CollidingOrUnnamableResultsAreRefused) {
  struct Case {
    std::vector<std::string> results;
    std::string code;
    std::string message;
  };
  const std::string long_a = std::string(39, 'X') + std::string(25, 'A');
  const std::string long_b = std::string(39, 'X') + std::string(25, 'B');
  const std::vector<Case> cases = {
      {{"COMPLETE", "COMPLETE"},
       "MF-R005",
       "legal terminals \"COMPLETE\" and \"COMPLETE\" collide: both would be the tool "
       "builtin.pi_compat.terminal.complete"},
      {{"DONE", "done"}, "MF-R005", "legal terminals \"DONE\" and \"done\" collide"},
      {{"Done_Ok", "DONE_OK", "OTHER"}, "MF-R005", "\"Done_Ok\" and \"DONE_OK\" collide"},
      {{"DONE-OK"}, "MF-R004", "legal terminal \"DONE-OK\" cannot name a terminal tool"},
      {{""}, "MF-R004", "legal terminal \"\" cannot name a terminal tool"},
      {{"9LIVES"}, "MF-R004", "cannot name a terminal tool"},
      {{"DONE.OK"}, "MF-R004", "cannot name a terminal tool"},
      {{"D\xC3\x96NE"}, "MF-R004", "cannot name a terminal tool"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.message);
    auto doc = mf::tools::builtin_catalog_json(c.results);
    ASSERT_FALSE(doc.ok());
    EXPECT_EQ(doc.diagnostics().front().code, c.code);
    EXPECT_TRUE(contains(doc.diagnostics().front().message, c.message))
        << doc.diagnostics().front().message;
  }
  // Long ids that share their first 39 bytes stay apart by their digests.
  auto doc = mf::tools::builtin_catalog_json({long_a, long_b});
  ASSERT_TRUE(doc.ok()) << doc.diagnostics().front().message;
  EXPECT_NE(mf::tools::terminal_token(long_a), mf::tools::terminal_token(long_b));
}

TEST_F(MillforgeBuiltins, ConfiguredTerminalsRecordTheirOwnResult) {
  auto doc = mf::tools::builtin_catalog_json({"COMPLETE", "NEEDS_REVIEW"});
  ASSERT_TRUE(doc.ok());
  auto catalog = mf::tools::Catalog::from_json(*doc);
  ASSERT_TRUE(catalog.ok());
  std::vector<Binding> bindings;
  for (const char* token : {"complete", "needs_review"}) {
    bindings.push_back(mf::tools::binding_from_descriptor(
        *catalog->find(std::string("builtin.pi_compat.terminal.") + token, 1)));
  }
  ToolExecutor ex = executor(std::move(bindings), Value(), {"terminal.intent"});
  Execution e = call(ex, "terminal_needs_review",
                     Object{{"terminal_result", "NEEDS_REVIEW"}, {"summary", "please look"}});
  ASSERT_FALSE(e.result.is_error) << e.result.text;
  EXPECT_EQ(e.result.text, "Terminal intent recorded: NEEDS_REVIEW");
  EXPECT_EQ(canon(e.result.details),
            R"({"summary":"please look","terminal_result":"NEEDS_REVIEW"})");
  ASSERT_NE(e.record.binding, nullptr);
  EXPECT_EQ(e.record.binding->tool.side_effect_class, mf::tools::SideEffect::Terminal);
  // Only its own result, and a summary that says something.
  e = call(ex, "terminal_complete", Object{{"terminal_result", "NEEDS_REVIEW"}, {"summary", "x"}});
  EXPECT_TRUE(e.record.denied);
  e = call(ex, "terminal_complete", Object{{"terminal_result", "COMPLETE"}, {"summary", ""}});
  EXPECT_TRUE(e.record.denied);
  e = call(ex, "terminal_complete", Object{{"terminal_result", "COMPLETE"}, {"summary", " \t\n"}});
  ASSERT_TRUE(e.result.is_error);
  EXPECT_EQ(e.result.text, "The terminal summary must not be blank");
  EXPECT_EQ(e.record.side_effect_certainty, "not_attempted");
  e = call(ex, "terminal_complete",
           Object{{"terminal_result", "COMPLETE"}, {"summary", "done"}, {"extra", 1}});
  EXPECT_TRUE(e.record.denied);
  e = call(ex, "terminal_complete", Object{{"terminal_result", "COMPLETE"}, {"summary", "done"}});
  ASSERT_FALSE(e.result.is_error) << e.result.text;
  EXPECT_EQ(e.result.text, "Terminal intent recorded: COMPLETE");
}

// --- the four builtin harnesses -----------------------------------------------------------------

Value compile_fixture(const std::string& name) {
  auto text = mf::io::read_input(kRoot + "/fixtures/harness/builtin/" + name + ".yaml");
  EXPECT_TRUE(text.ok()) << name;
  if (!text.ok()) return {};
  auto source = mf::harness::parse_source(*text, mf::harness::Format::Yaml);
  EXPECT_TRUE(source.ok()) << name;
  if (!source.ok()) return {};
  mf::harness::CompileRequest request;
  request.source = *source;
  request.catalogs.push_back({"builtin", mf::tools::builtin_catalog_json()});
  request.profiles.push_back({"builtin", mf::harness::builtin_profiles_json()});
  auto result = mf::harness::compile(request);
  std::string why;
  for (const auto& d : result.diagnostics)
    why += "\n  " + d.code + " " + d.pointer + " " + d.message;
  EXPECT_TRUE(result.ok) << name << ": " << result.failure_phase << why;
  return result.plan;
}

TEST(MillforgeBuiltinsHarness, EachHarnessCompilesAgainstTheBuiltinCatalog) {
  const std::map<std::string, std::vector<std::string>> tools = {
      {"planner",
       {"builtin.artifact.write_plan", "builtin.request.inspect",
        "builtin.request.read_requirements", "builtin.terminal.submit"}},
      {"builder",
       {"builtin.artifact.read", "builtin.artifact.write_patch_summary",
        "builtin.artifact.write_test_results", "builtin.request.inspect",
        "builtin.shell.run_static_check", "builtin.shell.run_tests", "builtin.terminal.submit",
        "builtin.workspace.apply_patch", "builtin.workspace.read_file"}},
      {"checker",
       {"builtin.artifact.read", "builtin.artifact.write_verdict", "builtin.terminal.submit"}},
      {"arbiter",
       {"builtin.artifact.read", "builtin.artifact.write_verdict", "builtin.request.inspect",
        "builtin.terminal.submit"}},
  };
  for (const auto& [name, expected] : tools) {
    SCOPED_TRACE(name);
    const Value plan = compile_fixture(name);
    ASSERT_TRUE(plan.is_object());
    std::vector<std::string> bound;
    for (const Value& n : plan.find("nodes")->as_array()) {
      bound.push_back(n.find("binding")->find("tool_id")->as_string());
      EXPECT_EQ(n.find("binding")->find("descriptor_sha256")->as_string(),
                builtin(bound.back()).descriptor_sha256);
    }
    std::sort(bound.begin(), bound.end());
    EXPECT_EQ(bound, expected);
    EXPECT_EQ(plan.find("model_profile")->find("profile_id")->as_string(), "profile.standard");
    auto bindings = mf::tools::bindings_from_plan(plan);
    EXPECT_TRUE(bindings.ok());
  }
}

// Drives a compiled harness: the plan's bindings, exactly the plan's capabilities.
class MillforgeBuiltinsHarnessRun : public MillforgeBuiltins {
 protected:
  struct Step {
    std::string tool;  // model-facing name
    Value args;
  };
  void run(const std::string& name, const Value& request, const std::vector<Step>& steps) {
    const Value plan = compile_fixture(name);
    ASSERT_TRUE(plan.is_object());
    auto bindings = mf::tools::bindings_from_plan(plan);
    ASSERT_TRUE(bindings.ok()) << bindings.diagnostics().front().message;
    std::vector<std::string> caps;
    for (const Value& c : plan.find("required_capabilities")->as_array()) {
      caps.push_back(c.as_string());
    }
    ToolExecutor ex = executor(std::move(*bindings), request, caps);
    // The terminal first: refused, its prerequisites have not run.
    const Step& last = steps.back();
    Execution early = call(ex, last.tool, last.args);
    EXPECT_TRUE(early.record.denied);
    EXPECT_TRUE(contains(early.result.text, "requires a successful")) << early.result.text;
    for (const auto& step : steps) {
      SCOPED_TRACE(step.tool);
      Execution e = call(ex, step.tool, step.args);
      EXPECT_FALSE(e.result.is_error) << e.result.text;
      EXPECT_EQ(e.record.execution_status, "success");
      EXPECT_EQ(status_of(e), step.tool == "read_artifact" ? "<none>" : "success");
    }
    // Every artifact the terminal requires is in the artifact directory.
    for (const Value& t : plan.find("artifact_policy")->find("required_by_terminal")->as_array()) {
      for (const Value& a : t.find("artifact_ids")->as_array()) {
        EXPECT_TRUE(fs::is_regular_file(artifacts_ / a.as_string())) << a.as_string();
      }
    }
  }
};

TEST_F(MillforgeBuiltinsHarnessRun, PlannerHappyPath) {
  const Value request =
      Object{{"instruction", "Make value() return 2"},
             {"context", Object{{"requirements", Array{"value() returns 2", "keep the tests"}}}}};
  run("planner", request,
      {{"inspect_request", Object{}},
       {"read_request_requirements", Object{}},
       {"write_plan_artifact", Object{{"plan", "1. change src/value.c\n2. run the tests\n"}}},
       {"submit_terminal_intent", Object{{"terminal_result", "PLANNER_COMPLETE"},
                                         {"summary", "planned"},
                                         {"artifact_refs", Array{"plan"}}}}});
  EXPECT_EQ(slurp(artifacts_ / "plan"), "1. change src/value.c\n2. run the tests\n");
}

TEST_F(MillforgeBuiltinsHarnessRun, BuilderHappyPath) {
  put(artifacts_ / "plan", "1. change src/value.c\n");
  put_ws("src/value.c", "int value(void) {\n  return 1;\n}\n");
  const Value request =
      profiles_request({{"unit", argv({"grep", "-q", "return 2;", "src/value.c"})},
                        {"lint", argv({"sh", "-c", "test -f src/value.c && echo lint clean"})}});
  run("builder", request,
      {{"read_artifact", Object{{"artifact_id", "plan"}}},
       {"inspect_request", Object{}},
       {"read_workspace_file", Object{{"path", "src/value.c"}}},
       {"apply_workspace_patch",
        Object{{"patch",
                "--- a/src/value.c\n+++ b/src/value.c\n@@ -1,3 +1,3 @@\n int value(void) {\n"
                "-  return 1;\n+  return 2;\n }\n"}}},
       {"write_patch_summary_artifact", Object{{"summary", "value() now returns 2"}}},
       {"run_test_profile", Object{{"profile", "unit"}}},
       {"run_static_check_profile", Object{{"profile", "lint"}}},
       {"write_test_results_artifact", Object{{"results", "unit: pass\nlint: pass\n"}}},
       {"submit_terminal_intent",
        Object{{"terminal_result", "BUILDER_COMPLETE"},
               {"summary", "built"},
               {"artifact_refs", Array{"patch_summary", "test_results"}}}}});
  EXPECT_EQ(ws_file("src/value.c"), "int value(void) {\n  return 2;\n}\n");
  EXPECT_EQ(slurp(artifacts_ / "test_results"), "unit: pass\nlint: pass\n");
}

TEST_F(MillforgeBuiltinsHarnessRun, CheckerHappyPath) {
  put(artifacts_ / "patch_summary", "value() now returns 2");
  put(artifacts_ / "test_results", "unit: pass\n");
  run("checker", Object{{"instruction", "check"}},
      {{"read_artifact", Object{{"artifact_id", "test_results"}}},
       {"write_verdict_artifact",
        Object{{"artifact_id", "checker_verdict"}, {"verdict", "pass: tests ran and passed"}}},
       {"submit_terminal_intent",
        Object{{"terminal_result", "CHECKER_COMPLETE"}, {"summary", "checked"}}}});
  EXPECT_EQ(slurp(artifacts_ / "checker_verdict"), "pass: tests ran and passed");
  EXPECT_FALSE(fs::exists(artifacts_ / "arbiter_verdict"));
}

TEST_F(MillforgeBuiltinsHarnessRun, ArbiterHappyPath) {
  put(artifacts_ / "checker_verdict", "pass");
  run("arbiter", Object{{"instruction", "decide"}, {"context", Object{{"stage", "arbiter"}}}},
      {{"read_artifact", Object{{"artifact_id", "checker_verdict"}}},
       {"inspect_request", Object{}},
       {"write_verdict_artifact",
        Object{{"artifact_id", "arbiter_verdict"}, {"verdict", "accept the change"}}},
       {"submit_terminal_intent", Object{{"terminal_result", "ARBITER_COMPLETE"},
                                         {"summary", "accepted"},
                                         {"artifact_refs", Array{"arbiter_verdict"}}}}});
  EXPECT_EQ(slurp(artifacts_ / "arbiter_verdict"), "accept the change");
}

}  // namespace
