// The one run loop of run_loop.hpp, and task mode's turns over it: budget, deadline and
// cancellation checked before every model call, and each decision traced.
#include "mf/runtime/run_loop.hpp"

#include "loop.hpp"
#include "mf/diag/codes.hpp"
#include "mf/hash/sha256.hpp"
#include "mf/json/canonical.hpp"
#include "mf/json/reader.hpp"

namespace mf::runtime {

namespace detail {

void name_calls(std::int64_t call, std::vector<model::ToolCallRequest>& calls) {
  for (std::size_t i = 0; i < calls.size(); ++i) {
    // A nameless call no decoder refused (a reply cached before decoders refused them) is
    // refused here, so the loop never records or runs a call without a name.
    if (calls[i].name.empty() && calls[i].malformed.empty()) calls[i].malformed = "no name";
    if (model::no_arguments(calls[i].arguments)) calls[i].arguments = "{}";
    if (calls[i].id.empty()) {
      calls[i].id = "call-" + std::to_string(call) + "-" + std::to_string(i + 1);
    }
  }
}

namespace {

class Loop {
 public:
  Loop(Turns& turns, RunOutcome& outcome, model::Model& model, trace::Writer& trace,
       const RunOptions& options)
      : turns_(turns), outcome_(outcome), model_(model), trace_(trace), options_(options) {}

  Result<RunOutcome> run() {
    json::Value started = turns_.started();
    started.set("model", model_.name());
    json::Value identity = model_.identity();
    for (json::Member& m : identity.as_object()) started.set(m.key, std::move(m.value));
    started.set("durability", options_.durability);
    started.set("trace_content", content_mode(options_.trace_content));
    if (Status s = trace_.emit("run_started", std::move(started)); !s) return s.take_diagnostics();
    for (;;) {
      if (auto stop = interrupted()) return finish({*stop, {}, {}});
      // The budget is a promise checked before each call, never inferred afterwards.
      if (auto spent = turns_.spent(outcome_.model_calls)) return budget_exhausted(*spent);
      Result<std::optional<Ending>> prepared = turns_.prepare(outcome_.model_calls + 1);
      if (!prepared) {
        if (too_large(prepared.diagnostics())) return unrecorded_event(prepared.diagnostics());
        return prepared.take_diagnostics();
      }
      if (*prepared) return finish(std::move(**prepared));
      const std::int64_t call = ++outcome_.model_calls;
      json::Value requested;
      Result<model::Request> request = turns_.request(call, requested);
      if (!request) return request.take_diagnostics();
      request->deadline = options_.deadline;
      requested.set("call", call);
      if (Status s = trace_.emit("model_requested", std::move(requested)); !s) {
        return s.take_diagnostics();
      }
      static const std::atomic<bool> kNever{false};
      model::Reply reply = model_.infer(*request, options_.cancel ? *options_.cancel : kNever);
      if (auto stop = interrupted()) return finish({*stop, {}, {}});
      // Provider failures are never retried by the repair or guardrail budgets.
      if (!reply.ok) return model_failed(call, reply);
      name_calls(call, reply.tool_calls);
      Status kept;
      if (Status s = record_response(call, reply, kept); !s) {
        if (too_large(s.diagnostics())) {
          return model_failed(call, unrecorded_reply(reply, s.diagnostics()), false);
        }
        if (kept.ok()) return s.take_diagnostics();
        return model_failed(call, uncached(reply, kept), false);
      }
      Result<std::optional<Ending>> ending = turns_.decide(call, reply);
      if (!ending) {
        if (too_large(ending.diagnostics())) return unrecorded_event(ending.diagnostics());
        return ending.take_diagnostics();
      }
      if (*ending) return finish(std::move(**ending));
    }
  }

 private:
  static std::string_view content_mode(TraceContent c) {
    switch (c) {
      case TraceContent::Digest:
        return "digest";
      case TraceContent::Inline:
        return "inline";
      case TraceContent::None:
        return "none";
      case TraceContent::Store:
        return "store";
    }
    return "digest";
  }

  std::optional<std::string> interrupted() const {
    if (options_.cancel != nullptr && options_.cancel->load()) return "cancelled";
    if (std::chrono::steady_clock::now() >= options_.deadline) return "timed_out";
    return std::nullopt;
  }

  Result<RunOutcome> budget_exhausted(const std::pair<std::string, std::int64_t>& spent) {
    json::Value b;
    b.set("budget", spent.first);
    b.set("limit", spent.second);
    if (Status s = trace_.emit("budget_exhausted", std::move(b)); !s) return s.take_diagnostics();
    return finish({"budget_exhausted", {}, {}});
  }

