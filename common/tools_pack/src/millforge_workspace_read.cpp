// Millforge's read-only workspace tools: read_file (one file, cut at max_bytes), and list_files
// and search_text, which walk a directory beneath the workspace for file paths or matching lines.
#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "file_tools.hpp"
#include "mf/io/file.hpp"
#include "mf/text/utf8.hpp"
#include "millforge_builtins.hpp"
#include "millforge_support.hpp"
#include "search_output.hpp"
#include "walk.hpp"

namespace mf::tools {

using namespace millforge;

namespace {

using io::Fd;
using json::Value;

constexpr std::size_t kDefaultResults = 200;     // Millforge's default for listings
constexpr std::size_t kSnippetCodePoints = 512;  // of a matching line, as Millforge shows it

}  // namespace

// --- workspace.read_file ------------------------------------------------------------------------

ToolResult run_workspace_read_file(const Invocation& call) {
  const CallContext& ctx = call.ctx;
  if (!ctx.workspace) return failure("No workspace is configured for this run");
  if (ctx.cancelled()) return failure(std::string(kAborted));
  const std::string& path = call.args.find("path")->as_string();
  const std::size_t max_bytes = size_arg(call.args, "max_bytes", kDefaultReadBytes);
  const Workspace& ws = *ctx.workspace;
  auto resolved = ws.resolve(path);
  if (!resolved) return failure(resolved.diagnostics().front().message);
  const std::string& relative = *resolved;
  const std::string absolute = ws.absolute(relative);
  if (relative.empty()) return failure(node_error(EISDIR, "read", absolute));

  // The type first, through O_PATH: opening a FIFO for reading could block.
  Fd probe(ws.open_at(relative, O_PATH));
  if (probe.get() == -EXDEV) return failure(escape_message(path));
  if (probe.get() < 0) return failure(node_error(-probe.get(), "open", absolute));
  struct stat st {};
  if (::fstat(probe.get(), &st) != 0) return failure(node_error(errno, "stat", absolute));
  if (S_ISDIR(st.st_mode)) return failure(node_error(EISDIR, "read", absolute));
  if (!S_ISREG(st.st_mode) || names_directory(path)) return failure("Not a regular file: " + path);
  Fd fd(ws.open_at(relative, O_RDONLY | O_NONBLOCK | O_NOCTTY));
  if (fd.get() == -EXDEV) return failure(escape_message(path));
  if (fd.get() < 0) return failure(node_error(-fd.get(), "open", absolute));
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return failure("Not a regular file: " + path);
  }
  std::string bytes;
  if (const int err = io::read_all(fd.get(), bytes, max_bytes); err != 0) {
    return failure(node_error(-err, "read", absolute));
  }
  const bool truncated = bytes.size() > max_bytes;
  if (truncated) bytes.resize(text::utf8_floor(bytes, max_bytes));
  std::string content = text::valid_utf8(bytes) ? std::move(bytes) : text::decode_utf8_lossy(bytes);
  const auto size = static_cast<std::uint64_t>(std::max<off_t>(st.st_size, 0));
  std::string summary = "Read " + relative + " (" + std::to_string(size) + " bytes" +
                        (truncated ? ", cut at " + std::to_string(max_bytes) : std::string()) + ")";
  std::string text = content;
  if (truncated) {
    text += "\n\n[Showing the first " + std::to_string(max_bytes) + " bytes of " +
            std::to_string(size) + "; a larger max_bytes reads more]";
  }
  return success(std::move(text), std::move(summary),
                 {{"path", relative},
                  {"content", std::move(content)},
                  {"truncated", truncated},
                  {"size", size}});
}

// --- workspace.list_files and workspace.search_text ---------------------------------------------

