// Harness mode's turns: forge's guardrails between the model and the execution boundary
// (docs/harness-run.md has every rule, message and budget).
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <set>
#include <span>

#include "loop.hpp"
#include "mf/harness/plan.hpp"
#include "mf/hash/sha256.hpp"
#include "mf/io/file.hpp"
#include "mf/json/canonical.hpp"
#include "mf/json/reader.hpp"
#include "mf/runtime/compaction.hpp"
#include "mf/runtime/plan_run.hpp"
#include "mf/runtime/rescue.hpp"
#include "mf/text/utf8.hpp"
#include "projector.hpp"

namespace mf::runtime {

namespace {

using json::Value;

constexpr std::string_view kGuardrailNames[] = {"full",        "no_rescue",  "no_nudge", "no_steps",
                                                "no_recovery", "no_compact", "bare"};

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ", ") + i;
  return out;
}

// forge's disposition of a terminal result: BLOCKED and *_BLOCKED block, REJECTED and *_REJECTED
// reject, anything else is success.
std::string disposition(const std::string& result) {
  const auto ends = [&](std::string_view suffix) {
    return result == suffix.substr(1) ||
           (result.size() > suffix.size() &&
            result.compare(result.size() - suffix.size(), suffix.size(), suffix) == 0);
  };
  if (ends("_BLOCKED")) return "blocked";
  if (ends("_REJECTED")) return "rejected";
  return "success";
}

// One budget of consecutive corrections: `limit` corrections are answered; the next one ends the
// run (forge's "exhausted when the count exceeds the limit").
struct Counter {
  std::string name;
  std::int64_t limit = 0;
  std::int64_t used = 0;
  bool spend() { return ++used > limit; }
  Value to_json() const { return json::Object{{"name", name}, {"used", used}, {"limit", limit}}; }
};

class GuardedTurns final : public detail::Turns {
 public:
  GuardedTurns(const Value& plan, tools::ToolExecutor& executor, trace::Writer& trace,
               RunOutcome& outcome, const RunOptions& options, const PlanRunOptions& plan_options,
               std::unique_ptr<detail::Projector> projector)
      : plan_(plan),
        executor_(executor),
        trace_(trace),
        outcome_(outcome),
        options_(options),
        opts_(plan_options),
        projector_(std::move(projector)) {
    const Guardrails g = opts_.guardrails;
    const bool bare = g == Guardrails::Bare;
    rescue_ = !bare && g != Guardrails::NoRescue;
    nudge_ = !bare && g != Guardrails::NoNudge;
    steps_ = !bare && g != Guardrails::NoSteps;
    compact_ = !bare && g != Guardrails::NoCompact;
    const Value& b = *plan_.find("budgets");
    const auto limit = [&](const char* key) { return *b.find(key)->as_exact_int(); };
    max_iterations_ = limit("max_iterations");
    const Value* per_reply = b.find("max_tool_calls_per_reply");
    max_calls_per_reply_ =
        per_reply != nullptr ? *per_reply->as_exact_int() : harness::kDefaultMaxToolCallsPerReply;
    retries_ = {"max_validation_retries", nudge_ ? limit("max_validation_retries") : 0};
    tool_errors_ = {"max_tool_errors",
                    bare || g == Guardrails::NoRecovery ? 0 : limit("max_tool_errors")};
    prereq_ = {"max_prerequisite_violations", limit("max_prerequisite_violations")};
    premature_ = {"max_premature_terminal_attempts", limit("max_premature_terminal_attempts")};
    const Value& c = *plan_.find("context_policy");
    context_.budget_tokens = *c.find("budget_tokens")->as_exact_int();
    context_.keep_recent_iterations = *c.find("keep_recent_iterations")->as_exact_int();
    for (std::size_t i = 0; i < 3; ++i) {
      context_.phase_thresholds[i] = c.find("phase_thresholds")->as_array()[i].as_number();
    }
    if (const Value* w = c.find("warning_thresholds")) {
      std::vector<double> thresholds;
      for (const Value& t : w->as_array()) thresholds.push_back(t.as_number());
      warnings_ = ContextWarnings(std::move(thresholds), context_.budget_tokens);
    }
    for (const auto& b : executor_.bindings()) {
      names_.push_back(b.tool.model_tool_name);
      tools_.push_back({b.tool.model_tool_name, b.tool.description, b.tool.input_schema});
    }
    seed_history();
  }

