#include <gtest/gtest.h>

#include <cmath>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <thread>

#include "mf/eval/report.hpp"
#include "mf/eval/runner.hpp"
#include "mf/eval/suite.hpp"
#include "mf/hash/sha256.hpp"
#include "mf/json/canonical.hpp"
#include "mf/json/reader.hpp"

namespace mf::eval {
namespace {

const std::string kForge = std::string(MF_SOURCE_DIR) + "/fixtures/forge";

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// One Forge case with the given expect object, as suite bytes.
std::string one_case(std::string_view expect, std::string_view task = "task-valid.json",
                     std::string_view script = "responses-valid.json") {
  return R"({"suite_id":"s","cases":[{"id":"c","task":")" + std::string(task) +
         R"(","model":"scripted:)" + std::string(script) + R"(","expect":)" + std::string(expect) +
         "}]}";
}

RunOptions fixed(unsigned jobs = 1) {
  RunOptions o;
  o.jobs = jobs;
  o.fixed_clock = true;
  return o;
}

json::Value run_ok(const Suite& suite, const RunOptions& options) {
  Result<SuiteRun> run = run_suite(suite, options);
  EXPECT_TRUE(run.ok()) << (run.ok() ? "" : run.diagnostics()[0].message);
  if (!run.ok()) return json::Value();
  // The typed view agrees with the document.
  // The report written from its entries is the canonical form of the whole document.
  const json::Value document = run->document();
  EXPECT_EQ(run->bytes(), json::canonical_file(document));
  Result<Report> typed = parse_report(run->bytes());
  EXPECT_TRUE(typed.ok());
  if (typed.ok()) {
    EXPECT_EQ(typed->suite_id, run->suite_id);
    EXPECT_EQ(typed->cases.size(), run->cases);
    std::vector<std::string> failed;
    for (const auto& c : typed->cases) {
      if (!c.passed) failed.push_back(c.id);
    }
    EXPECT_EQ(failed.size(), run->failed());
    failed.resize(std::min(failed.size(), SuiteRun::kFailedNamed));
    EXPECT_EQ(failed, run->first_failed);
  }
  return document;
}

TEST(EvalSuite, EachRuleHasItsCodeAndPointer) {
  const std::string c0 = R"({"id":"a","task":"t.json","model":"scripted:r.json",)";
  const std::vector<std::tuple<std::string, std::string, std::string, std::string>> cases = {
      {"unknown top field",
       R"({"suite_id":"s","cases":[)" + c0 + R"("expect":{"repairs":0}}],"x":1})", "MF-S021", "/x"},
      {"empty suite id", R"({"suite_id":"","cases":[)" + c0 + R"("expect":{"repairs":0}}]})",
       "MF-S022", "/suite_id"},
      {"no cases", R"({"suite_id":"s","cases":[]})", "MF-S020", "/cases"},
      {"case not an object", R"({"suite_id":"s","cases":[1]})", "MF-S020", "/cases/0"},
      {"empty case id",
       R"({"suite_id":"s","cases":[{"id":"","task":"t","model":"scripted:r","expect":{"repairs":0}}]})",
       "MF-S022", "/cases/0/id"},
      {"bad case id",
       R"({"suite_id":"s","cases":[{"id":"a/b","task":"t","model":"scripted:r","expect":{"repairs":0}}]})",
       "MF-S022", "/cases/0/id"},
      {"duplicate case id",
       R"({"suite_id":"s","cases":[)" + c0 + R"("expect":{"repairs":0}},)" + c0 +
           R"("expect":{"repairs":1}}]})",
       "MF-V001", "/cases/1/id"},
      {"unknown case field",
       R"({"suite_id":"s","cases":[)" + c0 + R"("expect":{"repairs":0},"note":"x"}]})", "MF-S021",
       "/cases/0/note"},
      {"missing task",
       R"({"suite_id":"s","cases":[{"id":"a","model":"scripted:r","expect":{"repairs":0}}]})",
       "MF-S020", "/cases/0/task"},
      {"model of no known backend",
       R"({"suite_id":"s","cases":[{"id":"a","task":"t","model":"http:p","expect":{"repairs":0}}]})",
       "MF-S020", "/cases/0/model"},
      {"bad expect key", one_case(R"({"calls":1})"), "MF-S021", "/cases/0/expect/calls"},
      {"empty expect", one_case("{}"), "MF-S020", "/cases/0/expect"},
      {"bad terminal", one_case(R"({"terminal":"done"})"), "MF-S020", "/cases/0/expect/terminal"},
      {"negative calls", one_case(R"({"model_calls":-1})"), "MF-S020",
       "/cases/0/expect/model_calls"},
      {"fractional repairs", one_case(R"({"repairs":0.5})"), "MF-S020", "/cases/0/expect/repairs"},
      {"output of a failed run", one_case(R"({"terminal":"model_failed","output":{"a":1}})"),
       "MF-S020", "/cases/0/expect/output"},
      {"duplicate key", R"({"suite_id":"s","suite_id":"t","cases":[]})", "MF-S006", "/suite_id"},
      {"not an object", "[]", "MF-S012", ""},
  };
  for (const auto& [name, bytes, code, pointer] : cases) {
    Result<Suite> s = parse_suite(bytes);
    ASSERT_FALSE(s.ok()) << name;
    ASSERT_EQ(s.diagnostics().size(), 1u) << name << ": " << s.diagnostics()[1].message;
    EXPECT_EQ(s.diagnostics()[0].code, code) << name << ": " << s.diagnostics()[0].message;
    EXPECT_EQ(s.diagnostics()[0].pointer, pointer) << name;
  }
}

