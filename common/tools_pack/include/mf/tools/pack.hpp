// The built-in tool pack (SPEC §5.4): a behavioural port of Pi 0.79's coding tools (read, bash,
// edit, write, grep, find, ls), each a function from validated arguments to a ToolResult, confined
// to one workspace directory. Limits, texts and deliberate differences from Pi: docs/tools.md.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "mf/diag/diagnostic.hpp"
#include "mf/json/value.hpp"

namespace mf::io {
class SyncSet;
}

namespace mf::tools {

// What one call gives back to the model, in Pi's shape: one text block, optional details, and
// whether it is an error (Pi: the tool threw, and the message is the text).
struct ToolResult {
  bool is_error = false;
  std::string text;
  json::Value details;  // null = none (Pi's `details: undefined`)
  // An error returned before the tool changed anything (a refusal): the record of a writing tool
  // then says `not_attempted` rather than `completion_unknown`.
  bool untouched = false;
  // A resolution error (forge's ToolResolutionError): the call was well formed but named
  // something that does not exist (a missing file or path, text not in the file, an unknown
  // artifact). The guarded loop feeds it back without spending the tool-error budget
  // (docs/harness-run.md); the trace marks it `error_kind: "soft"`.
  bool soft = false;

  static ToolResult error(std::string message) { return {true, std::move(message), {}}; }
  static ToolResult refusal(std::string message) { return {true, std::move(message), {}, true}; }
  // Nothing was found to act on, so nothing changed.
  static ToolResult not_found(std::string message) {
    return {true, std::move(message), {}, true, true};
  }
};

// {"content":[{"text":…,"type":"text"}],"details":…,"is_error":…}
json::Value to_json(const ToolResult& r);

// The directory every path of a call is confined to, held open by descriptor: containment is
// decided by the kernel (openat2 RESOLVE_BENEATH, or a component walk), never by string prefixes.
class Workspace {
 public:
  // Opens (and canonicalizes) the root; MF-T009 when it is missing or not a directory.
  static Result<std::shared_ptr<const Workspace>> open(const std::string& root);
  ~Workspace();
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;

  int fd() const { return fd_; }
  const std::string& root() const { return root_; }  // absolute, canonical

  // Pi's path rules, then confinement: Unicode spaces become ' ', one leading '@' is dropped,
  // file:// URLs become paths, an absolute path must lie inside the root, and `..` may not climb
  // out. Returns the normalized root-relative path ("" = the root). On refusal the error text is
  // what the model sees, e.g. "Path escapes the workspace: ../x".
  Result<std::string> resolve(std::string_view user_path) const;

  // open(2) beneath the root (symlinks never lead out). Returns a descriptor or -errno (EXDEV for
  // an escape).
  int open_at(std::string_view relative, int flags, int mode = 0644) const;
  // mkdir -p beneath the root; the number of directories it made, or -errno.
  int make_directories(std::string_view relative) const;
  // The absolute path of a root-relative path, for messages.
  std::string absolute(std::string_view relative) const;

 private:
  Workspace(int fd, std::string root) : fd_(fd), root_(std::move(root)) {}
  int fd_;
  std::string root_;
};

inline constexpr std::size_t kDefaultBashLogMaxBytes = 8u << 20;

// Everything a tool needs besides its arguments.
struct CallContext {
  std::shared_ptr<const Workspace> workspace;
  const std::atomic<bool>* cancel =
      nullptr;  // set -> stop as soon as possible ("Operation aborted")
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  std::string temp_dir = "/tmp";  // where bash keeps the full log of truncated output
  // bash's full-output log keeps the last this many bytes (and says so when it had to cut).
  std::size_t bash_log_max_bytes = kDefaultBashLogMaxBytes;
  bool sandbox = false;  // bash under bubblewrap (no network, read-only outside root)
  // Set under batched durability: files the tools publish are synced with the run's trace
  // (trace::WriterOptions::deferred) instead of each on its own.
  io::SyncSet* deferred_sync = nullptr;
  // Threads searching files for grep: 0 = the online CPUs (at most 8), 1 = the calling thread only.
  // The result is the same at every count.
  std::size_t search_threads = 0;

  bool cancelled() const { return cancel != nullptr && cancel->load(); }
};

// The tools. `args` already passed the descriptor's input schema (closed objects, types).
ToolResult run_read(const json::Value& args, const CallContext& ctx);
ToolResult run_write(const json::Value& args, const CallContext& ctx);
ToolResult run_edit(const json::Value& args, const CallContext& ctx);
ToolResult run_ls(const json::Value& args, const CallContext& ctx);
ToolResult run_grep(const json::Value& args, const CallContext& ctx);
ToolResult run_find(const json::Value& args, const CallContext& ctx);
ToolResult run_bash(const json::Value& args, const CallContext& ctx);

// --- Text helpers shared by the tools (Pi's truncate.ts) ---

inline constexpr std::size_t kMaxLines = 2000;
inline constexpr std::size_t kMaxBytes = 50 * 1024;
inline constexpr std::size_t kGrepMaxLineLength = 500;  // UTF-16 code units

struct Truncation {
  std::string content;
  bool truncated = false;
  std::string truncated_by;  // "lines", "bytes" or "" (null)
  std::size_t total_lines = 0;
  std::size_t total_bytes = 0;
  std::size_t output_lines = 0;
  std::size_t output_bytes = 0;
  bool last_line_partial = false;
  bool first_line_exceeds_limit = false;
  std::size_t max_lines = kMaxLines;
  std::size_t max_bytes = kMaxBytes;
};
// Pi's TruncationResult as details.truncation (camelCase members, truncatedBy null when "").
json::Value to_json(const Truncation& t);

// Lines as Pi counts them: "" has 0; a trailing "\n" does not start another line.
std::size_t count_lines(std::string_view text);
// Keeps whole lines from the start within max_lines and max_bytes.
Truncation truncate_head(std::string_view text, std::size_t max_lines = kMaxLines,
                         std::size_t max_bytes = kMaxBytes);
// The same for a text known by its start: `head` is its first bytes (all of them, or at least
// max_bytes + 1), and the text is total_bytes long with count_lines() of `lines`.
Truncation truncate_head_of(std::string_view head, std::size_t total_bytes, std::size_t lines,
                            std::size_t max_lines = kMaxLines, std::size_t max_bytes = kMaxBytes);
// Keeps whole lines from the end; a last line alone over max_bytes keeps its final bytes.
Truncation truncate_tail(std::string_view text, std::size_t max_lines = kMaxLines,
                         std::size_t max_bytes = kMaxBytes);
// "512B", "50.0KB", "1.5MB"
std::string format_size(std::size_t bytes);
// JavaScript's String.length: UTF-16 code units of UTF-8 text.
std::size_t utf16_length(std::string_view text);
// Cuts a line over max_chars UTF-16 units, appending "... [truncated]"; returns whether it cut.
bool truncate_line(std::string& line, std::size_t max_chars = kGrepMaxLineLength);

}  // namespace mf::tools
