// Parity with Millforge's compiler: its graph and artifact tests as cases
// (fixtures/harness/millforge/graph-cases.json), its pinned golden and representative digests
// reproduced by the millforge-v1 form, its plans verified, its hashing form and its catalog
// snapshots.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "mf/diag/report.hpp"
#include "mf/harness/compiler.hpp"
#include "mf/harness/millforge.hpp"
#include "mf/harness/plan.hpp"
#include "mf/io/file.hpp"
#include "mf/json/canonical.hpp"
#include "mf/json/millforge_form.hpp"
#include "mf/json/reader.hpp"
#include "mf/tools/catalog.hpp"

namespace mf::harness {
namespace {

using json::Value;

const std::string kHarnessDir = std::string(MF_SOURCE_DIR) + "/fixtures/harness/";
const std::string kMillforgeDir = kHarnessDir + "millforge/";

Value read_json(const std::string& path) {
  auto text = io::read_input(path, 8 << 20);
  EXPECT_TRUE(text.ok()) << path;
  auto v = text.ok() ? json::parse_object(*text) : Result<Value>(Value());
  EXPECT_TRUE(v.ok()) << path;
  return v.ok() ? std::move(v).value() : Value();
}

Value read_source(const std::string& path) {
  auto text = io::read_input(path);
  EXPECT_TRUE(text.ok()) << path;
  const bool is_json = path.size() > 5 && path.substr(path.size() - 5) == ".json";
  auto v = parse_source(text.ok() ? *text : "", is_json ? Format::Json : Format::Yaml);
  EXPECT_TRUE(v.ok()) << path;
  return v.ok() ? std::move(v).value() : Value();
}

Value catalog_of(Value tools) {
  return json::Object{
      {"schema_version", "1.0"}, {"kind", "millforge_tool_catalog"}, {"tools", std::move(tools)}};
}

CompileRequest request_with(Value source, Value catalog) {
  CompileRequest r;
  r.source = std::move(source);
  r.catalogs.push_back({"catalog", std::move(catalog)});
  r.profiles.push_back({"profiles", read_json(kHarnessDir + "profiles.json")});
  return r;
}

std::vector<std::string> codes_of(const diag::Diagnostics& ds) {
  std::vector<std::string> out;
  for (const auto& d : ds) out.push_back(d.code);
  return out;
}

std::string joined(const std::vector<std::string>& codes) {
  std::string out;
  for (const auto& c : codes) out += (out.empty() ? "" : " ") + c;
  return out;
}

// A node of a generated graph over one read_only tool of its own (the terminal's is terminal).
void add_node(json::Object& nodes, json::Array& tools, const std::string& id, Value body,
              bool terminal) {
  body.set("tool_ref", "tools." + id + "@1");
  nodes.push_back({id, std::move(body)});
  tools.push_back(json::Object{{"tool_id", "tools." + id},
                               {"version", 1},
                               {"model_tool_name", id},
                               {"description", "step " + id},
                               {"input_schema", json::Object{{"type", "object"}}},
                               {"side_effect_class", terminal ? "terminal" : "read_only"},
                               {"idempotency", "idempotent"}});
}

CompileResult compile_graph(json::Object nodes, json::Array tools) {
  Value source = read_source(kHarnessDir + "millforge/simple.json");
  source.set("graph", json::Object{{"nodes", std::move(nodes)}});
  source.set("artifacts", json::Object{{"declared_artifact_ids", json::Array{}}});
  return compile(request_with(std::move(source), catalog_of(std::move(tools))));
}

// --- Millforge's graph and artifact tests ------------------------------------------------------

TEST(MillforgeParity, GraphAndArtifactCasesGiveMillforgesCodes) {
  const Value doc = read_json(kMillforgeDir + "graph-cases.json");
  const Value* cases = doc.find("cases");
  ASSERT_NE(cases, nullptr);
  ASSERT_GE(cases->as_array().size(), 60u);
  std::size_t differences = 0;
  for (const Value& c : cases->as_array()) {
    const std::string name = c.find("name")->as_string();
    CompileRequest r = request_with(*c.find("source"), catalog_of(*c.find("tools")));
    if (const Value* legal = c.find("legal_terminals")) {
      r.legal_terminals.emplace();
      for (const auto& t : legal->as_array()) r.legal_terminals->push_back(t.as_string());
    }
    const CompileResult result = compile(r);
    std::vector<std::string> want, millforge;
    for (const auto& x : c.find("codes")->as_array()) want.push_back(x.as_string());
    for (const auto& x : c.find("millforge")->as_array()) millforge.push_back(x.as_string());
    const auto got = codes_of(result.diagnostics);
    EXPECT_EQ(joined(got), joined(want)) << name;
    EXPECT_EQ(result.ok, want.empty()) << name;
    // The same faults as Millforge's checks, in this product's order, unless a reason is given.
    if (c.find("difference") == nullptr) {
      auto a = got, b = millforge;
      std::sort(a.begin(), a.end());
      std::sort(b.begin(), b.end());
      EXPECT_EQ(joined(a), joined(b)) << name << " differs from Millforge";
    } else {
      ++differences;
    }
  }
  EXPECT_LE(differences, 6u);  // each one explained in the file
}

// Millforge's graph bound test: 512 nodes (a required root, a chain, one terminal) compile.
TEST(MillforgeParity, FiveHundredTwelveNodesCompile) {
  json::Object nodes;
  json::Array tools;
  for (int i = 0; i < 512; ++i) {
    const std::string id = i == 0 ? "root" : i == 511 ? "complete" : "n" + std::to_string(i);
    const std::string prior = i == 1 ? "root" : "n" + std::to_string(i - 1);
    Value node = json::Object{};
    if (i == 0) node.set("required", true);
    if (i > 0) node.set("prerequisites", json::Array{json::Object{{"node_id", prior}}});
    if (i == 511) node.set("terminal_result", "BUILDER_COMPLETE");
    add_node(nodes, tools, id, std::move(node), i == 511);
  }
  const CompileResult result = compile_graph(std::move(nodes), std::move(tools));
  EXPECT_TRUE(result.ok) << (result.diagnostics.empty() ? "" : result.diagnostics[0].message);
}

// Millforge's determinism sentinel: a report holds at most 128 diagnostics, MF-D001 included; a
// report of exactly 128 has no warning.
TEST(MillforgeParity, ReportBoundCountsTheTruncationWarning) {
  for (const int faults : {128, 130}) {
    json::Object nodes;
    json::Array tools;
    for (int i = 0; i < faults; ++i) {
      add_node(nodes, tools, "n" + std::to_string(1000 + i),
               json::Object{{"prerequisites", json::Array{json::Object{{"node_id", "missing"}}}}},
               false);
    }
    add_node(nodes, tools, "done", json::Object{{"terminal_result", "BUILDER_COMPLETE"}}, true);
    const CompileResult result = compile_graph(std::move(nodes), std::move(tools));
    ASSERT_EQ(result.diagnostics.size(), static_cast<std::size_t>(faults));
    diag::Report report;
    report.add_all(result.diagnostics);
    const auto kept = report.diagnostics();
    ASSERT_EQ(kept.size(), 128u) << faults;
    EXPECT_EQ(kept.back().code, faults == 128 ? "MF-G001" : "MF-D001");
    EXPECT_EQ(report.dropped(), faults == 128 ? 0u : 3u);
  }
}

// Matched arguments take the same values: their schemas are compared without annotations and with
// `required` as a set; anything else that differs (an enum, a bound) is MF-G012.
TEST(MillforgeParity, ArgumentMatchesCompareSchemasWithoutAnnotations) {
  const auto compile_match = [](Value prior, Value current) {
    json::Object nodes;
    json::Array tools;
    const auto schema = [](Value property) {
      return json::Object{{"type", "object"},
                          {"properties", json::Object{{"arg", std::move(property)}}},
                          {"required", json::Array{"arg"}}};
    };
    add_node(nodes, tools, "first", json::Object{{"required", true}}, false);
    add_node(nodes, tools, "second",
             json::Object{
                 {"prerequisites",
                  json::Array{json::Object{{"node_id", "first"},
                                           {"argument_matches", json::Object{{"arg", "arg"}}}}}}},
             false);
    add_node(nodes, tools, "done",
             json::Object{{"terminal_result", "BUILDER_COMPLETE"},
                          {"prerequisites", json::Array{json::Object{{"node_id", "second"}}}}},
             true);
    tools[0].set("input_schema", schema(std::move(prior)));
    tools[1].set("input_schema", schema(std::move(current)));
    return codes_of(compile_graph(std::move(nodes), std::move(tools)).diagnostics);
  };
  const Value object_ab =
      json::Object{{"type", "object"},
                   {"properties", json::Object{{"a", json::Object{{"type", "string"}}},
                                               {"b", json::Object{{"type", "string"}}}}},
                   {"required", json::Array{"a", "b"}}};
  Value object_ba = object_ab;
  object_ba.set("required", json::Array{"b", "a"});
  object_ba.set("description", "the same object, said otherwise");
  EXPECT_TRUE(compile_match(object_ab, object_ba).empty());
  EXPECT_TRUE(compile_match(json::Object{{"type", "string"}, {"title", "Path"}},
                            json::Object{{"type", "string"}, {"default", "."}})
                  .empty());
  EXPECT_EQ(joined(compile_match(json::Object{{"type", "string"}},
                                 json::Object{{"type", "string"}, {"enum", json::Array{"a"}}})),
            "MF-G012");
  EXPECT_EQ(joined(compile_match(json::Object{{"type", "string"}, {"minLength", 1}},
                                 json::Object{{"type", "string"}})),
            "MF-G012");
}

// --- the millforge-v1 form: Millforge's pinned digests ----------------------------------------

struct Pinned {
  std::string source;
  std::string source_sha256;
  std::string compiled_sha256;
};

// tests/compiler/test_service.py pins these three fixtures; our twins have the same semantics.
const std::vector<Pinned> kPinned = {
    {"golden.yaml", "300d4655196b4d421a85969d4d381c07df70de9f92e12ee695a2f06ff04487b1",
     "1d65583fe8bd8379d95f889fe0e889d9ee28ada85d912db9188191eb73bddc52"},
    {"golden.json", "300d4655196b4d421a85969d4d381c07df70de9f92e12ee695a2f06ff04487b1",
     "1d65583fe8bd8379d95f889fe0e889d9ee28ada85d912db9188191eb73bddc52"},
    {"millforge/simple.json", "cff26dee6692c2059385c24934042c51eb8719c638f578a6b869fca21cc627f2",
     "29e604298ecf09500b092ff95a3ad96686a386c52bb2e3c4819a54d83454d78b"},
    {"millforge/blocked.yaml", "b1fcca877db492fa8fa5ad834e9507546bc033d42c21278d93b9ce8195665318",
     "9a68e99b7ce3185bd6a88724f40c4875ce5f4bd3836b691824e3564f42f58f4c"},
};

CompileRequest millforge_request(const std::string& source) {
  CompileRequest r = request_with(read_source(kHarnessDir + source),
                                  read_json(kMillforgeDir + "golden-snapshot.json"));
  r.form = PlanForm::MillforgeV1;
  return r;
}

TEST(MillforgeParity, MillforgeFormReproducesPinnedDigests) {
  for (const auto& p : kPinned) {
    const CompileResult result = compile(millforge_request(p.source));
    ASSERT_TRUE(result.ok) << p.source;
    EXPECT_EQ(result.source_sha256, p.source_sha256) << p.source;
    EXPECT_EQ(result.compiled_sha256, p.compiled_sha256) << p.source;
    EXPECT_EQ(millforge_plan_digest(result.plan), p.compiled_sha256) << p.source;
    // The bytes load through Millforge's plan rules.
    auto loaded = load_millforge_plan(result.plan_bytes);
    ASSERT_TRUE(loaded.ok()) << loaded.diagnostics().front().message;
    EXPECT_TRUE(is_millforge_plan(*loaded));
    EXPECT_EQ(result.plan_bytes.back(), '\n');
    EXPECT_EQ(result.plan.find("nodes")->as_array()[0].find("output_schema"), nullptr);
  }
}

// The product's own form is unchanged by the form: a snapshot tool's plan carries the digest
// computed here, not the one the snapshot states.
TEST(MillforgeParity, DefaultFormIsTheProductsOwn) {
  CompileRequest r = millforge_request("golden.yaml");
  r.form = PlanForm::Native;
  const CompileResult result = compile(r);
  ASSERT_TRUE(result.ok);
  EXPECT_FALSE(is_millforge_plan(result.plan));
  EXPECT_NE(result.compiled_sha256, kPinned[0].compiled_sha256);
  const Value& binding = *result.plan.find("nodes")->as_array()[0].find("binding");
  EXPECT_NE(binding.find("descriptor_sha256")->as_string(), std::string(64, '4'));
}

// Millforge's plans are verified by their own rules: their digest, their file form, their model.
TEST(MillforgeParity, VerifyRefusesTamperedMillforgePlans) {
  const CompileResult result = compile(millforge_request("golden.yaml"));
  ASSERT_TRUE(result.ok);
  // One changed value: the digest no longer verifies.
  Value plan = result.plan;
  plan.find("budgets")->set("max_iterations", 7);
  auto changed = load_millforge_plan(millforge_plan_bytes(plan));
  ASSERT_FALSE(changed.ok());
  EXPECT_EQ(changed.diagnostics().front().code, "MF-L004");
  // Rehashed after breaking an invariant: the model refuses it.
  plan = result.plan;
  plan.find("terminal_result_map")->set("collect_context", "CHECKER_COMPLETE");
  plan.set("compiled_sha256", millforge_plan_digest(plan));
  auto broken = load_millforge_plan(millforge_plan_bytes(plan));
  ASSERT_FALSE(broken.ok());
  EXPECT_EQ(broken.diagnostics().front().code, "MF-L002");
  // An unknown member, rehashed.
  plan = result.plan;
  plan.set("output_schema", true);
  plan.set("compiled_sha256", millforge_plan_digest(plan));
  auto extra = load_millforge_plan(millforge_plan_bytes(plan));
  ASSERT_FALSE(extra.ok());
  EXPECT_EQ(extra.diagnostics().front().code, "MF-L002");
  // Not its file form: refused.
  std::string spaced = result.plan_bytes;
  spaced.insert(1, " ");
  EXPECT_FALSE(load_millforge_plan(spaced).ok());
}

// What the millforge-v1 form cannot carry is refused, not dropped.
TEST(MillforgeParity, ProjectionIsRefusedInMillforgeForm) {
  CompileRequest r = millforge_request("golden.yaml");
  r.source.set("projection", json::Object{{"mode", "compiled"}});
  const CompileResult result = compile(r);
  ASSERT_FALSE(result.ok);
  ASSERT_FALSE(result.diagnostics.empty());
  EXPECT_EQ(result.diagnostics.back().code, "MF-S018");
  EXPECT_EQ(result.diagnostics.back().pointer, "/projection");
}

// --- Millforge's hashing form -------------------------------------------------------------------

Value parse(std::string_view text) {
  auto v = json::parse(text);
  EXPECT_TRUE(v.ok()) << text;
  return v.ok() ? std::move(v).value() : Value();
}

// Expected bytes are what Python's json.dumps(sort_keys=True, ensure_ascii=True,
// separators=(",", ":")) gives for the same values, plus the newline.
TEST(MillforgeForm, MatchesPythonsSortedAsciiDump) {
  EXPECT_EQ(json::millforge_form(parse(R"({"z":1,"Z":2,"\u00e9":3,"a":[0.5,1e-05,1e16,1.5e16,
                                 123456789012345.6,0.0001,-0.0,1e22,2.5e-7]})")),
            R"({"Z":2,"a":[0.5,1e-05,1e+16,1.5e+16,123456789012345.6,0.0001,-0.0,1e+22,2.5e-07],)"
            R"("z":1,"\u00e9":3})"
            "\n");
  EXPECT_EQ(json::millforge_form(parse(R"({"s":"\u00e9\u007f\u0001\n\t\"\\/\ud83d\ude00\u2028"})")),
            R"({"s":"\u00e9\u007f\u0001\n\t\"\\/\ud83d\ude00\u2028"})"
            "\n");
  EXPECT_EQ(json::millforge_form(parse("[1e300,5e-324,0.30000000000000004,1234567890123456789]")),
            "[1e+300,5e-324,0.30000000000000004,1.2345678901234568e+18]\n");
  // Exact integers are Python ints, except inside the members named as floats.
  EXPECT_EQ(json::millforge_form(parse(R"({"f":[1,0.5,100],"i":[1,100]})"), {"/f"}),
            "{\"f\":[1.0,0.5,100.0],\"i\":[1,100]}\n");
  std::string out;
  json::write_python_float(1e15, out);
  EXPECT_EQ(out, "1000000000000000.0");
}