TEST(EvalSuite, TasksAndScriptsAreValidatedBeforeAnyRun) {
  Result<Suite> missing = load_suite_bytes(one_case(R"({"repairs":0})", "nope.json"), kForge);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.diagnostics()[0].code, "MF-S013");
  EXPECT_EQ(missing.diagnostics()[0].pointer, "/cases/0/task");

  // A script that is not a scripted model: the script's own problem, anchored at /cases/0/model.
  Result<Suite> bad_script =
      load_suite_bytes(one_case(R"({"repairs":0})", "task-valid.json", "task-valid.json"), kForge);
  ASSERT_FALSE(bad_script.ok());
  EXPECT_EQ(bad_script.diagnostics()[0].pointer, "/cases/0/model");
  EXPECT_NE(bad_script.diagnostics()[0].message.find("task-valid.json"), std::string::npos);

  // An invalid task keeps its code; the message names the task's own pointer.
  Result<Suite> bad_task =
      load_suite_bytes(one_case(R"({"repairs":0})", "invalid/unknown-field.json"), kForge);
  ASSERT_FALSE(bad_task.ok());
  EXPECT_EQ(bad_task.diagnostics()[0].code, "MF-S021");
  EXPECT_EQ(bad_task.diagnostics()[0].pointer, "/cases/0/task");
  EXPECT_NE(bad_task.diagnostics()[0].message.find("(at /priority)"), std::string::npos);
}

