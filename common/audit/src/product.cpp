// The product's own end-to-end receipts (receipt.hpp): each is earned by running a binary over the
// product's fixtures and checking what it wrote, so the self-test never claims a capability it did
// not see work.
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <functional>

#include "mf/audit/audit.hpp"
#include "mf/diag/codes.hpp"
#include "mf/hash/sha256.hpp"
#include "mf/io/file.hpp"
#include "mf/json/canonical.hpp"
#include "mf/json/jsonl.hpp"
#include "mf/json/reader.hpp"
#include "mf/runtime/task.hpp"
#include "mf/store/refs.hpp"
#include "mf/store/store.hpp"
#include "receipt.hpp"

namespace mf::audit {

namespace {

namespace fs = std::filesystem;

class Auditor {
 public:
  explicit Auditor(const ProductRequest& request) : req_(request) {
    fixtures_ = fs::path(request.fixtures);
    work_ = fs::path(request.work_dir);
  }

  Result<std::vector<Receipt>> run(json::Value& facts) {
    std::error_code ec;
    fs::create_directories(work_, ec);
    if (ec) {
      return diag::error(diag::codes::kBadOutputPath,
                         "cannot create " + work_.string() + ": " + ec.message());
    }
    const std::string task_path = (fixtures_ / "forge" / "task-valid.json").string();
    Result<std::string> task_bytes = io::read_input(task_path, 1u << 20);
    if (!task_bytes) return task_bytes.take_diagnostics();
    task_sha_ = hash::sha256_hex(*task_bytes);
    Result<runtime::Task> task = runtime::parse_task(*task_bytes);

    Receipt typed("typed_task_and_output_contract");
    Receipt repair("bounded_targeted_repair");
    Receipt replay("provider_free_replay");
    Receipt tool("capability_scoped_tool");
    Receipt gate("executable_evaluation_gate");
    const std::string trace_path = (work_ / "repair.jsonl").string();
    if (Status s = typed_contract(task, task_path, trace_path, typed); !s) {
      return s.take_diagnostics();
    }
    const std::string trace_sha = bounded_repair(trace_path, repair);
    if (Status s = provider_free_replay(trace_path, trace_sha, replay); !s) {
      return s.take_diagnostics();
    }
    if (Status s = scoped_tool(tool); !s) return s.take_diagnostics();
    if (Status s = evaluation_gate(gate); !s) return s.take_diagnostics();
    Receipt compiled("compiled_harness");
    Receipt guarded("guarded_tool_run");
    const std::string plan_path = (work_ / "golden.plan.json").string();
    if (Status s = compiled_harness(plan_path, compiled); !s) return s.take_diagnostics();
    if (Status s = guarded_tool_run(plan_path, guarded); !s) return s.take_diagnostics();

    Receipt projection("prompt_projection");
    if (Status s = prompt_projection(projection); !s) return s.take_diagnostics();

    std::vector<Receipt> receipts = {typed, repair,   replay,  tool,
                                     gate,  compiled, guarded, projection};
    if (!req_.store_dir.empty()) {
      Receipt store("content_addressed_store");
      if (Status s = store_round_trip(trace_path, trace_sha, store); !s)
        return s.take_diagnostics();
      receipts.push_back(std::move(store));
    }
    facts = this->facts();
    return receipts;
  }

 private:
  // 1. The task validates and is the pinned one; the run's result passes the strict contract.
  Status typed_contract(const Result<runtime::Task>& task, const std::string& task_path,
                        const std::string& trace_path, Receipt& typed) {
    typed.check(task_sha_ == kTaskSha256,
                "task digest differs from the pinned " + std::string(kTaskSha256));
    typed.check(task.ok(), "task does not validate");
    typed.evidence("task_sha256", task_sha_);
    if (task.ok()) budget_ = task->budget;
    Result<Ran> run =
        exec("mf-run", {"--task", task_path, "--model",
                        "scripted:" + (fixtures_ / "forge" / "responses-repair.json").string(),
                        "--run-id", "audit-repair", "--fixed-clock", "--trace", trace_path});
    if (!run) return run.take_diagnostics();
    typed.check(run->exit_code == 0, "mf-run exited " + std::to_string(run->exit_code));
    Result<json::Value> output = json::parse_object(run->out);
    if (typed.check(output.ok(), "mf-run printed no strict JSON object")) {
      for (const std::string& field :
           task.ok() ? task->contract.required_fields : std::vector<std::string>{}) {
        typed.check(output->find(field) != nullptr, "result lacks required field " + field);
      }
      typed.check(task.ok() && !task->contract.required_fields.empty(),
                  "the contract requires no field");
      typed.evidence("output_sha256", json::canonical_digest(*output));
    }
    return {};
  }

