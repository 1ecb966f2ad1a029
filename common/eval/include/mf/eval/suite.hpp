// Evaluation suites (docs/formats/eval.md): cases that pair a task with a scripted model
// and state what its run must show. Loading validates the suite, and every task and script it
// names, before any case runs: an invalid suite is a rejected request (exit 2).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mf/diag/diagnostic.hpp"
#include "mf/json/value.hpp"
#include "mf/runtime/task.hpp"

namespace mf::eval {

// What a case's run must show. A grader proves only what it checks: an absent member is not
// checked, and `output` lists exactly the output fields that must equal their value.
struct Expect {
  std::optional<std::string> terminal;
  std::optional<std::int64_t> model_calls;
  std::optional<std::int64_t> repairs;
  json::Object output;
};

struct Case {
  std::string id;     // [A-Za-z0-9._-], at most 128 characters, not starting with '.'
  std::string task;   // the suite's "task" member, relative to the suite's directory
  std::string model;  // the suite's "model" member: "scripted:FILE"
  Expect expect;
  std::string pointer;  // where the case sits in the suite file: "/cases/N"
  // Filled by load_suite(): the validated task and the script bytes (parsed again per run, so
  // every run starts from the script's first step).
  runtime::Task loaded_task;
  std::string script;
};

struct Suite {
  std::string id;
  std::string sha256;       // of the suite file's exact bytes
  std::vector<Case> cases;  // sorted by id
};

// True for a valid case id (also used for report ids and trace file names).
bool valid_case_id(std::string_view id);

// Strictly parses suite bytes (no file access): every problem is reported with its pointer.
Result<Suite> parse_suite(std::string_view bytes);

// parse_suite() plus loading each case's task and script relative to `base_dir` ("" = cwd).
Result<Suite> load_suite_bytes(std::string_view bytes, const std::string& base_dir);

// Reads the suite file ("-" = stdin, relative to the working directory) and loads it.
Result<Suite> load_suite(const std::string& path);

}  // namespace mf::eval
