// The suite runner declared in runner.hpp: attempts of the chosen cases on a pool of threads, each
// graded where it finishes, then merged in id order so the report does not depend on the threads.
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
#include "mf/eval/entry.hpp"
#include "mf/eval/stats.hpp"
#include "mf/hash/sha256.hpp"
#include "mf/io/file.hpp"
#include "mf/json/canonical.hpp"
#include "mf/json/jsonl.hpp"
#include "mf/json/pointer.hpp"
#include "mf/model/model.hpp"
#include "mf/model/scripted.hpp"
#include "mf/runtime/plan_run.hpp"
#include "mf/trace/writer.hpp"

namespace mf::eval {

namespace {

namespace codes = diag::codes;
using json::Value;

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
  json::Value identity() const override { return inner_.identity(); }
  Status keep(const model::Reply& reply) override { return inner_.keep(reply); }
  Status flush() override { return inner_.flush(); }

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
Result<std::unique_ptr<model::Model>> open_case_model(const Case& c, const RunOptions& options,
                                                      std::int64_t repeat, const Variant* v) {
  if (c.script == nullptr || (v != nullptr && !v->model.empty())) {
    model::OpenOptions o = options.models;
    o.repeat = repeat;
    return model::open_model(v != nullptr && !v->model.empty() ? v->model : c.model_spec, o);
  }
  auto script = model::ScriptedModel::parse(*c.script);
  if (!script) return script.take_diagnostics();
  return std::unique_ptr<model::Model>(std::move(*script));
}

// One attempt of a case: its case, column and sample index. The names it goes by are made when
// they are needed, so a campaign of many attempts holds none of them.
struct Attempt {
  std::size_t case_index = 0;
  const Variant* variant = nullptr;  // the matrix column, if any
  std::int64_t repeat = 0;
  bool repeated = false;  // the campaign repeats its cases