  // 2. Two calls, one repair carrying the exact violations, within the declared caps. Returns the
  //    trace's digest (empty when there is no trace).
  std::string bounded_repair(const std::string& trace_path, Receipt& repair) {
    Result<std::string> trace_bytes = io::read_input(trace_path, 64u << 20);
    const std::string trace_sha = trace_bytes ? hash::sha256_hex(*trace_bytes) : std::string();
    if (repair.check(trace_bytes.ok(), "no trace was written")) {
      check_repair_trace(*trace_bytes, repair);
      repair.evidence("trace_sha256", trace_sha);
    }
    return trace_sha;
  }

  // 3. The trace replays without a model to the same terminal state and counts, anchored to the
  //    digest the repair receipt recorded.
  Status provider_free_replay(const std::string& trace_path, const std::string& trace_sha,
                              Receipt& replay) {
    Result<Ran> replayed = exec("mf-replay", {"--expect-sha256", trace_sha, trace_path});
    if (!replayed) return replayed.take_diagnostics();
    replay.check(replayed->exit_code == 0,
                 "mf-replay exited " + std::to_string(replayed->exit_code));
    Result<json::Value> summary = json::parse_object(replayed->out);
    if (replay.check(summary.ok(), "mf-replay printed no summary")) {
      replay.check(string_at(*summary, "status") == "ok", "replay status is not ok");
      replay.check(string_at(*summary, "terminal") == "completed", "replayed terminal differs");
      replay.check(int_at(*summary, "model_calls") == calls_observed_,
                   "replayed model calls differ from the run's");
      replay.check(int_at(*summary, "repairs") == repairs_observed_,
                   "replayed repairs differ from the run's");
      replay.check(string_at(*summary, "trace_sha256") == trace_sha,
                   "replay hashed different trace bytes");
      replay.evidence("summary_sha256", json::canonical_digest(*summary));
    }
    return {};
  }

  // 4. The confined reader returns the task's own bytes (holding the call budget) and refuses to
  //    leave its root.
  Status scoped_tool(Receipt& tool) {
    Result<Ran> slice_run =
        exec("mf-toolread", {"--root", fixtures_.string(), "--path", "forge/task-valid.json",
                             "--start-line", "1", "--end-line", "20"});
    if (!slice_run) return slice_run.take_diagnostics();
    tool.check(slice_run->exit_code == 0,
               "mf-toolread exited " + std::to_string(slice_run->exit_code));
    Result<json::Value> slice = json::parse_object(slice_run->out);
    if (tool.check(slice.ok(), "mf-toolread printed no slice")) {
      tool.check(string_at(*slice, "file_sha256") == task_sha_, "slice digest is not the task's");
      tool.check(string_at(*slice, "text")
                         .find("\"max_model_calls\": " + std::to_string(budget_.max_model_calls)) !=
                     std::string::npos,
                 "slice does not show the declared call budget");
      tool.evidence("slice_sha256", json::canonical_digest(*slice));
    }
    Result<Ran> escape = exec("mf-toolread", {"--root", (fixtures_ / "forge").string(), "--path",
                                              "../forge/task-valid.json"});
    if (!escape) return escape.take_diagnostics();
    tool.check(escape->exit_code == 2 && escape->out.empty(),
               "a parent escape was not refused (exit " + std::to_string(escape->exit_code) + ")");
    return {};
  }

