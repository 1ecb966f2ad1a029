// Loading an eval suite (suite.hpp): every field, case and the task, plan and model each names is
// checked before any case runs.
#include "mf/eval/suite.hpp"

#include <algorithm>
#include <array>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <span>

#include "ahead.hpp"
#include "mf/diag/codes.hpp"
#include "mf/harness/plan.hpp"
#include "mf/hash/sha256.hpp"
#include "mf/io/file.hpp"
#include "mf/json/canonical.hpp"
#include "mf/json/fields.hpp"
#include "mf/json/pointer.hpp"
#include "mf/json/reader.hpp"
#include "mf/model/live.hpp"
#include "mf/model/model.hpp"
#include "mf/model/scripted.hpp"

namespace mf::eval {

namespace {

namespace codes = diag::codes;

constexpr std::size_t kMaxSuiteBytes = 16u << 20;
constexpr std::size_t kMaxTaskBytes = 1u << 20;
constexpr std::size_t kMaxScriptBytes = 16u << 20;
constexpr std::size_t kMaxPlanBytes = 16u << 20;
constexpr std::size_t kMaxCaseIdLength = CaseRef::kMaxId;
constexpr std::string_view kScripted = "scripted:";
constexpr std::string_view kSim = "sim:";
// timed_out is expected only under mf-eval run --case-timeout-ms.
constexpr std::array<std::string_view, 6> kTerminals = {
    "completed", "invalid_output", "model_failed", "budget_exhausted", "cancelled", "timed_out"};
constexpr std::array<std::string_view, 7> kPlanTerminals = {
    "completed",         "budget_exhausted", "model_failed", "tool_failed",
    "terminal_rejected", "cancelled",        "timed_out"};
constexpr std::array<std::string_view, 3> kDispositions = {"success", "blocked", "rejected"};
// The guardrail_violation kinds of docs/formats/trace.md.
constexpr std::array<std::string_view, 11> kViolationKinds = {
    "rescue",         "text_response",       "unknown_tool",     "not_visible",
    "malformed_call", "malformed_arguments", "too_many_calls",   "premature_terminal",
    "prerequisite",   "tool_error",          "terminal_rejected"};

std::string index_pointer(std::string_view base, std::size_t i) {
  std::string p(base);
  json::append_index(p, i);
  return p;
}

bool listed(std::span<const std::string_view> names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::string spelled(std::span<const std::string_view> names) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    out += i == 0 ? "" : i + 1 == names.size() ? " or " : ", ";
    out += names[i];
  }
  return out;
}

// The presets in the runtime's own spelling, so the message cannot drift from what it accepts.
std::vector<std::string_view> preset_names() {
  std::vector<std::string_view> out;
  for (auto g = static_cast<std::uint8_t>(runtime::Guardrails::Full);
       g <= static_cast<std::uint8_t>(runtime::Guardrails::Bare); ++g) {
    out.push_back(runtime::name(static_cast<runtime::Guardrails>(g)));
  }
  return out;
}

std::optional<std::int64_t> count(json::FieldReader& r, std::string_view key) {
  auto n = r.integer(key, false);
  if (n && *n < 0) {
    r.add(diag::error(codes::kSchema, "\"" + std::string(key) + "\" must not be negative",
                      r.pointer_of(key)));
  }
  return n;
}

// The checks only a plan run can answer: its disposition, calls, guardrail kinds and tools.
// An expectation map ({name: value}): its members, each with its pointer. A map that is there
// but empty checks nothing, which is refused.
std::vector<std::pair<const json::Member*, std::string>> entries(json::FieldReader& r,
                                                                 std::string_view key) {
  std::vector<std::pair<const json::Member*, std::string>> out;
  const json::Value* map = r.object(key, false);
  if (map == nullptr) return out;
  const std::string at = r.pointer_of(key);
  if (map->as_object().empty()) {
    r.add(diag::error(codes::kSchema,
                      "\"" + std::string(key) + "\" lists nothing: it checks nothing", at));
  }
  for (const json::Member& m : map->as_object()) {
    std::string where = at;
    json::append_token(where, m.key);
    out.emplace_back(&m, std::move(where));
  }
  return out;
}

// forbidden_tools: [name, ...]; artifacts: {id: true | "<sha256>"}.
void parse_plan_evidence(json::FieldReader& r, Expect& expect) {
  if (const json::Value* names = r.array("forbidden_tools", false)) {
    for (std::size_t i = 0; i < names->as_array().size(); ++i) {
      const json::Value& n = names->as_array()[i];
      if (!n.is_string() || n.as_string().empty()) {
        r.add(diag::error(codes::kSchema, "a tool name must be a non-empty string",
                          index_pointer(r.pointer_of("forbidden_tools"), i)));
      } else {
        expect.forbidden_tools.push_back(n.as_string());
      }
    }
  }
  {
    const std::string at = r.pointer_of("artifacts");
    for (const auto& [member, where] : entries(r, "artifacts")) {
      const json::Member& m = *member;
      const bool present = m.value.is_bool() && m.value.as_bool();
      const bool digest =
          m.value.is_string() && m.value.as_string().size() == 64 &&
          m.value.as_string().find_first_not_of("0123456789abcdef") == std::string::npos;
      if (!present && !digest) {
        r.add(diag::error(codes::kSchema,
                          "an artifact is expected as true (present, with a digest) or its "
                          "SHA-256 (64 lowercase hex digits)",
                          where));
        continue;
      }
      expect.artifacts.emplace_back(m.key, digest ? m.value.as_string() : std::string());
    }
    if (expect.terminal && *expect.terminal != "completed" && !expect.artifacts.empty()) {
      r.add(diag::error(codes::kSchema, "artifacts are checked only when terminal is \"completed\"",
                        at));
    }
  }
}

void parse_plan_expect(json::FieldReader& r, Expect& expect) {
  parse_plan_evidence(r, expect);
  expect.disposition = r.string("disposition", false);
  if (expect.disposition && !listed(kDispositions, *expect.disposition)) {
    r.add(diag::error(codes::kSchema,
                      "\"disposition\" must be " + spelled(kDispositions) + ", found \"" +
                          *expect.disposition + "\"",
                      r.pointer_of("disposition")));
  }
  // Only an accepted terminal has a disposition: such a check could never pass.
  if (expect.disposition && expect.terminal && *expect.terminal != "completed") {
    r.add(diag::error(codes::kSchema,
                      "\"disposition\" is checked only when terminal is \"completed\"",
                      r.pointer_of("disposition")));
  }
  expect.tool_calls = count(r, "tool_calls");
  {
    for (const auto& [member, pointer] : entries(r, "violations")) {
      const json::Member& m = *member;
      const std::optional<std::int64_t> n =
          m.value.is_number() ? m.value.as_exact_int() : std::nullopt;
      if (!listed(kViolationKinds, m.key)) {
        r.add(diag::error(codes::kUnknownField,
                          "unknown guardrail kind \"" + m.key +
                              "\" (the kinds: " + spelled(kViolationKinds) + ")",
                          pointer));
      } else if (!n || *n < 0) {
        r.add(diag::error(codes::kSchema, "a violation count must be an integer >= 0", pointer));
      } else {
        expect.violations.emplace_back(m.key, *n);
      }
    }
  }
  if (const json::Value* tools = r.array("tools", false)) {
    std::vector<std::string> names;
    const json::Array& items = tools->as_array();
    for (std::size_t i = 0; i < items.size(); ++i) {
      if (!items[i].is_string() || items[i].as_string().empty()) {
        r.add(diag::error(codes::kSchema, "a tool name must be a non-empty string",
                          index_pointer(r.pointer_of("tools"), i)));
        continue;
      }
      names.push_back(items[i].as_string());
    }
    expect.tools = std::move(names);
  }
}

// pointers: {"/json/pointer": value}; only a completed run has an output to point into.
void parse_pointers(json::FieldReader& r, Expect& expect) {
  const std::string at = r.pointer_of("pointers");
  for (const auto& [member, where] : entries(r, "pointers")) {
    const json::Member& m = *member;
    if (m.key.empty() || !json::parse_pointer(m.key)) {
      r.add(
          diag::error(codes::kSchema, "\"" + m.key + "\" is not a JSON pointer (RFC 6901)", where));
      continue;
    }
    expect.pointers.emplace_back(m.key, m.value);
  }
  if (expect.terminal && *expect.terminal != "completed" && !expect.pointers.empty()) {
    r.add(diag::error(codes::kSchema, "pointers are checked only when terminal is \"completed\"",
                      at));
  }
}

Expect parse_expect(json::FieldReader& parent, const json::Value& v, CaseKind kind) {
  Expect expect;
  json::FieldReader r(v, parent.pointer_of("expect"));
  const std::span<const std::string_view> terminals =
      kind == CaseKind::Task ? std::span<const std::string_view>(kTerminals)
                             : std::span<const std::string_view>(kPlanTerminals);
  expect.terminal = r.string("terminal", false);
  if (expect.terminal && !listed(terminals, *expect.terminal)) {
    r.add(diag::error(
        codes::kSchema,
        "\"terminal\" must be " + spelled(terminals) + ", found \"" + *expect.terminal + "\"",
        r.pointer_of("terminal")));
  }
  expect.model_calls = count(r, "model_calls");
  if (kind == CaseKind::Task) {
    expect.repairs = count(r, "repairs");
    if (const json::Value* output = r.object("output", false)) {
      expect.output = output->as_object();
      // Only a completed run has an output: such a check could never pass.
      if (expect.terminal && *expect.terminal != "completed") {
        r.add(diag::error(codes::kSchema,
                          "output fields are checked only when terminal is \"completed\"",
                          r.pointer_of("output")));
      }
    }
    parse_pointers(r, expect);
    r.reject_unknown({"terminal", "model_calls", "repairs", "output", "pointers"});
  } else {
    parse_plan_expect(r, expect);
    parse_pointers(r, expect);
    r.reject_unknown({"terminal", "disposition", "model_calls", "tool_calls", "violations", "tools",
                      "pointers", "forbidden_tools", "artifacts"});
  }
  if (v.is_object() && v.as_object().empty()) {
    r.add(diag::error(codes::kSchema,
                      "\"expect\" checks nothing; a grader proves only what it checks",
                      r.pointer()));
  }
  for (auto& d : r.take()) parent.add(std::move(d));
  return expect;
}

// The case's id, and its tags (at most 32, each 1-64 characters of [a-z0-9_.-], given once).
void parse_id(json::FieldReader& r, Case& c) {
  if (auto id = r.string("id")) {
    c.id = *id;
    if (!valid_case_id(c.id)) {
      r.add(diag::error(codes::kBadIdentifier,
                        "case id \"" + c.id +
                            "\" must be 1-128 characters of [A-Za-z0-9._-], not starting with '.'",
                        r.pointer_of("id")));
    }
  }
  const json::Value* tags = r.array("tags", false);
  if (tags == nullptr) return;
  if (tags->as_array().size() > 32) {
    r.add(diag::error(codes::kSchema, "a case has at most 32 tags", r.pointer_of("tags")));
  }
  for (std::size_t i = 0; i < tags->as_array().size(); ++i) {
    const json::Value& t = tags->as_array()[i];
    const bool ok = t.is_string() && !t.as_string().empty() && t.as_string().size() <= 64 &&
                    t.as_string().find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_.-") ==
                        std::string::npos;
    if (!ok) {
      r.add(diag::error(codes::kBadIdentifier, "a tag is 1-64 characters of [a-z0-9_.-]",
                        index_pointer(r.pointer_of("tags"), i)));
    } else if (std::find(c.tags.begin(), c.tags.end(), t.as_string()) != c.tags.end()) {
      r.add(diag::error(codes::kSchema, "tag \"" + t.as_string() + "\" is listed twice",
                        index_pointer(r.pointer_of("tags"), i)));
    } else {
      c.tags.push_back(t.as_string());
    }
  }
  std::sort(c.tags.begin(), c.tags.end());
}

// The model's file: everything after the backend prefix, up to the sim's parameters.
std::string model_file(const std::string& spec) {
  if (spec.rfind(kScripted, 0) == 0) return spec.substr(kScripted.size());
  if (model::is_live_spec(spec)) return spec.substr(spec.find(':') + 1);
  const std::string rest = spec.substr(kSim.size());
  return rest.substr(0, rest.find('?'));
}

void parse_plan_case(json::FieldReader& r, Case& c) {
  c.kind = CaseKind::Plan;
  if (auto plan = r.string("plan")) {
    c.plan = *plan;
    if (c.plan.empty()) {
      r.add(diag::error(codes::kSchema, "\"plan\" must name a compiled plan file",
                        r.pointer_of("plan")));
    }
  }
  if (r.optional("task") != nullptr) {
    r.add(diag::error(codes::kSchema, "a case runs a task or a plan, not both",
                      r.pointer_of("task")));
  }
  if (auto model = r.string("model")) {
    c.model = *model;
    const bool known = c.model.rfind(kScripted, 0) == 0 || c.model.rfind(kSim, 0) == 0 ||
                       model::is_live_spec(c.model);
    const std::string file = known ? model_file(c.model) : std::string();
    if (!known || file.empty()) {
      r.add(diag::error(codes::kSchema,
                        "\"model\" must be scripted:FILE, sim:FILE?..., openai:PROFILE or "
                        "anthropic:PROFILE, found \"" +
                            c.model + "\"",
                        r.pointer_of("model")));
    } else if (file == "-") {
      // Every run opens the model afresh, and standard input can be read only once.
      r.add(diag::error(codes::kSchema, "a plan case's model cannot be read from standard input",
                        r.pointer_of("model")));
    }
  }
  if (auto workspace = r.string("workspace", false)) {
    c.workspace = *workspace;
    if (workspace->empty()) {
      r.add(diag::error(codes::kSchema, "\"workspace\" must name a directory",
                        r.pointer_of("workspace")));
    }
  }
  if (const json::Value* request = r.object("request", false)) {
    json::FieldReader q(*request, r.pointer_of("request"));
    q.string("instruction", false);
    q.object("context", false);
    q.reject_unknown({"instruction", "context"});
    for (auto& d : q.take()) r.add(std::move(d));
    c.request = *request;
  }
  if (auto preset = r.string("guardrails", false)) {
    if (auto g = runtime::parse_guardrails(*preset)) {
      c.guardrails = *g;
    } else {
      r.add(diag::error(
          codes::kSchema,
          "\"guardrails\" must be " + spelled(preset_names()) + ", found \"" + *preset + "\"",
          r.pointer_of("guardrails")));
    }
  }
  if (const json::Value* expect = r.object("expect")) {
    c.expect = parse_expect(r, *expect, CaseKind::Plan);
  }
  r.reject_unknown(
      {"id", "tags", "plan", "task", "model", "workspace", "request", "guardrails", "expect"});
}

void parse_task_case(json::FieldReader& r, Case& c) {
  if (auto task = r.string("task")) {
    c.task = *task;
    if (c.task.empty()) {
      r.add(diag::error(codes::kSchema, "\"task\" must name a task file", r.pointer_of("task")));
    }
  }
  if (auto model = r.string("model")) {
    c.model = *model;
    const bool known = c.model.rfind(kScripted, 0) == 0 || model::is_live_spec(c.model);
    if (!known || model_file(c.model).empty()) {
      r.add(diag::error(codes::kSchema,
                        "\"model\" must be scripted:FILE, openai:PROFILE or anthropic:PROFILE, "
                        "found \"" +
                            c.model + "\"",
                        r.pointer_of("model")));
    } else if (model::is_live_spec(c.model) && model_file(c.model) == "-") {
      r.add(diag::error(codes::kSchema, "a case's profile cannot be read from standard input",
                        r.pointer_of("model")));
    }
  }
  if (const json::Value* expect = r.object("expect")) {
    c.expect = parse_expect(r, *expect, CaseKind::Task);
  }
  r.reject_unknown({"id", "tags", "task", "model", "expect"});
}

std::optional<Case> parse_case(const json::Value& v, const std::string& pointer,
                               diag::Diagnostics& problems) {
  json::FieldReader r(v, pointer);
  Case c;
  c.pointer = pointer;
  parse_id(r, c);
  // A case with a plan member is a plan case; anything else is read as a task case, as before.
  if (v.is_object() && v.find("plan") != nullptr) {
    parse_plan_case(r, c);
  } else {
    parse_task_case(r, c);
  }
  const bool ok = r.ok();
  for (auto& d : r.take()) problems.push_back(std::move(d));
  if (!ok) return std::nullopt;
  return c;
}

// A diagnostic about a file a case names, re-anchored at the suite member that names it.
diag::Diagnostic nested(const diag::Diagnostic& d, const std::string& pointer,
                        std::string_view what, const std::string& path) {
  std::string message = std::string(what) + " \"" + path + "\": " + d.message;
  if (!d.pointer.empty()) message += " (at " + d.pointer + ")";
  if (d.line > 0) {
    message += " at line " + std::to_string(d.line) + " column " + std::to_string(d.column);
  }
  return diag::error(d.code, std::move(message), pointer);
}

std::string resolve(const std::string& base_dir, const std::string& rel) {
  std::filesystem::path p(rel);
  if (p.is_absolute() || base_dir.empty()) return rel;
  return (std::filesystem::path(base_dir) / p).string();
}

// The model spec with its file resolved against the suite's directory, checked as mf-run would
// open it (a live profile without needing its key or the cache: a replay has neither).
void check_model(Case& c, const std::string& base_dir, diag::Diagnostics& problems) {
  const std::string file = model_file(c.model);
  const std::string prefix = c.model.substr(0, c.model.find(':') + 1);
  const std::string model_path = resolve(base_dir, file);
  c.model_spec = prefix + model_path + c.model.substr(prefix.size() + file.size());
  if (Status s = model::check_model_spec(c.model_spec); !s) {
    for (const auto& d : s.diagnostics()) {
      problems.push_back(nested(d, c.pointer + "/model", "model", model_path));
    }
  }
}

// The files a suite's cases load, by resolved path: each read and checked once, then shared.
struct Loaded {
  std::map<std::string, std::shared_ptr<const runtime::Task>> tasks;
  std::map<std::string, std::shared_ptr<const std::string>> scripts;
  std::map<std::string, std::shared_ptr<const json::Value>> plans;
};

void load_task_case(Case& c, const std::string& base_dir, Loaded& loaded,
                    diag::Diagnostics& problems) {
  const std::string& pointer = c.pointer;
  const std::string task_path = resolve(base_dir, c.task);
  Result<std::string> task_bytes = std::string();
  if (auto at = loaded.tasks.find(task_path); at != loaded.tasks.end()) {
    c.loaded_task = at->second;
  } else if (task_bytes = io::read_input(task_path, kMaxTaskBytes); !task_bytes) {
    for (const auto& d : task_bytes.diagnostics()) {
      problems.push_back(nested(d, pointer + "/task", "task", task_path));
    }
  } else if (Result<runtime::Task> task = runtime::parse_task(*task_bytes); !task) {
    for (const auto& d : task.diagnostics()) {
      problems.push_back(nested(d, pointer + "/task", "task", task_path));
    }
  } else {
    c.loaded_task = std::make_shared<const runtime::Task>(std::move(task).value());
    loaded.tasks.emplace(task_path, c.loaded_task);
  }
  if (model::is_live_spec(c.model)) {
    check_model(c, base_dir, problems);
    return;
  }
  const std::string script_path = resolve(base_dir, c.model.substr(kScripted.size()));
  Result<std::string> script = std::string();
  if (auto at = loaded.scripts.find(script_path); at != loaded.scripts.end()) {
    c.script = at->second;
  } else if (script = io::read_input(script_path, kMaxScriptBytes); !script) {
    for (const auto& d : script.diagnostics()) {
      problems.push_back(nested(d, pointer + "/model", "script", script_path));
    }
  } else if (auto model = model::ScriptedModel::parse(*script); !model) {
    for (const auto& d : model.diagnostics()) {
      problems.push_back(nested(d, pointer + "/model", "script", script_path));
    }
  } else {
    c.script = std::make_shared<const std::string>(std::move(script).value());
    loaded.scripts.emplace(script_path, c.script);
  }
}

// The plan through the one plan loader, the model through the one model opener (as mf-run would
// open them), and the workspace: every run of the case then starts from inputs known to be good.
void load_plan_case(Case& c, const std::string& base_dir, Loaded& loaded,
                    diag::Diagnostics& problems) {
  const std::string& pointer = c.pointer;
  c.plan_path = resolve(base_dir, c.plan);
  Result<std::string> plan_bytes = std::string();
  if (auto at = loaded.plans.find(c.plan_path); at != loaded.plans.end()) {
    c.loaded_plan = at->second;
  } else if (plan_bytes = io::read_input(c.plan_path, kMaxPlanBytes); !plan_bytes) {
    for (const auto& d : plan_bytes.diagnostics()) {
      problems.push_back(nested(d, pointer + "/plan", "plan", c.plan_path));
    }
  } else if (Result<json::Value> plan = harness::load_plan(*plan_bytes, c.plan_path); !plan) {
    for (const auto& d : plan.diagnostics()) {
      problems.push_back(nested(d, pointer + "/plan", "plan", c.plan_path));
    }
  } else {
    c.loaded_plan = std::make_shared<const json::Value>(std::move(*plan));
    loaded.plans.emplace(c.plan_path, c.loaded_plan);
  }

  check_model(c, base_dir, problems);

  const std::string workspace = c.workspace.value_or("");
  c.workspace_path =
      workspace.empty() ? (base_dir.empty() ? "." : base_dir) : resolve(base_dir, workspace);
  std::error_code ec;
  if (!std::filesystem::is_directory(c.workspace_path, ec)) {
    problems.push_back(diag::error(codes::kBadRoot,
                                   "workspace \"" + c.workspace_path + "\" is not a directory",
                                   pointer + (c.workspace ? "/workspace" : "")));
  }
}

}  // namespace