// Python's json.loads makes "0.0" and "1e2" floats and "0" an int, and json.dumps writes them
// apart: the form keeps the kind of lexeme each number was read from. Nothing else sees it.
TEST(MillforgeForm, KeepsTheKindOfEachNumberLexeme) {
  const Value v = parse(R"({"f":[0.0,1.0,1e2,-2.0,1E0,0.5],"i":[0,1,100,-2]})");
  EXPECT_EQ(json::millforge_form(v), "{\"f\":[0.0,1.0,100.0,-2.0,1.0,0.5],\"i\":[0,1,100,-2]}\n");
  EXPECT_EQ(json::canonical(v), R"({"f":[0,1,100,-2,1,0.5],"i":[0,1,100,-2]})");
  EXPECT_EQ(parse("[1.0]"), parse("[1]"));
  // A copy keeps the kind; a number made here is an int when it is an exact integer.
  const Value copy = *v.find("f");
  EXPECT_EQ(json::millforge_form(copy), "[0.0,1.0,100.0,-2.0,1.0,0.5]\n");
  EXPECT_EQ(json::millforge_form(Value(json::Array{Value(1.0)})), "[1]\n");
}

// Two numbers this form writes otherwise than Python on purpose (docs/json.md, "Millforge form"):
// the lexeme -0 is a double's negative zero (Python: the int 0), and an integer beyond 2^53-1 is
// the nearest double (Python: the exact int).
TEST(MillforgeForm, NegativeZeroAndHugeIntegersAreDoubles) {
  EXPECT_EQ(json::millforge_form(parse("[-0,-0.0,0,9007199254740991,9007199254740993]")),
            "[-0.0,-0.0,0,9007199254740991,9007199254740992.0]\n");
}

