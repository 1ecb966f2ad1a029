// The sim model (sim.hpp): a seeded generator picks, on each call, the trajectory's step or one of
// the faults, so a run with the same seed and requests is replayable byte for byte.
#include "mf/model/sim.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <chrono>
#include <limits>

#include "mf/diag/codes.hpp"
#include "mf/io/file.hpp"
#include "mf/json/canonical.hpp"
#include "mf/json/reader.hpp"

namespace mf::model {

namespace {

// Enum order: the order in which applicable kinds are numbered for the uniform pick, so it is part
// of the determinism guarantee (docs/formats/sim.md).
constexpr std::array<Fault, 7> kAllFaults = {
    Fault::TextInsteadOfCall, Fault::WrongArgumentNames,  Fault::MalformedJson, Fault::UnknownTool,
    Fault::PrematureTerminal, Fault::SkippedPrerequisite, Fault::RepeatedCall,
};

constexpr std::string_view kSpecSyntax = "sim:FILE?seed=S&faults=R[&kinds=a,b]";

// splitmix64 (Steele, Lea, Flood 2014): fixed arithmetic, so a seed means the same faults on every
// platform and standard library, which std::*_distribution does not promise.
std::uint64_t next_random(std::uint64_t& state) {
  state += 0x9E3779B97F4A7C15ULL;
  std::uint64_t z = state;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// The top 53 bits as a double in [0, 1): exact, so the comparison with `faults` is too.
double unit_interval(std::uint64_t x) {
  return static_cast<double>(x >> 11) * 0x1.0p-53;
}

// A step's arguments as the loop will read them: none (no_arguments) is {}.
std::optional<json::Value> parsed(const std::string& text) {
  if (no_arguments(text)) return json::Value(json::Object{});
  Result<json::Value> v = json::parse(text);
  if (!v) return std::nullopt;
  return std::move(*v);
}

bool object_arguments(const ToolCallRequest& call) {
  std::optional<json::Value> v = parsed(call.arguments);
  return v && v->is_object();
}

// The first call of `calls` whose arguments are an object with at least one member.
const ToolCallRequest* call_with_named_argument(const std::vector<ToolCallRequest>& calls) {
  for (const ToolCallRequest& c : calls) {
    std::optional<json::Value> v = parsed(c.arguments);
    if (v && v->is_object() && !v->as_object().empty()) return &c;
  }
  return nullptr;
}

bool has_calls(const ScriptedStep& step) {
  return !step.failure && !step.tool_calls.empty();
}

bool offered(const std::vector<ToolSchema>& tools, std::string_view name) {
  for (const ToolSchema& t : tools) {
    if (t.name == name) return true;
  }
  return false;
}

bool applicable(Fault f, const std::deque<ScriptedStep>& steps, std::size_t cursor) {
  const ScriptedStep& step = steps[cursor];
  const std::size_t last = steps.size() - 1;
  switch (f) {
    case Fault::TextInsteadOfCall:
      // One call only: the rescue then carries out the whole step, and the run can go on.
      return has_calls(step) && step.tool_calls.size() == 1 && object_arguments(step.tool_calls[0]);
    case Fault::WrongArgumentNames:
      return has_calls(step) && call_with_named_argument(step.tool_calls) != nullptr;
    case Fault::MalformedJson:
    case Fault::UnknownTool:
      return has_calls(step);
    case Fault::PrematureTerminal:
      return cursor < last && has_calls(steps[last]);
    case Fault::SkippedPrerequisite:
      return cursor + 1 < last && has_calls(steps[cursor + 1]);
    case Fault::RepeatedCall:
      return cursor > 0 && has_calls(steps[cursor - 1]);
  }
  return false;
}

// A prefix of the arguments' text that no JSON reader accepts. Canonical text first, so an object
// always loses its closing brace; cut at a code-point boundary, so the text stays valid UTF-8.
std::string cut_short(const std::string& arguments) {
  std::optional<json::Value> v = parsed(arguments);
  const std::string text = v ? json::canonical(*v) : arguments;
  std::size_t n = text.size() / 2;
  while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) --n;
  std::string out = text.substr(0, n);
  // A short number or a lone literal can leave a valid prefix ("12" -> "1").
  if (out.empty() || parsed(out)) return "{";
  return out;
}

// `call`'s arguments with their first member renamed to a key they do not have.
std::string rename_first_argument(const ToolCallRequest& call) {
  json::Value args = *parsed(call.arguments);
  json::Object& members = args.as_object();
  std::string key = members.front().key + "_name";
  while (args.find(key) != nullptr) key += "_name";
  members.front().key = key;
  return json::canonical(args);
}

std::string unknown_name(const std::string& name, const std::vector<ToolSchema>& tools) {
  std::string out = name + "_v2";
  while (offered(tools, out)) out += "_v2";
  return out;
}

// {"name":…,"arguments":{…}}: name first, as models write it (canonical order would put it last).
std::string call_as_text(const ToolCallRequest& call) {
  std::string out = "{\"name\":";
  json::write_string(call.name, out);
  out += ",\"arguments\":";
  json::write_canonical(*parsed(call.arguments), out);
  out += "}";
  return out;
}

// Whether the history after the sim's last reply shows `step` carried out: the tool results since
// the last assistant message answer the step's calls by name, in order, and none failed.
bool carried_out(const ScriptedStep& step, const std::vector<Message>& messages) {
  if (!has_calls(step)) return true;  // text and failures are carried out by being sent
  std::size_t start = messages.size();
  for (std::size_t i = messages.size(); i-- > 0;) {
    if (messages[i].role == "assistant") {
      start = i + 1;
      break;
    }
  }
  std::size_t answered = 0;
  for (std::size_t i = start; i < messages.size(); ++i) {
    const Message& m = messages[i];
    if (m.role != "tool") continue;
    if (m.is_error || answered == step.tool_calls.size() ||
        m.tool_name != step.tool_calls[answered].name) {
      return false;
    }
    ++answered;
  }
  return answered == step.tool_calls.size();
}

// Ids the model gives its calls. A fault reply always gets fresh ones: it replays calls of other
// steps, and their given ids would then occur twice in one run.
std::vector<ToolCallRequest> with_ids(std::vector<ToolCallRequest> calls, std::uint64_t call,
                                      bool keep_given) {
  for (std::size_t i = 0; i < calls.size(); ++i) {
    if (keep_given && !calls[i].id.empty()) continue;
    calls[i].id = "sim-" + std::to_string(call) + "-" + std::to_string(i);
  }
  return calls;
}

std::optional<Fault> fault_named(std::string_view s) {
  for (Fault f : kAllFaults) {
    if (name(f) == s) return f;
  }
  return std::nullopt;
}

std::string known_faults() {
  std::string out;
  for (Fault f : kAllFaults) {
    if (!out.empty()) out += ", ";
    out += name(f);
  }
  return out;
}

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

std::optional<std::uint64_t> parse_seed(std::string_view s) {
  if (!all_digits(s)) return std::nullopt;
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

// DIGITS[.DIGITS] in [0, 1]: no sign, exponent, hex or special values, so a spec reads the same
// everywhere (from_chars is locale-independent, unlike strtod).
std::optional<double> parse_faults(std::string_view s) {
  const std::size_t dot = s.find('.');
  if (!all_digits(s.substr(0, dot))) return std::nullopt;
  if (dot != std::string_view::npos && !all_digits(s.substr(dot + 1))) return std::nullopt;
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || !(v >= 0.0 && v <= 1.0)) {
    return std::nullopt;
  }
  return v;
}

diag::Diagnostic usage(std::string message) {
  return diag::error(diag::codes::kUsage, "sim: " + std::move(message));
}

void parse_kinds(std::string_view value, SimOptions& options, diag::Diagnostics& problems) {
  if (value.empty()) {
    problems.push_back(usage("kinds names no fault (known: " + known_faults() + ")"));
    return;
  }
  std::size_t begin = 0;
  while (true) {
    const std::size_t comma = value.find(',', begin);
    const std::string_view item = value.substr(begin, comma - begin);
    if (item.empty()) {
      problems.push_back(usage("kinds has an empty name in \"" + std::string(value) + "\""));
    } else if (std::optional<Fault> f = fault_named(item)) {
      options.kinds.push_back(*f);
    } else {
      problems.push_back(usage("unknown fault kind \"" + std::string(item) +
                               "\" (known: " + known_faults() + ")"));
    }
    if (comma == std::string_view::npos) break;
    begin = comma + 1;
  }
}

diag::Diagnostics parse_query(std::string_view query, SimOptions& options) {
  diag::Diagnostics problems;
  bool seen_seed = false;
  bool seen_faults = false;
  bool seen_kinds = false;
  std::size_t begin = 0;
  while (true) {
    const std::size_t amp = query.find('&', begin);
    const std::string_view param = query.substr(begin, amp - begin);
    const std::size_t eq = param.find('=');
    const std::string_view key = param.substr(0, eq);
    const std::string_view value =
        eq == std::string_view::npos ? std::string_view() : param.substr(eq + 1);
    bool* seen = key == "seed"     ? &seen_seed
                 : key == "faults" ? &seen_faults
                 : key == "kinds"  ? &seen_kinds
                                   : nullptr;
    if (param.empty()) {
      problems.push_back(usage("empty parameter in \"?" + std::string(query) + "\""));
    } else if (seen == nullptr) {
      problems.push_back(
          usage("unknown parameter \"" + std::string(key) + "\" (known: seed, faults, kinds)"));
    } else if (eq == std::string_view::npos) {
      problems.push_back(usage("parameter \"" + std::string(key) + "\" has no value (" +
                               std::string(key) + "=...)"));
    } else if (*seen) {
      problems.push_back(usage("parameter \"" + std::string(key) + "\" is given twice"));
    } else {
      *seen = true;
      if (key == "seed") {
        if (std::optional<std::uint64_t> seed = parse_seed(value)) {
          options.seed = *seed;
        } else {
          problems.push_back(usage("seed \"" + std::string(value) +
                                   "\" is not a decimal integer in 0..18446744073709551615"));
        }
      } else if (key == "faults") {
        if (std::optional<double> faults = parse_faults(value)) {
          options.faults = *faults;
        } else {
          problems.push_back(usage("faults \"" + std::string(value) +
                                   "\" is not a decimal number in [0, 1] (such as 0.25)"));
        }
      } else {
        parse_kinds(value, options, problems);
      }
    }
    if (amp == std::string_view::npos) break;
    begin = amp + 1;
  }
  return problems;
}

}  // namespace

std::string_view name(Fault f) {
  switch (f) {
    case Fault::TextInsteadOfCall:
      return "text_instead_of_call";
    case Fault::WrongArgumentNames:
      return "wrong_argument_names";
    case Fault::MalformedJson:
      return "malformed_json";
    case Fault::UnknownTool:
      return "unknown_tool";
    case Fault::PrematureTerminal:
      return "premature_terminal";
    case Fault::SkippedPrerequisite:
      return "skipped_prerequisite";
    case Fault::RepeatedCall:
      return "repeated_call";
  }
  return "unknown";
}

SimModel::SimModel(std::deque<ScriptedStep> trajectory, SimOptions options)
    : trajectory_(std::move(trajectory)), options_(std::move(options)), state_(options_.seed) {}

Reply SimModel::infer(const Request& request, const std::atomic<bool>& cancel) {
  ++calls_;
  if (last_was_step_ && cursor_ < trajectory_.size() &&
      carried_out(trajectory_[cursor_], request.messages)) {
    ++cursor_;
  }
  last_was_step_ = false;
  last_fault_.reset();
  // Two draws on every call, whatever is applicable, so one call's fault never shifts the
  // faults of the calls after it.
  const double roll = unit_interval(next_random(state_));
  const std::uint64_t pick = next_random(state_);

  Reply reply;
  if (cursor_ >= trajectory_.size()) {
    reply.error = std::string(kSimExhausted);
    return reply;
  }
  const ScriptedStep& step = trajectory_[cursor_];
  std::optional<Fault> fault;
  if (roll < options_.faults) {
    std::vector<Fault> candidates;
    for (Fault f : kAllFaults) {
      const bool enabled =
          options_.kinds.empty() ||
          std::find(options_.kinds.begin(), options_.kinds.end(), f) != options_.kinds.end();
      if (enabled && applicable(f, trajectory_, cursor_)) candidates.push_back(f);
    }
    if (!candidates.empty()) fault = candidates[pick % candidates.size()];
  }

  if (!wait_for_reply(step.delay_ms, request, cancel, reply.error)) return reply;

  reply.usage = step.usage;
  if (!fault) {
    last_was_step_ = true;
    if (step.failure) {
      reply.error = step.content;
      return reply;
    }
    reply.ok = true;
    reply.content = step.content;
    reply.tool_calls = with_ids(step.tool_calls, calls_, true);
    return reply;
  }

  last_fault_ = fault;
  reply.ok = true;
  switch (*fault) {
    case Fault::TextInsteadOfCall:
      last_was_step_ = true;  // a rescue turns the text into the step's call
      reply.content = call_as_text(step.tool_calls[0]);
      break;
    case Fault::WrongArgumentNames: {
      reply.content = step.content;
      reply.tool_calls = with_ids(step.tool_calls, calls_, false);
      const ToolCallRequest* target = call_with_named_argument(step.tool_calls);
      ToolCallRequest& call = reply.tool_calls[std::size_t(target - step.tool_calls.data())];
      call.arguments = rename_first_argument(*target);
      break;
    }
    case Fault::MalformedJson:
      reply.content = step.content;
      reply.tool_calls = with_ids(step.tool_calls, calls_, false);
      reply.tool_calls[0].arguments = cut_short(step.tool_calls[0].arguments);
      break;
    case Fault::UnknownTool:
      reply.content = step.content;
      reply.tool_calls = with_ids(step.tool_calls, calls_, false);
      reply.tool_calls[0].name = unknown_name(step.tool_calls[0].name, request.tools);
      break;
    case Fault::PrematureTerminal:
    case Fault::SkippedPrerequisite:
    case Fault::RepeatedCall: {
      const std::size_t source = *fault == Fault::PrematureTerminal     ? trajectory_.size() - 1
                                 : *fault == Fault::SkippedPrerequisite ? cursor_ + 1
                                                                        : cursor_ - 1;
      reply.content = trajectory_[source].content;
      reply.tool_calls = with_ids(trajectory_[source].tool_calls, calls_, false);
      break;
    }
  }
  return reply;
}

Result<std::unique_ptr<Model>> open_sim(const std::string& spec, std::int64_t sample) {
  const std::size_t q = spec.find('?');
  const std::string path = spec.substr(0, q);
  diag::Diagnostics problems;
  if (path.empty()) {
    problems.push_back(usage("no trajectory file (" + std::string(kSpecSyntax) + ")"));
  }
  SimOptions options;
  if (q != std::string::npos) {
    for (auto& d : parse_query(std::string_view(spec).substr(q + 1), options)) {
      problems.push_back(std::move(d));
    }
  }
  if (!problems.empty()) return problems;
  options.seed += static_cast<std::uint64_t>(sample);  // sample N of seed S draws as seed S+N
  Result<std::string> bytes = io::read_input(path, 16u << 20);
  if (!bytes) return bytes.take_diagnostics();
  auto steps = ScriptedModel::parse_steps(*bytes);
  if (!steps) {
    auto ds = steps.take_diagnostics();
    for (auto& d : ds) d.source = path;  // about the trajectory, not the task or the command line
    return ds;
  }
  auto model = std::make_unique<SimModel>(std::move(*steps), std::move(options));
  model->set_identity(file_identity(
      path, *bytes,
      q == std::string::npos ? std::string_view() : std::string_view(spec).substr(q)));
  return std::unique_ptr<Model>(std::move(model));
}

}  // namespace mf::model