bool valid_case_id(std::string_view id) {
  if (id.empty() || id.size() > kMaxCaseIdLength || id.front() == '.') return false;
  return std::all_of(id.begin(), id.end(), [](char ch) {
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           ch == '.' || ch == '_' || ch == '-';
  });
}

namespace {

// What cases naming the same files run, loaded and checked once (load_task_case, load_plan_case),
// and the members it gives campaign_settings' inputs.
struct CaseFiles {
  std::shared_ptr<const runtime::Task> loaded_task;
  std::shared_ptr<const std::string> script;
  std::string plan_path;
  std::shared_ptr<const json::Value> loaded_plan;
  std::string model_spec;
  std::string workspace_path;
  std::string inputs_tail;  // canonical {model, plan_sha256, script_sha256, task_sha256}, no '{'
};

CaseFiles files_of(const Case& c) {
  CaseFiles f{c.loaded_task, c.script,         c.plan_path,  c.loaded_plan,
              c.model_spec,  c.workspace_path, std::string()};
  const json::Value* plan = c.loaded_plan != nullptr && c.loaded_plan->is_object()
                                ? c.loaded_plan->find("compiled_sha256")
                                : nullptr;
  f.inputs_tail =
      json::canonical(
          json::Object{
              {"task_sha256",
               c.kind == CaseKind::Task && c.loaded_task ? c.loaded_task->sha256 : std::string()},
              {"script_sha256", hash::sha256_hex(c.script != nullptr ? *c.script : std::string())},
              {"plan_sha256", plan != nullptr ? *plan : json::Value("")},
              {"model", c.model_spec.empty() ? c.model : c.model_spec}})
          .substr(1);
  return f;
}

// Which cases run the same: the same kind, task or plan, model and workspace as the suite says.
std::string files_key(const Case& c) {
  std::string key(1, c.kind == CaseKind::Plan ? 'p' : 't');
  key += c.kind == CaseKind::Plan ? c.plan : c.task;
  key += '\0';
  key += c.model;
  key += '\0';
  if (c.workspace) key += "w" + *c.workspace;
  return key;
}

}  // namespace