// --- Millforge catalog snapshots ----------------------------------------------------------------

TEST(MillforgeSnapshot, IdentityIsMillforgesRegistryDigest) {
  const Value doc = read_json(kMillforgeDir + "golden-snapshot.json");
  auto catalog = tools::Catalog::from_json(doc);
  ASSERT_TRUE(catalog.ok());
  const auto id = catalog->snapshot_identity();
  EXPECT_EQ(id.snapshot_id, doc.find("snapshot_id")->as_string());
  EXPECT_EQ(id.snapshot_sha256, doc.find("snapshot_sha256")->as_string());
  // Stated digests are pinned as stated; the product's own digest is computed beside them.
  const auto* t = catalog->find("tools.finish_blocked", 1);
  ASSERT_NE(t, nullptr);
  ASSERT_TRUE(t->snapshot.has_value());
  EXPECT_EQ(t->snapshot->descriptor_sha256, std::string(64, '4'));
  EXPECT_NE(t->descriptor_sha256, std::string(64, '4'));
  ASSERT_TRUE(t->produced_artifact_ids.has_value());
  EXPECT_TRUE(t->produced_artifact_ids->empty());
}

TEST(MillforgeSnapshot, DriftAndMalformedMetadataAreRefused) {
  const Value good = read_json(kMillforgeDir + "golden-snapshot.json");
  Value drift = good;
  drift.find("tools")->as_array()[0].set("descriptor_sha256", std::string(64, '9'));
  auto r = tools::Catalog::from_json(drift);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.diagnostics().front().code, "MF-R008");
  EXPECT_EQ(r.diagnostics().front().pointer, "/snapshot_sha256");
  Value bad = good;
  bad.set("snapshot_id", "latest");
  r = tools::Catalog::from_json(bad);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.diagnostics().front().code, "MF-R009");
  // A snapshot entry is closed to this product's own members and must state its digest.
  Value ours = good;
  ours.find("tools")->as_array()[0].set("timeout_ms", 1000);
  r = tools::Catalog::from_json(ours);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.diagnostics().front().code, "MF-R004");
  Value unstated = good;
  auto& first = unstated.find("tools")->as_array()[0].as_object();
  first.erase(std::remove_if(first.begin(), first.end(),
                             [](const json::Member& m) { return m.key == "descriptor_sha256"; }),
              first.end());
  r = tools::Catalog::from_json(unstated);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.diagnostics().front().code, "MF-R004");
  // Millforge's entry admission (tests/compiler/test_catalogs.py): a digest that is not 64
  // lowercase hex digits, a capability listed twice, a malformed capability, an artifact listed
  // twice. Each is refused at its pointer.
  const std::vector<std::pair<std::string, Value>> faults = {
      {"/tools/0/descriptor_sha256", Value("ABC")},
      {"/tools/0/required_capabilities/1", json::Array{"workspace.read", "workspace.read"}},
      {"/tools/0/required_capabilities/0", json::Array{"Bad Cap"}},
      {"/tools/0/produced_artifact_ids/1", json::Array{"draft", "draft"}},
  };
  for (const auto& [at, value] : faults) {
    Value entry = good;
    const std::string member =
        at.substr(std::string("/tools/0/").size(),
                  at.find('/', std::string("/tools/0/").size()) - std::string("/tools/0/").size());
    entry.find("tools")->as_array()[0].set(member, value);
    r = tools::Catalog::from_json(entry);
    ASSERT_FALSE(r.ok()) << at;
    EXPECT_EQ(r.diagnostics().front().code, "MF-R004") << at;
    EXPECT_EQ(r.diagnostics().front().pointer, at);
  }
}