// A suite of many cases (more than one batch of the second thread's) loads to the same index with
// its cases checked on a second thread, and a bad one to the same diagnostics in the same order:
// the document's own, each case's in suite order, a repeated id, the files' in id order.
// Past one sort run of the index (512 KiB, 3,449 cases): each id used again is named at its later
// cases, in suite order, with the first case using it; the index ends in id order.
TEST(EvalSuite, DuplicateIdsAreNamedInSuiteOrderAcrossTheIndexSortsRuns) {
  const int n = 9000;
  // Cases 6,000 on use the ids of cases 0 to 1,499 again, each twice.
  const auto id_at = [](int i) { return "c-" + std::to_string(i < 6000 ? i : (i * 7) % 1500); };
  std::string bytes = R"({"suite_id":"s","cases":[)";
  for (int i = 0; i < n; ++i) {
    bytes += (i > 0 ? "," : "") + std::string(R"({"id":")") + id_at(i) +
             R"(","task":"t.json","model":"scripted:r.json","expect":{"terminal":"completed"}})";
  }
  bytes += "]}";
  const Result<Suite> refused = parse_suite(bytes);
  ASSERT_FALSE(refused.ok());
  std::vector<std::string> expected;
  std::map<std::string, int> first;
  for (int i = 0; i < n; ++i) {
    const auto [at, fresh] = first.emplace(id_at(i), i);
    if (fresh) continue;
    expected.push_back("MF-V001 /cases/" + std::to_string(i) + "/id case id \"" + id_at(i) +
                       "\" is already used by /cases/" + std::to_string(at->second));
  }
  std::vector<std::string> got;
  for (const auto& d : refused.diagnostics()) {
    got.push_back(d.code + " " + d.pointer + " " + d.message);
  }
  EXPECT_EQ(got.size(), 3000u);
  EXPECT_EQ(got, expected);

  std::string unique = R"({"suite_id":"s","cases":[)";
  for (int i = 0; i < n; ++i) {
    unique += (i > 0 ? "," : "") + std::string(R"({"id":"c-)") + std::to_string(i) +
              R"(","task":"t.json","model":"scripted:r.json","expect":{"terminal":"completed"}})";
  }
  unique += "]}";
  const Result<Suite> suite = parse_suite(unique);
  ASSERT_TRUE(suite.ok());
  std::vector<std::string> ids;
  for (int i = 0; i < n; ++i) ids.push_back("c-" + std::to_string(i));
  std::sort(ids.begin(), ids.end());
  Suite::Reader reader(suite->cases);
  ASSERT_EQ(suite->size(), static_cast<std::uint64_t>(n));
  for (int i = 0; i < n; ++i) ASSERT_EQ(reader[i].id(), ids[i]) << i;
  std::uint64_t near = 0;
  for (int i : {0, 1, 2, 5000, 5001, 8999}) {
    EXPECT_EQ(suite->find(ids[i], reader, near), std::optional<std::uint64_t>(i)) << i;
  }
  EXPECT_EQ(suite->find("c-", reader, near), std::nullopt);
  EXPECT_EQ(suite->find("c-9999", reader, near), std::nullopt);
  EXPECT_EQ(suite->find(ids[3], reader, near), std::optional<std::uint64_t>(3));
}

TEST(EvalSuite, CheckingOnASecondThreadGivesTheSameSuiteAndDiagnostics) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("mf-eval-check-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(kForge + "/task-valid.json", dir / "task.json",
                             std::filesystem::copy_options::overwrite_existing);
  std::filesystem::copy_file(kForge + "/responses-valid.json", dir / "r.json",
                             std::filesystem::copy_options::overwrite_existing);
  const auto case_of = [](const std::string& id, const std::string& task, const std::string& more) {
    return R"({"id":")" + id + R"(","task":")" + task +
           R"(","model":"scripted:r.json","expect":{"terminal":"completed")" + more + "}}";
  };
  // Case i is c-(3999 - i) unless `edit` gives another object for it: an index of two sort runs.
  const auto suite_of = [&](const std::function<std::string(int)>& edit) {
    std::string s = R"({"suite_id":"s","cases":[)";
    for (int i = 0; i < 4000; ++i) {
      const std::string other = edit(i);
      s += (i > 0 ? "," : "") +
           (!other.empty() ? other : case_of("c-" + std::to_string(3999 - i), "task.json", ""));
    }
    return s + "]}";
  };
  const auto diagnostics = [](const Result<Suite>& r) {
    std::vector<std::string> out;
    for (const auto& d : r.diagnostics()) {
      out.push_back(d.code + " " + d.pointer + " " + d.message + " " + std::to_string(d.line));
    }
    return out;
  };
  const auto none = [](int) { return std::string(); };
  const std::vector<std::string> suites = {
      suite_of(none),
      suite_of([&](int i) {
        return i == 7     ? case_of("c-992", "task.json", R"(,"repairs":-1)")
               : i == 900 ? case_of("c-99", "task.json", R"(,"x":1)")
                          : "";
      }),
      suite_of([&](int i) {
        return i == 300 || i == 600 ? case_of("c-1", "task.json", "")
               : i == 700           ? case_of("c-299", "task.json", R"(,"tools":[])")
                                    : "";
      }),
      suite_of([&](int i) {
        return i == 5 || i == 800 ? case_of("c-" + std::to_string(3999 - i), "missing.json", "")
                                  : "";
      }),
      suite_of([&](int i) { return i == 3900 ? case_of("c-5", "task.json", "") : ""; }),
      suite_of(none) + "x",
  };
  for (std::size_t k = 0; k < suites.size(); ++k) {
    const std::string path = (dir / "suite.json").string();
    std::ofstream(path, std::ios::binary) << suites[k];
    Result<Suite> one = load_suite(path, 1);
    Result<Suite> two = load_suite(path, 2);
    ASSERT_EQ(one.ok(), two.ok()) << k;
    EXPECT_EQ(one.ok(), k == 0) << k;
    if (!one.ok()) {
      EXPECT_EQ(diagnostics(one), diagnostics(two)) << k;
      EXPECT_FALSE(diagnostics(one).empty()) << k;
      continue;
    }
    ASSERT_EQ(one->size(), two->size());
    ASSERT_GT(one->size() * sizeof(CaseRef), io::RecordFile<CaseRef>::kSortBytes);
    EXPECT_EQ(one->inputs_sha256.size(), 64u);
    EXPECT_EQ(one->inputs_sha256, two->inputs_sha256);
    Suite::Reader a(one->cases), b(two->cases);
    for (std::uint64_t i = 0; i < one->size(); ++i) {
      const CaseRef x = a[i], y = b[i];
      EXPECT_EQ(x.id(), y.id());
      EXPECT_EQ(x.index, y.index);
      EXPECT_EQ(x.begin, y.begin);
      EXPECT_EQ(one->inputs_json(x), two->inputs_json(y));
    }
  }
  std::filesystem::remove_all(dir);
}

