// The harness compiler over its fixtures: one invalid fixture per diagnostic code the compiler or
// its front end raises (fixtures/harness/invalid/), the golden and valid fixtures with pinned
// digests and plan bytes, the plan loader's refusals, determinism, and the tool catalog loader.
#include <fcntl.h>

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "temp_dir.hpp"

#include "mf/diag/codes.hpp"
#include "mf/diag/diagnostic.hpp"
#include "mf/harness/command.hpp"
#include "mf/harness/compiler.hpp"
#include "mf/harness/plan.hpp"
#include "mf/io/file.hpp"
#include "mf/json/canonical.hpp"
#include "mf/json/pointer.hpp"
#include "mf/json/reader.hpp"
#include "mf/tools/catalog.hpp"

namespace mf::harness {
namespace {

// Where compile_command writes what mf-compile would print: discarded here.
int sink() {
  static const int fd = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  return fd;
}

namespace fs = std::filesystem;
using json::Value;

const std::string kRoot = MF_SOURCE_DIR;
const std::string kHarnessDir = kRoot + "/fixtures/harness/";
const std::string kInvalidDir = kHarnessDir + "invalid/";
const std::string kCatalogDir = kInvalidDir + "catalogs/";

// --- helpers ------------------------------------------------------------------------------------

std::string read_text(const std::string& path) {
  auto r = io::read_input(path);
  EXPECT_TRUE(r.ok()) << path << ": " << (r.ok() ? "" : r.diagnostics().front().message);
  return r.ok() ? *r : std::string();
}

Value read_json(const std::string& path) {
  auto r = json::parse_object(read_text(path));
  EXPECT_TRUE(r.ok()) << path;
  return r.ok() ? std::move(r).value() : Value();
}

Value parse_json(std::string_view text) {
  auto r = json::parse_object(text);
  EXPECT_TRUE(r.ok()) << text;
  return r.ok() ? std::move(r).value() : Value();
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

Format format_of(const std::string& path) {
  return ends_with(path, ".json") ? Format::Json : Format::Yaml;
}

Value parse_file(const std::string& path) {
  auto r = parse_source(read_text(path), format_of(path));
  EXPECT_TRUE(r.ok()) << path << ": " << (r.ok() ? "" : r.diagnostics().front().message);
  return r.ok() ? std::move(r).value() : Value();
}

std::set<std::string> code_set(const diag::Diagnostics& ds) {
  std::set<std::string> out;
  for (const auto& d : ds) out.insert(d.code);
  return out;
}

std::string describe(const diag::Diagnostics& ds) {
  std::string out;
  for (const auto& d : ds) out += "\n  " + d.code + " at \"" + d.pointer + "\": " + d.message;
  return out;
}

// The request every fixture starts from: the fixture catalog and profiles.
CompileRequest base_request(Value source) {
  CompileRequest r;
  r.source = std::move(source);
  r.catalogs.push_back({kHarnessDir + "catalog.json", read_json(kHarnessDir + "catalog.json")});
  r.profiles.push_back({kHarnessDir + "profiles.json", read_json(kHarnessDir + "profiles.json")});
  return r;
}

CompileResult compile_file(const std::string& path) {
  return compile(base_request(parse_file(path)));
}

// The value at `pointer`, for mutation; fails the test when it does not resolve.
Value& at(Value& root, std::string_view pointer) {
  auto tokens = json::parse_pointer(pointer);
  EXPECT_TRUE(tokens.ok()) << pointer;
  Value* v = &root;
  for (const auto& t : tokens.ok() ? *tokens : std::vector<std::string>{}) {
    Value* next = nullptr;
    if (v->is_object()) {
      next = v->find(t);
    } else if (v->is_array()) {
      const std::size_t i = std::stoul(t);
      next = i < v->as_array().size() ? &v->as_array()[i] : nullptr;
    }
    EXPECT_NE(next, nullptr) << pointer << " does not resolve at " << t;
    if (next == nullptr) return root;
    v = next;
  }
  return *v;
}

// Reorders the members of every object, recursively; arrays keep their order.
void shuffle_members(Value& v, std::mt19937& rng) {
  if (v.is_object()) {
    auto& members = v.as_object();
    std::shuffle(members.begin(), members.end(), rng);
    if (members.size() > 1) std::rotate(members.begin(), members.begin() + 1, members.end());
    for (auto& m : members) shuffle_members(m.value, rng);
  } else if (v.is_array()) {
    for (auto& e : v.as_array()) shuffle_members(e, rng);
  }
}

Value shuffled(Value v, unsigned seed) {
  std::mt19937 rng(seed);
  shuffle_members(v, rng);
  return v;
}

// A fresh empty directory under the system temp dir, removed with the object.
using TempDir = mf::test::TempDir;

// --- the invalid fixture table ------------------------------------------------------------------

// How a fixture is run: straight through parse_source + compile, or end to end through
// compile_command (for faults the compiler itself never sees: file extension, request options).
enum class Via : std::uint8_t { Compile, Command };

struct Case {
  std::string file;  // under fixtures/harness/invalid/; its name starts with the expected code
  // Request options (Via::Compile).
  std::string expected_id;
  std::string stage;
  std::optional<std::vector<std::string>> legal_terminals;
  std::optional<std::vector<std::string>> capabilities;
  std::string extra_catalog;  // under invalid/catalogs/, added after catalog.json
  std::string only_catalog;   // under invalid/catalogs/, replaces catalog.json
  std::string profiles;       // under invalid/catalogs/, replaces profiles.json
  Via via = Via::Compile;
  // compile_command options (Via::Command).
  std::string out_dir;
  std::string legal_terminals_arg;
  bool legal_terminals_given = false;
};

// The only fixtures whose code comes with another one, as in Millforge. A prerequisite cycle is
// MF-G004, and a node with a rejected prerequisite (MF-G002, MF-G013) can never run; the nodes
// that (transitively) depend on either can never run too and get their own code (G005 optional
// node, G006 terminal, G007 required node). Resolution, graph, capability and artifact faults are
// reported together: a node whose tool is unknown (MF-R002) produces nothing, so the artifact it
// would produce has no producer (MF-A004); a graph without terminals (MF-G011) leaves the
// artifact policy naming a terminal result no node has (MF-A003).
const std::map<std::string, std::set<std::string>>& companions() {
  static const std::map<std::string, std::set<std::string>> table = {
      {"MF-G002-self-prerequisite.yaml", {"MF-G006"}},
      {"MF-G011-no-terminal.yaml", {"MF-A003"}},
      {"MF-R002-unknown-tool.yaml", {"MF-A004"}},
      {"MF-G005-node-after-cycle.yaml", {"MF-G004"}},
      {"MF-G006-terminal-after-cycle.yaml", {"MF-G004"}},
      {"MF-G007-required-after-cycle.yaml", {"MF-G004"}},
      {"MF-G013-terminal-prerequisite.yaml", {"MF-G006"}},
  };
  return table;
}

using Strings = std::vector<std::string>;

const std::vector<Case>& cases() {
  static const std::vector<Case> table = [] {
    std::vector<Case> t;
    auto add = [&](const char* file, const std::function<void(Case&)>& options) {
      Case c;
      c.file = file;
      options(c);
      t.push_back(std::move(c));
    };
    auto plain = [&](const char* file) { add(file, [](Case&) {}); };
    // parse
    plain("MF-S004-invalid-utf8.yaml");
    add("MF-S005-unsupported-extension.txt", [](Case& c) { c.via = Via::Command; });
    plain("MF-S006-duplicate-key.yaml");
    plain("MF-S007-yaml-anchor.yaml");
    plain("MF-S008-yaml-tag.yaml");
    plain("MF-S009-two-documents.yaml");
    plain("MF-S010-integer-beyond-2-53.yaml");
    plain("MF-S011-malformed-json.json");
    plain("MF-S012-top-level-list.yaml");
    // request (compile_command)
    add("MF-S017-out-dir-missing.yaml", [](Case& c) {
      c.via = Via::Command;
      c.out_dir = kInvalidDir + "no-such-directory";
    });
    add("MF-S018-bad-legal-terminals-entry.yaml", [](Case& c) {
      c.via = Via::Command;
      c.legal_terminals_arg = "BUILDER_COMPLETE,blocked";
      c.legal_terminals_given = true;
    });
    // schema
    plain("MF-S020-wrong-kind.yaml");
    plain("MF-S021-unknown-field.yaml");
    plain("MF-S022-bad-harness-id.yaml");
    plain("MF-S023-tool-ref-without-version.yaml");
    plain("MF-S024-budget-out-of-range.yaml");
    plain("MF-S025-context-budget-too-small.yaml");
    plain("MF-S026-secret-in-instructions.yaml");
    add("MF-S027-harness-id-mismatch.yaml",
        [](Case& c) { c.expected_id = "millforge.test.other_harness.v1"; });
    add("MF-S028-stage-out-of-scope.yaml", [](Case& c) { c.stage = "planner"; });
    add("MF-S029-legal-terminal-without-node.yaml", [](Case& c) {
      c.legal_terminals = Strings{"BUILDER_COMPLETE", "REJECTED"};
    });
    // resolution
    plain("MF-R001-unknown-profile.yaml");
    plain("MF-R002-unknown-tool.yaml");
    add("MF-R003-catalog-identity.yaml",
        [](Case& c) { c.only_catalog = "MF-R003-wrong-descriptor-sha256.json"; });
    add("MF-R008-snapshot-drift.yaml",
        [](Case& c) { c.only_catalog = "MF-R008-snapshot-drift.json"; });
    add("MF-R009-snapshot-metadata.yaml",
        [](Case& c) { c.only_catalog = "MF-R009-snapshot-metadata.json"; });
    add("MF-R004-malformed-descriptor.yaml",
        [](Case& c) { c.extra_catalog = "MF-R004-malformed-descriptor.json"; });
    plain("MF-R005-tool-bound-twice.yaml");
    add("MF-R005-tool-in-two-catalogs.yaml",
        [](Case& c) { c.extra_catalog = "MF-R005-duplicate-tool.json"; });
    add("MF-R006-duplicate-model-name.yaml",
        [](Case& c) { c.extra_catalog = "MF-R006-shared-model-name.json"; });
    add("MF-R007-unsupported-schema.yaml",
        [](Case& c) { c.extra_catalog = "MF-R007-pattern-keyword.json"; });
    add("MF-R010-malformed-profiles.yaml",
        [](Case& c) { c.profiles = "MF-R010-malformed-profiles.json"; });
    // graph
    plain("MF-G001-unknown-prerequisite.yaml");
    plain("MF-G002-self-prerequisite.yaml");
    plain("MF-G003-duplicate-prerequisite.yaml");
    plain("MF-G004-cycle.yaml");
    plain("MF-G005-node-after-cycle.yaml");
    plain("MF-G006-terminal-after-cycle.yaml");
    plain("MF-G007-required-after-cycle.yaml");
    plain("MF-G008-required-terminal.yaml");
    add("MF-G009-illegal-terminal.yaml",
        [](Case& c) { c.legal_terminals = Strings{"BUILDER_COMPLETE"}; });
    plain("MF-G010-duplicate-terminal.yaml");
    plain("MF-G011-no-terminal.yaml");
    plain("MF-G012-bad-argument-match.yaml");
    plain("MF-G013-terminal-prerequisite.yaml");
    add("MF-G014-unreturnable-terminal.yaml",
        [](Case& c) { c.extra_catalog = "MF-G014-fixed-terminals.json"; });
    // capability
    add("MF-C001-capability-not-granted.yaml", [](Case& c) {
      c.capabilities = Strings{"workspace.read", "artifact.write"};
    });
    // artifact
    plain("MF-A001-undeclared-produced.yaml");
    plain("MF-A002-terminal-tool-produces.yaml");
    plain("MF-A003-unknown-artifact-terminal.yaml");
    plain("MF-A004-artifact-without-producer.yaml");
    plain("MF-A005-artifact-not-gated.yaml");
    plain("MF-A006-duplicate-declared-artifact.yaml");
    plain("MF-A007-undeclared-required.yaml");
    return t;
  }();
  return table;
}

std::string code_of(const std::string& file) {
  return file.substr(0, 7);  // "MF-X000"
}

std::set<std::string> expected_codes(const Case& c) {
  std::set<std::string> out{code_of(c.file)};
  if (auto it = companions().find(c.file); it != companions().end()) {
    out.insert(it->second.begin(), it->second.end());
  }
  return out;
}

CompileRequest request_for(const Case& c, Value source) {
  CompileRequest r = base_request(std::move(source));
  if (!c.only_catalog.empty()) {
    r.catalogs = {{kCatalogDir + c.only_catalog, read_json(kCatalogDir + c.only_catalog)}};
  }
  if (!c.extra_catalog.empty()) {
    r.catalogs.push_back({kCatalogDir + c.extra_catalog, read_json(kCatalogDir + c.extra_catalog)});
  }
  if (!c.profiles.empty()) {
    r.profiles = {{kCatalogDir + c.profiles, read_json(kCatalogDir + c.profiles)}};
  }
  r.expected_harness_id = c.expected_id;
  r.stage = c.stage;
  r.legal_terminals = c.legal_terminals;
  r.capabilities = c.capabilities;
  return r;
}

CompileArgs args_for(const Case& c) {
  CompileArgs a;
  a.source = kInvalidDir + c.file;
  a.catalogs = {kHarnessDir + "catalog.json"};
  a.profiles = {kHarnessDir + "profiles.json"};
  a.out_dir = c.out_dir;
  a.legal_terminals = c.legal_terminals_arg;
  a.legal_terminals_given = c.legal_terminals_given;
  return a;
}

// Runs one fixture; `request` is kept when the source parsed (Via::Compile only).
struct CaseRun {
  diag::Diagnostics diagnostics;
  std::optional<CompileRequest> request;  // when the source parsed
};

CaseRun run_case(const Case& c) {
  CaseRun run;
  const std::string path = kInvalidDir + c.file;
  if (c.via == Via::Command) {
    run.diagnostics = compile_command(args_for(c), sink()).diagnostics;
    return run;
  }
  auto doc = parse_source(read_text(path), format_of(path));
  if (!doc) {
    run.diagnostics = doc.take_diagnostics();
    return run;
  }
  run.request = request_for(c, std::move(*doc));
  CompileResult result = compile(*run.request);
  EXPECT_FALSE(result.ok) << c.file;
  EXPECT_FALSE(result.failure_phase.empty()) << c.file;
  run.diagnostics = std::move(result.diagnostics);
  return run;
}

// The document a diagnostic points into: a catalog or profiles file when the message names one
// ("catalog <name>: ..."), otherwise the harness source.
const Value& document_of(const diag::Diagnostic& d, const CompileRequest& r) {
  for (const auto& c : r.catalogs) {
    if (d.message.rfind("catalog " + c.name + ": ", 0) == 0) return c.doc;
  }
  for (const auto& p : r.profiles) {
    if (d.message.rfind("profiles " + p.name + ": ", 0) == 0) return p.doc;
  }
  return r.source;
}

TEST(HarnessCompile, EveryInvalidFixtureRaisesExactlyItsCode) {
  for (const auto& c : cases()) {
    SCOPED_TRACE(c.file);
    CaseRun run = run_case(c);
    EXPECT_EQ(code_set(run.diagnostics), expected_codes(c)) << describe(run.diagnostics);
    for (const auto& d : run.diagnostics) {
      EXPECT_FALSE(d.message.empty()) << d.code;
      EXPECT_EQ(d.severity, diag::Severity::Error) << d.code;
      if (run.request) {
        // Past parsing every fault in these fixtures is about a value that exists: its pointer
        // resolves in the document it names.
        auto resolved = json::resolve(document_of(d, *run.request), d.pointer);
        EXPECT_TRUE(resolved.ok())
            << d.code << " pointer \"" << d.pointer << "\" does not resolve: " << d.message;
      } else if (c.via == Via::Compile) {
        // A parse fault has no document to point into, but says where in the text it is.
        EXPECT_GE(d.line, 1) << d.code << ": " << d.message;
      }
    }
  }
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ",") + i;
  return out;
}

// mf-compile reads the same fixtures from disk and passes the options as text: same codes.
TEST(HarnessCompile, CommandPathRaisesTheSameCodes) {
  for (const auto& c : cases()) {
    if (c.via != Via::Compile) continue;
    SCOPED_TRACE(c.file);
    CompileArgs a = args_for(c);
    if (!c.only_catalog.empty()) a.catalogs = {kCatalogDir + c.only_catalog};
    if (!c.extra_catalog.empty()) a.catalogs.push_back(kCatalogDir + c.extra_catalog);
    if (!c.profiles.empty()) a.profiles = {kCatalogDir + c.profiles};
    a.expected_harness_id = c.expected_id;
    a.stage = c.stage;
    if (c.legal_terminals) {
      a.legal_terminals = join(*c.legal_terminals);
      a.legal_terminals_given = true;
    }
    if (c.capabilities) {
      a.capabilities = join(*c.capabilities);
      a.capabilities_given = true;
    }
    CompileOutcome outcome = compile_command(a, sink());
    EXPECT_FALSE(outcome.compiled);
    EXPECT_EQ(code_set(outcome.diagnostics), expected_codes(c)) << describe(outcome.diagnostics);
    const Value* status = outcome.report.find("status");
    ASSERT_NE(status, nullptr);
    EXPECT_EQ(*status, Value("rejected"));
  }
}

TEST(HarnessCompile, EveryFixtureIsInTheTable) {
  std::set<std::string> listed;
  std::set<std::string> catalogs_used;
  for (const auto& c : cases()) {
    EXPECT_TRUE(listed.insert(c.file).second) << c.file << " is in the table twice";
    EXPECT_TRUE(fs::is_regular_file(kInvalidDir + c.file)) << c.file << " is missing";
    EXPECT_TRUE(
        std::regex_match(c.file, std::regex(R"(MF-[SRGCA]\d{3}-[a-z0-9-]+\.(yaml|json|txt))")))
        << c.file;
    for (const auto* name : {&c.extra_catalog, &c.only_catalog, &c.profiles}) {
      if (!name->empty()) catalogs_used.insert(*name);
    }
  }
  for (const auto& e : fs::directory_iterator(kInvalidDir)) {
    const std::string name = e.path().filename().string();
    if (e.is_directory() && name == "catalogs") continue;
    EXPECT_TRUE(listed.count(name) != 0) << "fixtures/harness/invalid/" << name
                                         << " is not in the table of harness_compile_test.cpp";
  }
  for (const auto& e : fs::directory_iterator(kCatalogDir)) {
    const std::string name = e.path().filename().string();
    EXPECT_TRUE(catalogs_used.count(name) != 0)
        << "fixtures/harness/invalid/catalogs/" << name << " is used by no fixture";
  }
  for (const auto& [file, also] : companions()) {
    EXPECT_TRUE(listed.count(file) != 0) << file << " has companions but is not in the table";
  }
}

// MF-S/R/G/C/A codes that have no fixture in fixtures/harness/invalid/, each with the reason.
const std::map<std::string, std::string>& not_fixtured() {
  static const std::map<std::string, std::string> table = {
      // Covered by tests below instead of committed fixtures.
      {"MF-S003", "a 1 MiB source; generated by HarnessCompile.OversizedSource"},
      {"MF-S013", "a missing file; HarnessCompile.UnreadableSources"},
      {"MF-S014", "a directory as source; HarnessCompile.UnreadableSources"},
      // Not raised by the compiler or its front end.
      {"MF-S030", "malformed JSON pointers: the pointer parser's code, not the compiler's"},
  };
  return table;
}
// Codes outside these families that the compiler can raise are deliberately left out too:
// MF-L001 (a lowered plan failing its own check) cannot be reached from any input; MF-L002,
// MF-L003 and MF-L004 belong to the plan loader and are covered by the PlanLoader tests.

TEST(HarnessCompile, EveryCompilerCodeHasAFixture) {
  const std::string header = read_text(kRoot + "/common/diag/include/mf/diag/codes.def");
  std::set<std::string> declared;
  const std::regex code(R"rx("(MF-[SRGCA]\d{3})")rx");
  for (auto it = std::sregex_iterator(header.begin(), header.end(), code);
       it != std::sregex_iterator(); ++it) {
    declared.insert((*it)[1].str());
  }
  ASSERT_FALSE(declared.empty());
  std::set<std::string> fixtured;
  for (const auto& c : cases()) fixtured.insert(code_of(c.file));
  for (const auto& d : declared) {
    EXPECT_TRUE(fixtured.count(d) != 0 || not_fixtured().count(d) != 0)
        << d << " (codes.def) has no fixture in fixtures/harness/invalid/ and is not listed as "
        << "deliberately uncovered";
  }
  for (const auto& [c, why] : not_fixtured()) {
    EXPECT_TRUE(declared.count(c) != 0) << c << " is no longer in codes.hpp";
    EXPECT_TRUE(fixtured.count(c) == 0) << c << " has a fixture now; drop it from the list";
  }
  for (const auto& c : fixtured) {
    EXPECT_TRUE(declared.count(c) != 0) << "fixture code " << c << " is not in codes.hpp";
  }
}

// MF-G014 judges only what a descriptor declares: the results it names compile, and a tool that
// names none (tools.finish_success@1) proves nothing.
TEST(HarnessCompile, TerminalResultsTheToolCanReturnCompile) {
  Value source = parse_file(kInvalidDir + "MF-G014-unreturnable-terminal.yaml");
  at(source, "/graph/nodes/complete/terminal_result") = "COMPLETE";
  at(source, "/graph/nodes/blocked/terminal_result") = "NEEDS_INPUT";
  source.find("artifacts")->find("required_by_terminal")->as_object().front().key = "COMPLETE";
  CompileRequest r = base_request(source);
  r.catalogs.push_back({kCatalogDir + "MF-G014-fixed-terminals.json",
                        read_json(kCatalogDir + "MF-G014-fixed-terminals.json")});
  CompileResult ok = compile(r);
  EXPECT_TRUE(ok.ok) << describe(ok.diagnostics);
  at(r.source, "/graph/nodes/complete/tool_ref") = "tools.finish_success@1";
  at(r.source, "/graph/nodes/complete/terminal_result") = "ANYTHING";
  r.source.find("artifacts")->find("required_by_terminal")->as_object().front().key = "ANYTHING";
  ok = compile(r);
  EXPECT_TRUE(ok.ok) << describe(ok.diagnostics);
}

TEST(HarnessCompile, OversizedSource) {
  // One byte over 1 MiB, as YAML (a trailing comment) and as JSON (trailing whitespace).
  const std::size_t limit = 1u << 20;
  std::string yaml = read_text(kHarnessDir + "simple-success.yaml");
  yaml += "# " + std::string(limit + 1 - yaml.size() - 3, 'x') + "\n";
  ASSERT_EQ(yaml.size(), limit + 1);
  std::string json = read_text(kHarnessDir + "simple-success.json");
  json += std::string(limit + 1 - json.size(), ' ');
  ASSERT_EQ(json.size(), limit + 1);
  for (auto [text, format] : {std::pair{yaml, Format::Yaml}, std::pair{json, Format::Json}}) {
    auto r = parse_source(text, format);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(code_set(r.diagnostics()), std::set<std::string>{"MF-S003"})
        << describe(r.diagnostics());
    // At exactly the limit the same text is accepted.
    text.pop_back();
    EXPECT_TRUE(parse_source(text, format).ok());
  }
  // Through compile_command the file is refused before it is parsed.
  TempDir dir;
  const std::string path = (dir.path() / "big.yaml").string();
  ASSERT_TRUE(io::publish_atomic(path, yaml).ok());
  CompileArgs args;
  args.source = path;
  args.catalogs = {kHarnessDir + "catalog.json"};
  args.profiles = {kHarnessDir + "profiles.json"};
  auto outcome = compile_command(args, sink());
  EXPECT_FALSE(outcome.compiled);
  EXPECT_EQ(code_set(outcome.diagnostics), std::set<std::string>{"MF-S003"})
      << describe(outcome.diagnostics);
}

// The library prints nothing itself: the plan goes to the descriptor the caller gives.
TEST(HarnessCompile, WritesThePlanToTheGivenDescriptor) {
  TempDir dir;
  const fs::path out = dir / "plan.json";
  const int fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0);
  CompileArgs args;
  args.source = kHarnessDir + "golden.yaml";
  args.catalogs = {kHarnessDir + "catalog.json"};
  args.profiles = {kHarnessDir + "profiles.json"};
  auto outcome = compile_command(args, fd);
  ::close(fd);
  ASSERT_TRUE(outcome.compiled) << describe(outcome.diagnostics);
  const std::string plan = read_text(out.string());
  auto parsed = json::parse_object(plan);
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->find("compiled_sha256")->as_string(),
            outcome.report.find("compiled_sha256")->as_string());
}

