// What grep and find share: Pi's output shape (lines joined, then truncate_head) kept bounded,
// the notices that close a result, and the search path of a call opened beneath the workspace.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mf/io/file.hpp"
#include "mf/json/value.hpp"
#include "mf/tools/pack.hpp"
#include "walk.hpp"

namespace mf::tools::search {

bool bool_arg(const json::Value& args, std::string_view key);
// Cancelled, or past the call's deadline.
bool stop_requested(const CallContext& ctx);

class Output;

// The lines of one part of the output (one file's, searched on a worker thread), to be appended
// to the whole in order: the lines are kept while they could still be shown (kMaxBytes of them;
// the whole is full past that, whatever came before), then only counted.
class OutputPart {
 public:
  void add(std::string_view line);
  bool empty() const { return ends_.empty() && tail_lines_ == 0; }

 private:
  friend class Output;
  std::string kept_;               // the kept lines, back to back
  std::vector<std::size_t> ends_;  // where each kept line ends in kept_
  std::size_t tail_lines_ = 0;     // counted only: how many, their bytes and newlines
  std::size_t tail_bytes_ = 0;
  std::size_t tail_newlines_ = 0;
  bool tail_last_empty_ = false;
  bool tail_ends_with_newline_ = false;
};

// The whole output in Pi's shape (lines joined by "\n", then truncate_head with no line limit),
// without holding more than the bytes that can be shown: past the limit, lines are only counted.
class Output {
 public:
  void add(std::string_view line);
  // The part's lines, as if each had been added here.
  void append(const OutputPart& part);
  Truncation finish() const;

 private:
  std::string text_;
  std::size_t lines_ = 0;
  std::size_t bytes_ = 0;
  std::size_t newlines_ = 0;
  bool ends_with_newline_ = false;
  bool full_ = false;
};

// The notices of a result, in order, and the details they set.
struct Notices {
  std::vector<std::string> lines;
  json::Value details;

  // "<limit> <what> limit reached. Use limit=<2*limit> for more, or refine pattern", with
  // details[key] = limit.
  void limit_reached(double limit, std::string_view what, std::string_view key);
  // The byte limit of the output, when it cut.
  void truncated(const Truncation& t);
  // The walk's own bounds (entries, depth), when it met them.
  void walk_bounds(const walk::Outcome& outcome);
  // `text`, then "\n\n[notice. notice]" when there are any.
  ToolResult result(std::string text);
};

// Nothing found: `text` with the walk's notices only.
ToolResult nothing_found(std::string text, const walk::Outcome& outcome);

// The search path of a call: the model's path resolved beneath the workspace ("" or missing = the
// root), with Pi's messages when it is outside or missing.
struct Target {
  std::string relative;
  std::string absolute;
  bool directory = false;
  bool regular = false;
  std::unique_ptr<io::Fd> fd;  // open for reading (directories and regular files only)
};
std::optional<Target> open_target(const json::Value& args, const CallContext& ctx,
                                  ToolResult* failure);

}  // namespace mf::tools::search
