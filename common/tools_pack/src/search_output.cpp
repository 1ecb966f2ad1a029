// What grep and find share (search_output.hpp): the bounded output, its closing notices, and the
// search path opened beneath the workspace.
#include "search_output.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <chrono>

#include "args.hpp"
#include "file_tools.hpp"

namespace mf::tools::search {
using io::Fd;
namespace {

std::string join_notices(const std::vector<std::string>& notices) {
  std::string s;
  for (std::size_t i = 0; i < notices.size(); ++i) {
    if (i > 0) s += ". ";
    s += notices[i];
  }
  return s;
}

}  // namespace

bool bool_arg(const json::Value& args, std::string_view key) {
  const json::Value* v = args.find(key);
  return v != nullptr && v->is_bool() && v->as_bool();
}

bool stop_requested(const CallContext& ctx) {
  return ctx.cancelled() || std::chrono::steady_clock::now() >= ctx.deadline;
}

void Output::add(std::string_view line) {
  if (lines_ > 0) {
    ++bytes_;
    ++newlines_;
    if (!full_) text_.push_back('\n');
  }
  ++lines_;
  bytes_ += line.size();
  newlines_ += static_cast<std::size_t>(std::count(line.begin(), line.end(), '\n'));
  if (!line.empty()) {
    ends_with_newline_ = line.back() == '\n';
  } else {
    ends_with_newline_ = lines_ > 1;
  }
  if (!full_) {
    text_.append(line);
    full_ = text_.size() > kMaxBytes;
  }
}

void Output::append(const OutputPart& part) {
  std::size_t begin = 0;
  for (const std::size_t end : part.ends_) {
    add(std::string_view(part.kept_).substr(begin, end - begin));
    begin = end;
  }
  if (part.tail_lines_ == 0) return;
  // Only a part past kMaxBytes has a tail, so this output is full by now: its lines are counted,
  // as add() counts them.
  const std::size_t separators = lines_ > 0 ? part.tail_lines_ : part.tail_lines_ - 1;
  lines_ += part.tail_lines_;
  bytes_ += separators + part.tail_bytes_;
  newlines_ += separators + part.tail_newlines_;
  ends_with_newline_ = part.tail_last_empty_ ? lines_ > 1 : part.tail_ends_with_newline_;
}

void OutputPart::add(std::string_view line) {
  if (kept_.size() <= kMaxBytes) {
    kept_.append(line);
    ends_.push_back(kept_.size());
    return;
  }
  ++tail_lines_;
  tail_bytes_ += line.size();
  tail_newlines_ += static_cast<std::size_t>(std::count(line.begin(), line.end(), '\n'));
  tail_last_empty_ = line.empty();
  tail_ends_with_newline_ = !line.empty() && line.back() == '\n';
}

Truncation Output::finish() const {
  Truncation t = truncate_head(text_, kMaxSafeInteger, kMaxBytes);
  if (full_) {  // the totals are those of everything, as if it had all been kept
    t.total_bytes = bytes_;
    t.total_lines = bytes_ == 0 ? 0 : newlines_ + 1 - (ends_with_newline_ ? 1 : 0);
  }
  return t;
}

void Notices::limit_reached(double limit, std::string_view what, std::string_view key) {
  lines.push_back(js_number(limit) + " " + std::string(what) + " limit reached. Use limit=" +
                  js_number(limit * 2) + " for more, or refine pattern");
  details.set(key, limit);
}

void Notices::truncated(const Truncation& t) {
  if (!t.truncated) return;
  lines.push_back(format_size(kMaxBytes) + " limit reached");
  details.set("truncation", to_json(t));
}

void Notices::walk_bounds(const walk::Outcome& outcome) {
  if (outcome.entry_limit) {
    lines.push_back("Search stopped after " + std::to_string(walk::kMaxEntries) +
                    " directory entries");
  }
  if (outcome.depth_limit) {
    lines.push_back("Directories nested deeper than " + std::to_string(walk::kMaxDepth) +
                    " levels were not searched");
  }
}

ToolResult Notices::result(std::string text) {
  if (!lines.empty()) text += "\n\n[" + join_notices(lines) + "]";
  return {false, std::move(text), std::move(details)};
}

ToolResult nothing_found(std::string text, const walk::Outcome& outcome) {
  Notices notices;
  notices.walk_bounds(outcome);
  return notices.result(std::move(text));
}

std::optional<Target> open_target(const json::Value& args, const CallContext& ctx,
                                  ToolResult* failure) {
  const std::string* arg = string_arg(args, "path");
  const std::string path = arg == nullptr || arg->empty() ? "." : *arg;
  const Workspace& ws = *ctx.workspace;
  auto resolved = ws.resolve(path);
  if (!resolved) {
    *failure = ToolResult::error(resolved.diagnostics().front().message);
    return std::nullopt;
  }
  Target t;
  t.relative = *resolved;
  t.absolute = ws.absolute(t.relative);
  const Fd probe(ws.open_at(t.relative, O_PATH));
  if (probe.get() == -EXDEV) {
    *failure = ToolResult::error(escape_message(path));
    return std::nullopt;
  }
  struct stat st {};
  if (probe.get() < 0 || ::fstat(probe.get(), &st) != 0) {
    // Only a path that does not exist is the model's wrong guess (a resolution error).
    *failure = probe.get() == -ENOENT ? ToolResult::not_found("Path not found: " + t.absolute)
                                      : ToolResult::error("Path not found: " + t.absolute);
    return std::nullopt;
  }
  t.directory = S_ISDIR(st.st_mode);
  t.regular = S_ISREG(st.st_mode);
  if (t.directory || t.regular) {
    const int flags = t.directory ? O_RDONLY | O_DIRECTORY : O_RDONLY | O_NONBLOCK | O_NOCTTY;
    t.fd = std::make_unique<Fd>(ws.open_at(t.relative, flags));
    if (t.fd->get() == -EXDEV) {
      *failure = ToolResult::error(escape_message(path));
      return std::nullopt;
    }
    if (t.fd->get() < 0) {
      *failure = ToolResult::error("Path not found: " + t.absolute);
      return std::nullopt;
    }
  }
  return t;
}

}  // namespace mf::tools::search