TEST(HarnessCompile, UnreadableSources) {
  TempDir dir;
  CompileArgs args;
  args.catalogs = {kHarnessDir + "catalog.json"};
  args.profiles = {kHarnessDir + "profiles.json"};
  args.source = (dir.path() / "missing.yaml").string();
  auto missing = compile_command(args, sink());
  EXPECT_FALSE(missing.compiled);
  EXPECT_EQ(code_set(missing.diagnostics), std::set<std::string>{"MF-S013"})
      << describe(missing.diagnostics);
  fs::create_directories(dir.path() / "dir.yaml");
  args.source = (dir.path() / "dir.yaml").string();
  auto directory = compile_command(args, sink());
  EXPECT_FALSE(directory.compiled);
  EXPECT_EQ(code_set(directory.diagnostics), std::set<std::string>{"MF-S014"})
      << describe(directory.diagnostics);
}

TEST(HarnessCompile, SecretIsNeverRepeated) {
  const std::string secret = "sk-abcdefghijklmnopqrstuvwxyzabcd";
  const std::string file = kInvalidDir + "MF-S026-secret-in-instructions.yaml";
  ASSERT_NE(read_text(file).find(secret), std::string::npos);
  CompileResult result = compile_file(file);
  ASSERT_FALSE(result.ok);
  EXPECT_EQ(code_set(result.diagnostics), std::set<std::string>{"MF-S026"});
  for (const auto& d : result.diagnostics) {
    EXPECT_EQ(d.pointer, "/prompt/system_instructions");
    EXPECT_EQ(d.message.find(secret), std::string::npos) << d.message;
    EXPECT_EQ(d.message.find("abcdefghijklmnopqrstuvwxyz"), std::string::npos) << d.message;
    EXPECT_EQ(diag::render_text(d).find(secret), std::string::npos);
  }
  CompileArgs args;
  args.source = file;
  args.catalogs = {kHarnessDir + "catalog.json"};
  args.profiles = {kHarnessDir + "profiles.json"};
  auto outcome = compile_command(args, sink());
  EXPECT_FALSE(outcome.compiled);
  EXPECT_EQ(code_set(outcome.diagnostics), std::set<std::string>{"MF-S026"});
  for (const auto& d : outcome.diagnostics) {
    EXPECT_EQ(d.message.find(secret), std::string::npos) << d.message;
  }
  EXPECT_EQ(json::canonical(outcome.report).find(secret), std::string::npos);
  EXPECT_EQ(json::canonical(outcome.report).find("abcdefghijklmnopqrstuvwxyz"), std::string::npos);
}