  Value started() const override {
    Value started;
    started.set("mode", "plan");
    started.set("plan_sha256", plan_.find("compiled_sha256")->as_string());
    started.set("harness_id", plan_.find("harness_id")->as_string());
    started.set("budget", *plan_.find("budgets"));
    started.set("guardrails", name(opts_.guardrails));
    json::Array caps;
    for (const auto& c : opts_.capabilities) caps.push_back(c);
    started.set("capabilities", std::move(caps));
    if (!opts_.request.is_null()) started.set("request", opts_.request);
    started.set("artifacts", !opts_.artifact_dir.empty());
    if (opts_.parent) {
      started.set("parent_run_id", opts_.parent->run_id);
      started.set("fork_seq", opts_.parent->fork_seq);
    }
    if (projector_) {
      const auto& p = projector_->policy();
      started.set("projection", json::Object{{"catalog_sha256", p.catalog.sha256()},
                                             {"mode", prompt::name(p.mode)},
                                             {"budget_tokens", p.budget_tokens},
                                             {"candidate_limit", p.candidate_limit}});
    }
    return started;
  }

  std::optional<std::pair<std::string, std::int64_t>> spent(std::int64_t calls) const override {
    if (calls >= max_iterations_)
      return std::make_pair(std::string("max_iterations"), max_iterations_);
    return std::nullopt;
  }

  Result<std::optional<detail::Ending>> prepare(std::int64_t call) override {
    if (compact_) {
      if (Status s = compact(call); !s) return s.take_diagnostics();
    }
    if (projector_) return project(call);
    return std::optional<detail::Ending>();
  }

  Result<model::Request> request(std::int64_t call, Value& requested) override {
    requested.set("kind", call == 1 ? "initial" : "turn");
    model::Request r;
    r.call = call;
    r.messages.reserve(history_.size());
    for (const auto& e : history_) r.messages.push_back(e.message);
    warn(r, requested);
    if (!projector_) {
      r.tools = tools_;
      return r;
    }
    // Only what this turn's projection shows, in its order, with its guidance in the system
    // message; the history keeps the plain system prompt.
    json::Array sent;
    for (const auto& name : visible_) {
      r.tools.push_back(tools_[std::find(names_.begin(), names_.end(), name) - names_.begin()]);
      sent.push_back(name);
    }
    requested.set("tools", std::move(sent));
    if (!guidance_.empty() && !r.messages.empty() && r.messages.front().role == "system") {
      r.messages.front().content += "\n\n" + guidance_;
    }
    return r;
  }

  Result<std::optional<detail::Ending>> decide(std::int64_t call, model::Reply& reply) override {
    call_ = call;
    facts_ = {call + 1, {}, {}};
    std::vector<model::ToolCallRequest> calls = std::move(reply.tool_calls);
    if (calls.empty() && rescue_) {
      if (auto rescued = rescue_tool_calls(reply.content, names_)) {
        for (auto& c : rescued->calls) {
          calls.push_back({"", std::move(c.name), json::canonical(c.arguments)});
        }
        if (Status s = violation("rescue",
                                 "read " + std::to_string(calls.size()) +
                                     " tool call(s) from text (" + rescued->format + ")",
                                 nullptr);
            !s) {
          return s.take_diagnostics();
        }
      }
    }
    if (calls.empty()) return text_reply(reply.content);
    detail::name_calls(call, calls);
    // One reply runs at most max_tool_calls_per_reply calls: the rest are refused as one event,
    // and the model is told so after this turn's results.
    const auto bound = static_cast<std::size_t>(max_calls_per_reply_);
    if (calls.size() <= bound) return decide_batch(calls, reply.content);
    const std::vector<model::ToolCallRequest> rest(calls.begin() + max_calls_per_reply_,
                                                   calls.end());
    calls.resize(bound);
    const std::string message =
        "[TooManyToolCalls] A reply may make at most " + std::to_string(bound) +
        " tool calls: the first " + std::to_string(bound) + " of your " +
        std::to_string(bound + rest.size()) + " were considered and the other " +
        std::to_string(rest.size()) + " were not run. Make at most " + std::to_string(bound) +
        " calls per reply.";
    if (Status s = violation("too_many_calls", message, nullptr); !s) return s.take_diagnostics();
    if (Status s = skipped(rest, "too_many_calls"); !s) return s.take_diagnostics();
    auto ending = decide_batch(calls, reply.content);
    if (!ending || *ending) return ending;
    push(EntryKind::Nudge, "user", message);
    if (Status s = nudge_sent("too_many_calls", "user", message); !s) return s.take_diagnostics();
    return ending;
  }

