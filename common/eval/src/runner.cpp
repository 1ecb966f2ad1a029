#include "mf/eval/runner.hpp"

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
#include "mf/json/pointer.hpp"
#include "mf/model/scripted.hpp"
#include "mf/trace/writer.hpp"

namespace mf::eval {

namespace {

namespace codes = diag::codes;

// Sums the token counts providers report, so the report shows what a case cost without reading its
// trace back.
class UsageMeter final : public model::Model {
 public:
  explicit UsageMeter(model::Model& inner) : inner_(inner) {}

  model::Reply infer(const model::Request& request, const std::atomic<bool>& cancel) override {
    model::Reply reply = inner_.infer(request, cancel);
    if (reply.usage.is_object()) {
      for (std::size_t k = 0; k < kKeys.size(); ++k) {
        const json::Value* v = reply.usage.find(kKeys[k]);
        if (v == nullptr || !v->is_number()) continue;
        if (auto n = v->as_exact_int()) totals_[k] = totals_[k].value_or(0) + *n;
      }
    }
    return reply;
  }
  std::string name() const override { return inner_.name(); }

  json::Value usage() const {
    json::Value out = json::Object{};
    for (std::size_t k = 0; k < kKeys.size(); ++k) {
      if (totals_[k]) out.set(kKeys[k], *totals_[k]);
    }
    return out;
  }

 private:
  static constexpr std::array<std::string_view, 2> kKeys = {"input_tokens", "output_tokens"};
  model::Model& inner_;
  std::array<std::optional<std::int64_t>, 2> totals_;
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

// `keep_mutex` serialises the keeper: a keeper (a store handle) need not be thread-safe.
CaseRun run_case(const Case& c, const RunOptions& options, std::mutex& keep_mutex) {
  CaseRun run;
  auto script = model::ScriptedModel::parse(c.script);
  if (!script) {
    for (const auto& d : script.diagnostics()) run.problems.push_back(in_case(c, d));
    return run;
  }
  UsageMeter meter(**script);
  std::string trace;
  trace::WriterOptions wo;
  wo.run_id = options.run_id_prefix + c.id;
  wo.fixed_clock = options.fixed_clock;
  auto writer = trace::Writer::open_memory(&trace, wo);
  if (!writer) {
    for (const auto& d : writer.diagnostics()) run.problems.push_back(in_case(c, d));
    return run;
  }
  runtime::RunOptions ro;
  ro.cancel = options.cancel;
  const auto start = std::chrono::steady_clock::now();
  Result<runtime::RunOutcome> outcome = runtime::run_task(c.loaded_task, meter, **writer, ro);
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
  json::Array failures = grade(c.expect, *outcome);
  run.passed = failures.empty();
  json::Value& r = run.result;
  r.set("id", c.id);
  r.set("status", run.passed ? "passed" : "failed");
  r.set("terminal", outcome->terminal);
  r.set("model_calls", outcome->model_calls);
  r.set("repairs", outcome->repairs);
  r.set("trace_sha256", hash::sha256_hex(trace));
  r.set("usage", meter.usage());
  r.set("failures", std::move(failures));
  if (!options.fixed_clock) {
    r.set("latency_ms",
          std::int64_t(std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count()));
  }
  return run;
}

}  // namespace

json::Array grade(const Expect& expect, const runtime::RunOutcome& outcome) {
  json::Array failures;
  auto fail = [&](std::string check, json::Value expected, const json::Value* actual) {
    json::Value f;
    f.set("check", std::move(check));
    f.set("expected", std::move(expected));
    if (actual != nullptr) f.set("actual", *actual);
    failures.push_back(std::move(f));
  };
  if (expect.terminal && *expect.terminal != outcome.terminal) {
    const json::Value actual(outcome.terminal);
    fail("terminal", *expect.terminal, &actual);
  }
  if (expect.model_calls && *expect.model_calls != outcome.model_calls) {
    const json::Value actual(outcome.model_calls);
    fail("model_calls", *expect.model_calls, &actual);
  }
  if (expect.repairs && *expect.repairs != outcome.repairs) {
    const json::Value actual(outcome.repairs);
    fail("repairs", *expect.repairs, &actual);
  }
  for (const json::Member& m : expect.output) {
    const json::Value* actual = outcome.completed() ? outcome.output.find(m.key) : nullptr;
    // Canonical bytes decide equality: member order and number spelling do not matter.
    if (actual == nullptr || json::canonical(*actual) != json::canonical(m.value)) {
      fail("output/" + json::escape_token(m.key), m.value, actual);
    }
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