struct SuiteSource {
  std::string bytes;  // the suite's bytes, when they are kept (standard input, load_suite_bytes)
  io::Fd file;        // else the suite file, open
  std::vector<CaseFiles> files;
};

namespace {

// Suite::inputs_json(), before the suite holds its source.
std::string case_inputs(const SuiteSource& source, const CaseRef& c) {
  // A valid id is its own canonical string: nothing in it is escaped.
  const std::string_view id = c.id();
  const std::string& tail = source.files[c.files].inputs_tail;
  std::string out;
  out.reserve(10 + id.size() + tail.size());
  out += "{\"id\":\"";
  out += id;
  out += "\",";
  out += tail;
  return out;
}

// A case as the reader hands it to be checked: its value, its position and its bytes.
// Or a window of the suite's bytes, to hash: the windows come in order among the cases.
struct ReadCase {
  json::Value v;
  std::size_t i = 0, begin = 0, end = 0;
  std::string window;
};

// The bytes of a suite: held in memory (standard input, load_suite_bytes), or else `file_size`
// bytes of the suite file, read in windows (json::WindowedText's, 256 KiB).
struct SuiteBytes {
  std::string_view held;
  int file = -1;
  std::size_t file_size = 0;
  const std::string* path = nullptr;  // the file's, for its diagnostics
  std::size_t size() const { return file >= 0 ? file_size : held.size(); }
};

// The one pass over a suite's bytes: each case checked as it is read and, with `base_dir`, its
// files loaded; only its CaseRef is kept. The diagnostics are those of checking the whole document
// at once: the document's own, else the top level's then each case's in suite order, else the
// files' in case id order.
// A file is read one window at a time and hashed on the way, so the load holds one window and the
// case being read, not the file.
// With `jobs` of 2 or more the cases are checked on a second thread (Ahead), and the index,
// once sorted, is checked for duplicate ids and hashed there while it is merged.
Result<Suite> read_suite(const SuiteBytes& bytes, const std::optional<std::string>& base_dir,
                         std::shared_ptr<SuiteSource> source, unsigned jobs = 1) {
  Suite suite;
  std::vector<std::pair<std::size_t, diag::Diagnostic>> problems;        // by case position
  std::vector<std::pair<std::string, diag::Diagnostics>> file_problems;  // by case id
  std::map<std::string, std::uint32_t> shared;  // files_key -> index in source->files
  std::map<std::vector<std::string>, std::uint32_t> tag_sets;  // -> index in suite.tag_sets
  suite.tag_sets.emplace_back();
  tag_sets.emplace(std::vector<std::string>(), 0);
  Status indexed;  // the index's first write that failed
  Loaded loaded;
  std::size_t count = 0;
  // The index by id, then position: its runs are sorted where the cases are checked.
  const auto by_id = [](const CaseRef& a, const CaseRef& b) {
    return a.id() != b.id() ? a.id() < b.id() : a.index < b.index;
  };
  suite.cases.sort_runs_by(by_id);
  hash::Sha256 sha;  // of a file's windows
  const Ahead<ReadCase>::Each check = [&](const ReadCase& read) {
    if (!read.window.empty()) {
      sha.update(read.window);
      return;
    }
    const json::Value& v = read.v;
    const std::size_t i = read.i, begin = read.begin, end = read.end;
    diag::Diagnostics found;
    std::optional<Case> c = parse_case(v, index_pointer("/cases", i), found);
    for (auto& d : found) problems.emplace_back(i, std::move(d));
    if (!c) return;
    auto tags = tag_sets.try_emplace(std::move(c->tags), suite.tag_sets.size());
    if (tags.second) suite.tag_sets.push_back(tags.first->first);
    CaseRef ref;
    ref.tags = tags.first->second;
    ref.index = static_cast<std::uint32_t>(i);
    ref.begin = static_cast<std::uint32_t>(begin);
    ref.size = static_cast<std::uint32_t>(end - begin);
    ref.kind = c->kind;
    ref.id_size = static_cast<std::uint8_t>(c->id.size());
    std::memcpy(ref.id_bytes, c->id.data(), c->id.size());
    const std::string key = files_key(*c);
    if (auto at = shared.find(key); at != shared.end()) {
      ref.files = at->second;
    } else {
      // A case with a problem of its own loads nothing: the suite is refused for it anyway.
      diag::Diagnostics missing;
      if (base_dir && problems.empty()) {
        if (c->kind == CaseKind::Plan) {
          load_plan_case(*c, *base_dir, loaded, missing);
        } else {
          load_task_case(*c, *base_dir, loaded, missing);
        }
      }
      ref.files = static_cast<std::uint32_t>(source->files.size());
      source->files.push_back(files_of(*c));
      // Files that did not load are not shared: every case naming them is named.
      if (missing.empty()) {
        shared.emplace(key, ref.files);
      } else {
        file_problems.emplace_back(c->id, std::move(missing));
      }
    }
    if (Status s = suite.cases.push_back(ref); !s && indexed) indexed = std::move(s);
  };
  std::optional<Ahead<ReadCase>> ahead;
  if (jobs > 1) ahead.emplace(check);
  const json::OnElement each = [&](json::Value&& v, std::size_t i, std::size_t begin,
                                   std::size_t end) {
    ++count;
    ReadCase read{std::move(v), i, begin, end, std::string()};
    if (ahead) {
      ahead->add(std::move(read));
    } else {
      check(read);
    }
  };
  const json::ReadLimits limits{.max_bytes = kMaxSuiteBytes};
  Result<json::Value> doc = json::Value();
  int read_error = 0;
  if (bytes.file < 0) {
    suite.sha256 = hash::sha256_hex(bytes.held);
    doc = json::parse_object_streaming(bytes.held, limits, "cases", each);
  } else {
    json::WindowedText text;
    text.size = bytes.file_size;
    text.read_at = [&](char* into, std::size_t n, std::size_t offset) -> std::size_t {
      const std::int64_t got = io::pread_all(bytes.file, into, n, offset);
      if (got >= 0) return static_cast<std::size_t>(got);
      read_error = static_cast<int>(-got);
      return 0;
    };
    // Hashed where the cases are checked: with -j 2 the reader hands each window over (a copy).
    text.on_window = [&](std::string_view window) {
      if (ahead) {
        ahead->add(ReadCase{json::Value(), 0, 0, 0, std::string(window)});
      } else {
        sha.update(window);
      }
    };
    doc = json::parse_object_streaming(text, limits, "cases", each);
  }
  if (ahead) ahead->finish();
  if (bytes.file >= 0) suite.sha256 = hash::to_hex(sha.finish());
  if (read_error != 0) return io::input_unreadable(*bytes.path, read_error);
  if (!doc) return doc.take_diagnostics();

  json::FieldReader top(*doc, "");
  if (auto id = top.string("suite_id")) {
    suite.id = *id;
    if (suite.id.empty()) {
      top.add(diag::error(codes::kBadIdentifier, "\"suite_id\" must not be empty",
                          top.pointer_of("suite_id")));
    }
  }
  const json::Value* cases = top.array("cases");
  top.reject_unknown({"suite_id", "cases"});
  diag::Diagnostics all = top.take();
  if (cases != nullptr && count == 0) {
    all.push_back(diag::error(codes::kSchema, "a suite needs at least one case", "/cases"));
  }
  // A case id used before: named at the later case, after that case's own problems (it has none).
  // The index by id, then position, taken in that order as it is sorted: each run of one id names
  // its first case, and the digest of what the cases run is made on the way.
  if (!indexed) return indexed.take_diagnostics();
  {
    std::optional<CaseRef> first;
    hash::Sha256 inputs;
    inputs.update("[");
    const Ahead<CaseRef>::Each take = [&](const CaseRef& c) {
      if (first) inputs.update(",");
      inputs.update(case_inputs(*source, c));
      if (!first || c.id() != first->id()) {
        first = c;
        return;
      }
      problems.emplace_back(
          c.index, diag::error(codes::kDuplicateCaseId,
                               "case id \"" + std::string(first->id()) + "\" is already used by " +
                                   index_pointer("/cases", first->index),
                               index_pointer("/cases", c.index) + "/id"));
    };
    if (Status s = sort_taking(suite.cases, by_id, take, jobs > 1); !s) {
      return s.take_diagnostics();
    }
    inputs.update("]");
    suite.inputs_sha256 = hash::to_hex(inputs.finish());
  }
  std::stable_sort(problems.begin(), problems.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [at, d] : problems) all.push_back(std::move(d));
  if (!all.empty()) return all;
  std::sort(file_problems.begin(), file_problems.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [id, ds] : file_problems) {
    for (auto& d : ds) all.push_back(std::move(d));
  }
  if (!all.empty()) return all;
  source->files.shrink_to_fit();
  suite.source = std::move(source);
  return suite;
}

}  // namespace