// A credential used as a mapping key is still a credential: it must be refused as one (MF-S026)
// and, like a value, never be repeated by a diagnostic's message or pointer, nor by the report.
TEST(HarnessCompile, SecretInAKeyIsNeverRepeated) {
  const std::string secret = "sk-abcdefghijklmnopqrstuvwxyzabcd";
  TempDir dir;
  const std::string path = (dir.path() / "key.yaml").string();
  ASSERT_TRUE(
      io::publish_atomic(path, read_text(kHarnessDir + "simple-success.yaml") + secret + ": 1\n")
          .ok());
  CompileResult result = compile_file(path);
  ASSERT_FALSE(result.ok);
  EXPECT_EQ(code_set(result.diagnostics).count("MF-S026"), 1u) << describe(result.diagnostics);
  for (const auto& d : result.diagnostics) {
    EXPECT_EQ(d.message.find(secret), std::string::npos) << d.message;
    EXPECT_EQ(d.pointer.find(secret), std::string::npos) << d.code << " at " << d.pointer;
  }
  CompileArgs args;
  args.source = path;
  args.catalogs = {kHarnessDir + "catalog.json"};
  args.profiles = {kHarnessDir + "profiles.json"};
  auto outcome = compile_command(args, sink());
  EXPECT_FALSE(outcome.compiled);
  for (const auto& d : outcome.diagnostics) {
    EXPECT_EQ(diag::render_text(d).find(secret), std::string::npos) << diag::render_text(d);
  }
  EXPECT_EQ(json::canonical(outcome.report).find(secret), std::string::npos);
}

