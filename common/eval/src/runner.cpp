// The suite runner declared in runner.hpp: attempts of the chosen cases on a pool of threads, each
// graded where it finishes, then merged in id order so the report does not depend on the threads.
#include "mf/eval/runner.hpp"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <mutex>
#include <optional>
#include <span>
#include <thread>
#include <vector>

#include "ahead.hpp"
#include "mf/diag/codes.hpp"
#include "mf/eval/entry.hpp"
#include "mf/eval/stats.hpp"
#include "mf/hash/sha256.hpp"
#include "mf/io/file.hpp"
#include "mf/io/records.hpp"
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
  CaseRef c;
  const Variant* variant = nullptr;  // the matrix column, if any
  std::int64_t repeat = 0;
  bool repeated = false;  // the campaign repeats its cases

  // The case's id in the report: "<case id>[.<label>]".
  std::string id() const {
    std::string id(c.id());
    return variant != nullptr ? id + "." + variant->label : id;
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
  Named(const Attempt& attempt, const RunOptions& options)
      : variant(attempt.variant),
        repeat(attempt.repeat),
        id(attempt.id()),
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

// An unlinked temporary file in the temporary directory (TMPDIR): no name reaches it, so nothing is
// left behind however the process ends. Appends reserve their range first, so threads write at
// once; reads and writes are pread and pwrite, never a mapping, whose pages would count as the
// process's memory.
class EntrySpill {
 public:
  static Result<std::shared_ptr<EntrySpill>> open() {
    Result<io::Fd> fd = io::open_temporary("the report's entries");
    if (!fd) return fd.take_diagnostics();
    auto spill = std::make_shared<EntrySpill>();
    spill->fd_ = std::move(*fd);
    return spill;
  }

  // Writes `bytes` at the end of the file; returns where they start.
  Result<std::uint64_t> append(std::string_view bytes) {
    const std::uint64_t at = end_.fetch_add(bytes.size());
    for (std::size_t done = 0; done < bytes.size();) {
      const ssize_t n = ::pwrite(fd_.get(), bytes.data() + done, bytes.size() - done,
                                 static_cast<off_t>(at + done));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        return diag::error(codes::kWriteFailed,
                           std::string("cannot write the report's entries to a temporary file: ") +
                               (n < 0 ? std::strerror(errno) : "no space written"));
      }
      done += static_cast<std::size_t>(n);
    }
    return at;
  }

  // Appends the bytes [offset, offset + size) to `out`.
  Status read(std::uint64_t offset, std::size_t size, std::string& out) const {
    const std::size_t held = out.size();
    out.resize(held + size);
    if (io::pread_all(fd_.get(), out.data() + held, size, offset) !=
        static_cast<std::int64_t>(size)) {
      out.resize(held);
      return diag::error(codes::kInternal,
                         "cannot read the report's entries back from their temporary file");
    }
    return Status();
  }

 private:
  io::Fd fd_;
  std::atomic<std::uint64_t> end_{0};
};

namespace {

// What the report takes from a finished attempt: where its entry's bytes are in the spill, and the
// facts its summary counts (a byte of flags and the numbers they say are there). `at` is its place
// in the report: its entry's position times the repeats, plus its repeat. A campaign keeps these
// in a record file, in the order the attempts finish, and sorts them by `at` at the end.
struct Placed {
  std::uint64_t at = 0;
  std::uint64_t offset = 0;
  std::uint32_t size = 0;
  std::uint8_t flags = 0;
  std::array<double, 4> numbers{};  // latency, then the usage keys