  // 5. The four-case suite runs, passes 4/4, and a report compares clean against itself.
  Status evaluation_gate(Receipt& gate) {
    const std::string eval_path = (work_ / "eval.json").string();
    Result<Ran> eval =
        exec("mf-eval", {"run", "--suite", (fixtures_ / "forge" / "eval-suite.json").string(),
                         "--output", eval_path, "--fixed-clock", "-j", "2"});
    if (!eval) return eval.take_diagnostics();
    gate.check(eval->exit_code == 0, "mf-eval run exited " + std::to_string(eval->exit_code));
    Result<std::string> eval_bytes = io::read_input(eval_path, 16u << 20);
    if (gate.check(eval_bytes.ok(), "no eval report was written")) {
      Result<json::Value> report = json::parse_object(*eval_bytes);
      if (gate.check(report.ok(), "eval report is not strict JSON")) {
        const json::Value* s = report->find("summary");
        cases_passed_ = s ? int_at(*s, "passed") : -1;
        cases_total_ = s ? int_at(*s, "cases") : -1;
        gate.check(cases_total_ == 4 && cases_passed_ == 4,
                   "eval passed " + std::to_string(cases_passed_) + " of " +
                       std::to_string(cases_total_) + " (expected 4 of 4)");
      }
      gate.evidence("report_sha256", hash::sha256_hex(*eval_bytes));
    }
    Result<Ran> compare =
        exec("mf-eval", {"compare", "--baseline", eval_path, "--candidate", eval_path});
    if (!compare) return compare.take_diagnostics();
    gate.check(compare->exit_code == 0,
               "mf-eval compare exited " + std::to_string(compare->exit_code));
    return {};
  }

  // 6. The golden harness compiles from YAML and from JSON to the same bytes, the plan verifies,
  // and
  //    a plan changed by one byte is refused.
  Status compiled_harness(const std::string& plan_path, Receipt& r) {
    const fs::path h = fixtures_ / "harness";
    const std::vector<std::string> inputs = {"--catalog",  (h / "catalog.json").string(),
                                             "--profiles", (h / "profiles.json").string(),
                                             "-o",         "-"};
    std::string plans[2];
    const char* sources[2] = {"golden.yaml", "golden.json"};
    for (int i = 0; i < 2; ++i) {
      std::vector<std::string> args = {(h / sources[i]).string()};
      args.insert(args.end(), inputs.begin(), inputs.end());
      Result<Ran> ran = exec("mf-compile", args);
      if (!ran) return ran.take_diagnostics();
      r.check(ran->exit_code == 0, std::string("mf-compile ") + sources[i] + " exited " +
                                       std::to_string(ran->exit_code));
      plans[i] = std::move(ran->out);
    }
    r.check(!plans[0].empty() && plans[0] == plans[1],
            "the YAML and JSON sources compiled to different plans");
    if (Status s = io::publish_atomic(plan_path, plans[0], io::Clobber::Replace); !s) return s;
    Result<json::Value> plan = json::parse_object(plans[0]);
    if (r.check(plan.ok(), "the plan is not strict JSON")) {
      r.evidence("compiled_sha256", string_at(*plan, "compiled_sha256"));
    }
    Result<Ran> verified = exec("mf-compile", {"verify", plan_path});
    if (!verified) return verified.take_diagnostics();
    r.check(verified->exit_code == 0,
            "mf-compile verify exited " + std::to_string(verified->exit_code));
    std::string tampered = plans[0];
    const std::size_t at = tampered.find("Declare the stage");
    if (r.check(at != std::string::npos, "the plan lacks the golden descriptions")) {
      tampered[at] = 'd';
      const std::string tampered_path = (work_ / "tampered.plan.json").string();
      if (Status s = io::publish_atomic(tampered_path, tampered, io::Clobber::Replace); !s) {
        return s;
      }
      Result<Ran> refused = exec("mf-compile", {"verify", tampered_path});
      if (!refused) return refused.take_diagnostics();
      r.check(refused->exit_code == 1 && refused->err.find("MF-L004") != std::string::npos,
              "a tampered plan was not refused with MF-L004");
    }
    return {};
  }

