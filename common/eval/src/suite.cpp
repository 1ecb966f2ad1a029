#include "mf/eval/suite.hpp"

#include <algorithm>
#include <array>
#include <filesystem>
#include <map>

#include "mf/diag/codes.hpp"
#include "mf/hash/sha256.hpp"
#include "mf/io/file.hpp"
#include "mf/json/fields.hpp"
#include "mf/json/pointer.hpp"
#include "mf/json/reader.hpp"
#include "mf/model/scripted.hpp"

namespace mf::eval {

namespace {

namespace codes = diag::codes;

constexpr std::size_t kMaxSuiteBytes = 16u << 20;
constexpr std::size_t kMaxTaskBytes = 1u << 20;
constexpr std::size_t kMaxScriptBytes = 16u << 20;
constexpr std::size_t kMaxCaseIdLength = 128;
constexpr std::string_view kScripted = "scripted:";
constexpr std::array<std::string_view, 5> kTerminals = {
    "completed", "invalid_output", "model_failed", "budget_exhausted", "cancelled"};

std::string index_pointer(std::string_view base, std::size_t i) {
  std::string p(base);
  json::append_index(p, i);
  return p;
}

Expect parse_expect(json::FieldReader& parent, const json::Value& v) {
  Expect expect;
  json::FieldReader r(v, parent.pointer_of("expect"));
  expect.terminal = r.string("terminal", false);
  if (expect.terminal &&
      std::find(kTerminals.begin(), kTerminals.end(), *expect.terminal) == kTerminals.end()) {
    r.add(diag::error(codes::kSchema,
                      "\"terminal\" must be completed, invalid_output, model_failed, "
                      "budget_exhausted or cancelled, found \"" +
                          *expect.terminal + "\"",
                      r.pointer_of("terminal")));
  }
  for (auto [key, slot] :
       {std::pair{"model_calls", &expect.model_calls}, std::pair{"repairs", &expect.repairs}}) {
    *slot = r.integer(key, false);
    if (*slot && **slot < 0) {
      r.add(diag::error(codes::kSchema, "\"" + std::string(key) + "\" must not be negative",
                        r.pointer_of(key)));
    }
  }
  if (const json::Value* output = r.object("output", false)) {
    expect.output = output->as_object();
    // Only a completed run has an output: such a check could never pass.
    if (expect.terminal && *expect.terminal != "completed") {
      r.add(diag::error(codes::kSchema,
                        "output fields are checked only when terminal is \"completed\"",
                        r.pointer_of("output")));
    }
  }
  r.reject_unknown({"terminal", "model_calls", "repairs", "output"});
  if (v.is_object() && v.as_object().empty()) {
    r.add(diag::error(codes::kSchema,
                      "\"expect\" checks nothing; a grader proves only what it checks",
                      r.pointer()));
  }
  for (auto& d : r.take()) parent.add(std::move(d));
  return expect;
}

std::optional<Case> parse_case(const json::Value& v, const std::string& pointer,
                               diag::Diagnostics& problems) {
  json::FieldReader r(v, pointer);
  Case c;
  c.pointer = pointer;
  if (auto id = r.string("id")) {
    c.id = *id;
    if (!valid_case_id(c.id)) {
      r.add(diag::error(codes::kBadIdentifier,
                        "case id \"" + c.id +
                            "\" must be 1-128 characters of [A-Za-z0-9._-], not starting with '.'",
                        r.pointer_of("id")));
    }
  }
  if (auto task = r.string("task")) {
    c.task = *task;
    if (c.task.empty()) {
      r.add(diag::error(codes::kSchema, "\"task\" must name a task file", r.pointer_of("task")));
    }
  }
  if (auto model = r.string("model")) {
    c.model = *model;
    if (c.model.rfind(kScripted, 0) != 0 || c.model.size() == kScripted.size()) {
      r.add(diag::error(codes::kSchema,
                        "\"model\" must be scripted:FILE, found \"" + c.model + "\"",
                        r.pointer_of("model")));
    }
  }
  if (const json::Value* expect = r.object("expect")) c.expect = parse_expect(r, *expect);
  r.reject_unknown({"id", "task", "model", "expect"});
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

}  // namespace

bool valid_case_id(std::string_view id) {
  if (id.empty() || id.size() > kMaxCaseIdLength || id.front() == '.') return false;
  return std::all_of(id.begin(), id.end(), [](char ch) {
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           ch == '.' || ch == '_' || ch == '-';
  });
}

Result<Suite> parse_suite(std::string_view bytes) {
  Result<json::Value> doc = json::parse_object(bytes, {.max_bytes = kMaxSuiteBytes});
  if (!doc) return doc.take_diagnostics();

  Suite suite;
  suite.sha256 = hash::sha256_hex(bytes);
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
  diag::Diagnostics problems = top.take();
  if (cases != nullptr) {
    const json::Array& items = cases->as_array();
    if (items.empty()) {
      problems.push_back(diag::error(codes::kSchema, "a suite needs at least one case", "/cases"));
    }
    std::map<std::string, std::size_t> seen;
    for (std::size_t i = 0; i < items.size(); ++i) {
      const std::string pointer = index_pointer("/cases", i);
      std::optional<Case> c = parse_case(items[i], pointer, problems);
      if (!c) continue;
      auto [at, fresh] = seen.emplace(c->id, i);
      if (!fresh) {
        problems.push_back(diag::error(
            codes::kDuplicateCaseId,
            "case id \"" + c->id + "\" is already used by " + index_pointer("/cases", at->second),
            pointer + "/id"));
        continue;
      }
      suite.cases.push_back(std::move(*c));
    }
  }
  if (!problems.empty()) return problems;
  std::sort(suite.cases.begin(), suite.cases.end(),
            [](const Case& a, const Case& b) { return a.id < b.id; });
  return suite;
}

Result<Suite> load_suite_bytes(std::string_view bytes, const std::string& base_dir) {
  Result<Suite> parsed = parse_suite(bytes);
  if (!parsed) return parsed;
  Suite suite = std::move(parsed).value();
  diag::Diagnostics problems;
  for (Case& c : suite.cases) {
    const std::string& pointer = c.pointer;
    const std::string task_path = resolve(base_dir, c.task);
    Result<std::string> task_bytes = io::read_input(task_path, kMaxTaskBytes);
    if (!task_bytes) {
      for (const auto& d : task_bytes.diagnostics()) {
        problems.push_back(nested(d, pointer + "/task", "task", task_path));
      }
    } else if (Result<runtime::Task> task = runtime::parse_task(*task_bytes); !task) {
      for (const auto& d : task.diagnostics()) {
        problems.push_back(nested(d, pointer + "/task", "task", task_path));
      }
    } else {
      c.loaded_task = std::move(task).value();
    }
    const std::string script_path = resolve(base_dir, c.model.substr(kScripted.size()));
    Result<std::string> script = io::read_input(script_path, kMaxScriptBytes);
    if (!script) {
      for (const auto& d : script.diagnostics()) {
        problems.push_back(nested(d, pointer + "/model", "script", script_path));
      }
    } else if (auto model = model::ScriptedModel::parse(*script); !model) {
      for (const auto& d : model.diagnostics()) {
        problems.push_back(nested(d, pointer + "/model", "script", script_path));
      }
    } else {
      c.script = std::move(script).value();
    }
  }
  if (!problems.empty()) return problems;
  return suite;
}

Result<Suite> load_suite(const std::string& path) {
  Result<std::string> bytes = io::read_input(path, kMaxSuiteBytes);
  if (!bytes) return bytes.take_diagnostics();
  const std::string base_dir =
      path == "-" ? std::string() : std::filesystem::path(path).parent_path().string();
  return load_suite_bytes(*bytes, base_dir);
}

}  // namespace mf::eval