  void put(const AttemptFacts& f) {
    flags = f.passed ? 1 : 0;
    const auto known =
        std::find(AttemptFacts::kOutcomes.begin(), AttemptFacts::kOutcomes.end(), f.outcome);
    if (!f.outcome.empty())
      flags |= static_cast<std::uint8_t>((known - AttemptFacts::kOutcomes.begin() + 1) << 1);
    const std::array<const std::optional<double>*, 4> given = {&f.latency_ms, &f.usage[0],
                                                               &f.usage[1], &f.usage[2]};
    for (std::size_t k = 0; k < given.size(); ++k) {
      if (!*given[k]) continue;
      flags |= static_cast<std::uint8_t>(1u << (4 + k));
      numbers[k] = **given[k];
    }
  }
  AttemptFacts facts() const {
    AttemptFacts f;
    f.passed = (flags & 1) != 0;
    if (const unsigned o = (flags >> 1) & 7; o != 0) f.outcome = AttemptFacts::kOutcomes[o - 1];
    const std::array<std::optional<double>*, 4> given = {&f.latency_ms, &f.usage[0], &f.usage[1],
                                                         &f.usage[2]};
    for (std::size_t k = 0; k < given.size(); ++k) {
      if ((flags & (1u << (4 + k))) != 0) *given[k] = numbers[k];
    }
    return f;
  }
};

// Entries on their way to the spill: each entry is appended with a ',' after it, and a thread's
// entries go out in one write per batch, so the entries of consecutive attempts are usually
// consecutive in the file and the report is written from it in a few large reads. Once written,
// their records go to `placed` together (several batches share it: one lock a batch).
using ToPlaced = std::function<Status(std::span<const Placed>)>;
class SpillBatch {
 public:
  SpillBatch(EntrySpill& spill, const ToPlaced& placed) : spill_(spill), placed_(placed) {}

  // Where the next entry's bytes go; finish it with done().
  std::string& buffer() { return bytes_; }
  void done(Placed p, std::size_t begin) {
    p.offset = begin;
    p.size = static_cast<std::uint32_t>(bytes_.size() - begin);
    waiting_.push_back(p);
    bytes_ += ',';
  }
  Status flush() {
    if (waiting_.empty()) return Status();
    Result<std::uint64_t> at = spill_.append(bytes_);
    if (!at) return Status(at.take_diagnostics());
    bytes_.clear();
    for (Placed& p : waiting_) p.offset += *at;
    Status s = placed_(waiting_);
    waiting_.clear();
    return s;
  }
  bool full() const { return bytes_.size() >= (1u << 16); }

 private:
  EntrySpill& spill_;
  const ToPlaced& placed_;
  std::string bytes_;
  std::vector<Placed> waiting_;  // their offsets still in bytes_
};

// The campaign's cases, by their positions in the suite's index, and a thread's readers of them.
using Chosen = io::RecordFile<std::uint32_t>;
struct Cursor {
  Chosen::Reader chosen;
  Suite::Reader cases;
  Cursor(const Chosen& c, const Suite& suite) : chosen(c), cases(suite.cases) {}
  Status status() const { return !chosen.status() ? chosen.status() : cases.status(); }
};

// An entry of a matrix by its id, "<case id>.<label>" (at most 128 bytes: valid_case_id), to sort
// the entries by; then each entry's rank in that order, by entry.
struct Dotted {
  std::uint32_t entry = 0;
  std::uint8_t size = 0;
  char id[CaseRef::kMaxId] = {};
  std::string_view view() const { return std::string_view(id, size); }
};
struct Rank {
  std::uint32_t entry = 0, rank = 0;
};

}  // namespace