// A suite file is read in windows and hashed on the way; bytes held in memory are read whole. The
// two give the same suite (its hash, its cases, each read again from its bytes) or the same
// diagnostics with their lines and columns, also where the file spans many windows.
TEST(EvalSuite, AFileReadInWindowsLoadsAsItsBytes) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("mf-eval-windows-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(kForge + "/task-valid.json", dir / "task.json",
                             std::filesystem::copy_options::overwrite_existing);
  std::filesystem::copy_file(kForge + "/responses-valid.json", dir / "r.json",
                             std::filesystem::copy_options::overwrite_existing);
  // 5,000 cases, one a line: about 600 KB, so a few windows.
  const auto suite_of = [](const std::function<std::string(int)>& edit, const std::string& tail) {
    std::string s = "{\"suite_id\":\"s\xC3\xA9\",\n\"cases\":[\n";
    for (int i = 0; i < 5000; ++i) {
      const std::string other = edit(i);
      s += (i > 0 ? ",\n" : "") +
           (!other.empty() ? other
                           : R"({"id":"c-)" + std::to_string(i) +
                                 R"(","task":"task.json","model":"scripted:r.json",)" +
                                 R"("tags":["\u0074ag"],"expect":{"terminal":"completed"}})");
    }
    return s + "\n]" + tail;
  };
  const auto none = [](int) { return std::string(); };
  const auto at = [](int k, const std::string& text) {
    return [=](int i) { return i == k ? text : std::string(); };
  };
  const std::vector<std::string> suites = {
      suite_of(none, "}\n"),
      suite_of(none, "}\n x"),
      suite_of(none, std::string("}\0", 2)),
      suite_of(at(2700, std::string("{\"id\":\"\0\"}", 10)), "}"),
      suite_of(at(4999, R"({"id":"z","id":"y"})"), "}"),
      suite_of(at(3000, R"({"id":"z","n":NaN})"), "}"),
      suite_of(at(4000, "{\"id\":\"z\",\"n\":\"\xC3\x28\"}"), "}"),
      suite_of(at(4100, R"({"id":"c-1","task":"task.json","model":"scripted:r.json","x":1})"), "}"),
      suite_of(at(4200, R"({"id":"c-1","task":"task.json","model":"scripted:r.json",)"
                        R"("expect":{"terminal":"completed"}})"),
               "}"),
      suite_of(none, ""),
  };
  const auto describe = [](const Result<Suite>& r) {
    std::vector<std::string> out;
    if (r.ok()) {
      out.push_back(r->id + " " + r->sha256);
      Suite::Reader reader(r->cases);
      for (std::uint64_t i = 0; i < r->size(); ++i) {
        const CaseRef& c = reader[i];
        out.push_back(std::string(c.id()) + " " + r->inputs_json(c) +
                      (r->load_case(c).ok() ? "" : " not read again"));
      }
      return out;
    }
    for (const auto& d : r.diagnostics()) {
      out.push_back(d.code + " " + std::to_string(d.line) + ":" + std::to_string(d.column) + " [" +
                    d.pointer + "] " + d.message);
    }
    return out;
  };
  const std::string path = (dir / "suite.json").string();
  for (std::size_t k = 0; k < suites.size(); ++k) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << suites[k];
    const Result<Suite> windowed = load_suite(path, 2);
    const Result<Suite> held = load_suite_bytes(suites[k], dir.string());
    EXPECT_EQ(windowed.ok(), k == 0) << k;
    EXPECT_EQ(describe(windowed), describe(held)) << k;
    if (windowed.ok()) {
      EXPECT_EQ(windowed->sha256, hash::sha256_hex(suites[k]));
      EXPECT_EQ(windowed->cases.size(), 5000u);
    }
  }
  std::filesystem::remove_all(dir);
}