  // 7. The golden plan runs against a scripted model that makes a premature terminal call, skips a
  //    prerequisite, names an unknown tool and writes a call as text: every correction is answered,
  //    the tools really run, the terminal is accepted with its artifacts' digests, the trace
  //    verifies, and a strict replay re-makes every decision identically.
  Status guarded_tool_run(const std::string& plan_path, Receipt& r) {
    const fs::path artifacts = work_ / "artifacts";
    std::error_code ec;
    fs::remove_all(artifacts, ec);
    fs::create_directories(artifacts, ec);
    const std::string trace_path = (work_ / "guarded.jsonl").string();
    const std::string workspace = (fixtures_ / "repository").string();
    Result<Ran> ran = exec(
        "mf-run", {"--plan", plan_path, "--model",
                   "scripted:" + (fixtures_ / "harness" / "runs" / "golden-recover.json").string(),
                   "--workspace", workspace, "--artifacts", artifacts.string(), "--trace-content",
                   "inline", "--run-id", "audit-guarded", "--fixed-clock", "--trace", trace_path});
    if (!ran) return ran.take_diagnostics();
    r.check(ran->exit_code == 0, "mf-run --plan exited " + std::to_string(ran->exit_code));
    Result<json::Value> result = json::parse_object(ran->out);
    if (r.check(result.ok(), "mf-run --plan printed no strict JSON object")) {
      r.check(string_at(*result, "terminal") == "completed", "the guarded run did not complete");
      const json::Value* accepted = result->find("result");
      const json::Value* listed = accepted ? accepted->find("artifacts") : nullptr;
      if (r.check(listed != nullptr && listed->is_array() && !listed->as_array().empty(),
                  "the accepted terminal lists no artifacts")) {
        for (const json::Value& a : listed->as_array()) {
          const std::string id = string_at(a, "artifact_id");
          Result<std::string> bytes = io::read_input((artifacts / id).string(), 1u << 20);
          r.check(bytes.ok() && hash::sha256_hex(*bytes) == string_at(a, "sha256"),
                  "artifact " + id + " is not the bytes the result names");
        }
      }
      r.evidence("result_sha256", json::canonical_digest(*result));
    }
    Result<std::string> trace = io::read_input(trace_path, 64u << 20);
    if (r.check(trace.ok(), "no trace was written")) {
      r.evidence("trace_sha256", hash::sha256_hex(*trace));
      for (const char* kind : {"premature_terminal", "prerequisite", "unknown_tool", "rescue"}) {
        r.check(trace->find(std::string("\"kind\":\"") + kind + "\"") != std::string::npos,
                std::string("the trace shows no ") + kind + " correction");
      }
    }
    Result<Ran> replayed = exec("mf-replay", {trace_path});
    if (!replayed) return replayed.take_diagnostics();
    r.check(replayed->exit_code == 0, "mf-replay exited " + std::to_string(replayed->exit_code));
    Result<Ran> strict =
        exec("mf-replay", {"--strict", "--plan", plan_path, "--workspace", workspace, trace_path});
    if (!strict) return strict.take_diagnostics();
    r.check(strict->exit_code == 0, "strict replay exited " + std::to_string(strict->exit_code));
    Result<json::Value> summary = json::parse_object(strict->out);
    if (r.check(summary.ok(), "strict replay printed no summary")) {
      r.check(string_at(*summary, "status") == "identical", "strict replay diverged");
      r.evidence("strict_replay_sha256", json::canonical_digest(*summary));
    }
    return {};
  }

