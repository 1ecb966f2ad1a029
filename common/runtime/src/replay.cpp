// Strict replay and forks (replay.hpp): a recorded trace's replies fed back through the one run
// loop in place of a model; a strict replay's events must equal the recorded ones.
#include "mf/runtime/replay.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>

#include "mf/diag/codes.hpp"
#include "mf/io/file.hpp"
#include "mf/json/canonical.hpp"
#include "mf/json/reader.hpp"
#include "mf/runtime/plan_run.hpp"
#include "mf/trace/verify.hpp"

namespace mf::runtime {

namespace {

using json::Value;

// Answers from the replies a trace recorded, in call order; then from `next`, if any.
class RecordedModel final : public model::Model {
 public:
  // `name` is the recorded run's model (strict replay), or the next model's (a fork).
  RecordedModel(std::deque<model::Reply> replies, std::unique_ptr<model::Model> next,
                std::string name)
      : replies_(std::move(replies)), next_(std::move(next)), name_(std::move(name)) {}

  model::Reply infer(const model::Request& request, const std::atomic<bool>& cancel) override {
    if (!replies_.empty()) {
      model::Reply r = std::move(replies_.front());
      replies_.pop_front();
      return r;
    }
    if (next_) return next_->infer(request, cancel);
    model::Reply r;
    r.error = "the recorded run has no reply for call " + std::to_string(request.call);
    return r;
  }
  std::string name() const override { return name_; }
  // A reply of the next model (a fork's live calls) is kept by it; a recorded one never is.
  Status keep(const model::Reply& reply) override { return next_ ? next_->keep(reply) : Status(); }
  Status flush() override { return next_ ? next_->flush() : Status(); }

 private:
  std::deque<model::Reply> replies_;
  std::unique_ptr<model::Model> next_;
  std::string name_;
};

// The lines of trace bytes the verifier (or the writer) already accepted, as offsets: an event is
// parsed only when it is looked at, so a replay holds the traces' bytes and a few events, never a
// tree of every line (a line of a large tool call's arguments is a large tree).
struct Lines {
  std::string bytes;
  std::vector<std::pair<std::size_t, std::size_t>> at;  // offset and size of each line