 private:
  // The calls of one reply, at most max_tool_calls_per_reply of them: refused as a batch, or run.
  Result<std::optional<detail::Ending>> decide_batch(
      const std::vector<model::ToolCallRequest>& calls, const std::string& content) {
    // A call the decoder refused has no name to look up, nor to send back as a call.
    for (const auto& c : calls) {
      if (!c.malformed.empty()) {
        return refuse_malformed(calls, content,
                                "[ToolCallError] The tool call " + c.id + " has " + c.malformed +
                                    ". Every call must name one of the tools: " + join(offered()) +
                                    ". Send the calls again, each named.");
      }
    }
    // Names first: there is no point reading the arguments of a tool that does not exist.
    for (const auto& c : calls) {
      if (std::find(names_.begin(), names_.end(), c.name) == names_.end()) {
        return correct(calls, "unknown_tool",
                       "[UnknownTool] There is no tool named '" + c.name +
                           "'. The tools are: " + join(offered()) + ". Call one of them.",
                       retries_);
      }
    }
    // Bound is not shown: a tool this turn's projection left out is its own correction.
    for (const auto& c : calls) {
      if (projector_ && std::find(visible_.begin(), visible_.end(), c.name) == visible_.end()) {
        return correct(calls, "not_visible",
                       "[ToolNotVisible] The tool '" + c.name +
                           "' is not offered this turn. The tools offered now are: " +
                           join(visible_) + ". Call one of them.",
                       retries_);
      }
    }
    std::vector<Value> args;
    for (const auto& c : calls) {
      auto parsed = json::parse(c.arguments);
      if (!parsed || !parsed->is_object()) {
        const std::string got = text::decode_utf8_lossy(text::utf8_prefix(c.arguments, 120));
        return correct(calls, "malformed_arguments",
                       "[ToolArgValidationError] The arguments of '" + c.name +
                           "' must be one JSON object; got " + json::canonical(Value(got)) +
                           ". Send the call again with an object ({} when it takes none).",
                       tool_errors_);
      }
      args.push_back(std::move(*parsed));
    }
    retries_.used = 0;  // a well-formed batch of known tools
    if (steps_) {
      if (auto ending = enforce_steps(calls, args)) return std::move(*ending);
    }
    return execute(calls, std::move(args));
  }

  // "cancelled" once a signal has come, "timed_out" once the run's deadline has passed.
  std::optional<std::string> stopped() const {
    if (options_.cancel != nullptr && options_.cancel->load()) return "cancelled";
    if (std::chrono::steady_clock::now() >= options_.deadline) return "timed_out";
    return std::nullopt;
  }

  // The tool names this turn offers the model: the projection's, or every bound tool.
  const std::vector<std::string>& offered() const { return projector_ ? visible_ : names_; }

  // This turn's projection: recorded as projection_compiled, and kept for the request and for
  // the check of the reply's calls. A selected mandatory unit that no longer fits ends the run.
  Result<std::optional<detail::Ending>> project(std::int64_t call) {
    facts_.call = call;
    auto p = projector_->project(executor_, facts_);
    if (!p) {
      const std::string why = p.diagnostics().front().message;
      Value b;
      b.set("budget", "projection_tokens");
      b.set("limit", projector_->policy().budget_tokens);
      if (Status s = trace_.emit("budget_exhausted", std::move(b)); !s) {
        return s.take_diagnostics();
      }
      return std::optional<detail::Ending>(detail::Ending{"budget_exhausted", {}, why});
    }
    visible_ = p->visible_tools;
    guidance_ = p->guidance;
    Value e;
    e.set("call", call);
    e.set("fingerprint", p->fingerprint);
    json::Array visible(visible_.begin(), visible_.end());
    e.set("visible", std::move(visible));
    e.set("active_units", json::Array(p->active.begin(), p->active.end()));
    e.set("ledger", prompt::to_json(p->ledger));
    if (Status s = trace_.emit("projection_compiled", std::move(e)); !s) {
      return s.take_diagnostics();
    }
    return std::optional<detail::Ending>();
  }

  const tools::Binding* binding(const std::string& model_name) const {
    for (const auto& b : executor_.bindings()) {
      if (b.tool.model_tool_name == model_name) return &b;
    }
    return nullptr;
  }