TEST(EvalRun, TheFourForgeCasesPass) {
  Result<Suite> suite = load_suite(kForge + "/eval-suite.json");
  ASSERT_TRUE(suite.ok()) << suite.diagnostics()[0].message;
  ASSERT_EQ(suite->cases.size(), 4u);
  json::Value report = run_ok(*suite, fixed());
  EXPECT_EQ(report.find("kind")->as_string(), "millforge_eval_report");
  EXPECT_EQ(report.find("suite_sha256")->as_string(),
            hash::sha256_hex(read_file(kForge + "/eval-suite.json")));
  // Wilson at 4 of 4: [n / (n + z^2), 1]; usage medians and p90s by nearest rank.
  EXPECT_EQ(json::canonical(*report.find("summary")),
            R"({"cases":4,"failed":0,"pass_rate":1,"passed":4,)"
            R"("usage":{"input_tokens":{"median":182,"p90":433,"total":797},)"
            R"("output_tokens":{"median":24,"p90":38,"total":73}},)"
            R"("wilson95":[0.5101091635454027,1]})");
  const std::vector<std::tuple<std::string, std::string, int, int>> expected = {
      {"invalid-without-repair", "invalid_output", 1, 0},
      {"one-targeted-repair", "completed", 2, 1},
      {"provider-failure", "model_failed", 1, 0},
      {"valid-first-response", "completed", 1, 0},
  };
  const json::Array& cases = report.find("cases")->as_array();
  ASSERT_EQ(cases.size(), expected.size());
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const auto& [id, terminal, calls, repairs] = expected[i];
    EXPECT_EQ(cases[i].find("id")->as_string(), id);  // sorted by id
    EXPECT_EQ(cases[i].find("status")->as_string(), "passed") << id;
    EXPECT_EQ(cases[i].find("terminal")->as_string(), terminal);
    EXPECT_EQ(cases[i].find("model_calls")->as_number(), calls);
    EXPECT_EQ(cases[i].find("repairs")->as_number(), repairs);
    EXPECT_EQ(cases[i].find("latency_ms"), nullptr) << "fixed clock reports no latency";
  }
  EXPECT_EQ(json::canonical(*cases[1].find("usage")), R"({"input_tokens":433,"output_tokens":38})");
  EXPECT_EQ(json::canonical(*cases[2].find("usage")), "{}");
}

TEST(EvalRun, AWrongOutputFieldIsAPreciseFailure) {
  Result<Suite> suite = load_suite_bytes(
      one_case(
          R"({"terminal":"completed","output":{"evidence":"src/lib.rs:99","risk":"A user-controlled value reaches panic!."}})"),
      kForge);
  ASSERT_TRUE(suite.ok());
  json::Value report = run_ok(*suite, fixed());
  const json::Value& c = report.find("cases")->as_array().at(0);
  EXPECT_EQ(c.find("status")->as_string(), "failed");
  EXPECT_EQ(json::canonical(*c.find("failures")),
            R"([{"actual":"src/lib.rs:12","check":"output/evidence","expected":"src/lib.rs:99"}])");
  EXPECT_EQ(json::canonical(*report.find("summary")->find("failed")), "1");
  EXPECT_EQ(json::canonical(*report.find("summary")->find("pass_rate")), "0");
}