TEST(HarnessCompile, RequestOptionsAreCheckedBeforeTheSource) {
  CompileArgs args;
  args.source = kHarnessDir + "simple-success.yaml";
  args.catalogs = {kHarnessDir + "catalog.json"};
  args.profiles = {kHarnessDir + "profiles.json"};
  args.format = "toml";
  EXPECT_EQ(code_set(compile_command(args, sink()).diagnostics), std::set<std::string>{"MF-S005"});
  args.format.clear();
  args.capabilities = "artifact.write,Not A Capability";
  args.capabilities_given = true;
  EXPECT_EQ(code_set(compile_command(args, sink()).diagnostics), std::set<std::string>{"MF-S018"});
  args.capabilities_given = false;
  args.stage = "Builder";
  EXPECT_EQ(code_set(compile_command(args, sink()).diagnostics), std::set<std::string>{"MF-S018"});
}

// --- valid fixtures and pinned digests ----------------------------------------------------------

struct Pinned {
  const char* stem;
  const char* source_sha256;
  const char* compiled_sha256;
};

constexpr Pinned kPinned[] = {
    {"golden", "e9fe066a89b4074f116ae719f17b2285276abb035959bb9836f40060e3389038",
     "f1e1347f70c744f3f68eb2f707b2845445e221fe1e70c7e4efaf2b44b4d89ff9"},
    {"simple-success", "3c67ac25b8ba12c1cfe38be306c2537663f71a9ce1ac1d279370dde852f34129",
     "a150a92bf1fe7be8d3bb1c597fcdd0e4d1a17d641b823b5ed030fc2d038dba74"},
    {"blocked-artifact", "81d2d1bc651a4da8863f1ec0155d80afd0d6bfb1c14c0912ef4cc91f51538c7c",
     "8beb85708d7877bc8545323776cae4a860ff120a9f22c4b16148a278f9764eed"},
};