namespace {

// What a listing or a search walks: the directory `root` names beneath the workspace, the files
// in it (symbolic links are not followed, .git is skipped, no ignore file hides anything) whose
// workspace-relative path or name matches `glob`, in path order.
struct FileWalk {
  std::string root;  // root-relative, "" = the workspace root
  std::optional<walk::Glob> glob;
  walk::Outcome outcome;
  bool aborted = false;
};

// Opens the walk; the failure result otherwise.
std::optional<ToolResult> open_walk(const Invocation& call, const std::string& root,
                                    std::string_view glob, std::unique_ptr<Fd>& fd, FileWalk& w) {
  ToolResult refused;
  auto target = search::open_target(json::Object{{"path", root}}, call.ctx, &refused);
  if (!target) return with_status(std::move(refused));
  if (!target->directory) return failure("Not a directory: " + root);
  w.root = target->relative;
  fd = std::move(target->fd);
  if (!glob.empty()) {
    std::string why;
    w.glob = walk::Glob::compile(glob, false, &why);
    if (!w.glob) return failure("error parsing glob '" + std::string(glob) + "': " + why);
  }
  return std::nullopt;
}

// Calls `visit` with each file's workspace-relative path and the directory holding it, until it
// returns false.
void walk_files(const Invocation& call, int fd, FileWalk& w,
                const std::function<bool(const std::string& path, const walk::Entry& e)>& visit) {
  walk::Options options;
  options.ignore_files = false;
  w.outcome = walk::walk(*call.ctx.workspace, w.root, fd, options, [&](const walk::Entry& e) {
    if (search::stop_requested(call.ctx)) {
      w.aborted = true;
      return walk::Action::Stop;
    }
    if (e.type != walk::Type::File) return walk::Action::Continue;
    std::string path = w.root.empty() ? std::string(e.path) : w.root + "/" + std::string(e.path);
    if (w.glob && !w.glob->matches(path) && !w.glob->matches(e.name)) {
      return walk::Action::Continue;
    }
    return visit(path, e) ? walk::Action::Continue : walk::Action::Stop;
  });
}

// The walk's own bounds, when it met them, as a sentence; "" otherwise.
std::string walk_bounds(const walk::Outcome& o) {
  if (o.entry_limit) {
    return "the walk stopped after " + std::to_string(walk::kMaxEntries) + " directory entries";
  }
  if (o.depth_limit) {
    return "directories nested deeper than " + std::to_string(walk::kMaxDepth) +
           " levels were not entered";
  }
  return {};
}

// The first `n` code points of UTF-8 text.
std::string first_code_points(const std::string& s, std::size_t n) {
  std::size_t at = 0;
  for (std::size_t seen = 0; at < s.size(); ++at) {
    if ((static_cast<unsigned char>(s[at]) & 0xC0) != 0x80 && seen++ == n) break;
  }
  return s.substr(0, at);
}

}  // namespace

ToolResult run_workspace_list_files(const Invocation& call) {
  const CallContext& ctx = call.ctx;
  if (!ctx.workspace) return failure("No workspace is configured for this run");
  if (ctx.cancelled()) return failure(std::string(kAborted));
  const std::string& root = call.args.find("root")->as_string();
  const Value* glob = call.args.find("glob");
  const std::size_t max_results = size_arg(call.args, "max_results", kDefaultResults);
  std::unique_ptr<Fd> fd;
  FileWalk w;
  if (auto refused = open_walk(call, root, glob ? glob->as_string() : "", fd, w)) return *refused;

  json::Array paths;
  std::string listing;
  bool more = false;
  walk_files(call, fd->get(), w, [&](const std::string& path, const walk::Entry&) {
    if (paths.size() == max_results) {
      more = true;
      return false;
    }
    listing += (listing.empty() ? "" : "\n") + path;
    paths.push_back(path);
    return true;
  });
  if (w.aborted) return failure(std::string(kAborted));
  const std::string bounds = walk_bounds(w.outcome);
  const bool truncated = more || !bounds.empty();
  const std::string shown = w.root.empty() ? "." : w.root;
  std::string summary = "Listed " + plural(paths.size(), "file", "files") + " under " + shown;
  std::string text = paths.empty() ? "No files found under " + shown : listing;
  if (more) {
    summary += " (the first " + std::to_string(max_results) + ")";
    text += "\n\n[The first " + std::to_string(max_results) +
            " files; a larger max_results, a narrower root or a glob lists the rest]";
  }
  if (!bounds.empty()) {
    summary += "; " + bounds;
    text += "\n\n[Listing incomplete: " + bounds + "]";
  }
  return success(std::move(text), std::move(summary),
                 {{"paths", std::move(paths)}, {"truncated", truncated}});
}

