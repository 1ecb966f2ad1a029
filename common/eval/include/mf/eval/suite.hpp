// Evaluation suites (docs/formats/eval.md): cases that pair a task with a scripted model, or a
// compiled plan with a scripted or sim model, and state what its run must show. Loading validates
// the suite, and every task, plan and model it names, before any case runs: an invalid suite is a
// rejected request (exit 2).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mf/diag/diagnostic.hpp"
#include "mf/json/value.hpp"
#include "mf/runtime/plan_run.hpp"
#include "mf/runtime/task.hpp"

namespace mf::eval {

// What a case's run must show. A grader proves only what it checks: an absent member is not
// checked, `output` lists exactly the output fields that must equal their value, and `violations`
// exactly the guardrail kinds whose count is checked. `repairs` and `output` belong to task cases;
// `disposition`, `tool_calls`, `violations` and `tools` to plan cases.
struct Expect {
  std::optional<std::string> terminal;
  std::optional<std::int64_t> model_calls;
  std::optional<std::int64_t> repairs;
  json::Object output;
  std::optional<std::string> disposition;
  std::optional<std::int64_t> tool_calls;
  std::vector<std::pair<std::string, std::int64_t>> violations;  // kind -> count, suite order
  std::optional<std::vector<std::string>> tools;  // tool names of successful calls, in order
  // Both kinds: JSON pointer -> value in the output (task: the verified output; plan: the result
  // document {node_id, terminal_result, disposition, summary, artifacts}), in suite order.
  std::vector<std::pair<std::string, json::Value>> pointers;
  std::vector<std::string> forbidden_tools;  // plan: tools no call may name (even a refused one)
  // plan: artifact id -> its SHA-256, or "" for "present, with a digest", in suite order.
  std::vector<std::pair<std::string, std::string>> artifacts;
};

enum class CaseKind : std::uint8_t { Task, Plan };

struct Case {
  CaseKind kind = CaseKind::Task;
  std::string id;                 // [A-Za-z0-9._-], at most 128 characters, not starting with '.'
  std::vector<std::string> tags;  // [a-z0-9_.-], at most 64 characters each; sorted, unique
  std::string task;   // task cases: the suite's "task" member, relative to the suite's directory
  std::string plan;   // plan cases: the compiled plan, relative to the suite's directory
  std::string model;  // "scripted:FILE" (either kind) or "sim:FILE?..." (plan cases)
  std::optional<std::string> workspace;  // plan cases; absent = the suite's directory
  json::Value request;                   // plan cases: the run's request object, or null
  runtime::Guardrails guardrails = runtime::Guardrails::Full;
  Expect expect;
  std::string pointer;  // where the case sits in the suite file: "/cases/N"
  // Filled by Suite::load_case() after load_suite(): the validated task and the script bytes
  // (parsed again per run, so every run starts from the script's first step). Cases that name the
  // same file share one copy, so a suite's memory grows with its distinct files, not with its
  // cases.
  std::shared_ptr<const runtime::Task> loaded_task;
  std::shared_ptr<const std::string> script;
  // Filled the same way for plan cases: the paths resolved against the suite's directory, the
  // plan the loader accepted (every run uses it; each file is read once, and shared as above),
  // and the model spec with its file so resolved (opened again per run: a model is consumed by
  // its run).
  std::string plan_path;
  std::shared_ptr<const json::Value> loaded_plan;
  std::string model_spec;
  std::string workspace_path;
};

// A case of a loaded suite as a campaign keeps it: what choosing and sharding the cases need, and
// where its bytes are in the suite, so that the whole Case is read again only when it runs. Its id
// is in the suite's id arena and its tags are one of the suite's distinct tag sets, so an entry
// takes 28 bytes and its id's.
struct CaseRef {
  std::uint32_t id_at = 0;  // its id: Suite::ids[id_at, id_at + id_size)
  std::uint8_t id_size = 0;
  CaseKind kind = CaseKind::Task;
  std::uint32_t tags = 0;   // Suite::tag_sets[tags]; 0 is no tags
  std::uint32_t index = 0;  // its position in the suite's "cases" (its pointer /cases/N)
  std::uint32_t begin = 0;  // its bytes in the suite: [begin, begin + size)
  std::uint32_t size = 0;
  std::uint32_t files = 0;  // what it runs, shared with every case naming the same files
};

struct SuiteSource;  // the suite's bytes (or its open file) and the files its cases load

struct Suite {
  std::string id;
  std::string sha256;                              // of the suite file's exact bytes
  std::vector<CaseRef> cases;                      // sorted by id
  std::string ids;                                 // the cases' ids, end to end
  std::vector<std::vector<std::string>> tag_sets;  // distinct, each sorted and unique; [0] empty
  std::shared_ptr<const SuiteSource> source;

  // The id of cases[i].
  std::string_view case_id(std::size_t i) const {
    return std::string_view(ids).substr(cases[i].id_at, cases[i].id_size);
  }
  // The tags of cases[i], sorted and unique.
  const std::vector<std::string>& case_tags(std::size_t i) const { return tag_sets[cases[i].tags]; }
  // The case cases[i], read again from the suite and checked as at load, with the files load_suite
  // loaded for it (parse_suite loads none). Fails only when the suite file changed meanwhile.
  Result<Case> load_case(std::size_t i) const;
  // What cases[i] runs, as campaign settings record it: the canonical object {id, model,
  // plan_sha256, script_sha256, task_sha256}.
  std::string inputs_json(std::size_t i) const;
};

// True for a valid case id (also used for report ids and trace file names).
bool valid_case_id(std::string_view id);

// Strictly parses suite bytes (no file access): every problem is reported with its pointer. The
// suite is read in one pass that holds one case at a time (json::parse_object_streaming); what it
// keeps per case is its CaseRef.
Result<Suite> parse_suite(std::string_view bytes);

// parse_suite() plus loading each case's task and script relative to `base_dir` ("" = cwd). The
// suite keeps a copy of `bytes`.
Result<Suite> load_suite_bytes(std::string_view bytes, const std::string& base_dir);

// Reads the suite file ("-" = stdin, relative to the working directory) and loads it. A file is
// read in windows and kept open, not in memory: a case's bytes are read again from it when the
// case runs; standard input is kept in memory. With `jobs` of 2 or more, the cases are checked on a
// second thread while the file is read on: the same suite and the same diagnostics.
Result<Suite> load_suite(const std::string& path, unsigned jobs = 1);

}  // namespace mf::eval