TEST(HarnessCompileGolden, ValidFixturesCompileToPinnedDigests) {
  for (const auto& p : kPinned) {
    for (const char* ext : {".yaml", ".json"}) {
      const std::string file = kHarnessDir + p.stem + ext;
      SCOPED_TRACE(file);
      CompileResult r = compile_file(file);
      ASSERT_TRUE(r.ok) << describe(r.diagnostics);
      EXPECT_TRUE(r.diagnostics.empty());
      EXPECT_EQ(r.source_sha256, p.source_sha256);
      EXPECT_EQ(r.compiled_sha256, p.compiled_sha256);
      EXPECT_EQ(plan_digest(r.plan), r.compiled_sha256);
      EXPECT_EQ(r.plan_bytes, json::canonical_file(r.plan));
      EXPECT_TRUE(load_plan(r.plan_bytes).ok());
    }
  }
}

TEST(HarnessCompileGolden, GoldenPlanBytesArePinned) {
  const std::string pinned = read_text(kHarnessDir + "golden.compiled.json");
  CompileResult r = compile_file(kHarnessDir + "golden.yaml");
  ASSERT_TRUE(r.ok) << describe(r.diagnostics);
  EXPECT_EQ(r.plan_bytes, pinned);
}

TEST(HarnessCompileGolden, YamlAndJsonTwinsGiveIdenticalBytes) {
  for (const auto& p : kPinned) {
    SCOPED_TRACE(p.stem);
    const Value yaml = parse_file(kHarnessDir + p.stem + ".yaml");
    const Value json = parse_file(kHarnessDir + p.stem + ".json");
    EXPECT_EQ(yaml, json);  // same members in the same order
    CompileResult a = compile(base_request(yaml));
    CompileResult b = compile(base_request(json));
    ASSERT_TRUE(a.ok && b.ok);
    EXPECT_EQ(a.plan_bytes, b.plan_bytes);
  }
}

TEST(HarnessCompileGolden, SourceKeyOrderDoesNotMatter) {
  for (const auto& p : kPinned) {
    SCOPED_TRACE(p.stem);
    const Value source = parse_file(kHarnessDir + p.stem + ".json");
    CompileResult original = compile(base_request(source));
    ASSERT_TRUE(original.ok);
    for (unsigned seed : {1u, 2u, 3u}) {
      const Value reordered = shuffled(source, seed);
      ASSERT_FALSE(reordered == source);
      ASSERT_EQ(json::canonical(reordered), json::canonical(source));
      CompileResult r = compile(base_request(reordered));
      ASSERT_TRUE(r.ok) << describe(r.diagnostics);
      EXPECT_EQ(r.plan_bytes, original.plan_bytes);
      EXPECT_EQ(r.source_sha256, original.source_sha256);
    }
  }
}

TEST(HarnessCompileGolden, EverySemanticFieldChangesTheDigest) {
  const Value golden = parse_file(kHarnessDir + "golden.yaml");
  CompileResult base = compile(base_request(golden));
  ASSERT_TRUE(base.ok);
  struct Change {
    const char* what;
    std::function<void(CompileRequest&)> apply;
  };
  auto source = [](std::function<void(Value&)> f) {
    return [f](CompileRequest& r) { f(r.source); };
  };
  const std::vector<Change> changes = {
      {"harness_version", source([](Value& s) { at(s, "/harness_version") = 2; })},
      {"a budget", source([](Value& s) { at(s, "/budgets/max_tool_errors") = 3; })},
      {"context budget", source([](Value& s) { at(s, "/context/budget_tokens") = 8193; })},
      {"system_instructions",
       source([](Value& s) { at(s, "/prompt/system_instructions").as_string() += "More.\n"; })},
      {"include_request_context",
       source([](Value& s) { at(s, "/prompt/include_request_context") = false; })},
      {"a node's required flag",
       source([](Value& s) { at(s, "/graph/nodes/collect_context").set("required", false); })},
      {"a prerequisite removed", source([](Value& s) {
         auto& pre = at(s, "/graph/nodes/complete/prerequisites").as_array();
         pre.erase(pre.begin());  // collect_context; it is required, so draft stays gated
       })},
      {"an argument match",
       [](CompileRequest& r) {
         at(r.source, "/graph/nodes/write_report/prerequisites/0/argument_matches/path") = "body";
         // Matched arguments take the same values (MF-G012 otherwise): body as path is.
         at(r.catalogs[0].doc, "/tools/1/input_schema/properties/body").set("minLength", 1);
       }},
      {"a terminal result", source([](Value& s) {
         at(s, "/graph/nodes/blocked/terminal_result") = "STUCK";
         at(s, "/artifacts/required_by_terminal").as_object()[1].key = "STUCK";
       })},
      {"a declared artifact list",
       source([](Value& s) { at(s, "/artifacts/declared_artifact_ids").push_back("notes"); })},
      {"a terminal's required artifacts", source([](Value& s) {
         at(s, "/artifacts/required_by_terminal/BUILDER_COMPLETE").as_array().pop_back();
       })},
      {"a node's produced artifacts", source([](Value& s) {
         at(s, "/artifacts/declared_artifact_ids").push_back("notes");
         at(s, "/graph/nodes/write_report/produces").push_back("notes");
       })},
      {"stage_kind_ids",
       source([](Value& s) { at(s, "/stage_scope/stage_kind_ids").push_back("planner"); })},
      {"the model profile id",
       source([](Value& s) { at(s, "/model_profile_id") = "profile.scripted"; })},
      {"the catalog descriptor's description",
       [](CompileRequest& r) {
         at(r.catalogs[0].doc, "/tools/0/description").as_string() += " Now with more context.";
       }},
      {"the catalog descriptor's timeout",
       [](CompileRequest& r) { at(r.catalogs[0].doc, "/tools/1").set("timeout_ms", 1000); }},
  };
  std::set<std::string> digests{base.compiled_sha256};
  for (const auto& change : changes) {
    SCOPED_TRACE(change.what);
    CompileRequest r = base_request(golden);
    change.apply(r);
    CompileResult changed = compile(r);
    ASSERT_TRUE(changed.ok) << describe(changed.diagnostics);
    EXPECT_NE(changed.compiled_sha256, base.compiled_sha256);
    EXPECT_TRUE(digests.insert(changed.compiled_sha256).second) << "digest seen before";
    EXPECT_TRUE(load_plan(changed.plan_bytes).ok());
  }
}

// --- the plan loader ----------------------------------------------------------------------------

std::string golden_bytes() {
  return read_text(kHarnessDir + "golden.compiled.json");
}

Value golden_plan() {
  return parse_json(golden_bytes());
}

// The plan with its digest recomputed, as file bytes: only check_plan can catch what was changed.
std::string rehashed(Value plan) {
  plan.set("compiled_sha256", plan_digest(plan));
  return json::canonical_file(plan);
}

TEST(PlanLoader, AcceptsTheGoldenPlan) {
  auto plan = load_plan(golden_bytes());
  ASSERT_TRUE(plan.ok()) << describe(plan.diagnostics());
  EXPECT_EQ(plan->find("kind")->as_string(), kPlanKind);
  EXPECT_EQ(plan_file_name(*plan), "millforge.test.golden.compiler.v1@1." +
                                       plan->find("compiled_sha256")->as_string() +
                                       ".compiled.json");
  EXPECT_TRUE(check_plan(*plan).ok());
  EXPECT_TRUE(verify_plan(*plan).ok());
}