  // `keep`: the model keeps the failure (a live backend's cache records failures too) just before
  // it is recorded; when it cannot, the call is recorded as failed for that reason instead.
  Result<RunOutcome> model_failed(std::int64_t call, const model::Reply& reply, bool keep = true) {
    json::Value failed;
    failed.set("call", call);
    failed.set("error", reply.error);
    transport(reply, failed);
    Status kept;
    const auto before = [&] { return kept = model_.keep(reply); };
    if (Status s = keep ? trace_.emit("model_failed", failed, before)
                        : trace_.emit("model_failed", failed);
        !s) {
      if (too_large(s.diagnostics())) {
        // A provider's error text too large for a line: its size and digest instead.
        outcome_.unrecorded =
            "the failure is too large to record (" + s.diagnostics().front().message + "): error " +
            std::to_string(reply.error.size()) + " bytes sha256 " + hash::sha256_hex(reply.error);
        return model_failed(call, failure(reply, outcome_.unrecorded), false);
      }
      if (kept.ok()) return s.take_diagnostics();
      return model_failed(call, uncached(reply, kept), false);
    }
    outcome_.error_code = reply.error_code;
    return finish({"model_failed", {}, reply.error});
  }

  // The writer refused an event because it cannot be one trace line (docs/formats/trace.md, "An
  // event too large for a line").
  static bool too_large(const diag::Diagnostics& ds) {
    return !ds.empty() && ds.front().code == diag::codes::kTraceLineTooLarge;
  }

  // The failure recorded in place of a reply too large to record: its sizes and digests, never
  // its content; the model does not keep it, so a cached run misses it rather than meeting it
  // again. The cause also goes to stderr.
  model::Reply unrecorded_reply(const model::Reply& reply, const diag::Diagnostics& why) {
    std::string error = "the reply is too large to record (" + why.front().message + "): content " +
                        std::to_string(reply.content.size()) + " bytes sha256 " +
                        hash::sha256_hex(reply.content);
    if (!reply.tool_calls.empty()) {
      error += ", " + std::to_string(reply.tool_calls.size()) + " tool call(s) sha256 " +
               json::canonical_digest(json::Value(calls_json(reply.tool_calls)));
    }
    if (!reply.reasoning.empty()) {
      error += ", reasoning " + std::to_string(reply.reasoning.size()) + " bytes sha256 " +
               hash::sha256_hex(reply.reasoning);
    }
    outcome_.unrecorded = error;
    return failure(reply, std::move(error));
  }

  // An event of the turns too large to record (a tool call with arguments nested past the
  // reader's depth once inside the event, a tool result record past a line): the run ends
  // there, failed, with the cause in its terminal event and on stderr.
  Result<RunOutcome> unrecorded_event(const diag::Diagnostics& why) {
    outcome_.unrecorded = "an event is too large to record: " + why.front().message;
    outcome_.error = outcome_.unrecorded;
    return finish({"tool_failed", {}, outcome_.unrecorded});
  }

  // A failure recorded in place of `reply`, with its transport members.
  static model::Reply failure(const model::Reply& reply, std::string error) {
    model::Reply out;
    out.error = std::move(error);
    out.source = reply.source;
    out.attempts = reply.attempts;
    out.request_sha256 = reply.request_sha256;
    return out;
  }

  // The failure recorded in place of a reply the model could not keep.
  static model::Reply uncached(const model::Reply& reply, const Status& why) {
    return failure(reply, "reply cache: " + why.diagnostics().front().message);
  }

  // A reply's tool calls as model_responded records them. A call the decoder refused has no
  // name, and says why; the turns refuse it.
  static json::Array calls_json(const std::vector<model::ToolCallRequest>& tool_calls) {
    json::Array calls;
    for (const auto& c : tool_calls) {
      json::Value item(json::Object{{"id", c.id}, {"name", c.name}, {"arguments", c.arguments}});
      if (!c.malformed.empty()) item.set("malformed", c.malformed);
      calls.push_back(std::move(item));
    }
    return calls;
  }

  // Where a live backend's reply came from (docs/live-backends.md): network or cache, the
  // transport attempts it took, and the request digest the cache keys on.
  static void transport(const model::Reply& reply, json::Value& event) {
    if (!reply.source.empty()) event.set("source", reply.source);
    if (reply.attempts > 0) event.set("attempts", reply.attempts);
    if (!reply.request_sha256.empty()) event.set("request_sha256", reply.request_sha256);
  }