  void seed_history() {
    const Value& prompt = *plan_.find("prompt_policy");
    push(runtime::EntryKind::SystemPrompt, "system",
         prompt.find("system_instructions")->as_string());
    std::string user;
    if (const Value* i = opts_.request.find("instruction"); i != nullptr && i->is_string()) {
      user = i->as_string();
    } else {
      user = "Carry out this stage with the tools provided, then call a terminal tool.";
    }
    if (prompt.find("include_request_context")->as_bool()) {
      if (const Value* ctx = opts_.request.find("context"); ctx != nullptr) {
        user += "\n\nRequest context: " + json::canonical(*ctx);
      }
    }
    push(runtime::EntryKind::UserInput, "user", std::move(user));
  }

  // Every message enters the history here, with its digest beside it.
  void push(EntryKind kind, model::Message m) {
    Entry e;
    e.kind = kind;
    e.iteration = kind == EntryKind::SystemPrompt || kind == EntryKind::UserInput ? 0 : call_;
    entry_digests_.push_back(entry_digest(m));
    e.message = std::move(m);
    history_.push_back(std::move(e));
  }

  void push(EntryKind kind, std::string role, std::string content) {
    push(kind, model::Message::text(std::move(role), std::move(content)));
  }

  void push_calls(const std::vector<model::ToolCallRequest>& calls) {
    model::Message m = model::Message::text("assistant", "");
    m.tool_calls = calls;
    push(EntryKind::ToolCall, std::move(m));
  }

  void push_result(EntryKind kind, const model::ToolCallRequest& c, std::string text,
                   bool is_error) {
    model::Message m = model::Message::text("tool", std::move(text));
    m.tool_call_id = c.id;
    m.tool_name = c.name;
    m.is_error = is_error;
    push(kind, std::move(m));
  }

  // A context warning the estimate calls for goes to this request only, as a last user message
  // (forge's transient warning: the history never keeps it), and into model_requested.
  void warn(model::Request& r, Value& requested) {
    auto w = warnings_.check(estimate_tokens(history_));
    if (!w) return;
    r.messages.push_back(model::Message::text("user", w->message));
    requested.set("context_warning", json::Object{{"threshold", w->threshold},
                                                  {"tokens", w->tokens},
                                                  {"budget_tokens", w->budget_tokens},
                                                  {"message", std::move(w->message)}});
  }

  Status compact(std::int64_t call) {
    Compaction c = runtime::compact(history_, context_, call);
    if (c.changed == 0) return {};
    const std::string digest_before = history_digest();
    entry_digests_.clear();
    for (const auto& e : history_) entry_digests_.push_back(entry_digest(e.message));
    Value e;
    e.set("phase", c.phase);
    e.set("tokens_before", c.tokens_before);
    e.set("tokens_after", c.tokens_after);
    e.set("entries_before", c.entries_before);
    e.set("entries_after", c.entries_after);
    e.set("digest_before", digest_before);
    e.set("digest_after", history_digest());
    return trace_.emit("context_compacted", std::move(e));
  }

  // A message's SHA-256 over its length-prefixed fields (docs/formats/trace.md, context_compacted).
  static hash::Digest entry_digest(const model::Message& m) {
    hash::Sha256 h;
    const auto field = [&](std::string_view s) {
      const std::uint64_t n = s.size();
      h.update(&n, sizeof n);
      h.update(s);
    };
    field(m.role);
    field(m.content);
    for (const auto& c : m.tool_calls) {
      field(c.id);
      field(c.name);
      field(c.arguments);
    }
    field(m.tool_call_id);
    field(m.is_error ? "1" : "0");
    return h.finish();
  }

  // SHA-256 of the history as the model is sent it: over its messages' digests, in order.
  std::string history_digest() const {
    hash::Sha256 h;
    for (const auto& d : entry_digests_) h.update(d.data(), d.size());
    return hash::to_hex(h.finish());
  }

  Status violation(std::string_view kind, const std::string& message, const Counter* budget) {
    Value v;
    v.set("kind", kind);
    v.set("call", call_);
    v.set("message", message);
    if (budget != nullptr) v.set("budget", budget->to_json());
    return trace_.emit("guardrail_violation", std::move(v));
  }

  Status nudge_sent(std::string_view kind, std::string_view channel, const std::string& message) {
    Value n;
    n.set("kind", kind);
    n.set("channel", channel);
    n.set("message", message);
    return trace_.emit("nudge_sent", std::move(n));
  }

  Result<std::optional<detail::Ending>> exhausted(const Counter& c, const std::string& why) {
    Value b;
    b.set("budget", c.name);
    b.set("limit", c.limit);
    if (Status s = trace_.emit("budget_exhausted", std::move(b)); !s) return s.take_diagnostics();
    return std::optional<detail::Ending>(detail::Ending{"budget_exhausted", {}, why});
  }