TEST(PlanLoader, RefusesPoliciesTheSourceLanguageRefuses) {
  // Re-sealed after the edit: only the plan's own rules stand between these and a run.
  const std::vector<std::pair<std::string, std::function<void(Value&)>>> edits = {
      {"/budgets/max_iterations",
       [](Value& p) { p.find("budgets")->set("max_iterations", 10001); }},
      {"/budgets/max_tool_errors", [](Value& p) { p.find("budgets")->set("max_tool_errors", 0); }},
      {"/budgets/max_iterations",
       [](Value& p) {
         auto& m = p.find("budgets")->as_object();
         m.erase(std::remove_if(m.begin(), m.end(),
                                [](const json::Member& x) { return x.key == "max_iterations"; }),
                 m.end());
       }},
      {"/budgets/extra", [](Value& p) { p.find("budgets")->set("extra", 1); }},
      {"/context_policy/budget_tokens",
       [](Value& p) { p.find("context_policy")->set("budget_tokens", 12); }},
      {"/context_policy/phase_thresholds",
       [](Value& p) {
         p.find("context_policy")->set("phase_thresholds", json::Array{0.9, 0.5, 0.95});
       }},
      {"/context_policy/strategy_id",
       [](Value& p) { p.find("context_policy")->set("strategy_id", "sliding"); }},
      {"/prompt_policy/system_instructions",
       [](Value& p) { p.find("prompt_policy")->set("system_instructions", 7); }},
  };
  for (const auto& [pointer, edit] : edits) {
    Value plan = golden_plan();
    edit(plan);
    auto loaded = load_plan(rehashed(plan));
    ASSERT_FALSE(loaded.ok()) << pointer;
    bool found = false;
    for (const auto& d : loaded.diagnostics()) found = found || d.pointer == pointer;
    EXPECT_TRUE(found) << pointer << ": " << describe(loaded.diagnostics());
  }
}

TEST(PlanLoader, RefusesAFlippedByte) {
  std::string bytes = golden_bytes();
  const auto pos = bytes.find("Preserve this first");
  ASSERT_NE(pos, std::string::npos);
  bytes[pos + 1] = 'R';  // still canonical, no longer the hashed plan
  auto plan = load_plan(bytes);
  ASSERT_FALSE(plan.ok());
  ASSERT_EQ(plan.diagnostics().size(), 1u);
  EXPECT_EQ(plan.diagnostics()[0].code, "MF-L004");
  EXPECT_EQ(plan.diagnostics()[0].pointer, "/compiled_sha256");
}

TEST(PlanLoader, RefusesNonCanonicalBytes) {
  const std::string bytes = golden_bytes();
  for (const std::string& variant :
       {" " + bytes, bytes.substr(0, bytes.size() - 1), bytes + "\n", "{\n  " + bytes.substr(1)}) {
    auto plan = load_plan(variant);
    ASSERT_FALSE(plan.ok());
    EXPECT_EQ(code_set(plan.diagnostics()), std::set<std::string>{"MF-L002"})
        << describe(plan.diagnostics());
  }
}

TEST(PlanLoader, RefusesBrokenInvariantsEvenWhenRehashed) {
  struct Breakage {
    const char* what;
    std::function<void(Value&)> apply;
    const char* pointer;  // one of the diagnostics points here
  };
  // Nodes are sorted by node_id: blocked, collect_context, complete, write_failure_report,
  // write_report.
  const std::vector<Breakage> breakages = {
      {"terminal marked required", [](Value& p) { at(p, "/nodes/0/required") = true; }, "/nodes/0"},
      {"duplicate node ids", [](Value& p) { at(p, "/nodes/1/node_id") = "blocked"; },
       "/nodes/1/node_id"},
      {"prerequisite to an unknown node",
       [](Value& p) { at(p, "/nodes/2/prerequisites/0/node_id") = "ghost"; }, "/nodes/2"},
      {"terminal as a prerequisite",
       [](Value& p) { at(p, "/nodes/4/prerequisites/0/node_id") = "complete"; }, "/nodes/4"},
      {"capability missing at top level",
       [](Value& p) {
         auto& caps = at(p, "/required_capabilities").as_array();
         caps.erase(std::find(caps.begin(), caps.end(), Value("terminal.intent")));
       },
       "/nodes/0"},
      {"undeclared produced artifact",
       [](Value& p) {
         auto& ids = at(p, "/artifact_policy/declared_artifact_ids").as_array();
         ids.erase(std::find(ids.begin(), ids.end(), Value("failure_report")));
       },
       "/artifact_policy"},
      {"no terminal",
       [](Value& p) {
         at(p, "/nodes/0/terminal_result") = nullptr;
         at(p, "/nodes/2/terminal_result") = nullptr;
       },
       "/nodes"},
      {"terminal map out of step",
       [](Value& p) { at(p, "/terminal_result_map/blocked") = "STUCK"; },
       "/terminal_result_map/blocked"},
      {"model tool name bound twice",
       [](Value& p) { at(p, "/nodes/1/model_tool_name") = "finish_blocked"; },
       "/nodes/1/model_tool_name"},
      {"unsorted stage kinds",
       [](Value& p) { std::swap(at(p, "/stage_kind_ids/0"), at(p, "/stage_kind_ids/1")); },
       "/stage_kind_ids/1"},
      {"malformed source digest", [](Value& p) { at(p, "/source_sha256") = "abc"; },
       "/source_sha256"},
  };
  for (const auto& b : breakages) {
    SCOPED_TRACE(b.what);
    Value plan = golden_plan();
    b.apply(plan);
    const std::string bytes = rehashed(plan);
    auto loaded = load_plan(bytes);
    ASSERT_FALSE(loaded.ok());
    EXPECT_EQ(code_set(loaded.diagnostics()), std::set<std::string>{"MF-L002"})
        << describe(loaded.diagnostics());
    bool found = false;
    for (const auto& d : loaded.diagnostics()) {
      EXPECT_FALSE(d.message.empty());
      EXPECT_TRUE(json::resolve(plan, d.pointer).ok()) << d.pointer;
      found = found || d.pointer == b.pointer;
    }
    EXPECT_TRUE(found) << "no diagnostic at " << b.pointer << describe(loaded.diagnostics());
    EXPECT_FALSE(verify_plan(plan).ok());
    EXPECT_FALSE(check_plan(plan).ok());
  }
}

// --- determinism --------------------------------------------------------------------------------

TEST(HarnessCompileDeterminism, DiagnosticsAreStableAndIndependentOfKeyOrder) {
  for (const auto& c : cases()) {
    if (c.via != Via::Compile) continue;
    SCOPED_TRACE(c.file);
    CaseRun first = run_case(c);
    CaseRun second = run_case(c);
    EXPECT_EQ(first.diagnostics, second.diagnostics);
    if (!first.request) continue;
    for (unsigned seed : {7u, 11u}) {
      CompileRequest r = *first.request;
      r.source = shuffled(r.source, seed);
      EXPECT_EQ(compile(r).diagnostics, first.diagnostics) << "seed " << seed;
    }
  }
}