TEST(EvalGrade, EveryFailedCheckIsAnEntry) {
  Expect e;
  e.terminal = "completed";
  e.model_calls = 1;
  e.repairs = 0;
  e.output = {{"evidence", "x"}, {"a/b", json::Object{{"k", 1}, {"j", 2}}}};
  runtime::RunOutcome failed{"invalid_output", json::Value(), 2, 1, 0, {}};
  EXPECT_EQ(json::canonical(grade(e, failed)),
            R"([{"actual":"invalid_output","check":"terminal","expected":"completed"},)"
            R"({"actual":2,"check":"model_calls","expected":1},)"
            R"({"actual":1,"check":"repairs","expected":0},)"
            R"({"check":"output/evidence","expected":"x"},)"
            R"({"check":"output/a~1b","expected":{"j":2,"k":1}}])");
  // Output values compare by canonical bytes: member order does not matter.
  json::Value output;
  output.set("evidence", "x");
  output.set("a/b", json::Object{{"j", 2}, {"k", 1}});
  runtime::RunOutcome ok{"completed", output, 1, 0, 0, {}};
  EXPECT_TRUE(grade(e, ok).empty());
}

TEST(EvalRun, ReportBytesDoNotDependOnThreads) {
  Result<Suite> suite = load_suite(kForge + "/eval-suite.json");
  ASSERT_TRUE(suite.ok());
  const std::string one = json::canonical_file(run_ok(*suite, fixed(1)));
  for (unsigned jobs : {2u, 4u, 16u}) {
    EXPECT_EQ(json::canonical_file(run_ok(*suite, fixed(jobs))), one) << jobs;
  }
  // Without the fixed clock, latency is reported.
  RunOptions timed;
  timed.jobs = 4;
  json::Value report = run_ok(*suite, timed);
  for (const auto& c : report.find("cases")->as_array()) EXPECT_NE(c.find("latency_ms"), nullptr);
}

TEST(EvalRun, TracesAreWrittenPerCaseWithThePrefixedRunId) {
  Result<Suite> suite = load_suite(kForge + "/eval-suite.json");
  ASSERT_TRUE(suite.ok());
  const auto dir =
      std::filesystem::temp_directory_path() / ("mf-eval-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  RunOptions o = fixed(2);
  o.traces_dir = dir.string();
  o.run_id_prefix = "ci-";
  std::size_t progress_calls = 0, last_passed = 0;
  o.progress = [&](std::size_t done, std::size_t total, std::size_t passed) {
    EXPECT_EQ(done, progress_calls++);  // the first call is the start: nothing done yet
    EXPECT_EQ(total, 4u);
    EXPECT_LE(passed, done);
    EXPECT_GE(passed, last_passed);
    last_passed = passed;
  };
  json::Value report = run_ok(*suite, o);
  EXPECT_EQ(progress_calls, 5u);
  EXPECT_EQ(last_passed, 4u);
  for (const auto& c : report.find("cases")->as_array()) {
    const std::string id = c.find("id")->as_string();
    const std::string trace = read_file((dir / (id + ".jsonl")).string());
    EXPECT_EQ(hash::sha256_hex(trace), c.find("trace_sha256")->as_string()) << id;
    EXPECT_NE(trace.find(R"("run_id":"ci-)" + id + "\""), std::string::npos) << id;
  }
  std::filesystem::remove_all(dir);

  o.traces_dir = (dir / "absent").string();
  Result<SuiteRun> refused = run_suite(*suite, o);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.diagnostics()[0].code, "MF-O001");
}

// A minimal valid report with the given (id, passed) cases.
std::string report_text(const std::vector<std::pair<std::string, bool>>& cases) {
  json::Array items;
  std::int64_t passed = 0;
  for (const auto& [id, ok] : cases) {
    json::Value c;
    c.set("id", id);
    c.set("status", ok ? "passed" : "failed");
    c.set("terminal", "completed");
    c.set("model_calls", 1);
    c.set("repairs", 0);
    c.set("trace_sha256", std::string(64, 'a'));
    c.set("usage", json::Object{});
    json::Array failures;
    if (!ok) failures.push_back(json::Object{{"check", "repairs"}, {"expected", 0}, {"actual", 1}});
    c.set("failures", std::move(failures));
    items.push_back(std::move(c));
    passed += ok ? 1 : 0;
  }
  json::Value r;
  r.set("v", 1);
  r.set("kind", "millforge_eval_report");
  r.set("suite_id", "s");
  r.set("suite_sha256", std::string(64, 'b'));
  r.set("summary", json::Object{{"cases", std::int64_t(cases.size())},
                                {"passed", passed},
                                {"failed", std::int64_t(cases.size()) - passed}});
  r.set("cases", std::move(items));
  return json::canonical_file(r);
}

Report report_of(const std::vector<std::pair<std::string, bool>>& cases) {
  Result<Report> r = parse_report(report_text(cases));
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.diagnostics()[0].message);
  return r.ok() ? *r : Report{};
}