  // The case's id in the report: "<case id>[.<label>]".
  std::string id(const Suite& suite) const {
    return suite.cases[case_index].id + (variant != nullptr ? "." + variant->label : "");
  }
  // "<id>.<repeat>": the journal's name for it.
  std::string key(const std::string& id) const { return id + "." + std::to_string(repeat); }
  // prefix + id (+ "." + repeat with repeats)
  std::string run_id(const std::string& id, const RunOptions& options) const {
    return options.run_id_prefix + id + (repeated ? "." + std::to_string(repeat) : "");
  }
  // <id>.jsonl (<id>.<repeat>.jsonl with repeats)
  std::string file(const std::string& id) const {
    return id + (repeated ? "." + std::to_string(repeat) : "") + ".jsonl";
  }
};

// An attempt with its names, while it runs.
struct Named {
  const Variant* variant;
  std::int64_t repeat;
  std::string id, key, run_id, file;
  Named(const Attempt& attempt, const Suite& suite, const RunOptions& options)
      : variant(attempt.variant),
        repeat(attempt.repeat),
        id(attempt.id(suite)),
        key(attempt.key(id)),
        run_id(attempt.run_id(id, options)),
        file(attempt.file(id)) {}
};

// The trace-content mode of one attempt's run options, with its replies kept through the
// campaign's keeper (serialised by `keep_mutex`) under the attempt's run id.
void content_options(const Named& a, const RunOptions& options, std::mutex& keep_mutex,
                     runtime::TraceContent& mode,
                     std::function<Status(std::int64_t, std::string_view)>& keep) {
  mode = options.trace_content;
  if (mode != runtime::TraceContent::Store || !options.keep_content) return;
  keep = [&options, &keep_mutex, run_id = a.run_id](std::int64_t call, std::string_view content) {
    std::lock_guard<std::mutex> lock(keep_mutex);
    return options.keep_content(run_id, call, content);
  };
}

Result<runtime::RunOutcome> run_task_case(const Case& c, const Named& a, const RunOptions& options,
                                          std::string& trace, Usage& usage,
                                          std::mutex& keep_mutex) {
  Result<std::unique_ptr<model::Model>> model = open_case_model(c, options, a.repeat, a.variant);
  if (!model) return model.take_diagnostics();
  UsageMeter meter(**model, usage);
  trace::WriterOptions wo;
  wo.run_id = a.run_id;
  wo.fixed_clock = options.fixed_clock;
  wo.mac_key = options.mac_key;
  auto writer = trace::Writer::open_memory(&trace, wo);
  if (!writer) return writer.take_diagnostics();
  runtime::RunOptions ro;
  ro.cancel = options.cancel;
  content_options(a, options, keep_mutex, ro.trace_content, ro.keep_content);
  if (options.case_timeout_ms > 0) {
    ro.deadline =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(options.case_timeout_ms);
  }
  return runtime::run_task(*c.loaded_task, meter, **writer, ro);
}

// Through the same entry point as `mf-run --plan`, in process; only the model is opened here, so
// the meter can sit between it and the loop.
Result<runtime::RunOutcome> run_plan_case(const Case& c, const Named& a, const RunOptions& options,
                                          std::string& trace, Usage& usage,
                                          std::mutex& keep_mutex) {
  auto model = open_case_model(c, options, a.repeat, a.variant);
  if (!model) return model.take_diagnostics();
  ScratchDir artifacts;
  if (artifacts.path().empty()) {
    return diag::error(codes::kInternal, "cannot create a scratch artifact directory");
  }
  runtime::PlanRunRequest request;
  request.plan_path = c.plan_path;
  request.plan = *c.loaded_plan;
  request.model = std::make_unique<UsageMeter>(std::move(*model), usage);
  request.trace_sink = &trace;
  request.run_id = a.run_id;
  request.fixed_clock = options.fixed_clock;
  request.mac_key = options.mac_key;
  content_options(a, options, keep_mutex, request.trace_content, request.keep_content);
  request.workspace = c.workspace_path;
  request.artifact_dir = artifacts.path();
  if (!c.request.is_null()) request.request = json::canonical(c.request);
  request.guardrails =
      a.variant != nullptr && a.variant->guardrails ? *a.variant->guardrails : c.guardrails;
  request.cancel = options.cancel;
  request.deadline_ms = options.case_timeout_ms;
  return runtime::run_plan_request(request);
}

// One attempt, graded into its report entry (without the case id). `keep_mutex` serialises the
// keeper: a keeper (a store handle) need not be thread-safe.
CaseRun run_case(const Case& c, const Named& a, const RunOptions& options, std::mutex& keep_mutex) {
  CaseRun run;
  std::string trace;
  Usage usage;
  const auto start = std::chrono::steady_clock::now();
  Result<runtime::RunOutcome> outcome =
      c.kind == CaseKind::Plan ? run_plan_case(c, a, options, trace, usage, keep_mutex)
                               : run_task_case(c, a, options, trace, usage, keep_mutex);
  const auto elapsed = std::chrono::steady_clock::now() - start;
  if (!outcome) {
    for (const auto& d : outcome.diagnostics()) run.problems.push_back(in_case(c, d));
    return run;
  }
  if (!options.traces_dir.empty()) {
    const std::string path = (std::filesystem::path(options.traces_dir) / a.file).string();
    if (Status s = io::publish_atomic(path, trace, io::Clobber::Replace); !s) {
      for (const auto& d : s.diagnostics()) run.problems.push_back(in_case(c, d));
      return run;
    }
  }
  if (options.keep_trace) {
    std::lock_guard<std::mutex> lock(keep_mutex);
    const auto repeat = options.repeat > 1 ? std::optional<std::int64_t>(a.repeat) : std::nullopt;
    if (Status s = options.keep_trace(a.id, repeat, trace); !s) {
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
  std::optional<std::int64_t> latency;
  if (!options.fixed_clock) {
    latency = std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count();
  }
  run.result = graded(c, *outcome, facts ? &*facts : nullptr, trace, usage.to_json(), latency);
  run.passed = run.result.find("status")->as_string() == "passed";
  return run;
}

}  // namespace

std::string plan_outcome(const Expect& expect, const runtime::RunOutcome& outcome, bool passed) {
  if (outcome.terminal == "model_failed") return "provider_failure";
  if (!outcome.completed()) return "runtime_failure";
  const Value* d = outcome.output.find("disposition");
  const std::string disposition = d != nullptr && d->is_string() ? d->as_string() : "";
  if (disposition == "success") return passed ? "valid_completion" : "false_closure";
  return expect.disposition && *expect.disposition == disposition ? "correctly_blocked"
                                                                  : "false_blocked";
}

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
    if ((name == "tool_called" || name == "tool_denied") && line->find("tool") != nullptr &&
        line->find("tool")->is_string()) {
      facts.named.push_back(line->find("tool")->as_string());
    }
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
  // Pointers into the output, then the plan's evidence checks.
  for (const auto& [pointer, expected] : expect.pointers) {
    const Value* actual = outcome.completed() ? json::find_at(outcome.output, pointer) : nullptr;
    if (actual == nullptr || json::canonical(*actual) != json::canonical(expected)) {
      fail("pointers/" + json::escape_token(pointer), expected, actual);
    }
  }
  if (facts == nullptr) return failures;
  std::vector<std::string> forbidden;
  for (const auto& name : facts->named) {
    if (std::find(expect.forbidden_tools.begin(), expect.forbidden_tools.end(), name) !=
            expect.forbidden_tools.end() &&
        std::find(forbidden.begin(), forbidden.end(), name) == forbidden.end()) {
      forbidden.push_back(name);
    }
  }
  if (!forbidden.empty()) {
    const Value actual(json::Array(forbidden.begin(), forbidden.end()));
    fail("forbidden_tools",
         json::Array(expect.forbidden_tools.begin(), expect.forbidden_tools.end()), &actual);
  }
  const Value* listed = outcome.completed() ? outcome.output.find("artifacts") : nullptr;
  for (const auto& [id, digest] : expect.artifacts) {
    const Value* found = nullptr;
    for (std::size_t i = 0; listed != nullptr && i < listed->as_array().size(); ++i) {
      const Value& a = listed->as_array()[i];
      if (a.find("artifact_id") != nullptr && a.find("artifact_id")->as_string() == id) found = &a;
    }
    const Value* sha = found != nullptr ? found->find("sha256") : nullptr;
    const bool ok = sha != nullptr && (digest.empty() || sha->as_string() == digest);
    if (!ok) {
      fail("artifacts/" + json::escape_token(id), digest.empty() ? Value(true) : Value(digest),
           sha);
    }
  }
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

namespace {

// A column as its report entries name it.
json::Value variant_json(const Variant& v) {
  json::Value out = json::Object{{"label", v.label}};
  if (!v.model.empty()) out.set("model", v.model);
  if (v.guardrails) out.set("guardrails", runtime::name(*v.guardrails));
  return out;
}

// The trace of a journaled attempt, when it is at hand: the file --traces wrote for it, else the
// object its trace_sha256 names in the store.
std::optional<std::string> kept_trace(const RunOptions& options, const Named& a,
                                      const json::Value& held) {
  if (!options.traces_dir.empty()) {
    const std::string path = (std::filesystem::path(options.traces_dir) / a.file).string();
    std::error_code ec;
    if (std::filesystem::exists(path, ec)) {
      auto bytes = io::read_input(path, std::size_t{1} << 30);
      if (bytes) return std::move(*bytes);
    }
  }
  const json::Value* sha = held.find("trace_sha256");
  if (options.trace_by_digest && sha != nullptr && sha->is_string()) {
    return options.trace_by_digest(sha->as_string());
  }
  return std::nullopt;
}

}  // namespace

json::Value campaign_settings(const Suite& suite, const RunOptions& options) {
  // The filters select a set of cases: their order on the command line does not matter.
  const auto set_of = [](std::vector<std::string> v) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    return json::Value(json::Array(v.begin(), v.end()));
  };
  // What each case runs: its task's digest and script, or its plan's digest, and its model spec;
  // the digest of their canonical array, hashed as it is written, one case at a time.
  hash::Sha256 inputs;
  inputs.update("[");
  for (std::size_t i = 0; i < suite.cases.size(); ++i) {
    if (i > 0) inputs.update(",");
    inputs.update(suite.inputs_json(i));
  }
  inputs.update("]");
  json::Array matrix;
  for (const auto& v : options.variants) matrix.push_back(variant_json(v));
  json::Value settings = json::Object{
      {"inputs_sha256", hash::to_hex(inputs.finish())},
      {"case", set_of(options.only)},
      {"tags", set_of(options.tags)},
      {"repeat", options.repeat},
      {"case_timeout_ms", options.case_timeout_ms},
      {"matrix", std::move(matrix)},
      {"run_id_prefix", options.run_id_prefix},
      {"fixed_clock", options.fixed_clock},
      {"signed", !options.mac_key.empty()},
  };
  // The replies' recording changes every trace's digest; the default is left out, so the
  // campaigns run before it could be chosen keep their identity.
  if (options.trace_content != runtime::TraceContent::Digest) {
    settings.set("trace_content",
                 options.trace_content == runtime::TraceContent::Inline ? "inline" : "store");
  }
  return settings;
}

std::string campaign_id(const Suite& suite, const RunOptions& options) {
  return json::canonical_digest(json::Object{
      {"suite_sha256", suite.sha256},
      {"settings", campaign_settings(suite, options)},
      {"shard", json::Array{options.shard_index, options.shard_count}},
  });
}

Result<SuiteRun> run_suite(const Suite& suite, const RunOptions& options) {
  if (!options.traces_dir.empty()) {
    std::error_code ec;
    if (!std::filesystem::is_directory(options.traces_dir, ec)) {
      return diag::error(codes::kBadOutputPath,
                         "traces directory \"" + options.traces_dir + "\" does not exist");
    }
  }
  // The campaign's cases: the --case filter, then this shard's share, in id order.
  std::vector<std::size_t> chosen;
  for (const auto& id : options.only) {
    const bool known = std::any_of(suite.cases.begin(), suite.cases.end(),
                                   [&](const CaseRef& c) { return c.id == id; });
    if (!known) return diag::error(codes::kUnknownCase, "--case " + id + " is not in the suite");
  }
  for (const auto& tag : options.tags) {
    const bool used = std::any_of(suite.cases.begin(), suite.cases.end(), [&](const CaseRef& c) {
      return std::find(c.tags.begin(), c.tags.end(), tag) != c.tags.end();
    });
    if (!used) return diag::error(codes::kUnknownCase, "--tags " + tag + ": no case has it");
  }
  for (std::size_t i = 0, k = 0; i < suite.cases.size(); ++i) {
    const auto& id = suite.cases[i].id;
    if (!options.only.empty() &&
        std::find(options.only.begin(), options.only.end(), id) == options.only.end()) {
      continue;
    }
    const auto& tags = suite.cases[i].tags;
    if (!options.tags.empty() &&
        std::none_of(options.tags.begin(), options.tags.end(), [&](const std::string& t) {
          return std::find(tags.begin(), tags.end(), t) != tags.end();
        })) {
      continue;
    }
    if (static_cast<std::int64_t>(k++ % static_cast<std::size_t>(options.shard_count)) ==
        options.shard_index - 1) {
      chosen.push_back(i);
    }
  }
  const bool repeated = options.repeat > 1;
  std::vector<const Variant*> columns;
  for (const auto& v : options.variants) columns.push_back(&v);
  if (columns.empty()) columns.push_back(nullptr);
  for (std::size_t i : chosen) {
    for (const Variant& v : options.variants) {
      const CaseRef& c = suite.cases[i];
      if (!valid_case_id(c.id + "." + v.label)) {
        return diag::error(codes::kUsage, "case \"" + c.id + "\" with column \"" + v.label +
                                              "\" makes an id over 128 characters");
      }
      if (c.kind == CaseKind::Task && v.guardrails) {
        return diag::error(codes::kUsage, "--guardrails applies to plan cases; case \"" + c.id +
                                              "\" is a task case");
      }
      if (c.kind == CaseKind::Task && v.model.rfind("sim:", 0) == 0) {
        return diag::error(codes::kUsage,
                           "a sim model answers plan cases; case \"" + c.id + "\" is a task case");
      }
    }
  }
  std::vector<Attempt> attempts;
  attempts.reserve(chosen.size() * columns.size() * static_cast<std::size_t>(options.repeat));
  for (std::size_t i : chosen) {
    for (const Variant* v : columns) {
      for (std::int64_t r = 0; r < options.repeat; ++r) {
        attempts.push_back(Attempt{i, v, r, repeated});
      }
    }
  }
  chosen = {};
  const std::size_t n = attempts.size();
  // Each finished attempt as the report holds it, its canonical bytes: the case's entry, or with
  // repeats one element of its entry's attempts (docs/campaigns.md, "Memory").
  std::vector<std::string> entries(n);
  std::vector<char> passes(n, 0);
  std::vector<std::size_t> todo;
  diag::Diagnostics forged, journal_problems;
  std::vector<std::pair<std::size_t, diag::Diagnostics>> failed;  // by attempt
  std::mutex problems_mutex;
  // The report element of an attempt's result, serialised where the attempt finishes.
  auto place = [&](std::size_t i, const std::string& id, json::Value result) {
    const Attempt& a = attempts[i];
    json::Value e = json::Object{};
    if (repeated) {
      e.set("repeat", a.repeat);
    } else {
      e.set("id", id);
      if (a.variant != nullptr) e.set("variant", variant_json(*a.variant));
    }
    e.as_object().reserve(e.as_object().size() + result.as_object().size());
    for (auto& m : result.as_object()) e.set(m.key, std::move(m.value));
    entries[i].clear();
    json::write_canonical(e, entries[i]);
    entries[i].shrink_to_fit();
  };
  for (std::size_t i = 0; i < n; ++i) {
    if (options.journal == nullptr) {
      todo.push_back(i);
      continue;
    }
    const Named named(attempts[i], suite, options);
    std::optional<JournalEntry> found = options.journal->find(named.key);
    if (!found) {
      todo.push_back(i);
      continue;
    }
    // A journaled attempt whose trace is at hand must be what that trace grades to.
    if (std::optional<std::string> trace = kept_trace(options, named, found->result)) {
      Result<Case> c = suite.load_case(attempts[i].case_index);
      if (!c) return c.take_diagnostics();
      if (auto why = disagreement(&*c, *trace, found->result, options.mac_key)) {
        auto d = diag::error(
            codes::kJournalTampered,
            "journaled attempt " + named.key + " disagrees with its trace: " + why->message, "",
            found->line);
        d.source = options.journal->name();
        forged.push_back(std::move(d));
        continue;
      }
    }
    const json::Value* status = found->result.find("status");
    passes[i] = status != nullptr && status->is_string() && status->as_string() == "passed";
    place(i, named.id, std::move(found->result));
  }
  if (!forged.empty()) return forged;
  std::atomic<std::size_t> next{0};
  std::mutex progress_mutex, keep_mutex;
  std::size_t done = n - todo.size();
  std::size_t passed = static_cast<std::size_t>(std::count(passes.begin(), passes.end(), 1));
  if (options.progress) options.progress(done, n, passed);
  auto worker = [&] {
    for (;;) {
      const std::size_t t = next.fetch_add(1);
      if (t >= todo.size()) return;
      const std::size_t i = todo[t];
      const Named named(attempts[i], suite, options);
      CaseRun run;
      Result<Case> c = suite.load_case(attempts[i].case_index);
      if (!c) {
        run.problems = c.take_diagnostics();
      } else {
        try {
          run = run_case(*c, named, options, keep_mutex);
        } catch (const std::exception& e) {
          run.problems.push_back(
              in_case(*c, diag::error(codes::kInternal, std::string("exception: ") + e.what())));
        }
      }
      // A cancelled attempt is not done: a resumed campaign runs it again.
      const json::Value* terminal = run.result.find("terminal");
      const bool interrupted = options.cancel != nullptr && options.cancel->load() &&
                               terminal != nullptr && terminal->is_string() &&
                               terminal->as_string() == "cancelled";
      if (options.journal != nullptr && run.problems.empty() && !interrupted) {
        if (Status s = options.journal->append(named.key, run.result); !s) {
          std::lock_guard<std::mutex> lock(problems_mutex);
          for (const auto& d : s.diagnostics()) journal_problems.push_back(d);
        }
      }
      passes[i] = run.passed;
      if (run.problems.empty()) {
        place(i, named.id, std::move(run.result));
      } else {
        std::lock_guard<std::mutex> lock(problems_mutex);
        failed.emplace_back(i, std::move(run.problems));
      }
      if (options.progress) {
        std::lock_guard<std::mutex> lock(progress_mutex);
        passed += run.passed ? 1 : 0;
        options.progress(++done, n, passed);
      }
    }
  };
  const std::size_t threads =
      std::clamp<std::size_t>(options.jobs, 1, std::max<std::size_t>(todo.size(), 1));
  {
    // The calling thread is one of the workers.
    std::vector<std::thread> pool;
    pool.reserve(threads - 1);
    for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(worker);
    worker();
    for (auto& t : pool) t.join();
  }
  todo = {};
  // The journal's problems, then the attempts' in attempt order, whatever order they ended in.
  diag::Diagnostics problems = std::move(journal_problems);
  std::sort(failed.begin(), failed.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [i, ds] : failed) {
    for (auto& d : ds) problems.push_back(std::move(d));
  }
  if (!problems.empty()) return problems;

  // The report's entries: one per case (and column), in id order. Ids with a variant label need
  // not keep the cases' order ("a-b" sorts before "a.x").
  SuiteRun out;
  out.report.suite_id = suite.id;
  const auto per_case = static_cast<std::size_t>(options.repeat);
  const std::size_t count = n / per_case;
  {
    std::vector<std::pair<std::string, std::size_t>> order;  // id, first attempt
    order.reserve(count);
    for (std::size_t first = 0; first < n; first += per_case) {
      order.emplace_back(attempts[first].id(suite), first);
    }
    std::sort(order.begin(), order.end());
    out.report.cases.reserve(count);
    out.entries.reserve(count);
    for (auto& [id, first] : order) {
      bool all = true;
      for (std::size_t r = 0; r < per_case; ++r) all = all && passes[first + r] != 0;
      if (!repeated) {
        out.entries.push_back(std::move(entries[first]));
      } else {
        // {attempts, id, status, variant?}: the members in canonical order.
        std::string entry = "{\"attempts\":[";
        for (std::size_t r = 0; r < per_case; ++r) {
          if (r > 0) entry += ',';
          entry += entries[first + r];
          std::string().swap(entries[first + r]);
        }
        entry += "],\"id\":";
        json::write_canonical(json::Value(id), entry);
        entry += all ? ",\"status\":\"passed\"" : ",\"status\":\"failed\"";
        if (attempts[first].variant != nullptr) {
          entry += ",\"variant\":";
          json::write_canonical(variant_json(*attempts[first].variant), entry);
        }
        entry += '}';
        out.entries.push_back(std::move(entry));
      }
      out.report.cases.push_back({std::move(id), all});
    }
  }
  entries = {};
  attempts = {};
  // The summary from the entries read back one at a time, in the report's order.
  SummaryBuilder summary;
  for (const std::string& e : out.entries) {
    Result<json::Value> v = json::parse(e);
    if (!v) return v.take_diagnostics();
    summary.add(*v);
  }
  out.summary = summary.finish();
  // The members after "cases", in canonical order.
  std::string& tail = out.tail;
  tail = "],\"kind\":\"millforge_eval_report\"";
  if (options.shard_count > 1) {
    tail += ",\"shard\":";
    json::write_canonical(json::Object{{"index", options.shard_index},
                                       {"count", options.shard_count},
                                       {"settings", campaign_settings(suite, options)}},
                          tail);
  }
  tail += ",\"suite_id\":";
  json::write_canonical(json::Value(suite.id), tail);
  tail += ",\"suite_sha256\":";
  json::write_canonical(json::Value(suite.sha256), tail);
  tail += ",\"summary\":";
  json::write_canonical(out.summary, tail);
  tail += ",\"v\":1}\n";
  return out;
}

Status SuiteRun::write(const std::function<Status(std::string_view)>& sink) const {
  // Entries are written in batches, so a large report costs a few writes, not one per case.
  std::string batch = "{\"cases\":[";
  for (std::size_t i = 0; i < entries.size(); ++i) {
    if (i > 0) batch += ',';
    batch += entries[i];
    if (batch.size() >= (1u << 16)) {
      if (Status s = sink(batch); !s) return s;
      batch.clear();
    }
  }
  batch += tail;
  return sink(batch);
}

std::string SuiteRun::bytes() const {
  std::string out;
  // Appending to memory cannot fail.
  (void)write([&](std::string_view piece) {
    out += piece;
    return Status();
  });
  return out;
}

json::Value SuiteRun::document() const {
  Result<json::Value> v = json::parse(bytes());
  return v ? std::move(*v) : json::Value();
}

}  // namespace mf::eval