TEST(HarnessCompileDeterminism, ManyFaultsComeInPointerOrder) {
  Value source = parse_file(kHarnessDir + "golden.yaml");
  // Schema faults in several places at once.
  at(source, "/budgets/max_iterations") = 0;
  at(source, "/context").set("extra", 1);
  at(source, "/graph/nodes/write_report/tool_ref") = "tools.write_report";
  at(source, "/graph/nodes/blocked").set("node_id", "blocked");
  at(source, "/harness_id") = "Golden";
  CompileResult a = compile(base_request(source));
  ASSERT_FALSE(a.ok);
  EXPECT_EQ(a.failure_phase, "schema");
  EXPECT_EQ(code_set(a.diagnostics),
            (std::set<std::string>{"MF-S021", "MF-S022", "MF-S023", "MF-S024"}));
  EXPECT_TRUE(std::is_sorted(a.diagnostics.begin(), a.diagnostics.end(),
                             [](const auto& x, const auto& y) { return x.pointer < y.pointer; }))
      << describe(a.diagnostics);
  for (unsigned seed = 0; seed < 5; ++seed) {
    EXPECT_EQ(compile(base_request(shuffled(source, seed))).diagnostics, a.diagnostics);
  }
  // Graph faults in several nodes at once.
  Value graph = parse_file(kHarnessDir + "golden.yaml");
  at(graph, "/graph/nodes/complete").set("required", true);
  at(graph, "/graph/nodes/write_report/prerequisites")
      .push_back(json::Object{{"node_id", "write_report"}});
  at(graph, "/graph/nodes/write_failure_report/prerequisites")
      .push_back(json::Object{{"node_id", "nowhere"}});
  CompileResult g = compile(base_request(graph));
  ASSERT_FALSE(g.ok);
  EXPECT_EQ(g.failure_phase, "graph");
  EXPECT_EQ(code_set(g.diagnostics),
            (std::set<std::string>{"MF-G001", "MF-G002", "MF-G006", "MF-G008"}))
      << describe(g.diagnostics);
  for (unsigned seed = 0; seed < 5; ++seed) {
    EXPECT_EQ(compile(base_request(shuffled(graph, seed))).diagnostics, g.diagnostics);
  }
}

}  // namespace
}  // namespace mf::harness

// --- the tool catalog loader --------------------------------------------------------------------

namespace mf::tools {
namespace {

using json::Value;

Value descriptor() {
  auto r = json::parse_object(R"({
    "tool_id": "tools.sample", "version": 1, "model_tool_name": "sample",
    "description": "A sample tool.",
    "input_schema": {"type": "object", "properties": {"path": {"type": "string"}},
                     "required": ["path"]},
    "output_schema": {"type": "object", "properties": {"status": {"type": "string"}}},
    "required_capabilities": ["workspace.read", "artifact.write"],
    "side_effect_class": "artifact_write", "idempotency": "idempotent",
    "timeout_ms": 1000,
    "output_policy": {"max_output_bytes": 4096, "max_summary_bytes": 1024, "redact_secrets": true},
    "implementation_id": "impl.tools.sample.v1"
  })");
  EXPECT_TRUE(r.ok());
  return r.ok() ? std::move(r).value() : Value();
}

Value catalog_of(json::Array tools) {
  return json::Object{
      {"schema_version", "1.0"}, {"kind", "millforge_tool_catalog"}, {"tools", std::move(tools)}};
}

std::string digest_of(const Value& d) {
  auto c = Catalog::from_json(catalog_of({d}));
  EXPECT_TRUE(c.ok()) << (c.ok() ? "" : c.diagnostics().front().message);
  if (!c.ok() || c->descriptors().size() != 1) return {};
  return c->descriptors().begin()->second.descriptor_sha256;
}

void expect_one(const Value& doc, const char* code, const char* pointer) {
  auto c = Catalog::from_json(doc);
  ASSERT_FALSE(c.ok()) << pointer;
  ASSERT_EQ(c.diagnostics().size(), 1u) << pointer << ": " << [&] {
    std::string s;
    for (const auto& d : c.diagnostics()) s += "\n  " + d.code + " " + d.pointer + " " + d.message;
    return s;
  }();
  EXPECT_EQ(c.diagnostics()[0].code, code) << c.diagnostics()[0].message;
  EXPECT_EQ(c.diagnostics()[0].pointer, pointer) << c.diagnostics()[0].message;
  EXPECT_FALSE(c.diagnostics()[0].message.empty());
}

TEST(CatalogLoader, AcceptsAWellFormedDescriptor) {
  auto c = Catalog::from_json(catalog_of({descriptor()}));
  ASSERT_TRUE(c.ok());
  const ToolDescriptor* d = c->find("tools.sample", 1);
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->ref(), "tools.sample@1");
  EXPECT_EQ(d->required_capabilities,
            (std::vector<std::string>{"artifact.write", "workspace.read"}));
  EXPECT_EQ(d->descriptor_sha256, json::canonical_digest(to_json(*d)));
  EXPECT_EQ(c->find("tools.sample", 2), nullptr);
  // Closed objects after normalization.
  EXPECT_EQ(*d->input_schema.find("additionalProperties"), Value(false));
}

TEST(CatalogLoader, MalformedFieldsAreR004WithTheirPointers) {
  struct Fault {
    const char* what;
    std::function<void(Value&)> apply;
    const char* pointer;
  };
  const std::vector<Fault> faults = {
      {"tool_id", [](Value& d) { d.set("tool_id", "Tools.Sample"); }, "/tools/0/tool_id"},
      {"tool_id type", [](Value& d) { d.set("tool_id", 7); }, "/tools/0/tool_id"},
      {"version", [](Value& d) { d.set("version", 0); }, "/tools/0/version"},
      {"version not exact", [](Value& d) { d.set("version", 1.5); }, "/tools/0/version"},
      {"model_tool_name", [](Value& d) { d.set("model_tool_name", "9lives"); },
       "/tools/0/model_tool_name"},
      {"description", [](Value& d) { d.set("description", ""); }, "/tools/0/description"},
      {"missing input_schema",
       [](Value& d) {
         auto& m = d.as_object();
         m.erase(std::find_if(m.begin(), m.end(), [](auto& x) { return x.key == "input_schema"; }));
       },
       "/tools/0/input_schema"},
      {"missing description",
       [](Value& d) {
         auto& m = d.as_object();
         m.erase(std::find_if(m.begin(), m.end(), [](auto& x) { return x.key == "description"; }));
       },
       "/tools/0/description"},
      {"capability", [](Value& d) { d.set("required_capabilities", json::Array{"Workspace"}); },
       "/tools/0/required_capabilities/0"},
      {"duplicate capability",
       [](Value& d) {
         d.set("required_capabilities", json::Array{"a.b", "a.b"});
       },
       "/tools/0/required_capabilities/1"},
      {"capabilities type", [](Value& d) { d.set("required_capabilities", "a.b"); },
       "/tools/0/required_capabilities"},
      {"side_effect_class", [](Value& d) { d.set("side_effect_class", "sometimes"); },
       "/tools/0/side_effect_class"},
      {"idempotency", [](Value& d) { d.set("idempotency", "maybe"); }, "/tools/0/idempotency"},
      {"timeout_ms", [](Value& d) { d.set("timeout_ms", 0); }, "/tools/0/timeout_ms"},
      {"timeout_ms too long", [](Value& d) { d.set("timeout_ms", 86400001); },
       "/tools/0/timeout_ms"},
      {"output_policy bounds",
       [](Value& d) { d.find("output_policy")->set("max_summary_bytes", 8192); },
       "/tools/0/output_policy"},
      // Faults inside output_policy are entry faults too (MF-R004), not MF-S020/S021.
      {"output_policy member", [](Value& d) { d.find("output_policy")->set("truncate", true); },
       "/tools/0/output_policy/truncate"},
      {"output_policy member type",
       [](Value& d) { d.find("output_policy")->set("max_output_bytes", "4 KiB"); },
       "/tools/0/output_policy/max_output_bytes"},
      {"output_policy type", [](Value& d) { d.set("output_policy", json::Array{}); },
       "/tools/0/output_policy"},
      {"implementation_id", [](Value& d) { d.set("implementation_id", "Impl"); },
       "/tools/0/implementation_id"},
      {"unknown member", [](Value& d) { d.set("owner", "me"); }, "/tools/0/owner"},
      // One fault, not also a "missing input_schema" for an entry that is no object at all.
      {"entry not an object", [](Value& d) { d = json::Array{}; }, "/tools/0"},
  };
  for (const auto& f : faults) {
    SCOPED_TRACE(f.what);
    Value d = descriptor();
    f.apply(d);
    expect_one(catalog_of({d}), "MF-R004", f.pointer);
  }
  // The catalog document itself.
  Value doc = catalog_of({descriptor()});
  doc.set("kind", "millforge_harness");
  expect_one(doc, "MF-R004", "/kind");
  doc = catalog_of({descriptor()});
  doc.set("schema_version", "2.0");
  expect_one(doc, "MF-R004", "/schema_version");
  doc = catalog_of({descriptor()});
  doc.set("owner", "me");
  expect_one(doc, "MF-R004", "/owner");
  doc = catalog_of({descriptor()});
  doc.set("tools", json::Object{});
  expect_one(doc, "MF-R004", "/tools");
}