  // The reply as the trace-content mode says: kept in the store, digested, inline or not at all.
  // Tool calls are recorded beside the content (inline: the calls themselves; otherwise their
  // digest), so a digest names everything the model said.
  // The model keeps the reply once the event has passed the writer's checks (`kept` says how
  // that went), so a reply the trace refuses is never kept.
  Status record_response(std::int64_t call, const model::Reply& reply, Status& kept) {
    const TraceContent mode = options_.trace_content;
    if (mode == TraceContent::Store && options_.keep_content) {
      if (Status s = options_.keep_content(call, reply.content); !s) return s;
    }
    json::Value responded;
    responded.set("call", call);
    responded.set("content_bytes", static_cast<std::int64_t>(reply.content.size()));
    if (mode != TraceContent::None)
      responded.set("content_sha256", hash::sha256_hex(reply.content));
    if (mode == TraceContent::Inline) responded.set("content", reply.content);
    if (!reply.tool_calls.empty()) {
      json::Array calls = calls_json(reply.tool_calls);
      responded.set("tool_call_count", static_cast<std::int64_t>(calls.size()));
      if (mode != TraceContent::None) {
        responded.set("tool_calls_sha256", json::canonical_digest(json::Value(calls)));
      }
      if (mode == TraceContent::Inline) responded.set("tool_calls", std::move(calls));
    }
    if (!reply.usage.is_null()) responded.set("usage", reply.usage);
    if (!reply.reasoning.empty()) {
      responded.set("reasoning_bytes", static_cast<std::int64_t>(reply.reasoning.size()));
      if (mode != TraceContent::None) {
        responded.set("reasoning_sha256", hash::sha256_hex(reply.reasoning));
      }
      if (mode == TraceContent::Inline) responded.set("reasoning", reply.reasoning);
    }
    if (!reply.stop_reason.empty()) responded.set("stop_reason", reply.stop_reason);
    if (!reply.response_model.empty()) responded.set("response_model", reply.response_model);
    if (!reply.response_id.empty()) responded.set("response_id", reply.response_id);
    transport(reply, responded);
    return trace_.emit("model_responded", std::move(responded),
                       [&] { return kept = model_.keep(reply); });
  }

  Result<RunOutcome> finish(Ending ending) {
    outcome_.terminal = std::move(ending.terminal);
    if (!outcome_.completed() && outcome_.error.empty()) outcome_.error = ending.error;
    json::Value end;
    end.set("terminal", outcome_.terminal);
    end.set("model_calls", outcome_.model_calls);
    end.set("repairs", outcome_.repairs);
    if (outcome_.tool_calls > 0) end.set("tool_calls", outcome_.tool_calls);
    if (outcome_.completed()) {
      end.set("output", outcome_.output);
    } else {
      if (!ending.violations.empty()) end.set("violations", to_json(ending.violations));
      if (!outcome_.error.empty()) end.set("error", outcome_.error);
    }
    const char* event = outcome_.completed() ? "run_completed" : "run_failed";
    if (Status s = trace_.emit(event, std::move(end)); !s) return s.take_diagnostics();
    outcome_.cause = trace_.first_cause();
    if (Status s = model_.flush(); !s) return s.take_diagnostics();
    if (Status s = trace_.close(); !s) return s.take_diagnostics();
    return outcome_;
  }

  Turns& turns_;
  RunOutcome& outcome_;
  model::Model& model_;
  trace::Writer& trace_;
  const RunOptions& options_;
};

}  // namespace

Result<RunOutcome> run_loop(Turns& turns, RunOutcome& outcome, model::Model& model,
                            trace::Writer& trace, const RunOptions& options) {
  return Loop(turns, outcome, model, trace, options).run();
}

}  // namespace detail

namespace {

// The largest output (canonical bytes) a task run records in run_completed: a trace line's
// bound less 4 KiB for the event's other members.
constexpr std::size_t kMaxRecordedOutput = json::kMaxHeldBytes - 4096;

// Task mode: the final answer is the assistant content, checked by the output contract; a
// violation is repaired while the budget allows, with the exact violations in the next request.
class TaskTurns final : public detail::Turns {
 public:
  TaskTurns(const Task& task, trace::Writer& trace, RunOutcome& outcome, const RunOptions& options)
      : task_(task), trace_(trace), outcome_(outcome), options_(options) {}

  json::Value started() const override {
    json::Value started;
    started.set("mode", "task");
    started.set("task_id", task_.id);
    started.set("task_sha256", task_.sha256);
    started.set("budget", budget_to_json(task_.budget));
    return started;
  }