  // A bare text reply: forge's retry nudge, as a user message, on the validation budget.
  Result<std::optional<detail::Ending>> text_reply(const std::string& content) {
    const std::string message =
        "Your reply was not a tool call. Answer with a call of one of: " + join(offered()) + ".";
    facts_.corrected = "text_response";
    const bool over = retries_.spend();
    if (Status s = violation("text_response", message, &retries_); !s) return s.take_diagnostics();
    if (over) return exhausted(retries_, "the model answered with text instead of a tool call");
    push(EntryKind::TextResponse, "assistant", content);
    push(EntryKind::Nudge, "user", message);
    if (Status s = nudge_sent("text_response", "user", message); !s) return s.take_diagnostics();
    return std::optional<detail::Ending>();
  }

  // Calls that never reach the boundary, recorded as one event however many there are: the
  // calls beyond max_tool_calls_per_reply, and the rest of a batch once the deadline has passed or
  // a signal has come (docs/formats/trace.md, tools_skipped).
  Status skipped(std::span<const model::ToolCallRequest> calls, std::string_view reason) {
    json::Array ids;
    ids.reserve(calls.size());
    for (const auto& c : calls) ids.push_back(c.id);
    Value e;
    e.set("reason", reason);
    e.set("count", static_cast<std::int64_t>(calls.size()));
    e.set("call_ids", std::move(ids));
    return trace_.emit("tools_skipped", std::move(e));
  }

  // A reply with a call the decoder refused (no usable name): none of its calls runs. A call
  // without a name cannot go back to the provider as a call, so the reply's text goes back as
  // the assistant's message and the correction as a user message. Spends max_tool_errors, as
  // malformed arguments do.
  Result<std::optional<detail::Ending>> refuse_malformed(
      const std::vector<model::ToolCallRequest>& calls, const std::string& content,
      const std::string& message) {
    facts_.corrected = "malformed_call";
    facts_.named.clear();
    const bool over = tool_errors_.spend();
    if (Status s = violation("malformed_call", message, &tool_errors_); !s) {
      return s.take_diagnostics();
    }
    for (const auto& c : calls) {
      Value d;
      d.set("call_id", c.id);
      d.set("tool", c.name);
      d.set("reason", "malformed_call");
      if (Status s = trace_.emit("tool_denied", std::move(d)); !s) return s.take_diagnostics();
    }
    if (over) return exhausted(tool_errors_, message);
    push(EntryKind::TextResponse, "assistant", content);
    push(EntryKind::Nudge, "user", message);
    if (Status s = nudge_sent("malformed_call", "user", message); !s) return s.take_diagnostics();
    return std::optional<detail::Ending>();
  }

  // A batch refused before the boundary: every call gets the correction as its tool result (the
  // channel models are trained to read), and the correction spends `budget`.
  // `named` are the tools the correction tells the model to call: the next projection shows them.
  Result<std::optional<detail::Ending>> correct(const std::vector<model::ToolCallRequest>& calls,
                                                std::string_view kind, const std::string& message,
                                                Counter& budget,
                                                std::vector<std::string> named = {}) {
    facts_.corrected = std::string(kind);
    facts_.named = std::move(named);
    const bool over = budget.spend();
    if (Status s = violation(kind, message, &budget); !s) return s.take_diagnostics();
    for (const auto& c : calls) {
      Value d;
      d.set("call_id", c.id);
      d.set("tool", c.name);
      d.set("reason", kind);
      if (Status s = trace_.emit("tool_denied", std::move(d)); !s) return s.take_diagnostics();
    }
    if (over) return exhausted(budget, message);
    push_calls(calls);
    for (const auto& c : calls) push_result(EntryKind::Nudge, c, message, true);
    if (Status s = nudge_sent(kind, "tool", message); !s) return s.take_diagnostics();
    return std::optional<detail::Ending>();
  }

  std::vector<std::string> pending_required() const {
    std::vector<std::string> out;
    for (const auto& b : executor_.bindings()) {
      if (b.required && !executor_.succeeded(b.node_id)) out.push_back(b.tool.model_tool_name);
    }
    return out;
  }

