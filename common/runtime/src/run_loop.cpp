#include "mf/runtime/run_loop.hpp"

#include "mf/hash/sha256.hpp"
#include "mf/json/canonical.hpp"

namespace mf::runtime {

namespace {

std::string_view content_mode(TraceContent c) {
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

// The first request states the objective, the contract and the input; a repair request adds the
// exact violations of the previous answer.
model::Request make_request(const Task& task, std::int64_t call,
                            const std::vector<Violation>* violations) {
  model::Request r;
  r.call = call;
  json::Value contract;
  json::Array fields;
  for (const auto& f : task.contract.required_fields) fields.push_back(f);
  contract.set("required_fields", std::move(fields));
  contract.set("reject_unknown_fields", task.contract.reject_unknown_fields);
  r.messages.push_back(model::Message::text(
      "system", task.objective +
                     "\nAnswer with one JSON object and nothing else. Output contract: " +
                     json::canonical(contract) + ". At most " +
                     std::to_string(task.budget.max_output_bytes) + " bytes."));
  r.messages.push_back(model::Message::text("user", json::canonical(task.input)));
  if (violations != nullptr) {
    r.messages.push_back(model::Message::text("user", "Your previous answer violated the output contract: " +
                                      json::canonical(to_json(*violations)) +
                                      ". Return a corrected JSON object."));
  }
  return r;
}

class Loop {
 public:
  Loop(const Task& task, model::Model& model, trace::Writer& trace, const RunOptions& options)
      : task_(task), model_(model), trace_(trace), options_(options) {}

  Result<RunOutcome> run() {
    if (Status s = emit_started(); !s) return s.take_diagnostics();
    std::vector<Violation> feedback;
    for (;;) {
      if (cancelled()) return finish("cancelled");
      // The budget is a promise checked before each call, never inferred afterwards.
      if (outcome_.model_calls >= task_.budget.max_model_calls) return budget_exhausted();
      const std::int64_t call = ++outcome_.model_calls;
      Result<model::Reply> reply = ask(call, feedback);
      if (!reply) return reply.take_diagnostics();
      if (cancelled()) return finish("cancelled");
      // Provider failures are never retried by the repair loop.
      if (!reply->ok) return model_failed(call, reply->error);
      if (Status s = record_response(call, reply->content, reply->usage); !s) {
        return s.take_diagnostics();
      }
      Verdict verdict = verify_output(task_, reply->content, options_.semantic);
      if (verdict.violations.empty()) {
        // The result, the trace, the store and every report carry the same output: with
        // secret-looking runs redacted, as everything that leaves a process.
        outcome_.output = std::move(verdict.output);
        json::redact_secrets(outcome_.output);
        return finish("completed");
      }
      const bool can_repair = outcome_.repairs < task_.budget.max_repairs;
      if (Status s = emit_verification_failed(call, verdict.violations, can_repair); !s) {
        return s.take_diagnostics();
      }
      if (!can_repair) {
        violations_ = std::move(verdict.violations);
        return finish("invalid_output");
      }
      ++outcome_.repairs;
      feedback = std::move(verdict.violations);
    }
  }

 private:
  Status emit_started() {
    json::Value started;
    started.set("mode", "task");
    started.set("task_id", task_.id);
    started.set("task_sha256", task_.sha256);
    started.set("model", model_.name());
    started.set("budget", budget_to_json(task_.budget));
    started.set("durability", options_.durability);
    started.set("trace_content", content_mode(options_.trace_content));
    return trace_.emit("run_started", std::move(started));
  }

  Result<RunOutcome> budget_exhausted() {
    json::Value b;
    b.set("budget", "max_model_calls");
    b.set("limit", task_.budget.max_model_calls);
    if (Status s = trace_.emit("budget_exhausted", std::move(b)); !s) return s.take_diagnostics();
    return finish("budget_exhausted");
  }

  // Records the request, then asks the model: the first call, or a repair carrying `feedback`.
  Result<model::Reply> ask(std::int64_t call, const std::vector<Violation>& feedback) {
    const bool repair = !feedback.empty();
    json::Value requested;
    requested.set("call", call);
    requested.set("kind", repair ? "repair" : "initial");
    if (repair) requested.set("violations", to_json(feedback));
    if (Status s = trace_.emit("model_requested", std::move(requested)); !s) {
      return s.take_diagnostics();
    }
    static const std::atomic<bool> kNever{false};
    return model_.infer(make_request(task_, call, repair ? &feedback : nullptr),
                        options_.cancel ? *options_.cancel : kNever);
  }

  Result<RunOutcome> model_failed(std::int64_t call, const std::string& error) {
    json::Value failed;
    failed.set("call", call);
    failed.set("error", error);
    if (Status s = trace_.emit("model_failed", std::move(failed)); !s) return s.take_diagnostics();
    error_ = error;
    return finish("model_failed");
  }

  // The response as the trace-content mode says: kept in the store, digested, inline or not at all.
  Status record_response(std::int64_t call, const std::string& content, const json::Value& usage) {
    if (options_.trace_content == TraceContent::Store && options_.keep_content) {
      if (Status s = options_.keep_content(call, content); !s) return s;
    }
    json::Value responded;
    responded.set("call", call);
    responded.set("content_bytes", static_cast<std::int64_t>(content.size()));
    if (options_.trace_content != TraceContent::None) {
      responded.set("content_sha256", hash::sha256_hex(content));
    }
    if (options_.trace_content == TraceContent::Inline) responded.set("content", content);
    if (!usage.is_null()) responded.set("usage", usage);
    return trace_.emit("model_responded", std::move(responded));
  }

  Status emit_verification_failed(std::int64_t call, const std::vector<Violation>& violations,
                                  bool can_repair) {
    json::Value vf;
    vf.set("call", call);
    vf.set("violations", to_json(violations));
    vf.set("repairs_remaining", task_.budget.max_repairs - outcome_.repairs - (can_repair ? 1 : 0));
    return trace_.emit("verification_failed", std::move(vf));
  }

  bool cancelled() const { return options_.cancel != nullptr && options_.cancel->load(); }

  Result<RunOutcome> finish(std::string terminal) {
    outcome_.terminal = std::move(terminal);
    json::Value end;
    end.set("terminal", outcome_.terminal);
    end.set("model_calls", outcome_.model_calls);
    end.set("repairs", outcome_.repairs);
    if (outcome_.completed()) {
      end.set("output", outcome_.output);
    } else {
      if (!violations_.empty()) end.set("violations", to_json(violations_));
      if (!error_.empty()) end.set("error", error_);
    }
    const char* event = outcome_.completed() ? "run_completed" : "run_failed";
    if (Status s = trace_.emit(event, std::move(end)); !s) return s.take_diagnostics();
    if (Status s = trace_.close(); !s) return s.take_diagnostics();
    return outcome_;
  }

  const Task& task_;
  model::Model& model_;
  trace::Writer& trace_;
  const RunOptions& options_;
  RunOutcome outcome_;
  std::vector<Violation> violations_;
  std::string error_;
};

}  // namespace

Result<RunOutcome> run_task(const Task& task, model::Model& model, trace::Writer& trace,
                            const RunOptions& options) {
  return Loop(task, model, trace, options).run();
}

}  // namespace mf::runtime