// A002 in Millforge's meaning: the descriptor lists what its nodes may produce.
TEST(MillforgeSnapshot, ProducedArtifactIdsDecideWhatANodeMayProduce) {
  Value source = read_source(kHarnessDir + "golden.yaml");
  const Value snapshot = read_json(kMillforgeDir + "golden-snapshot.json");
  // collect_context is read_only in the snapshot and lists "draft": it may produce it.
  EXPECT_TRUE(compile(request_with(source, snapshot)).ok);
  // It also produces "report", which is declared but not listed: A002 only.
  source.find("graph")
      ->find("nodes")
      ->find("collect_context")
      ->set("produces", json::Array{"draft", "report"});
  const CompileResult result = compile(request_with(source, snapshot));
  ASSERT_FALSE(result.ok);
  EXPECT_EQ(joined(codes_of(result.diagnostics)), "MF-A002");
}

// The product's plan carries the descriptor's list beside what the node produces, and its loader
// holds a node to it: a plan edited to produce more, its digest recomputed, is refused.
TEST(MillforgeSnapshot, PlanLoaderHoldsNodesToTheirDescriptorsList) {
  const CompileResult result = compile(request_with(
      read_source(kHarnessDir + "golden.yaml"), read_json(kMillforgeDir + "golden-snapshot.json")));
  ASSERT_TRUE(result.ok);
  Value plan = result.plan;
  Value* collect = nullptr;
  for (auto& n : plan.find("nodes")->as_array()) {
    if (n.find("node_id")->as_string() == "collect_context") collect = &n;
  }
  ASSERT_NE(collect, nullptr);
  EXPECT_EQ(*collect->find("descriptor_produced_artifact_ids"), Value(json::Array{"draft"}));
  collect->set("produced_artifact_ids", json::Array{"draft", "report"});
  plan.set("compiled_sha256", plan_digest(plan));
  auto loaded = load_plan(json::canonical_file(plan));
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.diagnostics().front().code, "MF-L002");
  EXPECT_NE(loaded.diagnostics().front().message.find("does not list"), std::string::npos);
}

}  // namespace
}  // namespace mf::harness