  // The first prerequisite of `b` that no earlier success meets (with its argument matches), as
  // the correction that says so; the boundary's own history decides.
  struct Unmet {
    std::string message;
    std::string prior;  // the model-facing name of the tool to call first
  };
  std::optional<Unmet> unmet_prerequisite(const tools::Binding& b, const Value& args) const {
    for (const auto& rule : b.prerequisites) {
      if (executor_.prerequisite_met(rule, args)) continue;
      std::string prior = rule.node_id;
      for (const auto& x : executor_.bindings()) {
        if (x.node_id == rule.node_id) prior = x.tool.model_tool_name;
      }
      std::string matching;
      for (const auto& m : rule.matches) matching += (matching.empty() ? "" : ", ") + m.second;
      return Unmet{"[PrerequisiteError] '" + b.tool.model_tool_name +
                       "' cannot be called yet: it needs a successful call of '" + prior +
                       "' first" +
                       (matching.empty() ? std::string()
                                         : " with the same " + matching + " (" + prior + "'s " +
                                               rule.matches.front().first + ")") +
                       ". Call '" + prior + "' now.",
                   prior};
    }
    return std::nullopt;
  }

  // Step enforcement before anything runs: a terminal while required nodes pend (escalating
  // tiers), then prerequisites (any violation blocks the whole batch).
  std::optional<Result<std::optional<detail::Ending>>> enforce_steps(
      const std::vector<model::ToolCallRequest>& calls, const std::vector<Value>& args) {
    const auto pending = pending_required();
    for (const auto& c : calls) {
      const tools::Binding* b = binding(c.name);
      if (b->terminal_result.empty() || pending.empty()) continue;
      const std::int64_t tier = std::min<std::int64_t>(premature_.used + 1, 3);
      const std::string steps = join(pending);
      std::string message;
      if (tier == 1) {
        message = "[StepEnforcementError] '" + c.name +
                  "' cannot be called yet: these required steps have not succeeded: " + steps +
                  ". Call one of them now.";
      } else if (tier == 2) {
        message = "[StepEnforcementError] Call one of these tools now: " + steps + ".";
      } else {
        message = "[StepEnforcementError] STOP. Do not call '" + c.name +
                  "'. Your next reply must be a call of one of: " + steps + ".";
      }
      return correct(calls, "premature_terminal", message, premature_, pending);
    }
    for (std::size_t i = 0; i < calls.size(); ++i) {
      if (auto unmet = unmet_prerequisite(*binding(calls[i].name), args[i])) {
        return correct(calls, "prerequisite", unmet->message, prereq_, {unmet->prior});
      }
    }
    return std::nullopt;
  }