TEST(EvalCompare, ClassifiesEveryCaseId) {
  Report baseline = report_of({{"a", true}, {"b", false}, {"c", true}, {"d", false}, {"e", true}});
  Report candidate = report_of({{"a", true}, {"b", true}, {"c", false}, {"d", false}, {"f", true}});
  Comparison c = compare(baseline, candidate);
  // Over the 4 paired cases: one improved, one regressed, so p = 1 and the difference 0 with
  // half-width 1.96 * sqrt(2) / 4.
  const json::Value v = to_json(c);
  EXPECT_EQ(json::canonical(v),
            R"({"baseline_pass_rate":0.6,"candidate_false_closure_rate":null,)"
            R"("candidate_pass_rate":0.6,"cost_ratio":null,)"
            R"("improved":["b"],"latency_ratio":null,"mcnemar_p":1,"missing":["e"],"new":["f"],)"
            R"("pass_rate_difference":{"ci95":[)" +
                json::canonical(json::Value(-1.959963984540054 * std::sqrt(2.0) / 4)) + "," +
                json::canonical(json::Value(1.959963984540054 * std::sqrt(2.0) / 4)) +
                R"(],"estimate":0},"regressed":["c"],"unchanged":["a","d"]})");
  EXPECT_EQ(gate_failures(c, Gates{}).size(), 2u);  // one regression and one missing case
  // The missing case still fails the gate.
  Gates one;
  one.max_regressions = 1;
  EXPECT_EQ(gate_failures(c, one).size(), 1u);
  // Gates on what neither report records fail: they cannot be checked.
  one.max_latency_ratio = 2.0;
  EXPECT_EQ(gate_failures(c, one).size(), 2u);

  Comparison same = compare(baseline, baseline);
  EXPECT_TRUE(gate_failures(same, Gates{}).empty());
  EXPECT_EQ(same.unchanged.size(), 5u);

  Comparison empty = compare(report_of({}), report_of({{"a", true}}));
  EXPECT_EQ(json::canonical(*to_json(empty).find("baseline_pass_rate")), "null");
  EXPECT_TRUE(gate_failures(empty, Gates{}).empty());
}

TEST(EvalCompare, ReadsTheReportsItWritesStrictly) {
  Result<Suite> suite = load_suite(kForge + "/eval-suite.json");
  ASSERT_TRUE(suite.ok());
  Result<Report> own = parse_report(json::canonical_file(run_ok(*suite, RunOptions{})));
  ASSERT_TRUE(own.ok()) << own.diagnostics()[0].message;
  EXPECT_EQ(own->cases.size(), 4u);

  auto rejects = [](std::string text, std::string_view code, std::string_view pointer) {
    Result<Report> r = parse_report(text);
    ASSERT_FALSE(r.ok()) << pointer;
    EXPECT_EQ(r.diagnostics()[0].code, code) << r.diagnostics()[0].message;
    EXPECT_EQ(r.diagnostics()[0].pointer, pointer) << r.diagnostics()[0].message;
  };
  auto edit = [](const std::string& text, const std::string& from, const std::string& to) {
    std::string out = text;
    out.replace(out.find(from), from.size(), to);
    return out;
  };
  const std::string good = report_text({{"a", true}, {"b", false}});
  rejects(edit(good, R"("passed":1)", R"("passed":2)"), "MF-S020", "/summary/passed");
  rejects(edit(good, R"("status":"passed")", R"("status":"failed")"), "MF-S020", "/cases/0/status");
  rejects(edit(good, R"("id":"b")", R"("id":"a")"), "MF-V001", "/cases/1/id");
  rejects(edit(good, R"("id":"a")", R"("id":"c")"), "MF-S020", "/cases/1/id");
  rejects(edit(good, R"("v":1)", R"("v":2)"), "MF-S020", "/v");
  rejects(edit(good, R"("usage":{})", R"("usage":{"cost":1})"), "MF-S021", "/cases/0/usage/cost");
  rejects(edit(good, R"("check":"repairs",)", ""), "MF-S020", "/cases/1/failures/0/check");
  rejects(edit(good, R"("repairs":0,)", R"("repairs":0,"extra":0,)"), "MF-S021", "/cases/0/extra");
}

}  // namespace
}  // namespace mf::eval