  explicit Lines(std::string b) : bytes(std::move(b)) {
    for (std::size_t from = 0; from < bytes.size();) {
      const std::size_t nl = bytes.find('\n', from);
      const std::size_t to = nl == std::string::npos ? bytes.size() : nl;
      at.emplace_back(from, to - from);
      from = to + 1;
    }
  }
  std::size_t size() const { return at.size(); }
  Result<Value> event(std::size_t i) const {
    return json::parse(std::string_view(bytes).substr(at[i].first, at[i].second));
  }
};

struct Recording {
  Lines lines;
  Value started;  // its run_started event
};

// A plan run's trace, held whole for the replay.
constexpr std::size_t kMaxTraceBytes = std::size_t{1} << 30;

// Reads the trace whole ("-" = stdin) and verifies it in the same pass. One line is never held past
// json::kMaxHeldBytes, the verifier's bound on a line: a longer one stops the reading there, and
// the trace is corrupt at that line (MF-E001) however long the line goes on.
Result<std::string> read_verified(const std::string& path, trace::Summary& summary) {
  const std::string name = path == "-" ? "<stdin>" : path;
  io::Fd owned;
  int fd = STDIN_FILENO;
  std::string bytes;
  if (path != "-") {
    owned.reset(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
    if (!owned.valid()) {
      return diag::error(diag::codes::kMissing,
                         "cannot open input '" + path + "': " + std::strerror(errno));
    }
    struct stat st {};
    if (::fstat(owned.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
      return diag::error(diag::codes::kNotRegularFile,
                         "input '" + path + "' is not a regular file");
    }
    fd = owned.get();
    // Address space only: the pages are touched as the bytes arrive.
    bytes.reserve(std::min(static_cast<std::size_t>(st.st_size), kMaxTraceBytes + 1));
  }
  // The bytes are verified once they are all read, in one feed(): one pipeline of the verifier's
  // two threads, not one per chunk. A chunk that takes a line over the bound is verified with the
  // rest (the verifier refuses that line) and reading stops there.
  std::size_t line_bytes = 0;  // of the last line so far
  std::size_t held = 0;        // bytes that are the trace's; more is the refused line's chunk
  const int err = io::read_chunks(fd, std::size_t{1} << 20, [&](std::string_view chunk) {
    held = bytes.size();
    bytes.append(chunk);
    if (const std::size_t first = chunk.find('\n'); first == std::string_view::npos) {
      line_bytes += chunk.size();
    } else {
      if (line_bytes + first > json::kMaxHeldBytes) return false;
      line_bytes = chunk.size() - chunk.rfind('\n') - 1;
    }
    if (line_bytes > json::kMaxHeldBytes) return false;
    held = bytes.size();
    return held <= kMaxTraceBytes;
  });
  if (err != 0) {
    return diag::error(diag::codes::kMissing, "cannot read " + name + ": " + std::strerror(-err));
  }
  if (held > kMaxTraceBytes) {
    return diag::error(diag::codes::kTooLarge, "input '" + name + "' exceeds the limit of " +
                                                   std::to_string(kMaxTraceBytes) + " bytes");
  }
  trace::Verifier verifier;
  verifier.feed(bytes);
  bytes.resize(held);
  summary = verifier.finish();
  return bytes;
}

Result<Recording> read_recording(const std::string& path) {
  trace::Summary verified;
  Result<std::string> bytes = read_verified(path, verified);
  if (!bytes) return bytes.take_diagnostics();
  Result<trace::Summary> summary = std::move(verified);
  if (summary->status != trace::Outcome::Ok) {
    diag::Diagnostic d = *summary->first_error;
    d.message =
        "the trace is " + std::string(trace::outcome_name(summary->status)) + ": " + d.message;
    return diag::Diagnostics{d};
  }
  Recording rec{Lines(std::move(*bytes)), Value()};
  Result<Value> started = rec.lines.event(0);
  if (!started) return started.take_diagnostics();
  if (started->find("mode")->as_string() != "plan") {
    return diag::error(diag::codes::kUsage, "replay re-runs plan runs; this trace is a " +
                                                started->find("mode")->as_string() + " run");
  }
  rec.started = std::move(*started);
  return rec;
}

// How a live backend's call went (docs/live-backends.md): where the reply came from, the transport
// attempts it took and the digest of the request it answered. They describe the recorded call, not
// the reply, and a replay, which serves the reply again without a profile or a network, cannot make
// that call again: the replayed reply carries the recording's.
void restore_transport(const Value& e, model::Reply& r) {
  if (const Value* v = e.find("source")) r.source = v->as_string();
  if (const Value* v = e.find("attempts")) r.attempts = *v->as_exact_int();
  if (const Value* v = e.find("request_sha256")) r.request_sha256 = v->as_string();
}

// The replies of the events before `before_seq`, as the model gave them.
Result<std::deque<model::Reply>> recorded_replies(const Recording& rec, std::int64_t before_seq) {
  std::deque<model::Reply> out;
  for (std::size_t i = 0; i < rec.lines.size(); ++i) {
    Result<Value> parsed = rec.lines.event(i);
    if (!parsed) return parsed.take_diagnostics();
    const Value& e = *parsed;
    if (*e.find("seq")->as_exact_int() >= before_seq) break;
    const std::string& event = e.find("event")->as_string();
    if (event == "model_failed") {
      model::Reply r;
      r.error = e.find("error")->as_string();
      restore_transport(e, r);
      out.push_back(std::move(r));
      continue;
    }
    if (event != "model_responded") continue;
    const Value* content = e.find("content");
    const Value* count = e.find("tool_call_count");
    const bool missing = (content == nullptr && *e.find("content_bytes")->as_exact_int() > 0) ||
                         (count != nullptr && e.find("tool_calls") == nullptr) ||
                         (e.find("reasoning_bytes") != nullptr && e.find("reasoning") == nullptr);
    if (missing || e.find("content_redacted") != nullptr) {
      return diag::error(diag::codes::kUsage,
                         "call " + std::to_string(*e.find("call")->as_exact_int()) +
                             "'s reply is not in the trace: replay needs a run recorded with "
                             "--trace-content inline (and no redacted content)");
    }
    model::Reply r;
    r.ok = true;
    if (content != nullptr) r.content = content->as_string();
    if (const Value* calls = e.find("tool_calls")) {
      for (const Value& c : calls->as_array()) {
        const Value* malformed = c.find("malformed");
        r.tool_calls.push_back({c.find("id")->as_string(), c.find("name")->as_string(),
                                c.find("arguments")->as_string(),
                                malformed != nullptr ? malformed->as_string() : std::string()});
      }
    }
    if (const Value* usage = e.find("usage")) r.usage = *usage;
    if (const Value* reasoning = e.find("reasoning")) r.reasoning = reasoning->as_string();
    if (const Value* stop = e.find("stop_reason")) r.stop_reason = stop->as_string();
    if (const Value* v = e.find("response_model")) r.response_model = v->as_string();
    if (const Value* v = e.find("response_id")) r.response_id = v->as_string();
    restore_transport(e, r);
    out.push_back(std::move(r));
  }
  return out;
}

// A temporary directory removed when it goes out of scope.
struct ScratchDir {
  std::string path;
  ~ScratchDir() {
    if (!path.empty()) {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
  }
};

// The run request that repeats the recorded run's configuration.
Result<PlanRunRequest> rerun(const ReplayRequest& from, const Recording& rec,
                             std::deque<model::Reply> replies, std::unique_ptr<model::Model> next,
                             ScratchDir& scratch) {
  Result<Value> plan = load_plan_file(from.plan_path);
  if (!plan) return plan.take_diagnostics();
  const Value& started = rec.started;
  const std::string& recorded = started.find("plan_sha256")->as_string();
  if (plan->find("compiled_sha256")->as_string() != recorded) {
    return diag::error(diag::codes::kUsage, "the trace was recorded from plan " + recorded +
                                                ", not " +
                                                plan->find("compiled_sha256")->as_string());
  }
  PlanRunRequest r;
  r.plan_path = from.plan_path;
  r.plan = std::move(*plan);  // loaded once: a plan on stdin cannot be read twice
  std::string name = next ? next->name() : started.find("model")->as_string();
  // The model run_started names: the recorded one's (strict replay), or the next model's (a fork).
  json::Value identity = json::Object{};
  if (next) {
    identity = next->identity();
  } else {
    for (const char* key : {"model_id", "model_sha256", "endpoint", "model_options"}) {
      if (const Value* v = started.find(key)) identity.set(key, *v);
    }
  }
  r.model = std::make_unique<RecordedModel>(std::move(replies), std::move(next), std::move(name));
  r.model->set_identity(std::move(identity));
  r.workspace = from.workspace;
  r.artifact_dir = from.artifact_dir;
  r.check_artifacts = false;
  const Value* artifacts = started.find("artifacts");
  if (r.artifact_dir.empty() && artifacts != nullptr && artifacts->as_bool()) {
    std::string templ = (std::filesystem::temp_directory_path() / "mf-replay-XXXXXX").string();
    if (::mkdtemp(templ.data()) == nullptr) {
      return diag::error(diag::codes::kInternal, "cannot create a scratch artifact directory");
    }
    scratch.path = r.artifact_dir = templ;
  }
  if (const Value* req = started.find("request")) r.request = json::canonical(*req);
  if (const Value* g = started.find("guardrails")) {
    r.guardrails = parse_guardrails(g->as_string()).value_or(Guardrails::Full);
  }
  if (const Value* caps = started.find("capabilities")) {
    std::vector<std::string> granted;
    for (const Value& c : caps->as_array()) granted.push_back(c.as_string());
    r.capabilities = std::move(granted);
  }
  const std::string& content = started.find("trace_content")->as_string();
  r.trace_content = content == "inline" ? TraceContent::Inline
                    : content == "none" ? TraceContent::None
                                        : TraceContent::Digest;
  r.durability = started.find("durability")->as_string() == "batch" ? trace::Durability::Batch
                                                                    : trace::Durability::Event;
  r.cancel = from.cancel;
  return r;
}

// An event without what differs between two honest runs of the same inputs: time, the chain that
// covers it, the MAC over it, and tool durations.
Value normalized(Value e) {
  auto& members = e.as_object();
  std::erase_if(members, [](const json::Member& m) {
    return m.key == "t_ms" || m.key == "prev" || m.key == "hmac_sha256";
  });
  if (Value* record = e.find("record"); record != nullptr && record->is_object()) {
    record->set("duration_ms", 0);
  }
  return e;
}

}  // namespace

Result<json::Value> strict_replay(const ReplayRequest& request) {
  Result<Recording> rec = read_recording(request.trace_path);
  if (!rec) return rec.take_diagnostics();
  auto replies = recorded_replies(*rec, INT64_MAX);
  if (!replies) return replies.take_diagnostics();
  ScratchDir scratch;
  Result<PlanRunRequest> r = rerun(request, *rec, std::move(*replies), nullptr, scratch);
  if (!r) return r.take_diagnostics();
  const Value& started = rec->started;
  r->run_id = started.find("run_id")->as_string();
  if (const Value* parent = started.find("parent_run_id")) {
    r->parent = Parent{parent->as_string(), *started.find("fork_seq")->as_exact_int()};
  }
  r->fixed_clock = true;
  std::string lines;
  r->trace_sink = &lines;
  Result<RunOutcome> outcome = run_plan_request(*r);
  if (!outcome) return outcome.take_diagnostics();

  const Lines replayed(std::move(lines));
  const Lines& recorded = rec->lines;
  Value summary;
  summary.set("events", static_cast<std::int64_t>(recorded.size()));
  Value difference;
  const std::size_t n = std::max(replayed.size(), recorded.size());
  for (std::size_t i = 0; i < n && difference.is_null(); ++i) {
    Result<Value> want = i < recorded.size() ? recorded.event(i) : Value();
    Result<Value> got = i < replayed.size() ? replayed.event(i) : Value();
    if (!want) return want.take_diagnostics();
    if (!got) return got.take_diagnostics();
    const bool both = i < recorded.size() && i < replayed.size();
    const Value a = i < recorded.size() ? normalized(std::move(*want)) : Value();
    const Value b = i < replayed.size() ? normalized(std::move(*got)) : Value();
    if (both && json::canonical(a) == json::canonical(b)) continue;
    std::string member;
    if (both) {
      for (const auto& m : a.as_object()) {
        const Value* other = b.find(m.key);
        if (other == nullptr || json::canonical(*other) != json::canonical(m.value)) {
          member = m.key;
          break;
        }
      }
      if (member.empty()) {
        for (const auto& m : b.as_object()) {
          if (a.find(m.key) == nullptr) {
            member = m.key;
            break;
          }
        }
      }
    }
    difference = json::Object{
        {"seq", static_cast<std::int64_t>(i)},
        {"expected", a.is_object() ? *a.find("event") : Value()},
        {"actual", b.is_object() ? *b.find("event") : Value()},
        {"member", member.empty() ? Value() : Value(member)},
    };
  }
  summary.set("status", difference.is_null() ? "identical" : "diverged");
  summary.set("first_difference", std::move(difference));
  return summary;
}

bool identical(const json::Value& strict_summary) {
  return strict_summary.find("status")->as_string() == "identical";
}

Result<json::Value> fork_run(const ForkRequest& request, bool* success) {
  struct stat a {
  }, b{};
  if (request.trace_path == request.from.trace_path ||
      (::stat(request.trace_path.c_str(), &a) == 0 &&
       ::stat(request.from.trace_path.c_str(), &b) == 0 && a.st_dev == b.st_dev &&
       a.st_ino == b.st_ino)) {
    return diag::error(diag::codes::kUsage,
                       "the fork's --trace must be a new file: the original is never changed");
  }
  Result<Recording> rec = read_recording(request.from.trace_path);
  if (!rec) return rec.take_diagnostics();
  const auto events = static_cast<std::int64_t>(rec->lines.size());
  if (request.fork_seq < 1 || request.fork_seq >= events) {
    return diag::error(diag::codes::kUsage, "--fork-at must name an event after run_started: 1.." +
                                                std::to_string(events - 1));
  }
  auto replies = recorded_replies(*rec, request.fork_seq);
  if (!replies) return replies.take_diagnostics();
  auto next = model::open_model(request.model_spec);
  if (!next) return next.take_diagnostics();
  ScratchDir scratch;
  Result<PlanRunRequest> r =
      rerun(request.from, *rec, std::move(*replies), std::move(*next), scratch);
  if (!r) return r.take_diagnostics();
  r->trace_path = request.trace_path;
  r->run_id = request.run_id;
  r->fixed_clock = request.fixed_clock;
  r->parent = Parent{rec->started.find("run_id")->as_string(), request.fork_seq};
  std::string run_id;
  Result<RunOutcome> outcome = run_plan_request(*r, &run_id);
  if (!outcome) return outcome.take_diagnostics();
  if (success != nullptr) {
    *success =
        outcome->completed() && outcome->output.find("disposition")->as_string() == "success";
  }
  return plan_result(*outcome, run_id);
}

}  // namespace mf::runtime