  // Takes the arguments: each one moves on into its call, so a large one is held once.
  Result<std::optional<detail::Ending>> execute(const std::vector<model::ToolCallRequest>& calls,
                                                std::vector<Value> args) {
    push_calls(calls);
    bool batch_error = false;  // a failure: spends max_tool_errors
    bool batch_soft = false;   // a resolution error: spends nothing (forge's ToolResolutionError)
    std::string fatal;
    const tools::Binding* terminal = nullptr;
    Value terminal_details;
    for (std::size_t i = 0; i < calls.size(); ++i) {
      // Once the deadline has passed or a signal has come, nothing more of the batch runs: its
      // rest is one event, so the run ends after one more write, not one per call.
      if (auto stop = stopped()) {
        if (Status s = skipped(std::span(calls).subspan(i), *stop); !s) {
          return s.take_diagnostics();
        }
        return std::optional<detail::Ending>(detail::Ending{*stop, {}, {}});
      }
      const auto& c = calls[i];
      Value called;
      called.set("call_id", c.id);
      called.set("tool", c.name);
      called.set("input_sha256", json::canonical_digest(args[i]));
      if (options_.trace_content == TraceContent::Inline) called.set("arguments", args[i]);
      if (Status s = trace_.emit("tool_called", std::move(called)); !s) return s.take_diagnostics();
      const tools::Binding* bound = binding(c.name);
      const auto before = artifact_states(*bound);
      tools::Execution e = executor_.call({c.id, c.name, std::move(args[i])});
      ++outcome_.tool_calls;
      const Value record = tools::to_json(e.record);
      Value done;
      done.set("call_id", c.id);
      done.set("record", record);
      if (e.record.denied) {
        done.set("tool", c.name);
        done.set("reason", e.record.summary);
      } else {
        done.set("ok", !e.result.is_error);
        done.set("result_bytes", static_cast<std::int64_t>(e.result.text.size()));
        done.set("result_sha256", e.record.output_sha256);
        if (soft(e)) done.set("error_kind", "soft");
      }
      if (Status s =
              trace_.emit(e.record.denied ? "tool_denied" : "tool_completed", std::move(done));
          !s) {
        return s.take_diagnostics();
      }
      if (soft(e)) {
        // The call named something that does not exist: the model is told so and tries other
        // arguments; the step is not done, and no budget but max_iterations is spent.
        batch_soft = true;
        push_result(EntryKind::ToolResult, c, "[ToolResolutionError] " + e.result.text, true);
        continue;
      }
      if (e.result.is_error) {
        batch_error = true;
        push_result(EntryKind::ToolResult, c, "[ToolError] " + e.result.text, true);
        // A refusal the model cannot correct (a capability, a cancellation) ends the run.
        if (!e.record.retryable && fatal.empty()) fatal = e.result.text;
        continue;
      }
      push_result(EntryKind::ToolResult, c, e.result.text, false);
      const tools::Binding& b = *e.record.binding;
      // An artifact counts as produced by this call only if the call wrote it (with an artifact
      // directory: its file is new or replaced); a leftover file from another run never counts.
      const auto after = artifact_states(b);
      for (std::size_t k = 0; k < b.produces.size(); ++k) {
        if (opts_.artifact_dir.empty() || (after[k] && after[k] != before[k])) {
          produced_.insert(b.produces[k]);
        }
      }
      if (!b.terminal_result.empty() && terminal == nullptr) {
        terminal = &b;
        terminal_details = e.result.details;
      }
    }
    if (options_.cancel != nullptr && options_.cancel->load()) {
      return std::optional<detail::Ending>(detail::Ending{"cancelled", {}, {}});
    }
    if (!fatal.empty()) {
      return std::optional<detail::Ending>(detail::Ending{"tool_failed", {}, fatal});
    }
    if (batch_soft) {
      if (Status s = violation("soft_tool_error",
                               "a call of the batch named something that does not exist", nullptr);
          !s) {
        return s.take_diagnostics();
      }
    }
    if (batch_error) {
      const bool over = tool_errors_.spend();
      const std::string message = "a call of the batch returned an error";
      if (Status s = violation("tool_error", message, &tool_errors_); !s) {
        return s.take_diagnostics();
      }
      if (over) return exhausted(tool_errors_, "tool errors: " + message);
    } else {
      // A batch without a failure resets the consecutive counters; as in forge, a resolution
      // error is not a failure, so a batch of them resets the counters too.
      tool_errors_.used = premature_.used = prereq_.used = 0;
    }
    if (terminal != nullptr) return accept(*terminal, terminal_details);
    return std::optional<detail::Ending>();
  }

  // A resolution error the boundary let through: a tool's soft error result, neither a refusal
  // nor stopped by cancellation or the deadline.
  static bool soft(const tools::Execution& e) {
    return e.result.is_error && e.result.soft && !e.record.denied && e.record.retryable &&
           e.record.execution_status == tools::ExecutionStatus::SoftFailure;
  }

  // Terminal acceptance against the run's own history: the model claiming success is not success.
  Result<std::optional<detail::Ending>> accept(const tools::Binding& b, const Value& details) {
    std::string refused;
    const auto pending = pending_required();
    const Value* mapped = plan_.find("terminal_result_map")->find(b.node_id);
    const Value* claimed = details.find("terminal_result");
    if (!pending.empty()) {
      refused = "required steps have not succeeded: " + join(pending);
    } else if (mapped == nullptr || !mapped->is_string() ||
               mapped->as_string() != b.terminal_result || claimed == nullptr ||
               !claimed->is_string() || claimed->as_string() != b.terminal_result) {
      refused = "the terminal result does not match the plan's terminal map for " + b.node_id;
    }
    json::Array artifacts;
    if (refused.empty()) {
      for (const auto& rule :
           plan_.find("artifact_policy")->find("required_by_terminal")->as_array()) {
        if (rule.find("terminal_result")->as_string() != b.terminal_result) continue;
        for (const auto& id : rule.find("artifact_ids")->as_array()) {
          if (auto a = artifact(id.as_string())) {
            artifacts.push_back(std::move(*a));
          } else {
            refused = "terminal-required artifact '" + id.as_string() + "' was not produced";
            break;
          }
        }
      }
    }
    if (!refused.empty()) {
      const std::string message = "terminal intent " + b.terminal_result + " rejected: " + refused;
      if (Status s = violation("terminal_rejected", message, nullptr); !s) {
        return s.take_diagnostics();
      }
      return std::optional<detail::Ending>(detail::Ending{"terminal_rejected", {}, message});
    }
    const Value* summary = details.find("summary");
    outcome_.output = json::Object{
        {"node_id", b.node_id},
        {"terminal_result", b.terminal_result},
        {"disposition", disposition(b.terminal_result)},
        {"summary", summary != nullptr ? *summary : Value("")},
        {"artifacts", std::move(artifacts)},
    };
    json::redact_secrets(outcome_.output);
    return std::optional<detail::Ending>(detail::Ending{"completed", {}, {}});
  }

