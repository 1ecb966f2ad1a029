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
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "mf/harness/command.hpp"
#include "mf/harness/compiler.hpp"
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
    "artifact.read",  "artifact.write",  "process.static_check",
    "process.test",   "request.read",    "terminal.intent",
    "workspace.read", "workspace.write", "unrestricted.filesystem.read"};

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
  const char* capability;
  mf::tools::SideEffect side_effect;
  std::int64_t timeout_ms;
};

TEST(MillforgeBuiltinsCatalog, DescriptorsFollowMillforgesFacts) {
  using mf::tools::SideEffect;
  const Expected expected[] = {
      {"builtin.request.inspect", "inspect_request", "request.read", SideEffect::ReadOnly, 300000},
      {"builtin.request.read_requirements", "read_request_requirements", "request.read",
       SideEffect::ReadOnly, 300000},
      {"builtin.workspace.read_file", "read_workspace_file", "workspace.read", SideEffect::ReadOnly,
       300000},
      {"builtin.workspace.apply_patch", "apply_workspace_patch", "workspace.write",
       SideEffect::WorkspaceWrite, 300000},
      {"builtin.shell.run_tests", "run_test_profile", "process.test", SideEffect::ProcessExecution,
       1800000},
      {"builtin.shell.run_static_check", "run_static_check_profile", "process.static_check",
       SideEffect::ProcessExecution, 1800000},
      {"builtin.artifact.write_plan", "write_plan_artifact", "artifact.write",
       SideEffect::ArtifactWrite, 300000},
      {"builtin.artifact.write_patch_summary", "write_patch_summary_artifact", "artifact.write",
       SideEffect::ArtifactWrite, 300000},
      {"builtin.artifact.write_test_results", "write_test_results_artifact", "artifact.write",
       SideEffect::ArtifactWrite, 300000},
      {"builtin.artifact.write_verdict", "write_verdict_artifact", "artifact.write",
       SideEffect::ArtifactWrite, 300000},
      {"builtin.terminal.submit", "submit_terminal_intent", "terminal.intent", SideEffect::Terminal,
       30000},
  };
  const Value status_enum = Array{"success", "soft_failure", "hard_failure"};
  for (const auto& e : expected) {
    SCOPED_TRACE(e.tool_id);
    const ToolDescriptor& d = builtin(e.tool_id);
    EXPECT_EQ(d.model_tool_name, e.model_name);
    EXPECT_EQ(d.required_capabilities, std::vector<std::string>{e.capability});
    EXPECT_EQ(d.side_effect_class, e.side_effect);
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
  // Millforge's inputs, where the harnesses need them.
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
