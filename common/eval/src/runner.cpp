#include "mf/eval/runner.hpp"

#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <filesystem>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "mf/diag/codes.hpp"
#include "mf/hash/sha256.hpp"
#include "mf/io/file.hpp"
#include "mf/json/canonical.hpp"
#include "mf/json/jsonl.hpp"
#include "mf/json/pointer.hpp"
#include "mf/json/reader.hpp"
#include "mf/model/model.hpp"
#include "mf/model/scripted.hpp"
#include "mf/runtime/plan_run.hpp"
#include "mf/trace/writer.hpp"

namespace mf::eval {

namespace {

namespace codes = diag::codes;

// Token totals of one run. They live outside the meter because a plan run owns, and destroys, the
// model it is given.
struct Usage {
  static constexpr std::array<std::string_view, 2> kKeys = {"input_tokens", "output_tokens"};
  std::array<std::optional<std::int64_t>, 2> totals;
  std::optional<double> cost_usd;  // what priced live profiles charged (docs/live-backends.md)

  json::Value to_json() const {
    json::Value out = json::Object{};
    for (std::size_t k = 0; k < kKeys.size(); ++k) {
      if (totals[k]) out.set(kKeys[k], *totals[k]);
    }
    if (cost_usd) out.set("cost_usd", *cost_usd);
    return out;
  }
};

// Sums the token counts providers report, so the report shows what a case cost without reading its
// trace back.
class UsageMeter final : public model::Model {
 public:
  UsageMeter(model::Model& inner, Usage& usage) : inner_(inner), usage_(usage) {}
  UsageMeter(std::unique_ptr<model::Model> owned, Usage& usage)
      : owned_(std::move(owned)), inner_(*owned_), usage_(usage) {}

  model::Reply infer(const model::Request& request, const std::atomic<bool>& cancel) override {
    model::Reply reply = inner_.infer(request, cancel);
    if (reply.usage.is_object()) {
      for (std::size_t k = 0; k < Usage::kKeys.size(); ++k) {
        const json::Value* v = reply.usage.find(Usage::kKeys[k]);
        if (v == nullptr || !v->is_number()) continue;
        if (auto n = v->as_exact_int()) usage_.totals[k] = usage_.totals[k].value_or(0) + *n;
      }
      // Summed in call order, so the total is the same bytes on every run.
      if (const json::Value* c = reply.usage.find("cost_usd"); c != nullptr && c->is_number()) {
        usage_.cost_usd = usage_.cost_usd.value_or(0) + c->as_number();
      }
    }
    return reply;
  }
  std::string name() const override { return inner_.name(); }