TEST(CatalogLoader, ClaimedDigestIsCheckedNeverTrusted) {
  Value d = descriptor();
  const std::string digest = digest_of(d);
  ASSERT_EQ(digest.size(), 64u);
  d.set("descriptor_sha256", digest);
  EXPECT_EQ(digest_of(d), digest);  // a correct claim is accepted and changes nothing
  d.set("descriptor_sha256", std::string(64, '0'));
  expect_one(catalog_of({d}), "MF-R003", "/tools/0/descriptor_sha256");
  // The claim is checked per entry.
  Value other = descriptor();
  other.set("tool_id", "tools.other");
  expect_one(catalog_of({other, d}), "MF-R003", "/tools/1/descriptor_sha256");
}

TEST(CatalogLoader, ToolListedTwiceIsR005) {
  expect_one(catalog_of({descriptor(), descriptor()}), "MF-R005", "/tools/1");
  Value v2 = descriptor();
  v2.set("version", 2);
  EXPECT_TRUE(Catalog::from_json(catalog_of({descriptor(), v2})).ok());
  // Across catalogs: merge refuses a tool already present.
  auto a = Catalog::from_json(catalog_of({descriptor()}));
  auto b = Catalog::from_json(catalog_of({descriptor()}));
  ASSERT_TRUE(a.ok() && b.ok());
  Status merged = a->merge(*b);
  ASSERT_FALSE(merged.ok());
  EXPECT_EQ(merged.diagnostics().size(), 1u);
  EXPECT_EQ(merged.diagnostics()[0].code, "MF-R005");
}

TEST(CatalogLoader, SchemasOutsideTheSubsetAreR007) {
  Value d = descriptor();
  d.find("input_schema")->find("properties")->find("path")->set("pattern", "^[a-z]+$");
  expect_one(catalog_of({d}), "MF-R007", "/tools/0/input_schema/properties/path/pattern");
  d = descriptor();
  d.find("output_schema")->set("$ref", "#/x");
  expect_one(catalog_of({d}), "MF-R007", "/tools/0/output_schema/$ref");
  d = descriptor();
  d.set("input_schema", json::Object{{"type", "string"}});
  expect_one(catalog_of({d}), "MF-R007", "/tools/0/input_schema");
}

TEST(CatalogLoader, DescriptorDigestCoversEveryField) {
  const Value base = descriptor();
  const std::string digest = digest_of(base);
  ASSERT_EQ(digest.size(), 64u);
  const std::vector<std::function<void(Value&)>> changes = {
      [](Value& d) { d.set("tool_id", "tools.sample2"); },
      [](Value& d) { d.set("version", 2); },
      [](Value& d) { d.set("model_tool_name", "sample2"); },
      [](Value& d) { d.set("description", "Another sample tool."); },
      [](Value& d) {
        d.find("input_schema")->find("properties")->find("path")->set("minLength", 1);
      },
      [](Value& d) { d.set("output_schema", true); },
      [](Value& d) { d.set("required_capabilities", json::Array{"workspace.read"}); },
      [](Value& d) { d.set("side_effect_class", "workspace_write"); },
      [](Value& d) { d.set("idempotency", "unknown"); },
      [](Value& d) { d.set("timeout_ms", 1001); },
      [](Value& d) { d.find("output_policy")->set("max_output_bytes", 4097); },
      [](Value& d) { d.find("output_policy")->set("max_summary_bytes", 1023); },
      [](Value& d) { d.find("output_policy")->set("redact_secrets", false); },
      [](Value& d) { d.set("implementation_id", "impl.tools.sample.v2"); },
  };
  std::set<std::string> seen{digest};
  for (std::size_t i = 0; i < changes.size(); ++i) {
    Value d = base;
    changes[i](d);
    const std::string changed = digest_of(d);
    EXPECT_NE(changed, digest) << "change " << i;
    EXPECT_TRUE(seen.insert(changed).second) << "change " << i;
  }
  // Member order, capability order and spelled-out defaults do not matter.
  Value reordered = base;
  auto& members = reordered.as_object();
  std::reverse(members.begin(), members.end());
  std::reverse(reordered.find("input_schema")->as_object().begin(),
               reordered.find("input_schema")->as_object().end());
  reordered.set("required_capabilities", json::Array{"artifact.write", "workspace.read"});
  EXPECT_EQ(digest_of(reordered), digest);
  Value minimal = base;
  auto& m = minimal.as_object();
  for (const char* key : {"timeout_ms", "implementation_id"}) {
    m.erase(std::find_if(m.begin(), m.end(), [&](auto& x) { return x.key == key; }));
  }
  Value spelled = minimal;
  spelled.set("timeout_ms", 300000);
  spelled.set("implementation_id", "impl.tools.sample.v1");
  EXPECT_EQ(digest_of(minimal), digest_of(spelled));
}

TEST(CatalogLoader, BuiltinCatalogLoads) {
  auto reloaded = Catalog::from_json(builtin_catalog_json());
  ASSERT_TRUE(reloaded.ok());
  const Catalog& c = builtin_catalog();
  std::vector<std::string> expected;
  for (const char* t :
       {"read", "bash", "edit", "write", "grep", "find", "ls", "submit", "block", "reject"}) {
    expected.push_back(std::string("builtin.pi_compat.") + t);
  }
  expected.push_back("builtin.artifact.read");
  expected.push_back("builtin.artifact.write");
  // Millforge's built-in tools (builtin.artifact.read is ours, above).
  const char* const millforge[] = {"request.inspect",
                                   "request.read_requirements",
                                   "workspace.list_files",
                                   "workspace.read_file",
                                   "workspace.search_text",
                                   "workspace.write_file",
                                   "workspace.apply_patch",
                                   "workspace.read_diff",
                                   "shell.run_tests",
                                   "shell.run_static_check",
                                   "artifact.read_plan",
                                   "artifact.read_patch_summary",
                                   "artifact.read_test_results",
                                   "artifact.read_workspace_diff",
                                   "artifact.read_checker_verdict",
                                   "artifact.write_plan",
                                   "artifact.write_patch_summary",
                                   "artifact.write_test_results",
                                   "artifact.write_workspace_diff",
                                   "artifact.write_checker_verdict",
                                   "artifact.write_arbiter_verdict",
                                   "artifact.write_verdict",
                                   "terminal.submit",
                                   "terminal.reject",
                                   "terminal.escalate"};
  for (const char* t : millforge) {
    expected.push_back(std::string("builtin.") + t);
  }
  for (const auto& id : expected) {
    const ToolDescriptor* d = c.find(id, 1);
    ASSERT_NE(d, nullptr) << id;
    EXPECT_EQ(d->descriptor_sha256.size(), 64u);
    const ToolDescriptor* again = reloaded->find(id, 1);
    ASSERT_NE(again, nullptr);
    EXPECT_EQ(again->descriptor_sha256, d->descriptor_sha256);
  }
  EXPECT_EQ(c.descriptors().size(), expected.size());
  EXPECT_EQ(c.find("builtin.pi_compat.read", 1)->model_tool_name, "read");
  EXPECT_EQ(c.find("builtin.artifact.write", 1)->side_effect_class, SideEffect::ArtifactWrite);
  EXPECT_EQ(c.find("builtin.pi_compat.submit", 1)->side_effect_class, SideEffect::Terminal);
}

}  // namespace
}  // namespace mf::tools