  // The identity of each artifact file `b` may produce (device, inode, size, change time), or
  // nothing where there is no file; empty without an artifact directory.
  using FileState = std::optional<std::array<std::int64_t, 5>>;
  std::vector<FileState> artifact_states(const tools::Binding& b) const {
    std::vector<FileState> out;
    if (opts_.artifact_dir.empty()) return std::vector<FileState>(b.produces.size());
    for (const auto& id : b.produces) {
      struct stat st {};
      if (::lstat((opts_.artifact_dir + "/" + id).c_str(), &st) != 0) {
        out.emplace_back();
      } else {
        out.push_back(std::array<std::int64_t, 5>{
            static_cast<std::int64_t>(st.st_dev), static_cast<std::int64_t>(st.st_ino),
            static_cast<std::int64_t>(st.st_size), static_cast<std::int64_t>(st.st_ctim.tv_sec),
            static_cast<std::int64_t>(st.st_ctim.tv_nsec)});
      }
    }
    return out;
  }

  // A produced artifact as the terminal lists it: with its digest when an artifact directory holds
  // it; nothing when no successful call produced it (or its file is missing).
  std::optional<Value> artifact(const std::string& id) const {
    if (produced_.count(id) == 0) return std::nullopt;
    if (opts_.artifact_dir.empty()) return Value(json::Object{{"artifact_id", id}});
    auto bytes = io::read_input(opts_.artifact_dir + "/" + id, 64u << 20);
    if (!bytes) return std::nullopt;
    return Value(json::Object{{"artifact_id", id},
                              {"sha256", hash::sha256_hex(*bytes)},
                              {"bytes", static_cast<std::int64_t>(bytes->size())}});
  }

  const Value& plan_;
  tools::ToolExecutor& executor_;
  trace::Writer& trace_;
  RunOutcome& outcome_;
  const RunOptions& options_;
  const PlanRunOptions& opts_;
  std::unique_ptr<detail::Projector> projector_;  // null: every bound tool is shown every turn
  detail::TurnFacts facts_;                       // for the next turn's projection
  std::vector<std::string> visible_;              // this turn's projection shows these tools
  std::string guidance_;                          // and this guidance
  bool rescue_ = true, nudge_ = true, steps_ = true, compact_ = true;
  std::int64_t max_iterations_ = 0;
  std::int64_t max_calls_per_reply_ = 0;
  Counter retries_, tool_errors_, prereq_, premature_;
  ContextPolicy context_;
  ContextWarnings warnings_;
  std::vector<std::string> names_;
  std::vector<model::ToolSchema> tools_;
  std::vector<Entry> history_;
  std::vector<hash::Digest> entry_digests_;  // one per history entry, in order
  std::int64_t call_ = 0;
  std::set<std::string> produced_;
};

}  // namespace

std::string_view name(Guardrails g) {
  return kGuardrailNames[static_cast<std::size_t>(g)];
}

std::vector<std::string> guardrail_names() {
  return {std::begin(kGuardrailNames), std::end(kGuardrailNames)};
}

std::optional<Guardrails> parse_guardrails(std::string_view n) {
  for (std::size_t i = 0; i < std::size(kGuardrailNames); ++i) {
    if (kGuardrailNames[i] == n) return static_cast<Guardrails>(i);
  }
  return std::nullopt;
}

namespace detail {

Result<RunOutcome> run_guarded(const json::Value& plan, tools::ToolExecutor& executor,
                               model::Model& model, trace::Writer& trace, const RunOptions& options,
                               const PlanRunOptions& plan_options,
                               std::unique_ptr<Projector> projector) {
  RunOutcome outcome;
  GuardedTurns turns(plan, executor, trace, outcome, options, plan_options, std::move(projector));
  return run_loop(turns, outcome, model, trace, options);
}

}  // namespace detail

Result<RunOutcome> run_plan(const json::Value& plan, tools::ToolExecutor& executor,
                            model::Model& model, trace::Writer& trace, const RunOptions& options,
                            const PlanRunOptions& plan_options) {
  auto projector = detail::Projector::from_plan(plan, plan_options);
  if (!projector) return projector.take_diagnostics();
  return detail::run_guarded(plan, executor, model, trace, options, plan_options,
                             std::move(*projector));
}

}  // namespace mf::runtime