std::optional<std::uint64_t> Suite::find(std::string_view id, Reader& reader,
                                         std::uint64_t& near) const {
  // From `near` on, in steps that double, to a case at or past `id`; then halving back.
  const std::uint64_t n = cases.size();
  std::uint64_t lo = 0, hi = n;
  if (near < n && reader[near].id() < id) {
    lo = near + 1;
    for (std::uint64_t step = 1; lo < n; step *= 2) {
      const std::uint64_t probe = std::min(n - 1, near + step);
      if (!(reader[probe].id() < id)) {
        hi = probe;
        break;
      }
      lo = probe + 1;
    }
  } else if (near < n) {
    hi = near;
    if (near == 0 || reader[near - 1].id() < id) lo = near;
  }
  while (lo < hi) {
    const std::uint64_t mid = lo + (hi - lo) / 2;
    if (reader[mid].id() < id) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  near = lo;
  if (lo < n && reader[lo].id() == id) return lo;
  return std::nullopt;
}

Result<Case> Suite::load_case(const CaseRef& ref) const {
  std::string held;
  std::string_view bytes;
  if (source->file.valid()) {
    held.resize(ref.size);
    if (io::pread_all(source->file.get(), held.data(), held.size(), ref.begin) !=
        static_cast<std::int64_t>(held.size())) {
      held.clear();
    }
    bytes = held;
  } else if (std::size_t{ref.begin} + ref.size <= source->bytes.size()) {
    bytes = std::string_view(source->bytes).substr(ref.begin, ref.size);
  }
  const std::string pointer = index_pointer("/cases", ref.index);
  Result<json::Value> v = json::parse(bytes);
  diag::Diagnostics problems;
  std::optional<Case> c = v ? parse_case(*v, pointer, problems) : std::nullopt;
  if (!c || c->id != ref.id()) {
    return diag::error(codes::kInternal,
                       "case \"" + std::string(ref.id()) +
                           "\" is no longer what the suite file held when it "
                           "was loaded: the file changed during the campaign",
                       pointer);
  }
  const CaseFiles& f = source->files[ref.files];
  c->loaded_task = f.loaded_task;
  c->script = f.script;
  c->plan_path = f.plan_path;
  c->loaded_plan = f.loaded_plan;
  c->model_spec = f.model_spec;
  c->workspace_path = f.workspace_path;
  return std::move(*c);
}

std::string Suite::inputs_json(const CaseRef& c) const {
  return case_inputs(*source, c);
}

Result<Suite> parse_suite(std::string_view bytes) {
  auto source = std::make_shared<SuiteSource>();
  source->bytes = std::string(bytes);
  const SuiteBytes held{.held = source->bytes};
  return read_suite(held, std::nullopt, std::move(source));
}

Result<Suite> load_suite_bytes(std::string_view bytes, const std::string& base_dir) {
  auto source = std::make_shared<SuiteSource>();
  source->bytes = std::string(bytes);
  const SuiteBytes held{.held = source->bytes};
  return read_suite(held, base_dir, std::move(source));
}

Result<Suite> load_suite(const std::string& path, unsigned jobs) {
  const std::string base_dir =
      path == "-" ? std::string() : std::filesystem::path(path).parent_path().string();
  auto source = std::make_shared<SuiteSource>();
  if (path == "-") {
    Result<std::string> bytes = io::read_input(path, kMaxSuiteBytes);
    if (!bytes) return bytes.take_diagnostics();
    source->bytes = std::move(*bytes);
    const SuiteBytes held{.held = source->bytes};
    return read_suite(held, base_dir, std::move(source));
  }
  // Kept open, so each case is read again from the file the campaign was checked against (a case
  // no longer there is refused by load_case).
  Result<io::InputFile> file = io::open_input(path, kMaxSuiteBytes);
  if (!file) return file.take_diagnostics();
  source->file = std::move(file->fd);
  const SuiteBytes windowed{.held = {},
                            .file = source->file.get(),
                            .file_size = static_cast<std::size_t>(file->size),
                            .path = &path};
  return read_suite(windowed, base_dir, std::move(source), jobs);
}

}  // namespace mf::eval