  std::optional<std::pair<std::string, std::int64_t>> spent(std::int64_t calls) const override {
    if (calls >= task_.budget.max_model_calls) {
      return std::make_pair(std::string("max_model_calls"), task_.budget.max_model_calls);
    }
    return std::nullopt;
  }

  // The first request states the objective, the contract and the input; a repair request adds the
  // exact violations of the previous answer.
  Result<model::Request> request(std::int64_t call, json::Value& requested) override {
    const bool repair = !feedback_.empty();
    requested.set("kind", repair ? "repair" : "initial");
    if (repair) requested.set("violations", to_json(feedback_));
    model::Request r;
    r.call = call;
    json::Value contract;
    json::Array fields;
    for (const auto& f : task_.contract.required_fields) fields.push_back(f);
    contract.set("required_fields", std::move(fields));
    contract.set("reject_unknown_fields", task_.contract.reject_unknown_fields);
    r.messages.push_back(model::Message::text(
        "system", task_.objective +
                      "\nAnswer with one JSON object and nothing else. Output contract: " +
                      json::canonical(contract) + ". At most " +
                      std::to_string(task_.budget.max_output_bytes) + " bytes."));
    r.messages.push_back(model::Message::text("user", json::canonical(task_.input)));
    if (repair) {
      r.messages.push_back(model::Message::text(
          "user", "Your previous answer violated the output contract: " +
                      json::canonical(to_json(feedback_)) + ". Return a corrected JSON object."));
    }
    return r;
  }

  Result<std::optional<detail::Ending>> decide(std::int64_t call, model::Reply& reply) override {
    Verdict verdict = verify_output(task_, reply.content, options_.semantic);
    if (verdict.violations.empty()) {
      // The result, the trace, the store and every report carry the same output: with
      // secret-looking runs redacted, as everything that leaves a process.
      json::redact_secrets(verdict.output);
      // run_completed holds the output in one trace line; an output that line cannot hold is
      // refused as too large, so the run still ends with its terminal event.
      const std::size_t bytes = json::canonical(verdict.output).size();
      if (bytes <= kMaxRecordedOutput) {
        outcome_.output = std::move(verdict.output);
        return std::optional<detail::Ending>(detail::Ending{"completed", {}, {}});
      }
      verdict.violations.push_back({"byte_budget", "$", "output_too_large",
                                    "output is " + std::to_string(bytes) +
                                        " bytes as canonical JSON; the trace records at most " +
                                        std::to_string(kMaxRecordedOutput)});
    }
    const bool can_repair = outcome_.repairs < task_.budget.max_repairs;
    const std::int64_t remaining =
        task_.budget.max_repairs - outcome_.repairs - (can_repair ? 1 : 0);
    const auto failed = [&] {
      json::Value vf;
      vf.set("call", call);
      vf.set("violations", to_json(verdict.violations));
      vf.set("repairs_remaining", remaining);
      return trace_.emit("verification_failed", std::move(vf));
    };
    Status s = failed();
    if (!s && !s.diagnostics().empty() &&
        s.diagnostics().front().code == diag::codes::kTraceLineTooLarge) {
      // Violations too large for a line (one per field of an output with very many, or quoting
      // a very long key): one violation says so, with their count, size and digest.
      const json::Value all = to_json(verdict.violations);
      const std::size_t n = verdict.violations.size();
      verdict.violations = {
          {"byte_budget", "$", "violations_too_large",
           std::to_string(n) + " violation(s) of " + std::to_string(json::canonical(all).size()) +
               " bytes (sha256 " + json::canonical_digest(all) +
               ") are too large to record: the output has too many or too long fields"}};
      s = failed();
    }
    if (!s) return s.take_diagnostics();
    if (!can_repair) {
      return std::optional<detail::Ending>(
          detail::Ending{"invalid_output", std::move(verdict.violations), {}});
    }
    ++outcome_.repairs;
    feedback_ = std::move(verdict.violations);
    return std::optional<detail::Ending>();
  }

 private:
  const Task& task_;
  trace::Writer& trace_;
  RunOutcome& outcome_;
  const RunOptions& options_;
  std::vector<Violation> feedback_;
};

}  // namespace

Result<RunOutcome> run_task(const Task& task, model::Model& model, trace::Writer& trace,
                            const RunOptions& options) {
  RunOutcome outcome;
  TaskTurns turns(task, trace, outcome, options);
  return detail::run_loop(turns, outcome, model, trace, options);
}

}  // namespace mf::runtime