ToolResult run_workspace_search_text(const Invocation& call) {
  const CallContext& ctx = call.ctx;
  if (!ctx.workspace) return failure("No workspace is configured for this run");
  if (ctx.cancelled()) return failure(std::string(kAborted));
  const std::string& query = call.args.find("query")->as_string();
  const Value* root = call.args.find("root");
  const Value* glob = call.args.find("glob");
  const std::size_t max_results = size_arg(call.args, "max_results", kDefaultResults);
  std::unique_ptr<Fd> fd;
  FileWalk w;
  if (auto refused =
          open_walk(call, root ? root->as_string() : ".", glob ? glob->as_string() : "", fd, w)) {
    return *refused;
  }
  // A query holding U+FFFD can match where a file's invalid bytes were replaced by it, so only
  // other queries may skip a file whose raw bytes lack them.
  const bool raw_prefilter = query.find("\xEF\xBF\xBD") == std::string::npos;

  json::Array matches;
  std::string listing;
  bool more = false;
  walk_files(call, fd->get(), w, [&](const std::string& path, const walk::Entry& e) {
    const Fd file(::openat(e.parent_fd, e.name.data(),
                           O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
    struct stat st {};
    if (!file.valid() || ::fstat(file.get(), &st) != 0 || !S_ISREG(st.st_mode)) return true;
    std::string bytes;
    if (io::read_all(file.get(), bytes, kMaxToolFileBytes) != 0 ||
        bytes.size() > kMaxToolFileBytes) {
      return true;  // unreadable or too large: skipped, as an unreadable file is by Millforge
    }
    if (raw_prefilter && bytes.find(query) == std::string::npos) return true;
    // Lines end at "\n", "\r\n" or "\r"; only a line whose bytes hold the query is decoded.
    std::uint64_t line = 0;
    for (std::size_t start = 0; start < bytes.size();) {
      ++line;
      const std::size_t found = bytes.find_first_of("\r\n", start);
      const std::size_t stop = found == std::string::npos ? bytes.size() : found;
      const std::string_view raw(bytes.data() + start, stop - start);
      start = stop + (bytes.compare(stop, 2, "\r\n") == 0 ? 2 : 1);
      if (raw_prefilter && raw.find(query) == std::string_view::npos) continue;
      const std::string text = as_text(std::string(raw));
      if (text.find(query) == std::string::npos) continue;
      if (matches.size() == max_results) {
        more = true;
        return false;
      }
      std::string snippet = first_code_points(text, kSnippetCodePoints);
      listing += (listing.empty() ? "" : "\n") + path + ":" + std::to_string(line) + ": " + snippet;
      matches.push_back(
          json::Object{{"path", path}, {"line", line}, {"snippet", std::move(snippet)}});
    }
    return true;
  });
  if (w.aborted) return failure(std::string(kAborted));
  const std::string bounds = walk_bounds(w.outcome);
  const bool truncated = more || !bounds.empty();
  std::string summary = "Found " + plural(matches.size(), "matching line", "matching lines");
  std::string text = matches.empty() ? std::string("No matches found") : listing;
  if (more) {
    summary += " (the first " + std::to_string(max_results) + ")";
    text += "\n\n[The first " + std::to_string(max_results) +
            " matching lines; a larger max_results, a narrower root or a glob finds the rest]";
  }
  if (!bounds.empty()) {
    summary += "; " + bounds;
    text += "\n\n[Search incomplete: " + bounds + "]";
  }
  return success(std::move(text), std::move(summary),
                 {{"matches", std::move(matches)}, {"truncated", truncated}});
}

}  // namespace mf::tools
