// Millforge's builtin.* tools over this product's workspace, artifact directory and process
// module. Each successful result's details are {status, summary, ...} as its output schema asks;
// an error result carries {status, summary} too. Behaviour and differences from Millforge:
// docs/tools.md, "Millforge built-ins".
#include "millforge_builtins.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

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
#include <vector>

#include "file_tools.hpp"
#include "mf/diag/codes.hpp"
#include "mf/hash/sha256.hpp"
#include "mf/io/file.hpp"
#include "mf/json/canonical.hpp"
#include "mf/process/process.hpp"
#include "mf/text/utf8.hpp"
#include "search_output.hpp"
#include "walk.hpp"

namespace mf::tools {
namespace {

using io::Fd;
using json::Value;

constexpr std::size_t kDefaultReadBytes = 32u << 10;  // Millforge's default for file reads
constexpr std::size_t kDefaultResults = 200;          // Millforge's default for listings
constexpr std::size_t kSnippetCodePoints = 512;       // of a matching line, as Millforge shows it
constexpr std::size_t kMaxPatchedFileBytes = 8u << 20;
constexpr std::size_t kShellTailBytes = 32u << 10;

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ", ") + i;
  return out;
}

// An error result with the structured status every Millforge output has. `untouched`: nothing was
// changed (a refusal).
ToolResult failure(std::string message, bool untouched = true,
                   std::string_view status = "soft_failure", json::Object more = {}) {
  json::Object details{{"status", std::string(status)}, {"summary", message}};
  for (auto& m : more) details.push_back(std::move(m));
  return ToolResult{true, std::move(message), std::move(details), untouched};
}

ToolResult success(std::string text, std::string summary, json::Object more) {
  json::Object details{{"status", "success"}, {"summary", std::move(summary)}};
  for (auto& m : more) details.push_back(std::move(m));
  return ToolResult{false, std::move(text), std::move(details), false};
}

const Value* member(const Value& v, std::string_view key) {
  return v.is_object() ? v.find(key) : nullptr;
}

std::size_t size_arg(const Value& args, std::string_view key, std::size_t fallback) {
  const Value* v = args.find(key);
  if (v == nullptr) return fallback;
  const auto n = v->as_exact_int();
  return n && *n > 0 ? static_cast<std::size_t>(*n) : fallback;
}

// Text as the model gets it: valid UTF-8 as it is, anything else decoded with U+FFFD.
std::string as_text(std::string bytes) {
  return text::valid_utf8(bytes) ? std::move(bytes) : text::decode_utf8_lossy(bytes);
}

// An error result of a helper shared with the pack's tools, with the structured status added.
ToolResult with_status(ToolResult r) {
  r.details = json::Object{{"status", "soft_failure"}, {"summary", r.text}};
  return r;
}

}  // namespace

// --- request.* ----------------------------------------------------------------------------------

ToolResult run_inspect_request(const Invocation& call) {
  if (!call.request.is_object()) return failure("No request is available to this run");
  const Value* instruction = member(call.request, "instruction");
  const Value* context = member(call.request, "context");
  const std::string text_instruction =
      instruction != nullptr && instruction->is_string() ? instruction->as_string() : "";
  const Value shown_context =
      context != nullptr && context->is_object() ? *context : Value(json::Object{});
  std::string summary =
      text_instruction.empty()
          ? std::string("The request has no instruction")
          : "The request's instruction has " + std::to_string(text_instruction.size()) + " bytes";
  summary += "; its context has " + std::to_string(shown_context.as_object().size()) + " member" +
             (shown_context.as_object().size() == 1 ? "" : "s");
  const std::string text =
      json::canonical(json::Object{{"instruction", text_instruction}, {"context", shown_context}});
  return success(text, summary, {{"instruction", text_instruction}, {"context", shown_context}});
}

ToolResult run_read_requirements(const Invocation& call) {
  const Value* context = member(call.request, "context");
  const Value* requirements = context != nullptr ? member(*context, "requirements") : nullptr;
  if (requirements == nullptr || requirements->is_null()) {
    return failure("The request states no requirements (its context has no \"requirements\")");
  }
  std::string text =
      requirements->is_string() ? requirements->as_string() : json::canonical(*requirements);
  std::string summary = requirements->is_array()
                            ? "The request states " +
                                  std::to_string(requirements->as_array().size()) + " requirement" +
                                  (requirements->as_array().size() == 1 ? "" : "s")
                            : std::string("The request states its requirements");
  return success(std::move(text), std::move(summary), {{"requirements", *requirements}});
}

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