json::Value campaign_settings(const Suite& suite, const RunOptions& options) {
  // The filters select a set of cases: their order on the command line does not matter.
  const auto set_of = [](std::vector<std::string> v) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    return json::Value(json::Array(v.begin(), v.end()));
  };
  json::Array matrix;
  for (const auto& v : options.variants) matrix.push_back(variant_json(v));
  json::Value settings = json::Object{
      // What each case runs: its task's digest and script, or its plan's digest, and its model
      // spec (Suite::inputs_sha256, made at load).
      {"inputs_sha256", suite.inputs_sha256},
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
  Chosen chosen("the campaign's cases");
  Suite::Reader cases(suite.cases);
  for (const auto& id : options.only) {
    std::uint64_t near = 0;
    if (!suite.find(id, cases, near)) {
      return diag::error(codes::kUnknownCase, "--case " + id + " is not in the suite");
    }
  }
  for (const auto& tag : options.tags) {
    const bool used = std::any_of(
        suite.tag_sets.begin(), suite.tag_sets.end(),
        [&](const auto& tags) { return std::find(tags.begin(), tags.end(), tag) != tags.end(); });
    if (!used) return diag::error(codes::kUnknownCase, "--tags " + tag + ": no case has it");
  }
  for (std::uint64_t i = 0, k = 0; i < suite.size(); ++i) {
    const CaseRef& c = cases[i];
    const std::string_view id = c.id();
    if (!options.only.empty() &&
        std::find(options.only.begin(), options.only.end(), id) == options.only.end()) {
      continue;
    }
    const auto& tags = suite.case_tags(c);
    if (!options.tags.empty() &&
        std::none_of(options.tags.begin(), options.tags.end(), [&](const std::string& t) {
          return std::find(tags.begin(), tags.end(), t) != tags.end();
        })) {
      continue;
    }
    if (static_cast<std::int64_t>(k++ % static_cast<std::size_t>(options.shard_count)) ==
        options.shard_index - 1) {
      if (Status s = chosen.push_back(static_cast<std::uint32_t>(i)); !s) {
        return s.take_diagnostics();
      }
    }
  }
  if (!cases.status()) return cases.status().diagnostics();
  const bool repeated = options.repeat > 1;
  std::vector<const Variant*> columns;
  for (const auto& v : options.variants) columns.push_back(&v);
  if (columns.empty()) columns.push_back(nullptr);
  // The attempts in order: each chosen case, each column, each repeat. Attempt i is made from its
  // number when it is needed, so a campaign of many attempts keeps no record of each. Entry e (a
  // case and column) has attempts e * per_case onwards.
  const std::size_t cols = columns.size();
  const auto per_case = static_cast<std::size_t>(options.repeat);
  const std::size_t n = static_cast<std::size_t>(chosen.size()) * cols * per_case;
  const std::size_t count = n / per_case;
  const auto attempt_of = [&](std::size_t i, Cursor& at) {
    return Attempt{at.cases[at.chosen[i / (cols * per_case)]], columns[(i / per_case) % cols],
                   static_cast<std::int64_t>(i % per_case), repeated};
  };
  // The report's entries are in id order. Without a matrix that is the entries' order; with one,
  // ids need not keep it ("a-b" sorts before "a.x"), so the entries are sorted by their ids, and
  // each entry's rank in that order is kept by entry for the attempts to find their place.
  io::RecordFile<Dotted> order("the report's order");
  io::RecordFile<Rank> ranks("the report's order");
  if (!options.variants.empty()) {
    Cursor at(chosen, suite);
    for (std::size_t e = 0; e < count; ++e) {
      const Attempt a = attempt_of(e * per_case, at);
      const std::string id(a.c.id());
      if (!valid_case_id(id + "." + a.variant->label)) {
        return diag::error(codes::kUsage, "case \"" + id + "\" with column \"" + a.variant->label +
                                              "\" makes an id over 128 characters");
      }
      if (a.c.kind == CaseKind::Task && a.variant->guardrails) {
        return diag::error(codes::kUsage, "--guardrails applies to plan cases; case \"" + id +
                                              "\" is a task case");
      }
      if (a.c.kind == CaseKind::Task && a.variant->model.rfind("sim:", 0) == 0) {
        return diag::error(codes::kUsage,
                           "a sim model answers plan cases; case \"" + id + "\" is a task case");
      }
      const std::string dotted = a.id();
      Dotted d;
      d.entry = static_cast<std::uint32_t>(e);
      d.size = static_cast<std::uint8_t>(dotted.size());
      std::memcpy(d.id, dotted.data(), dotted.size());
      if (Status s = order.push_back(d); !s) return s.take_diagnostics();
    }
    if (Status s = at.status(); !s) return s.take_diagnostics();
    if (Status s = order.sort([](const Dotted& a, const Dotted& b) { return a.view() < b.view(); });
        !s) {
      return s.take_diagnostics();
    }
    io::RecordFile<Dotted>::Reader sorted(order);
    for (std::uint64_t r = 0; r < count; ++r) {
      if (Status s = ranks.push_back(Rank{sorted[r].entry, static_cast<std::uint32_t>(r)}); !s) {
        return s.take_diagnostics();
      }
    }
    if (!sorted.status()) return sorted.status().diagnostics();
    if (Status s = ranks.sort([](const Rank& a, const Rank& b) { return a.entry < b.entry; }); !s) {
      return s.take_diagnostics();
    }
  }
  Result<std::shared_ptr<EntrySpill>> spill = EntrySpill::open();
  if (!spill) return spill.take_diagnostics();
  // Each finished attempt as the report holds it, its canonical bytes in the spill: the case's
  // entry, or with repeats one element of its entry's attempts (docs/campaigns.md, "Memory"); its
  // record in `placed`, in the order they finish.
  const auto by_place = [](const Placed& a, const Placed& b) { return a.at < b.at; };
  io::RecordFile<Placed> placed("the report's entries");
  placed.sort_runs_by(by_place);
  std::mutex placed_mutex;
  const ToPlaced to_placed = [&](std::span<const Placed> batch) {
    std::lock_guard<std::mutex> lock(placed_mutex);
    for (const Placed& p : batch) {
      if (Status s = placed.push_back(p); !s) return s;
    }
    return Status();
  };
  // The attempts the journal holds, in order: the workers pass them by.
  io::RecordFile<std::uint64_t> journaled("the journal's attempts");
  diag::Diagnostics forged, journal_problems, spill_problems;
  std::vector<std::pair<std::size_t, diag::Diagnostics>> failed;  // by attempt
  std::mutex problems_mutex;
  // The report element of an attempt's result, serialised where the attempt finishes, with the
  // facts the summary takes from it and its place in the report (through a thread's reader of the
  // ranks); whether it passed.
  auto place = [&](std::size_t i, const std::string& id, json::Value result, SpillBatch& batch,
                   std::optional<io::RecordFile<Rank>::Reader>& rank) -> Result<bool> {
    Attempt a;  // its column and repeat: its case is not needed here
    a.variant = columns[(i / per_case) % cols];
    a.repeat = static_cast<std::int64_t>(i % per_case);
    std::optional<AttemptFacts> f = facts_of(result);
    if (!f) {
      return diag::error(codes::kInternal, "attempt " + a.key(id) +
                                               ": its entry records what a summary cannot count");
    }
    Placed p;
    p.put(*f);
    p.at = i;
    if (!ranks.empty()) {
      if (!rank) rank.emplace(ranks);
      p.at = (*rank)[i / per_case].rank * per_case + i % per_case;
      if (!rank->status()) return rank->status().diagnostics();
    }
    json::Value e = json::Object{};
    if (repeated) {
      e.set("repeat", a.repeat);
    } else {
      e.set("id", id);
      if (a.variant != nullptr) e.set("variant", variant_json(*a.variant));
    }
    e.as_object().reserve(e.as_object().size() + result.as_object().size());
    for (auto& m : result.as_object()) e.set(m.key, std::move(m.value));
    std::string& out = batch.buffer();
    const std::size_t begin = out.size();
    json::write_canonical(e, out);
    batch.done(p, begin);
    if (batch.full()) {
      if (Status s = batch.flush(); !s) return s.take_diagnostics();
    }
    return f->passed;
  };
  std::size_t done = 0, passed = 0;
  if (options.journal != nullptr && !options.journal->empty()) {
    SpillBatch batch(**spill, to_placed);
    Cursor at(chosen, suite);
    std::optional<io::RecordFile<Rank>::Reader> rank;
    for (std::size_t i = 0; i < n; ++i) {
      const Attempt attempt = attempt_of(i, at);
      std::optional<JournalEntry> found = options.journal->find(attempt.key(attempt.id()));
      if (!found) continue;
      const Named named(attempt, options);
      // A journaled attempt whose trace is at hand must be what that trace grades to.
      if (std::optional<std::string> trace = kept_trace(options, named, found->result)) {
        Result<Case> c = suite.load_case(attempt.c);
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
      Result<bool> ok = place(i, named.id, std::move(found->result), batch, rank);
      if (!ok) return ok.take_diagnostics();
      if (Status s = journaled.push_back(i); !s) return s.take_diagnostics();
      ++done;
      passed += *ok ? 1 : 0;
    }
    if (Status s = at.status(); !s) return s.take_diagnostics();
    if (Status s = batch.flush(); !s) return s.take_diagnostics();
  }
  if (!forged.empty()) return forged;
  // The attempts are taken in runs of consecutive attempts (up to 32, fewer for a small campaign
  // so every thread has some), so each thread's entries go to the spill in such runs, and each
  // thread's attempts come in order.
  const std::size_t threads =
      std::clamp<std::size_t>(options.jobs, 1, std::max<std::size_t>(n - done, 1));
  const std::size_t run_length = std::clamp<std::size_t>(n / (threads * 64), 1, 32);
  std::atomic<std::size_t> next{0};
  std::mutex progress_mutex, keep_mutex;
  if (options.progress) options.progress(done, n, passed);
  auto worker = [&] {
    SpillBatch batch(**spill, to_placed);
    Cursor at(chosen, suite);
    std::optional<io::RecordFile<Rank>::Reader> rank;
    io::RecordFile<std::uint64_t>::Reader journal_at(journaled);
    std::uint64_t skip = 0;  // the next journaled attempt not passed yet
    const auto keep = [&](Status s) {
      if (s) return;
      std::lock_guard<std::mutex> lock(problems_mutex);
      for (const auto& d : s.diagnostics()) spill_problems.push_back(d);
    };
    for (;;) {
      const std::size_t first = next.fetch_add(run_length);
      if (first >= n) break;
      for (std::size_t i = first; i < std::min(first + run_length, n); ++i) {
        while (skip < journaled.size() && journal_at[skip] < i) ++skip;
        if (skip < journaled.size() && journal_at[skip] == i) continue;  // the journal's
        const Attempt attempt = attempt_of(i, at);
        const Named named(attempt, options);
        CaseRun run;
        Result<Case> c = suite.load_case(attempt.c);
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
        if (run.problems.empty()) {
          Result<bool> ok = place(i, named.id, std::move(run.result), batch, rank);
          keep(ok ? Status() : Status(ok.take_diagnostics()));
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
      keep(batch.flush());
    }
    keep(at.status());
    keep(journal_at.status());
  };
  {
    // The calling thread is one of the workers.
    std::vector<std::thread> pool;
    pool.reserve(threads - 1);
    for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(worker);
    worker();
    for (auto& t : pool) t.join();
  }
  // The journal's problems, then the attempts' in attempt order, whatever order they ended in,
  // then the spill's.
  diag::Diagnostics problems = std::move(journal_problems);
  std::sort(failed.begin(), failed.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [i, ds] : failed) {
    for (auto& d : ds) problems.push_back(std::move(d));
  }
  for (auto& d : spill_problems) problems.push_back(std::move(d));
  if (!problems.empty()) return problems;

  // The report's entries in their order: the attempts' records sorted by their places, taken in
  // order as the sort makes them (on a second thread with -j 2 or more), with the ids of the
  // entries (the sorted matrix order's, else the cases').
  if (placed.size() != n) {
    return diag::error(codes::kInternal, "the campaign placed " + std::to_string(placed.size()) +
                                             " of its " + std::to_string(n) + " attempts");
  }
  SuiteRun out;
  out.suite_id = suite.id;
  SummaryBuilder summary;
  std::vector<AttemptFacts> runs(per_case);
  std::vector<std::pair<std::uint64_t, std::uint32_t>> bytes_of(per_case);  // offset, size
  const ToPlaced to_entries = [&](std::span<const Placed> batch) {
    for (const Placed& p : batch) {
      if (Status s = out.entries.push_back(EntryPlace{p.offset, p.size}); !s) return s;
    }
    return Status();
  };
  {
    SpillBatch batch(**spill, to_entries);
    io::RecordFile<Dotted>::Reader sorted(order);
    Cursor at(chosen, suite);
    std::string id;
    std::size_t r = 0, k = 0;  // the entry being taken, and its attempts taken
    Status taken;              // the first failure to take one
    // Entry r, its attempts in runs and bytes_of.
    const auto entry = [&]() -> Status {
      const std::size_t e = order.empty() ? r : sorted[r].entry;
      id = order.empty() ? attempt_of(e * per_case, at).id() : std::string(sorted[r].view());
      const bool all =
          std::all_of(runs.begin(), runs.end(), [](const auto& a) { return a.passed; });
      const Variant* variant = columns[e % cols];
      summary.add(runs, repeated, variant != nullptr ? variant->label : std::string_view(),
                  [&] { return id; });
      if (!all) {
        if (out.first_failed.size() < SuiteRun::kFailedNamed) out.first_failed.push_back(id);
        ++out.failed_cases;
      }
      if (!repeated)
        return out.entries.push_back(EntryPlace{bytes_of[0].first, bytes_of[0].second});
      // {attempts, id, status, variant?}: the members in canonical order.
      std::string& text = batch.buffer();
      const std::size_t begin = text.size();
      text += "{\"attempts\":[";
      for (std::size_t a = 0; a < per_case; ++a) {
        if (a > 0) text += ',';
        if (Status s = (*spill)->read(bytes_of[a].first, bytes_of[a].second, text); !s) return s;
      }
      text += "],\"id\":";
      json::write_canonical(json::Value(id), text);
      text += all ? ",\"status\":\"passed\"" : ",\"status\":\"failed\"";
      if (variant != nullptr) {
        text += ",\"variant\":";
        json::write_canonical(variant_json(*variant), text);
      }
      text += '}';
      batch.done(Placed{}, begin);
      return batch.full() ? batch.flush() : Status();
    };
    const Ahead<Placed>::Each take = [&](const Placed& p) {
      if (!taken) return;
      runs[k] = p.facts();
      bytes_of[k] = {p.offset, p.size};
      if (++k < per_case) return;
      taken = entry();
      k = 0;
      ++r;
    };
    Status placed_sorted = sort_taking(placed, by_place, take, threads > 1);
    for (Status* s : {&placed_sorted, &taken}) {
      if (!*s) return s->take_diagnostics();
    }
    if (Status s = batch.flush(); !s) return s.take_diagnostics();
    if (!sorted.status()) return sorted.status().diagnostics();
    if (Status s = at.status(); !s) return s.take_diagnostics();
  }
  out.cases = count;
  out.spill = std::move(*spill);
  Result<json::Value> made = summary.finish();
  if (!made) return made.take_diagnostics();
  out.summary = std::move(*made);
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
  // Entries that are consecutive in the spill, each with its ',' after it, are read in one piece;
  // the pieces go to the sink in batches, so a large report costs a few reads and writes, not one
  // per case.
  constexpr std::size_t kBatch = 1u << 16;
  std::string batch = "{\"cases\":[";
  io::RecordFile<EntryPlace>::Reader places(entries);
  for (std::uint64_t r = 0; r < entries.size(); ++r) {
    if (r > 0) batch += ',';
    const std::uint64_t begin = places[r].offset;
    std::uint64_t end = begin + places[r].size;
    while (r + 1 < entries.size() && places[r + 1].offset == end + 1) {
      ++r;
      end = places[r].offset + places[r].size;
    }
    for (std::uint64_t at = begin; at < end;) {
      const std::size_t piece = static_cast<std::size_t>(std::min<std::uint64_t>(end - at, kBatch));
      if (Status s = spill->read(at, piece, batch); !s) return s.take_diagnostics();
      at += piece;
      if (batch.size() >= kBatch) {
        if (Status s = sink(batch); !s) return s.take_diagnostics();
        batch.clear();
      }
    }
  }
  if (!places.status()) return places.status().diagnostics();
  batch += tail;
  return sink(batch);
}

std::string SuiteRun::bytes() const {
  std::string out;
  // Appending to memory cannot fail; a spill that cannot be read back leaves the bytes short,
  // which every reader of them refuses.
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