 private:
  std::unique_ptr<model::Model> owned_;
  model::Model& inner_;
  Usage& usage_;
};

struct CaseRun {
  json::Value result;
  bool passed = false;
  diag::Diagnostics problems;
};

diag::Diagnostic in_case(const Case& c, const diag::Diagnostic& d) {
  diag::Diagnostic out = d;
  out.message = "case \"" + c.id + "\": " + d.message;
  return out;
}

// A fresh artifact directory for one plan run, removed with whatever the run left in it, so no
// case sees another's artifacts and nothing outlives the suite.
class ScratchDir {
 public:
  ScratchDir() {
    std::string templ = (std::filesystem::temp_directory_path() / "mf-eval-XXXXXX").string();
    if (::mkdtemp(templ.data()) != nullptr) path_ = std::move(templ);
  }
  ~ScratchDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// A fresh model for one run: a task case's script from the bytes the suite loaded, anything else
// opened from its spec (live models with the run's cache options).
Result<std::unique_ptr<model::Model>> open_case_model(const Case& c, const RunOptions& options) {
  if (c.script.empty()) return model::open_model(c.model_spec, options.models);
  auto script = model::ScriptedModel::parse(c.script);
  if (!script) return script.take_diagnostics();
  return std::unique_ptr<model::Model>(std::move(*script));
}

Result<runtime::RunOutcome> run_task_case(const Case& c, const RunOptions& options,
                                          std::string& trace, Usage& usage) {
  Result<std::unique_ptr<model::Model>> model = open_case_model(c, options);
  if (!model) return model.take_diagnostics();
  UsageMeter meter(**model, usage);
  trace::WriterOptions wo;
  wo.run_id = options.run_id_prefix + c.id;
  wo.fixed_clock = options.fixed_clock;
  auto writer = trace::Writer::open_memory(&trace, wo);
  if (!writer) return writer.take_diagnostics();
  runtime::RunOptions ro;
  ro.cancel = options.cancel;
  return runtime::run_task(c.loaded_task, meter, **writer, ro);
}

// Through the same entry point as `mf-run --plan`, in process; only the model is opened here, so
// the meter can sit between it and the loop.
Result<runtime::RunOutcome> run_plan_case(const Case& c, const RunOptions& options,
                                          std::string& trace, Usage& usage) {
  auto model = open_case_model(c, options);
  if (!model) return model.take_diagnostics();
  ScratchDir artifacts;
  if (artifacts.path().empty()) {
    return diag::error(codes::kInternal, "cannot create a scratch artifact directory");
  }
  runtime::PlanRunRequest request;
  request.plan_path = c.plan_path;
  request.plan = c.loaded_plan;
  request.model = std::make_unique<UsageMeter>(std::move(*model), usage);
  request.trace_sink = &trace;
  request.run_id = options.run_id_prefix + c.id;
  request.fixed_clock = options.fixed_clock;
  request.workspace = c.workspace_path;
  request.artifact_dir = artifacts.path();
  if (!c.request.is_null()) request.request = json::canonical(c.request);
  request.guardrails = c.guardrails;
  request.cancel = options.cancel;
  return runtime::run_plan_request(request);
}

// `keep_mutex` serialises the keeper: a keeper (a store handle) need not be thread-safe.
CaseRun run_case(const Case& c, const RunOptions& options, std::mutex& keep_mutex) {
  CaseRun run;
  std::string trace;
  Usage usage;
  const auto start = std::chrono::steady_clock::now();
  Result<runtime::RunOutcome> outcome = c.kind == CaseKind::Plan
                                            ? run_plan_case(c, options, trace, usage)
                                            : run_task_case(c, options, trace, usage);
  const auto elapsed = std::chrono::steady_clock::now() - start;
  if (!outcome) {
    for (const auto& d : outcome.diagnostics()) run.problems.push_back(in_case(c, d));
    return run;
  }
  if (!options.traces_dir.empty()) {
    const std::string path =
        (std::filesystem::path(options.traces_dir) / (c.id + ".jsonl")).string();
    if (Status s = io::publish_atomic(path, trace, io::Clobber::Replace); !s) {
      for (const auto& d : s.diagnostics()) run.problems.push_back(in_case(c, d));
      return run;
    }
  }
  if (options.keep_trace) {
    std::lock_guard<std::mutex> lock(keep_mutex);
    if (Status s = options.keep_trace(c.id, trace); !s) {
      for (const auto& d : s.diagnostics()) run.problems.push_back(in_case(c, d));
      return run;
    }
  }
  std::optional<PlanFacts> facts;
  if (c.kind == CaseKind::Plan) {
    Result<PlanFacts> read = plan_facts(trace);
    if (!read) {
      for (const auto& d : read.diagnostics()) run.problems.push_back(in_case(c, d));
      return run;
    }
    facts = std::move(*read);
  }
  json::Array failures = grade(c.expect, *outcome, facts ? &*facts : nullptr);
  run.passed = failures.empty();
  json::Value& r = run.result;
  r.set("id", c.id);
  r.set("status", run.passed ? "passed" : "failed");
  r.set("terminal", outcome->terminal);
  r.set("model_calls", outcome->model_calls);
  r.set("repairs", outcome->repairs);
  r.set("trace_sha256", hash::sha256_hex(trace));
  r.set("usage", usage.to_json());
  r.set("failures", std::move(failures));
  if (facts) {
    r.set("tool_calls", outcome->tool_calls);
    if (const json::Value* d =
            outcome->completed() ? outcome->output.find("disposition") : nullptr) {
      r.set("disposition", *d);
    }
    json::Value violations = json::Object{};
    for (const auto& [kind, n] : facts->violations) violations.set(kind, n);
    r.set("violations", std::move(violations));
  }
  if (!options.fixed_clock) {
    r.set("latency_ms",
          std::int64_t(std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count()));
  }
  return run;
}

}  // namespace

Result<PlanFacts> plan_facts(std::string_view trace) {
  PlanFacts facts;
  std::map<std::string, std::string> tool_of;  // call id -> tool, for the calls still open
  json::JsonlReader reader(trace);
  Result<json::Value> line = json::Value();
  while (reader.next(line)) {
    if (!line) return line.take_diagnostics();
    const json::Value* event = line->find("event");
    if (event == nullptr || !event->is_string()) continue;
    const std::string& name = event->as_string();
    const json::Value* call_id = line->find("call_id");
    if (name == "guardrail_violation") {
      if (const json::Value* kind = line->find("kind"); kind != nullptr && kind->is_string()) {
        ++facts.violations[kind->as_string()];
      }
    } else if (name == "tool_called" && call_id != nullptr && call_id->is_string()) {
      const json::Value* tool = line->find("tool");
      tool_of[call_id->as_string()] = tool != nullptr && tool->is_string() ? tool->as_string() : "";
    } else if (name == "tool_completed" && call_id != nullptr && call_id->is_string()) {
      auto it = tool_of.find(call_id->as_string());
      const json::Value* ok = line->find("ok");
      if (it != tool_of.end() && ok != nullptr && ok->is_bool() && ok->as_bool()) {
        facts.tools.push_back(it->second);
      }
      if (it != tool_of.end()) tool_of.erase(it);
    }
  }
  return facts;
}

json::Array grade(const Expect& expect, const runtime::RunOutcome& outcome,
                  const PlanFacts* facts) {
  json::Array failures;
  auto fail = [&](std::string check, json::Value expected, const json::Value* actual) {
    json::Value f;
    f.set("check", std::move(check));
    f.set("expected", std::move(expected));
    if (actual != nullptr) f.set("actual", *actual);
    failures.push_back(std::move(f));
  };
  auto exact = [&](const char* check, const std::optional<std::int64_t>& expected,
                   std::int64_t actual) {
    if (expected && *expected != actual) {
      const json::Value a(actual);
      fail(check, *expected, &a);
    }
  };
  if (expect.terminal && *expect.terminal != outcome.terminal) {
    const json::Value actual(outcome.terminal);
    fail("terminal", *expect.terminal, &actual);
  }
  if (expect.disposition) {
    const json::Value* actual = outcome.completed() ? outcome.output.find("disposition") : nullptr;
    if (actual == nullptr || *actual != json::Value(*expect.disposition)) {
      fail("disposition", *expect.disposition, actual);
    }
  }
  exact("model_calls", expect.model_calls, outcome.model_calls);
  exact("repairs", expect.repairs, outcome.repairs);
  exact("tool_calls", expect.tool_calls, outcome.tool_calls);
  for (const json::Member& m : expect.output) {
    const json::Value* actual = outcome.completed() ? outcome.output.find(m.key) : nullptr;
    // Canonical bytes decide equality: member order and number spelling do not matter.
    if (actual == nullptr || json::canonical(*actual) != json::canonical(m.value)) {
      fail("output/" + json::escape_token(m.key), m.value, actual);
    }
  }
  if (facts == nullptr) return failures;
  for (const auto& [kind, expected] : expect.violations) {
    const auto it = facts->violations.find(kind);
    const std::int64_t actual = it == facts->violations.end() ? 0 : it->second;
    if (actual != expected) {
      const json::Value a(actual);
      fail("violations/" + json::escape_token(kind), expected, &a);
    }
  }
  if (expect.tools && *expect.tools != facts->tools) {
    json::Array expected, actual;
    for (const auto& t : *expect.tools) expected.push_back(t);
    for (const auto& t : facts->tools) actual.push_back(t);
    const json::Value a(std::move(actual));
    fail("tools", std::move(expected), &a);
  }
  return failures;
}

std::size_t SuiteRun::failed() const {
  return static_cast<std::size_t>(std::count_if(report.cases.begin(), report.cases.end(),
                                                [](const ReportCase& c) { return !c.passed; }));
}

Result<SuiteRun> run_suite(const Suite& suite, const RunOptions& options) {
  if (!options.traces_dir.empty()) {
    std::error_code ec;
    if (!std::filesystem::is_directory(options.traces_dir, ec)) {
      return diag::error(codes::kBadOutputPath,
                         "traces directory \"" + options.traces_dir + "\" does not exist");
    }
  }
  const std::size_t n = suite.cases.size();
  std::vector<CaseRun> runs(n);
  std::atomic<std::size_t> next{0};
  std::mutex progress_mutex, keep_mutex;
  std::size_t done = 0;
  auto worker = [&] {
    for (;;) {
      const std::size_t i = next.fetch_add(1);
      if (i >= n) return;
      try {
        runs[i] = run_case(suite.cases[i], options, keep_mutex);
      } catch (const std::exception& e) {
        runs[i].problems.push_back(in_case(
            suite.cases[i], diag::error(codes::kInternal, std::string("exception: ") + e.what())));
      }
      if (options.progress) {
        std::lock_guard<std::mutex> lock(progress_mutex);
        options.progress(++done, n);
      }
    }
  };
  const std::size_t threads = std::clamp<std::size_t>(options.jobs, 1, std::max<std::size_t>(n, 1));
  if (threads == 1) {
    worker();
  } else {
    std::vector<std::thread> pool;
    pool.reserve(threads);
    for (std::size_t t = 0; t < threads; ++t) pool.emplace_back(worker);
    for (auto& t : pool) t.join();
  }

  diag::Diagnostics problems;
  json::Array cases;
  SuiteRun out;
  out.report.suite_id = suite.id;
  std::int64_t passed = 0;
  for (std::size_t i = 0; i < n; ++i) {
    CaseRun& run = runs[i];
    for (auto& d : run.problems) problems.push_back(std::move(d));
    if (!run.problems.empty()) continue;
    passed += run.passed ? 1 : 0;
    out.report.cases.push_back({suite.cases[i].id, run.passed});
    cases.push_back(std::move(run.result));
  }
  if (!problems.empty()) return problems;

  json::Value summary;
  summary.set("cases", static_cast<std::int64_t>(n));
  summary.set("passed", passed);
  summary.set("failed", static_cast<std::int64_t>(n) - passed);
  json::Value report;
  report.set("v", 1);
  report.set("kind", "millforge_eval_report");
  report.set("suite_id", suite.id);
  report.set("suite_sha256", suite.sha256);
  report.set("cases", std::move(cases));
  report.set("summary", std::move(summary));
  out.document = std::move(report);
  std::sort(out.report.cases.begin(), out.report.cases.end(),
            [](const ReportCase& a, const ReportCase& b) { return a.id < b.id; });
  return out;
}

}  // namespace mf::eval