std::string plural(std::size_t n, std::string_view one, std::string_view many) {
  return std::to_string(n) + " " + std::string(n == 1 ? one : many);
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

// --- workspace.apply_patch ----------------------------------------------------------------------

namespace {

// The path of a ---/+++ header: up to a tab (diff's timestamp), "" for /dev/null.
std::optional<std::string> header_path(std::string_view rest, std::string* error) {
  const auto tab = rest.find('\t');
  if (tab != std::string_view::npos) rest = rest.substr(0, tab);
  while (!rest.empty() && rest.back() == '\r') rest.remove_suffix(1);
  if (rest == "/dev/null") return std::string();
  if (rest.empty()) {
    *error = "a file header names no path";
    return std::nullopt;
  }
  if (rest.front() == '"') {
    *error = "quoted paths are not supported: " + std::string(rest);
    return std::nullopt;
  }
  return std::string(rest);
}

// "@@ -a[,b] +c[,d] @@ ..." -> a, b, c, d (b and d default to 1).
bool hunk_header(std::string_view line, std::size_t counts[4]) {
  std::size_t at = 3;  // after "@@ "
  auto number = [&](std::size_t& out) {
    const std::size_t begin = at;
    out = 0;
    while (at < line.size() && line[at] >= '0' && line[at] <= '9') {
      if (out > 100000000) return false;
      out = out * 10 + static_cast<std::size_t>(line[at++] - '0');
    }
    return at > begin;
  };
  auto range = [&](char sign, std::size_t& start, std::size_t& count) {
    if (at >= line.size() || line[at] != sign) return false;
    ++at;
    if (!number(start)) return false;
    count = 1;
    if (at < line.size() && line[at] == ',') {
      ++at;
      if (!number(count)) return false;
    }
    return true;
  };
  if (!range('-', counts[0], counts[1])) return false;
  if (at >= line.size() || line[at] != ' ') return false;
  ++at;
  if (!range('+', counts[2], counts[3])) return false;
  return line.substr(at, 3) == " @@";
}

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t nl = text.find('\n', start);
    const std::size_t end = nl == std::string_view::npos ? text.size() : nl;
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

}  // namespace

ParsedPatch parse_patch(std::string_view patch) {
  ParsedPatch out;
  const std::vector<std::string_view> lines = split_lines(patch);
  auto fail = [&](std::size_t index, const std::string& why) {
    out.files.clear();
    out.error = "Patch line " + std::to_string(index + 1) + ": " + why;
    return out;
  };
  std::size_t i = 0;
  // After a file section, a line that looks like hunk content is an error rather than commentary:
  // a hunk whose counts are short of its lines would otherwise lose the rest silently. A
  // signature ("-- "), "diff ..." or "From ..." line starts commentary again.
  bool after_section = false;
  while (i < lines.size()) {
    const std::string_view line = lines[i];
    if (starts_with(line, "@@ ")) return fail(i, "a hunk without a ---/+++ file header");
    if (!starts_with(line, "--- ")) {
      if (line == "-- " || starts_with(line, "diff ") || starts_with(line, "From ")) {
        after_section = false;
      } else if (after_section && !line.empty() &&
                 (line[0] == '+' || line[0] == '-' || line[0] == ' ' || line[0] == '\\')) {
        return fail(i, "a hunk line outside any hunk (do the hunk's counts match its lines?)");
      }
      ++i;  // diff --git, index, mode lines, commentary
      continue;
    }
    if (i + 1 >= lines.size() || !starts_with(lines[i + 1], "+++ ")) {
      return fail(i, "a --- header must be followed by a +++ header");
    }
    std::string why;
    auto old_path = header_path(line.substr(4), &why);
    if (!old_path) return fail(i, why);
    auto new_path = header_path(lines[i + 1].substr(4), &why);
    if (!new_path) return fail(i + 1, why);
    // git's a/ and b/ prefixes, removed only when both sides carry theirs.
    const bool git_style = (old_path->empty() || starts_with(*old_path, "a/")) &&
                           (new_path->empty() || starts_with(*new_path, "b/"));
    if (git_style) {
      if (!old_path->empty()) old_path->erase(0, 2);
      if (!new_path->empty()) new_path->erase(0, 2);
    }
    if (old_path->empty() && new_path->empty()) return fail(i, "both sides are /dev/null");
    if (!old_path->empty() && !new_path->empty() && *old_path != *new_path) {
      return fail(i, "renames are not supported (" + *old_path + " -> " + *new_path + ")");
    }
    FilePatch file{*old_path, *new_path, {}};
    i += 2;
    while (i < lines.size() && starts_with(lines[i], "@@ ")) {
      std::size_t counts[4] = {};
      if (!hunk_header(lines[i], counts)) return fail(i, "malformed hunk header");
      PatchHunk hunk;
      hunk.old_start = counts[0];
      hunk.new_start = counts[2];
      hunk.header_line = i + 1;
      std::size_t old_left = counts[1];
      std::size_t new_left = counts[3];
      char last = 0;  // the side of the line a "\ No newline" marker belongs to
      ++i;
      auto marker = [&]() -> bool {
        if (last == 0) return false;
        if (last == ' ' || last == '-') hunk.old_no_newline = true;
        if (last == ' ' || last == '+') hunk.new_no_newline = true;
        return true;
      };
      while (old_left > 0 || new_left > 0) {
        if (i >= lines.size()) return fail(i - 1, "the hunk ends before its counts are met");
        const std::string_view l = lines[i];
        // An empty line is a context line whose leading space was stripped on the way.
        const char kind = l.empty() ? ' ' : l[0];
        const std::string body(l.empty() ? std::string_view() : l.substr(1));
        const bool after_old_end = hunk.old_no_newline && (kind == ' ' || kind == '-');
        const bool after_new_end = hunk.new_no_newline && (kind == ' ' || kind == '+');
        if (after_old_end || after_new_end) {
          return fail(i, "a line follows a \"\\ No newline at end of file\" marker");
        }
        if (kind == ' ' && old_left > 0 && new_left > 0) {
          hunk.old_lines.push_back(body);
          hunk.new_lines.push_back(body);
          --old_left;
          --new_left;
        } else if (kind == '-' && old_left > 0) {
          hunk.old_lines.push_back(body);
          --old_left;
        } else if (kind == '+' && new_left > 0) {
          hunk.new_lines.push_back(body);
          --new_left;
        } else if (kind == '\\') {
          if (!marker()) return fail(i, "a \"\\\" marker before any line");
          ++i;
          continue;
        } else {
          return fail(i, "the line does not fit the hunk's counts (-" + std::to_string(counts[1]) +
                             " +" + std::to_string(counts[3]) + ")");
        }
        last = kind;
        ++i;
      }
      if (i < lines.size() && starts_with(lines[i], "\\")) {
        marker();
        ++i;
      }
      file.hunks.push_back(std::move(hunk));
    }
    if (file.hunks.empty()) {
      return fail(i - 1, "no hunks for " + (file.new_path.empty() ? file.old_path : file.new_path));
    }
    out.files.push_back(std::move(file));
    after_section = true;
  }
  if (out.files.empty()) out.error = "The patch holds no ---/+++ file sections";
  return out;
}

PatchOutcome apply_hunks(std::string_view original, const std::vector<PatchHunk>& hunks,
                         std::string_view display) {
  PatchOutcome out;
  const std::vector<std::string_view> lines = split_lines(original);
  const bool ends_with_newline = original.empty() || original.back() == '\n';
  std::vector<std::string_view> result;
  bool result_newline = ends_with_newline;
  std::size_t cursor = 0;  // lines before it are settled
  for (std::size_t h = 0; h < hunks.size(); ++h) {
    const PatchHunk& hunk = hunks[h];
    const std::size_t m = hunk.old_lines.size();
    auto matches_at = [&](std::size_t at) {
      if (at < cursor || at + m > lines.size()) return false;
      for (std::size_t k = 0; k < m; ++k) {
        if (lines[at + k] != hunk.old_lines[k]) return false;
      }
      const bool reaches_end = at + m == lines.size();
      // The old side's last line ends the file without "\n" exactly when the patch says so.
      if (hunk.old_no_newline) return reaches_end && !ends_with_newline;
      return !(reaches_end && !ends_with_newline && !lines.empty());
    };
    // A stated line past the end searches from the end: no line beyond it can match.
    const std::size_t expected =
        std::min(hunk.old_start == 0 ? 0 : hunk.old_start - (m == 0 ? 0 : 1),
                 m == 0 ? hunk.old_start : lines.size());
    std::optional<std::size_t> found;
    if (m == 0) {
      if (matches_at(expected)) found = expected;
    } else {
      // The stated line first, then ever farther from it, never back into an earlier hunk.
      for (std::size_t d = 0; !found && (expected + d <= lines.size() || expected >= d); ++d) {
        if (expected + d <= lines.size() && matches_at(expected + d)) {
          found = expected + d;
        } else if (d > 0 && expected >= d && matches_at(expected - d)) {
          found = expected - d;
        }
      }
    }
    if (!found) {
      out.error = "Hunk " + std::to_string(h + 1) + " of " + std::string(display) +
                  " (patch line " + std::to_string(hunk.header_line) + ", -" +
                  std::to_string(hunk.old_start) +
                  ") does not apply: its context and removed lines are not in the file" +
                  (h > 0 ? " after the previous hunk" : "");
      return out;
    }
    const bool reaches_end = *found + m == lines.size();
    if (hunk.new_no_newline && !reaches_end) {
      out.error = "Hunk " + std::to_string(h + 1) + " of " + std::string(display) +
                  " ends its new side without a newline away from the end of the file";
      return out;
    }
    result.insert(result.end(), lines.begin() + static_cast<std::ptrdiff_t>(cursor),
                  lines.begin() + static_cast<std::ptrdiff_t>(*found));
    result.insert(result.end(), hunk.new_lines.begin(), hunk.new_lines.end());
    if (reaches_end) result_newline = hunk.new_lines.empty() || !hunk.new_no_newline;
    cursor = *found + m;
  }
  result.insert(result.end(), lines.begin() + static_cast<std::ptrdiff_t>(cursor), lines.end());
  for (std::size_t k = 0; k < result.size(); ++k) {
    out.content.append(result[k]);
    if (k + 1 < result.size() || result_newline) out.content.push_back('\n');
  }
  return out;
}

namespace {

enum class Change : std::uint8_t { Modify, Create, Delete };

// One file of a patch, checked and computed, waiting to be written.
struct PlannedFile {
  std::string relative;  // beneath the workspace root
  std::string parent;    // its directory ("" = the root)
  std::string name;      // its last component
  Change change = Change::Modify;
  std::string content;
  Fd dir;  // the parent directory, when it exists
  mode_t mode = 0;
  uid_t uid = 0;
  gid_t gid = 0;
  std::size_t hunks = 0;
};

// Resolves the file a change names and opens its directory (which may be missing when
// `may_create`). When the file exists it must be a regular file, never a link (even one inside the
// workspace: a change names the file it changes); its mode and owner are kept in `p`, and with
// `read` its bytes go to `original`. `who` starts the refusals ("A patch cannot change ...");
// `if_exists`, when set, is the refusal of any existing name (a creation).
// The refusal text otherwise; nothing is written here.
std::optional<std::string> open_target(const Workspace& ws, const std::string& path,
                                       std::string_view who, bool may_create, bool read,
                                       const std::optional<std::string>& if_exists, PlannedFile& p,
                                       bool& exists, std::string& original) {
  if (names_directory(path)) return std::string(who) + " cannot change a directory: " + path;
  auto resolved = ws.resolve(path);
  if (!resolved) return resolved.diagnostics().front().message;
  if (resolved->empty()) return std::string(who) + " cannot change the workspace root: " + path;
  p.relative = *resolved;
  const auto slash = p.relative.rfind('/');
  p.parent = slash == std::string::npos ? "" : p.relative.substr(0, slash);
  p.name = slash == std::string::npos ? p.relative : p.relative.substr(slash + 1);

  const int dir = ws.open_at(p.parent, O_RDONLY | O_DIRECTORY);
  if (dir == -EXDEV) return escape_message(path);
  if (dir < 0 && !(dir == -ENOENT && may_create)) {
    return node_error(-dir, "open", ws.absolute(p.parent));
  }
  p.dir = Fd(dir < 0 ? -1 : dir);
  struct stat st {};
  exists = p.dir.valid() && ::fstatat(p.dir.get(), p.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
  if (p.dir.valid() && !exists && errno != ENOENT) {
    return node_error(errno, "stat", ws.absolute(p.relative));
  }
  if (!exists) return std::nullopt;
  if (if_exists) return if_exists;
  if (S_ISLNK(st.st_mode)) return path + " is a symbolic link; name the file it points to";
  if (!S_ISREG(st.st_mode)) return "Not a regular file: " + path;
  p.mode = st.st_mode & 07777;
  p.uid = st.st_uid;
  p.gid = st.st_gid;
  if (!read) return std::nullopt;
  if (static_cast<std::uint64_t>(st.st_size) > kMaxPatchedFileBytes) {
    return "File too large to patch: " + path + " (" + std::to_string(st.st_size) +
           " bytes, the limit is " + std::to_string(kMaxPatchedFileBytes) + ")";
  }
  Fd fd(::openat(p.dir.get(), p.name.c_str(),
                 O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  if (!fd.valid()) return node_error(errno, "open", ws.absolute(p.relative));
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return "Not a regular file: " + path;
  if (const int err = io::read_all(fd.get(), original, kMaxPatchedFileBytes); err != 0) {
    return node_error(-err, "read", ws.absolute(p.relative));
  }
  if (original.size() > kMaxPatchedFileBytes) return "File too large to patch: " + path;
  p.mode = st.st_mode & 07777;
  p.uid = st.st_uid;
  p.gid = st.st_gid;
  return std::nullopt;
}

// Checks one file section against the workspace and computes its new bytes; the refusal text
// otherwise. Nothing is written here.
std::optional<std::string> plan_file(const Workspace& ws, const FilePatch& fp, PlannedFile& p) {
  const std::string& path = fp.new_path.empty() ? fp.old_path : fp.new_path;
  p.change = fp.old_path.empty()   ? Change::Create
             : fp.new_path.empty() ? Change::Delete
                                   : Change::Modify;
  if (path.front() == '/') return "Absolute paths are not allowed in a patch: " + path;
  p.hunks = fp.hunks.size();
  bool exists = false;
  std::string original;
  const bool create = p.change == Change::Create;
  const auto if_exists =
      create ? std::optional<std::string>("The patch creates " + path + ", which already exists")
             : std::nullopt;
  if (auto refused =
          open_target(ws, path, "A patch", create, !create, if_exists, p, exists, original)) {
    return refused;
  }
  if (!create && !exists) return node_error(ENOENT, "open", ws.absolute(p.relative));
  PatchOutcome applied = apply_hunks(original, fp.hunks, path);
  if (!applied.error.empty()) return applied.error;
  if (p.change == Change::Delete && !applied.content.empty()) {
    return "The patch deletes " + path + " but its hunks leave " +
           std::to_string(applied.content.size()) + " bytes of it";
  }
  p.content = std::move(applied.content);
  return std::nullopt;
}

// Writes one planned file: a new file (never over one that appeared meanwhile), a replacement
// renamed over the old name with its mode, or the name removed. The error text otherwise.
std::optional<std::string> commit_file(const Workspace& ws, PlannedFile& p) {
  const std::string absolute = ws.absolute(p.relative);
  if (!p.dir.valid()) {
    const int made = ws.make_directories(p.parent);
    if (made == -EXDEV) return escape_message(p.relative);
    if (made < 0) return node_error(-made, "mkdir", ws.absolute(p.parent));
    p.dir = Fd(ws.open_at(p.parent, O_RDONLY | O_DIRECTORY));
    if (!p.dir.valid()) return node_error(-p.dir.get(), "open", ws.absolute(p.parent));
  }
  if (p.change == Change::Delete) {
    struct stat st {};
    if (::fstatat(p.dir.get(), p.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 ||
        !S_ISREG(st.st_mode)) {
      return "Not a regular file any more: " + p.relative;
    }
    if (::unlinkat(p.dir.get(), p.name.c_str(), 0) != 0)
      return node_error(errno, "unlink", absolute);
    return std::nullopt;
  }
  const io::Writer fill = [&](int out) -> Status {
    if (p.change == Change::Modify) {
      if (p.uid != ::geteuid() || p.gid != ::getegid()) {
        (void)::fchown(out, p.uid, p.gid);  // only root may give a file away: best effort
      }
      if (::fchmod(out, p.mode) != 0) {
        return diag::error(diag::codes::kWriteFailed, node_error(errno, "fchmod", absolute));
      }
    }
    return io::write_all(out, p.content);
  };
  const auto clobber = p.change == Change::Create ? io::Clobber::Refuse : io::Clobber::Replace;
  if (Status s = io::publish_atomic_at(p.dir.get(), p.name, absolute, fill, clobber); !s) {
    return s.diagnostics().front().message;
  }
  return std::nullopt;
}

}  // namespace

ToolResult run_workspace_apply_patch(const Invocation& call) {
  const CallContext& ctx = call.ctx;
  if (!ctx.workspace) return failure("No workspace is configured for this run");
  if (ctx.cancelled()) return failure(std::string(kAborted));
  const Workspace& ws = *ctx.workspace;
  ParsedPatch parsed = parse_patch(call.args.find("patch")->as_string());
  if (!parsed.error.empty()) return failure(parsed.error);

  // One writer per file, as write and edit; taken in one order so two patches cannot deadlock.
  std::vector<std::string> keys;
  for (const auto& fp : parsed.files) {
    const std::string& path = fp.new_path.empty() ? fp.old_path : fp.new_path;
    auto resolved = ws.resolve(path);
    if (resolved && !resolved->empty()) keys.push_back(file_lock_key(ws, *resolved));
  }
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  std::vector<std::unique_ptr<FileLock>> locks;
  for (auto& k : keys) locks.push_back(std::make_unique<FileLock>(k));

  // Every file is checked and computed before any is written: a hunk that does not apply, or a
  // path that is refused, leaves the workspace as it was.
  std::vector<PlannedFile> planned(parsed.files.size());
  std::size_t hunks = 0;
  for (std::size_t i = 0; i < parsed.files.size(); ++i) {
    if (auto refused = plan_file(ws, parsed.files[i], planned[i])) return failure(*refused);
    for (std::size_t j = 0; j < i; ++j) {
      if (planned[j].relative == planned[i].relative) {
        return failure("The patch changes " + planned[i].relative + " twice");
      }
    }
    hunks += planned[i].hunks;
  }
  if (ctx.cancelled()) return failure(std::string(kAborted));

  json::Array changed;
  std::vector<std::string> done;
  std::string listing;
  for (auto& p : planned) {
    if (auto error = commit_file(ws, p)) {
      std::string message = "Could not write " + p.relative + ": " + *error;
      if (!done.empty()) message += " (already written: " + join(done) + ")";
      return failure(message, done.empty());
    }
    done.push_back(p.relative);
    changed.emplace_back(p.relative);
    const char* tag = p.change == Change::Create ? "A " : p.change == Change::Delete ? "D " : "M ";
    listing += "\n" + std::string(tag) + p.relative;
  }
  std::string summary = "Applied " + std::to_string(hunks) + " hunk" + (hunks == 1 ? "" : "s") +
                        " to " + std::to_string(planned.size()) + " file" +
                        (planned.size() == 1 ? "" : "s");
  return success(summary + listing, summary,
                 {{"changed_paths", std::move(changed)}, {"hunks", std::uint64_t(hunks)}});
}

// --- workspace.write_file -----------------------------------------------------------------------

namespace {

// The SHA-256 of the regular file `name` in `dir`, read without following a link; nullopt when it
// cannot be read.
std::optional<std::string> file_sha256(int dir, const std::string& name) {
  const Fd fd(
      ::openat(dir, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  if (!fd.valid()) return std::nullopt;
  hash::Sha256 h;
  std::vector<char> chunk(1 << 16);
  for (;;) {
    const ssize_t n = ::read(fd.get(), chunk.data(), chunk.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return std::nullopt;
    if (n == 0) break;
    h.update(std::string_view(chunk.data(), static_cast<std::size_t>(n)));
  }
  return hash::to_hex(h.finish());
}

}  // namespace

// The whole file through the patch applier's writer: checked first (escapes, links, non-files, a
// changed expected_sha256), then written atomically with the old file's mode, under the lock that
// write, edit and apply_patch take.
ToolResult run_workspace_write_file(const Invocation& call) {
  const CallContext& ctx = call.ctx;
  if (!ctx.workspace) return failure("No workspace is configured for this run");
  if (ctx.cancelled()) return failure(std::string(kAborted));
  const Workspace& ws = *ctx.workspace;
  const std::string& path = call.args.find("path")->as_string();
  const std::string& content = call.args.find("content")->as_string();
  const Value* expected = call.args.find("expected_sha256");

  std::unique_ptr<FileLock> lock;
  if (auto resolved = ws.resolve(path); resolved && !resolved->empty()) {
    lock = std::make_unique<FileLock>(file_lock_key(ws, *resolved));
  }
  PlannedFile p;
  bool exists = false;
  std::string unused;
  if (auto refused = open_target(ws, path, "write_workspace_file", true, false, std::nullopt, p,
                                 exists, unused)) {
    return failure(*refused);
  }
  p.change = exists ? Change::Modify : Change::Create;
  // As Millforge: the expectation is about the file that is there; a new file has none.
  if (expected != nullptr && exists) {
    const auto actual = file_sha256(p.dir.get(), p.name);
    if (!actual) return failure("Could not read " + p.relative + " to check its expected_sha256");
    if (*actual != expected->as_string()) {
      return failure("The file " + p.relative + " has changed: its SHA-256 is " + *actual +
                     ", not the expected " + expected->as_string() + "; nothing was written");
    }
  }
  p.content = content;
  if (ctx.cancelled()) return failure(std::string(kAborted));
  if (auto error = commit_file(ws, p)) {
    return failure("Could not write " + p.relative + ": " + *error);
  }
  std::string summary = (exists ? "Replaced " : "Created ") + p.relative + " (" +
                        plural(content.size(), "byte", "bytes") + ")";
  return success(summary, summary,
                 {{"path", p.relative}, {"content_sha256", hash::sha256_hex(content)}});
}

// --- workspace.read_diff ------------------------------------------------------------------------

namespace {

// `git diff` of the workspace (the work tree against git's index), limited to `paths` when there
// are any, keeping its first `max_bytes` bytes (cut on a UTF-8 boundary) in `diff`. The workspace
// root must be a repository's top, so the diff never shows files outside it. The failure result
// otherwise.
std::optional<ToolResult> workspace_diff(const Invocation& call,
                                         const std::vector<std::string>& paths,
                                         std::size_t max_bytes, std::string& diff, bool& truncated,
                                         std::size_t& total) {
  const CallContext& ctx = call.ctx;
  if (!ctx.workspace) return failure("No workspace is configured for this run");
  // git reads the repository's configuration, which can name programs to run (filter drivers);
  // the sandbox would not hold them.
  if (ctx.sandbox) {
    return failure(
        "The workspace diff is not read inside the bwrap sandbox: git would run outside it");
  }
  const Workspace& ws = *ctx.workspace;
  std::vector<std::string> pathspecs;
  for (const std::string& path : paths) {
    auto resolved = ws.resolve(path);
    if (!resolved) return failure(resolved.diagnostics().front().message);
    // A link on the way out is refused; a name that is missing (a deleted file) is fine.
    if (Fd probe(ws.open_at(*resolved, O_PATH)); probe.get() == -EXDEV) {
      return failure(escape_message(path));
    }
    pathspecs.push_back(resolved->empty() ? "." : *resolved);
  }
  if (!walk::inside_git_repository(ws, "")) {
    return failure(
        "The workspace is not a git repository (its root holds no .git), so it has no "
        "diff to read");
  }
  if (ctx.cancelled()) return failure(std::string(kAborted));
  // A filter driver is a command git diff runs on work-tree files. The repository's own
  // configuration is workspace content a write tool may have written, so one named there refuses
  // the read (the user's global and system configuration are trusted; attributes files outside the
  // repository are ignored).
  process::ShellCommand probe;
  // Every repository-level file (its config, a worktree's, what they include), none of the user's.
  probe.argv = {"git", "config", "--name-only", "--get-regexp", "^filter\\."};
  probe.env = {{"GIT_CONFIG_NOSYSTEM", "1"}, {"GIT_CONFIG_GLOBAL", "/dev/null"}};
  probe.cwd = ws.root();
  probe.deadline = ctx.deadline;
  probe.cancel = ctx.cancel;
  std::string filters;
  probe.on_output = [&](std::string_view chunk) {
    if (filters.size() < 4096) filters.append(chunk.substr(0, 4096 - filters.size()));
  };
  auto probed = process::run_shell(probe);
  if (!probed || probed->cancelled || probed->timed_out || !probed->exit_code ||
      (*probed->exit_code != 0 && *probed->exit_code != 1)) {  // 1: no such key
    return failure("git could not read the repository's configuration", true, "hard_failure");
  }
  if (!filters.empty()) {
    return failure(
        "The repository's configuration names a filter driver (" +
        as_text(filters.substr(0, filters.find('\n'))) +
        "), a command git diff would run on the work tree; the workspace diff is not read");
  }

  process::ShellCommand command;
  command.argv = {"git",
                  "-c",
                  "core.fsmonitor=false",
                  "-c",
                  "core.attributesFile=/dev/null",
                  "-c",
                  "core.safecrlf=false",
                  "--no-pager",
                  "--literal-pathspecs",
                  "diff",
                  "--no-color",
                  "--no-ext-diff",
                  "--no-textconv",
                  "--"};
  command.argv.insert(command.argv.end(), pathspecs.begin(), pathspecs.end());
  command.cwd = ws.root();
  command.env = {{"GIT_OPTIONAL_LOCKS", "0"}};  // a read: git must not refresh the index
  command.deadline = ctx.deadline;
  command.cancel = ctx.cancel;
  std::string captured;
  total = 0;
  command.on_output = [&](std::string_view chunk) {
    total += chunk.size();
    if (captured.size() <= max_bytes) {
      captured.append(chunk.substr(0, max_bytes + 1 - captured.size()));
    }
  };
  auto outcome = process::run_shell(command);
  if (!outcome) {
    return failure("git could not start: " + outcome.diagnostics().front().message, true,
                   "hard_failure");
  }
  if (outcome->cancelled || outcome->timed_out) {
    return failure(outcome->cancelled ? std::string(kAborted) : "git diff timed out", true,
                   "hard_failure");
  }
  if (!outcome->exit_code || *outcome->exit_code != 0) {
    const std::string said = as_text(captured.substr(0, text::utf8_floor(captured, 2048)));
    return failure("git diff failed (" +
                   (outcome->exit_code ? "exit code " + std::to_string(*outcome->exit_code)
                                       : std::string("ended by a signal")) +
                   ")" + (said.empty() ? std::string() : ": " + said));
  }
  truncated = total > max_bytes;
  if (truncated) captured.resize(text::utf8_floor(captured, max_bytes));
  diff = as_text(std::move(captured));
  return std::nullopt;
}

}  // namespace

ToolResult run_workspace_read_diff(const Invocation& call) {
  if (call.ctx.cancelled()) return failure(std::string(kAborted));
  std::vector<std::string> paths;
  if (const Value* named = call.args.find("paths"); named != nullptr) {
    for (const Value& p : named->as_array()) paths.push_back(p.as_string());
  }
  const std::size_t max_bytes = size_arg(call.args, "max_bytes", kDefaultReadBytes);
  std::string diff;
  bool truncated = false;
  std::size_t total = 0;
  if (auto failed = workspace_diff(call, paths, max_bytes, diff, truncated, total)) {
    return *failed;
  }
  std::string summary = diff.empty() ? std::string("No uncommitted changes")
                                     : "The diff has " + plural(total, "byte", "bytes");
  std::string text = diff.empty() ? summary : diff;
  if (truncated) {
    summary += ", cut at " + std::to_string(max_bytes);
    text += "\n\n[Showing the first " + std::to_string(max_bytes) + " bytes of " +
            std::to_string(total) + "; a larger max_bytes or fewer paths show more]";
  }
  std::string digest = hash::sha256_hex(diff);
  return success(
      std::move(text), std::move(summary),
      {{"diff", std::move(diff)}, {"truncated", truncated}, {"diff_sha256", std::move(digest)}});
}

// --- shell profiles -----------------------------------------------------------------------------

namespace {

// The argv of profile `name` from the request's context.shell_profiles, or the refusal text.
std::optional<std::string> profile_argv(const Invocation& call, const std::string& name,
                                        std::vector<std::string>& argv) {
  const Value* context = member(call.request, "context");
  const Value* profiles = context != nullptr ? member(*context, "shell_profiles") : nullptr;
  if (profiles == nullptr || !profiles->is_object() || profiles->as_object().empty()) {
    return std::string("The request defines no shell profiles (context.shell_profiles)");
  }
  const Value* profile = profiles->find(name);
  if (profile == nullptr) {
    std::vector<std::string> names;
    for (const auto& m : profiles->as_object()) names.push_back(m.key);
    return "Unknown profile \"" + name + "\"; the request defines: " + join(names);
  }
  const Value* args = member(*profile, "argv");
  const bool only_argv = profile->is_object() && profile->as_object().size() == 1;
  if (args == nullptr || !only_argv || !args->is_array() || args->as_array().empty()) {
    return "Profile \"" + name + "\" must be an object {\"argv\": [program, args...]}";
  }
  for (const Value& a : args->as_array()) {
    if (!a.is_string() || a.as_string().find('\0') != std::string::npos) {
      return "Profile \"" + name + "\": every argv entry must be a string";
    }
    argv.push_back(a.as_string());
  }
  if (argv.front().empty()) return "Profile \"" + name + "\" names no program";
  return std::nullopt;
}

// What runs the profile for both shell tools; `what` names the kind in texts.
ToolResult run_profile(const Invocation& call, std::string_view what) {
  const CallContext& ctx = call.ctx;
  const std::string& name = call.args.find("profile")->as_string();
  json::Object none{
      {"profile", name}, {"exit_code", nullptr}, {"output", ""}, {"truncated", false}};
  auto refuse = [&](std::string message) {
    return failure(std::move(message), true, "soft_failure", none);
  };
  if (!ctx.workspace) return refuse("No workspace is configured for this run");
  if (ctx.sandbox) {
    return refuse("Shell profiles do not run inside the bwrap sandbox; run " + std::string(what) +
                  " profiles without --sandbox");
  }
  std::vector<std::string> argv;
  if (auto refused = profile_argv(call, name, argv)) return refuse(*refused);
  if (ctx.cancelled()) return refuse(std::string(kAborted));

  process::ShellCommand command;
  command.argv = argv;
  command.cwd = ctx.workspace->root();
  command.deadline = ctx.deadline;
  command.cancel = ctx.cancel;
  std::string tail;  // the last bytes only: a chatty test run must not fill memory
  std::size_t total = 0;
  command.on_output = [&](std::string_view chunk) {
    total += chunk.size();
    tail.append(chunk);
    if (tail.size() > 4 * kShellTailBytes) tail.erase(0, tail.size() - 2 * kShellTailBytes);
  };
  auto outcome = process::run_shell(command);
  if (!outcome) {
    return failure("Profile " + name + " could not start: " + outcome.diagnostics().front().message,
                   true, "hard_failure", none);
  }
  Truncation t = truncate_tail(text::decode_utf8_lossy(tail), kMaxLines, kShellTailBytes);
  const bool truncated = t.truncated || total > tail.size();
  std::string output = std::move(t.content);
  const Value exit_code =
      outcome->exit_code ? Value(static_cast<std::int64_t>(*outcome->exit_code)) : Value();
  json::Object more{
      {"profile", name}, {"exit_code", exit_code}, {"output", output}, {"truncated", truncated}};
  const std::string shown = output.empty() ? std::string("(no output)") : output;
  const std::string note = truncated ? " (showing the last " + std::to_string(output.size()) +
                                           " of " + std::to_string(total) + " bytes of output)"
                                     : std::string();
  if (outcome->cancelled || outcome->timed_out) {
    std::string summary = "Profile " + name + (outcome->cancelled ? " aborted" : " timed out") +
                          " and was killed" + note;
    ToolResult r = failure(summary, false, "hard_failure", std::move(more));
    r.text = shown + "\n\n" + summary;
    return r;
  }
  if (!outcome->exit_code || *outcome->exit_code != 0) {
    std::string summary = "Profile " + name + " failed: " +
                          (outcome->exit_code ? "exit code " + std::to_string(*outcome->exit_code)
                                              : std::string("ended by a signal")) +
                          note;
    ToolResult r = failure(summary, false, "soft_failure", std::move(more));
    r.text = shown + "\n\n" + summary;
    return r;
  }
  std::string summary = "Profile " + name + " passed (exit code 0)" + note;
  return success(shown + "\n\n" + summary, summary, std::move(more));
}

}  // namespace

ToolResult run_test_profile(const Invocation& call) {
  return run_profile(call, "test");
}

ToolResult run_static_check_profile(const Invocation& call) {
  return run_profile(call, "static-check");
}

// --- artifacts ----------------------------------------------------------------------------------

namespace {

bool produces(const Binding& b, const std::string& id) {
  return std::find(b.produces.begin(), b.produces.end(), id) != b.produces.end();
}

// A plan node must list the artifact among the ones it produces; a binding outside a plan (mf-run
// tool) has no node to check.
std::optional<ToolResult> refuse_unproduced(const Invocation& call, const std::string& id) {
  const Binding& b = call.binding;
  if (b.node_id.empty() || produces(b, id)) return std::nullopt;
  return failure("Node " + b.node_id + " does not produce artifact " + id +
                 (b.produces.empty() ? std::string(" (it produces none)")
                                     : " (it produces " + join(b.produces) + ")"));
}

ToolResult store_artifact(const Invocation& call, const std::string& id, const std::string& content,
                          const std::string& note = {}) {
  if (auto failed = write_artifact_file(call, id, content)) return with_status(std::move(*failed));
  std::string summary =
      "Wrote artifact " + id + " (" + std::to_string(content.size()) + " bytes)" + note;
  return success(summary, summary, {{"artifact_id", id}, {"bytes", std::uint64_t(content.size())}});
}

// Writes argument `field` as artifact `id`.
ToolResult write_named_artifact(const Invocation& call, const std::string& id,
                                std::string_view field) {
  if (auto refused = refuse_unproduced(call, id)) return *refused;
  return store_artifact(call, id, call.args.find(field)->as_string());
}

// A fixed artifact, at most kDefaultReadBytes of it (cut on a UTF-8 boundary); the digest is of
// all of it.
ToolResult read_fixed_artifact(const Invocation& call, const std::string& id) {
  std::string bytes;
  if (auto failed = read_artifact_file(call, id, bytes)) return with_status(std::move(*failed));
  std::string digest = hash::sha256_hex(bytes);
  const std::size_t size = bytes.size();
  const bool truncated = size > kDefaultReadBytes;
  if (truncated) bytes.resize(text::utf8_floor(bytes, kDefaultReadBytes));
  std::string content = as_text(std::move(bytes));
  std::string summary =
      "Read artifact " + id + " (" + plural(size, "byte", "bytes") +
      (truncated ? ", cut at " + std::to_string(kDefaultReadBytes) : std::string()) + ")";
  std::string text = content;
  if (truncated) {
    text += "\n\n[Showing the first " + std::to_string(kDefaultReadBytes) + " bytes of " +
            std::to_string(size) + "; read_artifact reads all of it]";
  }
  return success(std::move(text), std::move(summary),
                 {{"artifact_id", id},
                  {"content", std::move(content)},
                  {"content_sha256", std::move(digest)},
                  {"truncated", truncated}});
}

}  // namespace

ToolResult run_read_plan(const Invocation& call) {
  return read_fixed_artifact(call, "plan");
}

ToolResult run_read_patch_summary(const Invocation& call) {
  return read_fixed_artifact(call, "patch_summary");
}

ToolResult run_read_test_results(const Invocation& call) {
  return read_fixed_artifact(call, "test_results");
}

ToolResult run_read_workspace_diff_artifact(const Invocation& call) {
  return read_fixed_artifact(call, "workspace_diff");
}

ToolResult run_read_checker_verdict(const Invocation& call) {
  return read_fixed_artifact(call, "checker_verdict");
}

// The whole workspace's diff, bounded as read_workspace_diff's default; a cut says so at its end.
ToolResult run_write_workspace_diff(const Invocation& call) {
  const std::string id = "workspace_diff";
  if (auto refused = refuse_unproduced(call, id)) return *refused;
  if (call.artifact_dir.empty()) return failure("No artifact directory is configured for this run");
  std::string diff;
  bool truncated = false;
  std::size_t total = 0;
  if (auto failed = workspace_diff(call, {}, kDefaultReadBytes, diff, truncated, total)) {
    return *failed;
  }
  if (truncated) {
    diff += "\n[The diff was cut at " + std::to_string(kDefaultReadBytes) + " of its " +
            std::to_string(total) + " bytes]\n";
  }
  return store_artifact(
      call, id, diff,
      truncated ? "; the diff was cut at " + std::to_string(kDefaultReadBytes) + " bytes"
                : std::string());
}

ToolResult run_write_checker_verdict(const Invocation& call) {
  return write_named_artifact(call, "checker_verdict", "verdict");
}

ToolResult run_write_arbiter_verdict(const Invocation& call) {
  return write_named_artifact(call, "arbiter_verdict", "verdict");
}

ToolResult run_write_plan(const Invocation& call) {
  return write_named_artifact(call, "plan", "plan");
}

ToolResult run_write_patch_summary(const Invocation& call) {
  return write_named_artifact(call, "patch_summary", "summary");
}

ToolResult run_write_test_results(const Invocation& call) {
  return write_named_artifact(call, "test_results", "results");
}

// The verdict goes to the artifact the call names, else to the node's one produced artifact.
ToolResult run_write_verdict(const Invocation& call) {
  const Binding& b = call.binding;
  if (const Value* named = call.args.find("artifact_id"); named != nullptr) {
    return write_named_artifact(call, named->as_string(), "verdict");
  }
  if (b.produces.size() != 1) {
    return failure(b.produces.empty()
                       ? std::string("Name the verdict's artifact_id: this step produces none")
                       : "Name the verdict's artifact_id: node " + b.node_id + " produces " +
                             join(b.produces));
  }
  return write_named_artifact(call, b.produces.front(), "verdict");
}

// --- terminal -----------------------------------------------------------------------------------

namespace {

// The recorder decides the terminal result; this adds the check that every artifact the intent
// names exists, the status the output schema asks for and the tool's own members (`more`).
ToolResult terminal_intent(const Invocation& call, json::Object more) {
  json::Array refs;
  if (const Value* named = call.args.find("artifact_refs"); named != nullptr) {
    std::shared_ptr<const Workspace> dir;
    for (const Value& r : named->as_array()) {
      const std::string& id = r.as_string();
      if (!valid_artifact_id(id)) {
        return failure("Invalid artifact id \"" + id + "\": use lowercase letters, digits and _");
      }
      if (call.artifact_dir.empty()) {
        return failure("No artifact directory is configured for this run");
      }
      if (!dir) {
        auto opened = Workspace::open(call.artifact_dir);
        if (!opened) return failure("The artifact directory cannot be opened");
        dir = std::move(*opened);
      }
      Fd fd(dir->open_at(id, O_PATH));
      struct stat st {};
      if (fd.get() < 0 || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
        return failure("The intent names artifact " + id + ", which does not exist");
      }
      refs.push_back(id);
    }
  }
  ToolResult result = record_terminal(call);
  if (result.is_error) {
    result.details = json::Object{{"status", "soft_failure"}, {"summary", result.text}};
    return result;
  }
  result.details.set("status", "success");
  if (call.args.find("artifact_refs") != nullptr) result.details.set("artifact_refs", refs);
  for (auto& m : more) result.details.set(m.key, std::move(m.value));
  return result;
}

}  // namespace

ToolResult run_submit_terminal(const Invocation& call) {
  return terminal_intent(call, {});
}

ToolResult run_reject_terminal(const Invocation& call) {
  return terminal_intent(call, {});
}

ToolResult run_escalate_terminal(const Invocation& call) {
  return terminal_intent(call, {{"blocker", *call.args.find("blocker")}});
}

}  // namespace mf::tools
