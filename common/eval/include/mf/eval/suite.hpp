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
#include "mf/io/records.hpp"
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

// A case of a loaded suite as a campaign keeps it: what choosing and sharding the cases need, its
// id, and where its bytes are in the suite, so that the whole Case is read again only when it
// runs. Its tags are one of the suite's distinct tag sets. A fixed-size record (152 bytes), kept
// in the suite's index file, not in memory.
struct CaseRef {
  static constexpr std::size_t kMaxId = 128;
  std::uint32_t tags = 0;   // Suite::tag_sets[tags]; 0 is no tags
  std::uint32_t index = 0;  // its position in the suite's "cases" (its pointer /cases/N)
  std::uint32_t begin = 0;  // its bytes in the suite: [begin, begin + size)
  std::uint32_t size = 0;
  std::uint32_t files = 0;  // what it runs, shared with every case naming the same files
  CaseKind kind = CaseKind::Task;
  std::uint8_t id_size = 0;
  char id_bytes[kMaxId] = {};

  std::string_view id() const { return std::string_view(id_bytes, id_size); }
};

struct SuiteSource;  // the suite's bytes (or its open file) and the files its cases load

struct Suite {
  // A reader of the index: one per thread.
  using Reader = io::RecordFile<CaseRef>::Reader;

  std::string id;
  std::string sha256;  // of the suite file's exact bytes
  // Of what every case runs: the canonical array of inputs_json() of each case in id order.
  std::string inputs_sha256;
  io::RecordFile<CaseRef> cases{"the suite's index"};  // sorted by id
  std::vector<std::vector<std::string>> tag_sets;  // distinct, each sorted and unique; [0] empty
  std::shared_ptr<const SuiteSource> source;

  std::uint64_t size() const { return cases.size(); }
  // The position of the case with this id, if there is one; `near` is where the last look-up
  // through `reader` ended, so look-ups in id order read the index once.
  std::optional<std::uint64_t> find(std::string_view id, Reader& reader, std::uint64_t& near) const;
  // The tags of a case, sorted and unique.
  const std::vector<std::string>& case_tags(const CaseRef& c) const { return tag_sets[c.tags]; }
  // The case, read again from the suite and checked as at load, with the files load_suite loaded
  // for it (parse_suite loads none). Fails only when the suite file changed meanwhile.
  Result<Case> load_case(const CaseRef& c) const;
  // What a case runs, as campaign settings record it: the canonical object {id, model,
  // plan_sha256, script_sha256, task_sha256}.
  std::string inputs_json(const CaseRef& c) const;
};

// True for a valid case id (also used for report ids and trace file names).
bool valid_case_id(std::string_view id);

// Strictly parses suite bytes (no file access): every problem is reported with its pointer. The
// suite is read in one pass that holds one case at a time (json::parse_object_streaming); what it
// keeps per case is its CaseRef, in the index file.
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