  // 8. A projected harness: each request sends exactly the tools its turn's projection showed, a
  //    bound tool the turn hides is refused as not visible and never runs, the run completes, the
  //    trace replays strictly, and the trace rewritten to show a hidden tool (its hash chain
  //    relinked) is refused.
  Status prompt_projection(Receipt& r) {
    const fs::path h = fixtures_ / "harness" / "projected";
    const std::string plan_path = (work_ / "projected.plan.json").string();
    const std::string trace_path = (work_ / "projected.jsonl").string();
    const std::string workspace = (fixtures_ / "repository").string();
    Result<Ran> compiled = exec("mf-compile", {(h / "projected.yaml").string(), "-o", "-"});
    if (!compiled) return compiled.take_diagnostics();
    if (!r.check(compiled->exit_code == 0,
                 "mf-compile projected.yaml exited " + std::to_string(compiled->exit_code))) {
      return {};
    }
    if (Status s = io::publish_atomic(plan_path, compiled->out, io::Clobber::Replace); !s) return s;
    Result<json::Value> plan = json::parse_object(compiled->out);
    const json::Value* projection = plan ? plan->find("projection") : nullptr;
    if (!r.check(projection != nullptr, "the plan carries no projection")) return {};
    r.evidence("catalog_sha256", string_at(*projection, "catalog_sha256"));
    const std::size_t bound = plan->find("nodes")->as_array().size();
    Result<Ran> ran =
        exec("mf-run", {"--plan", plan_path, "--model", "scripted:" + (h / "run-ok.json").string(),
                        "--request", (h / "request.json").string(), "--workspace", workspace,
                        "--trace-content", "inline", "--run-id", "audit-projected", "--fixed-clock",
                        "--trace", trace_path});
    if (!ran) return ran.take_diagnostics();
    r.check(ran->exit_code == 0, "mf-run --plan exited " + std::to_string(ran->exit_code));
    Result<std::string> trace = io::read_input(trace_path, 64u << 20);
    if (!r.check(trace.ok(), "no trace was written")) return {};
    r.evidence("trace_sha256", hash::sha256_hex(*trace));
    std::vector<json::Value> events;
    json::JsonlReader reader(*trace);
    Result<json::Value> line = json::Value();
    while (reader.next(line)) {
      if (!r.check(line.ok(), "trace line is not strict JSON")) return {};
      events.push_back(std::move(*line));
    }
    // Request by request: the projection just before it, what it sent, what the turn called.
    bool matched = true, hid = false, refused_hidden = false, ran_hidden = false;
    std::string hidden_tool, terminal;
    json::Value visible;
    for (std::size_t i = 0; i < events.size(); ++i) {
      const json::Value& e = events[i];
      const std::string event = string_at(e, "event");
      if (event == "model_requested") {
        const json::Value& before = events[i > 0 ? i - 1 : 0];
        const json::Value* tools = e.find("tools");
        matched = matched && string_at(before, "event") == "projection_compiled" &&
                  int_at(before, "call") == int_at(e, "call") && tools != nullptr &&
                  *tools == *before.find("visible");
        visible = tools != nullptr ? *tools : json::Value();
        hid = hid || (tools != nullptr && tools->as_array().size() < bound);
      } else if (event == "guardrail_violation" && string_at(e, "kind") == "not_visible") {
        refused_hidden = true;
      } else if (event == "tool_called") {
        const json::Value tool(string_at(e, "tool"));
        const auto& shown = visible.is_array() ? visible.as_array() : json::Array{};
        ran_hidden = ran_hidden || std::find(shown.begin(), shown.end(), tool) == shown.end();
      } else if (event == "run_completed" || event == "run_failed") {
        terminal = string_at(e, "terminal");
      }
    }
    r.check(terminal == "completed", "the projected run did not complete");
    r.check(matched, "a request sent other tools than its turn's projection showed");
    r.check(hid, "no turn hid a bound tool");
    r.check(refused_hidden, "no call of a hidden tool was refused as not visible");
    r.check(!ran_hidden, "a tool ran on a turn that did not show it");
    Result<Ran> strict =
        exec("mf-replay", {"--strict", "--plan", plan_path, "--workspace", workspace, trace_path});
    if (!strict) return strict.take_diagnostics();
    Result<json::Value> summary = json::parse_object(strict->out);
    r.check(strict->exit_code == 0 && summary.ok() && string_at(*summary, "status") == "identical",
            "the projected run does not replay strictly");
    // The attack: the first request also sends a tool its projection hid, the chain relinked.
    for (const auto& n : plan->find("nodes")->as_array()) {
      const json::Value name(string_at(n, "model_tool_name"));
      const json::Value* first = nullptr;
      for (const auto& e : events) {
        if (string_at(e, "event") == "model_requested") {
          first = e.find("tools");
          break;
        }
      }
      if (first != nullptr && std::find(first->as_array().begin(), first->as_array().end(), name) ==
                                  first->as_array().end()) {
        hidden_tool = name.as_string();
        break;
      }
    }
    if (!r.check(!hidden_tool.empty(), "the first request hid nothing to forge")) return {};
    std::string forged, prev;
    bool edited = false;
    for (json::Value e : events) {
      if (!edited && string_at(e, "event") == "model_requested") {
        json::Value tools = *e.find("tools");
        tools.push_back(json::Value(hidden_tool));
        e.set("tools", std::move(tools));
        edited = true;
      }
      if (!prev.empty()) e.set("prev", prev);
      const std::string text = json::canonical(e);
      prev = hash::sha256_hex(text);
      forged += text + "\n";
    }
    const std::string forged_path = (work_ / "projected-forged.jsonl").string();
    if (Status s = io::publish_atomic(forged_path, forged, io::Clobber::Replace); !s) return s;
    Result<Ran> refused = exec("mf-replay", {forged_path});
    if (!refused) return refused.take_diagnostics();
    r.check(refused->exit_code == 1 && refused->err.find("MF-E015") != std::string::npos,
            "a trace whose request shows a hidden tool was not refused with MF-E015");
    r.evidence("forged_tool", hidden_tool);
    return {};
  }

  Result<Ran> exec(const std::string& tool, std::vector<std::string> args) {
    return audit::exec(req_.bin_dir, "", tool, std::move(args));
  }

  // put -> ref -> export -> import into a fresh store -> verify -> get: the object survives the
  // trip byte for byte under the digest the trace was recorded with.
  Status store_round_trip(const std::string& trace_path, const std::string& trace_sha, Receipt& r) {
    const std::string fresh = (work_ / "fresh-store").string();
    const std::string exported = (work_ / "export.jsonl").string();
    std::error_code ec;
    fs::remove_all(fresh, ec);
    const std::string trace_ref(store::refs::kAuditTrace);
    const std::vector<std::vector<std::string>> steps = {
        {"--store", req_.store_dir, "put", trace_path},
        {"--store", req_.store_dir, "ref", "set", trace_ref, trace_sha},
        {"--store", req_.store_dir, "export", "--ref", trace_ref, "-o", exported},
        {"--store", fresh, "import", exported},
        {"--store", fresh, "verify"},
        {"--store", fresh, "get", trace_sha},
    };
    std::string last_out;
    for (const auto& args : steps) {
      Result<Ran> ran = exec("mf-store", args);
      if (!ran) return ran.take_diagnostics();
      if (!r.check(ran->exit_code == 0,
                   "mf-store " + args[2] + " exited " + std::to_string(ran->exit_code))) {
        return {};
      }
      last_out = std::move(ran->out);
    }
    r.check(hash::sha256_hex(last_out) == trace_sha, "the object came back with other bytes");
    r.evidence("object_sha256", trace_sha);
    Result<std::string> export_bytes = io::read_input(exported, 64u << 20);
    if (r.check(export_bytes.ok(), "no export stream")) {
      r.evidence("export_sha256", hash::sha256_hex(*export_bytes));
    }
    return {};
  }

  // The repair transition as the trace records it: each repair request carries exactly the
  // violations of the verification that preceded it, and calls and repairs stay within the caps.
  void check_repair_trace(std::string_view bytes, Receipt& r) {
    json::JsonlReader reader(bytes);
    Result<json::Value> line = json::Value();
    json::Value last_violations;
    std::string terminal;
    bool exact = true;
    while (reader.next(line)) {
      if (!r.check(line.ok(), "trace line is not strict JSON")) return;
      const std::string event = string_at(*line, "event");
      if (event == "model_requested") {
        ++calls_observed_;
        if (string_at(*line, "kind") == "repair") {
          ++repairs_observed_;
          const json::Value* v = line->find("violations");
          exact = exact && v != nullptr && !last_violations.is_null() && *v == last_violations;
        }
      } else if (event == "verification_failed") {
        const json::Value* v = line->find("violations");
        last_violations = v ? *v : json::Value();
      } else if (event == "run_completed" || event == "run_failed") {
        terminal = string_at(*line, "terminal");
      }
    }
    r.check(terminal == "completed", "the repaired run did not complete");
    r.check(calls_observed_ == 2 && repairs_observed_ == 1,
            "expected 2 model calls and 1 repair, observed " + std::to_string(calls_observed_) +
                " and " + std::to_string(repairs_observed_));
    r.check(calls_observed_ <= budget_.max_model_calls && repairs_observed_ <= budget_.max_repairs,
            "the run exceeded its declared caps");
    r.check(exact, "a repair request did not carry the exact violations");
  }

  // The run's figures beside the receipts: the task digest, calls and repairs against their caps,
  // the output-byte cap and the evaluation's cases.
  json::Value facts() const {
    json::Value f;
    f.set("task_sha256", task_sha_);
    json::Value calls;
    calls.set("observed", calls_observed_);
    calls.set("cap", budget_.max_model_calls);
    f.set("model_calls", std::move(calls));
    json::Value repairs;
    repairs.set("observed", repairs_observed_);
    repairs.set("cap", budget_.max_repairs);
    f.set("repairs", std::move(repairs));
    f.set("output_byte_cap", budget_.max_output_bytes);
    json::Value cases;
    cases.set("passed", cases_passed_);
    cases.set("total", cases_total_);
    f.set("evaluation_cases", std::move(cases));
    return f;
  }

  const ProductRequest& req_;
  fs::path fixtures_;
  fs::path work_;
  std::string task_sha_;
  runtime::Budget budget_;
  std::int64_t calls_observed_ = 0;
  std::int64_t repairs_observed_ = 0;
  std::int64_t cases_passed_ = 0;
  std::int64_t cases_total_ = 0;
};

}  // namespace

Result<std::vector<Receipt>> product_receipts(const ProductRequest& request, json::Value& facts) {
  return Auditor(request).run(facts);
}

}  // namespace mf::audit
