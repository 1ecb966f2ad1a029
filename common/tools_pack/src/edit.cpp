// Pi's edit tool: exact (then fuzzy) text replacement with all-or-nothing semantics, a numbered
// display diff and a unified patch computed by a port of jsdiff's line diff (jsdiff.cpp), the
// fuzzy match in fuzzy_match.cpp and the per-file lock in file_lock.cpp. The pipeline mirrors
// Pi's edit-diff.ts step for step, because the model has learned its messages and its results.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "edit_core.hpp"
#include "fuzzy_match.hpp"
#include "jsdiff.hpp"
#include "mf/diag/codes.hpp"
#include "mf/io/file.hpp"
#include "mf/json/reader.hpp"
#include "mf/text/utf8.hpp"
#include "mf/tools/pack.hpp"

namespace mf::tools {
using fuzzy::count_occurrences;
using fuzzy::Found;
using fuzzy::fuzzy_find;
using fuzzy::FuzzyCache;
using io::Fd;

namespace {

diag::Diagnostic refuse(std::string message) {
  return diag::error(diag::codes::kBadSearch, std::move(message));
}
// A refusal because what the call names does not exist (the file, the old text): a resolution
// error, which the guarded loop does not count against the tool-error budget.
diag::Diagnostic not_found(std::string message) {
  return diag::error(diag::codes::kNotFound, std::move(message));
}

constexpr std::string_view kBom = "\xEF\xBB\xBF";

// --- Line endings ---

// CRLF when the first "\n" of the text ends a "\r\n".
bool detect_crlf(std::string_view text) {
  const std::size_t lf = text.find('\n');
  return lf != std::string_view::npos && lf > 0 && text[lf - 1] == '\r';
}

std::string normalize_to_lf(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  std::size_t start = 0;
  for (std::size_t cr = text.find('\r'); cr != std::string_view::npos;
       cr = text.find('\r', start)) {
    out.append(text.substr(start, cr - start));
    out.push_back('\n');  // a lone CR ends a line too
    start = cr + 1;
    if (start < text.size() && text[start] == '\n') ++start;
  }
  out.append(text.substr(start));
  return out;
}

std::string restore_line_endings(std::string&& text, bool crlf) {
  if (!crlf) return std::move(text);
  std::string out;
  out.reserve(text.size() + text.size() / 16);
  for (char c : text) {
    if (c == '\n') out.push_back('\r');
    out.push_back(c);
  }
  return out;
}

// --- Applying matched edits ---

struct Matched {
  std::size_t edit_index;
  std::size_t index;
  std::size_t length;
  std::string_view new_text;
};

// Replacements applied to `content`, whose first byte is at `offset` of the text they were
// matched in. They are sorted and disjoint, so building forwards equals Pi's reverse splicing.
std::string apply_replacements(std::string_view content, const std::vector<Matched>& reps,
                               std::size_t offset = 0) {
  std::string out;
  out.reserve(content.size());
  std::size_t at = 0;
  for (const Matched& r : reps) {
    const std::size_t start = std::min(content.size(), std::max(at, r.index - offset));
    out.append(content.substr(at, start - at));
    out.append(r.new_text);
    at = std::min(content.size(), start + r.length);
  }
  out.append(content.substr(at));
  return out;
}

struct Span {
  std::size_t start;
  std::size_t end;
};

// `content.match(/[^\n]*\n|[^\n]+/g)`: lines with their "\n", no empty last piece.
std::vector<Span> line_spans(std::string_view text) {
  std::vector<Span> spans;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t nl = text.find('\n', start);
    const std::size_t end = nl == std::string_view::npos ? text.size() : nl + 1;
    spans.push_back({start, end});
    start = end;
  }
  return spans;
}

// After a fuzzy match, only the lines an edit touches are taken from the normalized text; every
// other line keeps its original bytes (Pi 0.79.9).
Result<std::string> apply_preserving_unchanged_lines(std::string_view original,
                                                     std::string_view base,
                                                     const std::vector<Matched>& reps) {
  const auto original_lines = line_spans(original);
  const auto base_lines = line_spans(base);
  if (original_lines.size() != base_lines.size()) {
    return refuse(
        "Cannot preserve unchanged lines because the base content has a different line count.");
  }
  struct Group {
    std::size_t start_line;
    std::size_t end_line;
    std::vector<Matched> reps;
  };
  std::vector<Group> groups;
  for (const Matched& r : reps) {  // already sorted by index
    const auto containing =
        std::upper_bound(base_lines.begin(), base_lines.end(), r.index,
                         [](std::size_t index, const Span& span) { return index < span.end; });
    if (containing == base_lines.end() || r.index < containing->start) {
      return refuse("Replacement range is outside the base content.");
    }
    const auto start_line = static_cast<std::size_t>(containing - base_lines.begin());
    std::size_t end_line = start_line;
    const std::size_t end = r.index + r.length;
    while (end_line < base_lines.size() && base_lines[end_line].end < end) ++end_line;
    if (end_line >= base_lines.size()) {
      return refuse("Replacement range is outside the base content.");
    }
    if (!groups.empty() && start_line < groups.back().end_line) {
      groups.back().end_line = std::max(groups.back().end_line, end_line + 1);
      groups.back().reps.push_back(r);
      continue;
    }
    groups.push_back({start_line, end_line + 1, {r}});
  }
  std::string out;
  out.reserve(original.size());
  std::size_t next_line = 0;
  for (const Group& g : groups) {
    if (g.start_line > next_line) {
      out.append(
          original.substr(original_lines[next_line].start,
                          original_lines[g.start_line].start - original_lines[next_line].start));
    }
    const std::size_t from = base_lines[g.start_line].start;
    const std::size_t to = base_lines[g.end_line - 1].end;
    out += apply_replacements(base.substr(from, to - from), g.reps, from);
    next_line = g.end_line;
  }
  if (next_line < original_lines.size()) {
    out.append(original.substr(original_lines[next_line].start));
  }
  return out;
}

struct Applied {
  std::string base;
  std::string content;
};

// Pi's applyEditsToNormalizedContent over LF-only text.
Result<Applied> apply_to_normalized(std::string normalized, const std::vector<Edit>& edits,
                                    std::string_view path) {
  const std::size_t n = edits.size();
  const std::string p(path);
  std::vector<Edit> lf;
  lf.reserve(n);
  for (const Edit& e : edits)
    lf.push_back({normalize_to_lf(e.old_text), normalize_to_lf(e.new_text)});
  for (std::size_t i = 0; i < n; ++i) {
    if (lf[i].old_text.empty()) {
      return refuse(n == 1 ? "oldText must not be empty in " + p + "."
                           : "edits[" + std::to_string(i) + "].oldText must not be empty in " + p +
                                 ".");
    }
  }
  std::vector<std::string> fuzzy_old;
  fuzzy_old.reserve(n);
  for (const Edit& e : lf) fuzzy_old.push_back(normalize_for_fuzzy_match(e.old_text));

  FuzzyCache fuzzy_content(normalized);
  bool used_fuzzy = false;
  for (std::size_t i = 0; i < n && !used_fuzzy; ++i) {
    used_fuzzy = fuzzy_find(normalized, fuzzy_content, lf[i].old_text, fuzzy_old[i]).fuzzy;
  }
  // Every edit is matched in one space: the fuzzy one as soon as any edit needed it.
  const std::string_view base = used_fuzzy ? std::string_view(fuzzy_content.get()) : normalized;
  FuzzyCache fuzzy_of_fuzzy(base);
  FuzzyCache& fuzzy_base = used_fuzzy ? fuzzy_of_fuzzy : fuzzy_content;

  std::vector<Matched> matched;
  for (std::size_t i = 0; i < n; ++i) {
    const Found f = fuzzy_find(base, fuzzy_base, lf[i].old_text, fuzzy_old[i]);
    if (!f.found) {
      return not_found((n == 1 ? "Could not find the exact text in " + p + "."
                               : "Could not find edits[" + std::to_string(i) + "] in " + p + ".") +
                       (n == 1 ? " The old text must match exactly including all whitespace and "
                                 "newlines."
                               : " The oldText must match exactly including all whitespace and "
                                 "newlines."));
    }
    const long long occurrences = count_occurrences(fuzzy_base.get(), fuzzy_old[i]);
    if (occurrences > 1) {
      const std::string count = std::to_string(occurrences);
      return refuse(n == 1 ? "Found " + count + " occurrences of the text in " + p +
                                 ". The text must be unique. Please provide more context to make "
                                 "it unique."
                           : "Found " + count + " occurrences of edits[" + std::to_string(i) +
                                 "] in " + p +
                                 ". Each oldText must be unique. Please provide more context to "
                                 "make it unique.");
    }
    matched.push_back({i, f.index, f.length, lf[i].new_text});
  }
  std::stable_sort(matched.begin(), matched.end(),
                   [](const Matched& a, const Matched& b) { return a.index < b.index; });
  for (std::size_t i = 1; i < matched.size(); ++i) {
    const Matched& previous = matched[i - 1];
    const Matched& current = matched[i];
    if (previous.index + previous.length > current.index) {
      return refuse("edits[" + std::to_string(previous.edit_index) + "] and edits[" +
                    std::to_string(current.edit_index) + "] overlap in " + p +
                    ". Merge them into one edit or target disjoint regions.");
    }
  }
  std::string content;
  if (used_fuzzy) {
    auto preserved = apply_preserving_unchanged_lines(normalized, base, matched);
    if (!preserved) return preserved.take_diagnostics();
    content = std::move(*preserved);
  } else {
    content = apply_replacements(base, matched);
  }
  if (content == normalized) {
    return refuse(n == 1 ? "No changes made to " + p +
                               ". The replacement produced identical content. This might indicate "
                               "an issue with special characters or the text not existing as "
                               "expected."
                         : "No changes made to " + p +
                               ". The replacements produced identical content.");
  }
  return Applied{std::move(normalized), std::move(content)};
}

std::string could_not_edit(std::string_view path, int err) {
  const char* name = ::strerrorname_np(err);
  return "Could not edit file: " + std::string(path) +
         ". Error code: " + std::string(name != nullptr ? name : "EUNKNOWN") + ".";
}

}  // namespace

Result<EditOutcome> apply_edits(std::string_view original, const std::vector<Edit>& edits,
                                std::string_view display_path) {
  // The model never sees the BOM, so it is set aside before matching and put back after.
  const bool bom = original.substr(0, kBom.size()) == kBom;
  const std::string_view text = bom ? original.substr(kBom.size()) : original;
  const bool crlf = detect_crlf(text);
  auto applied = apply_to_normalized(normalize_to_lf(text), edits, display_path);
  if (!applied) return applied.take_diagnostics();
  EditOutcome outcome;
  {
    // One line diff serves both the display diff and the patch.
    const jsdiff::LineDiff diff = jsdiff::diff_lines(applied->base, applied->content);
    auto display = jsdiff::display_diff(diff, 4);
    outcome.diff = std::move(display.diff);
    outcome.first_changed_line = display.first_changed_line;
    outcome.patch = jsdiff::unified_patch(display_path, diff, 4);
  }
  outcome.content = restore_line_endings(std::move(applied->content), crlf);
  if (bom) outcome.content.insert(0, kBom);
  return outcome;
}

json::Value prepare_edit_arguments(const json::Value& args) {
  if (!args.is_object()) return args;
  json::Value out = args;
  // Some models send `edits` as a JSON string; it counts only when it holds an array.
  if (json::Value* edits = out.find("edits"); edits != nullptr && edits->is_string()) {
    auto parsed = json::parse(edits->as_string());
    if (parsed && parsed->is_array()) *edits = std::move(*parsed);
  }
  const json::Value* old_text = out.find("oldText");
  const json::Value* new_text = out.find("newText");
  if (old_text == nullptr || new_text == nullptr || !old_text->is_string() ||
      !new_text->is_string()) {
    return out;
  }
  // The single-edit form of older releases becomes the last entry of `edits`; `edits` keeps its
  // place among the members, or comes last when it was absent.
  json::Array edits;
  if (const json::Value* existing = out.find("edits");
      existing != nullptr && existing->is_array()) {
    edits = existing->as_array();
  }
  edits.push_back(json::Object{{"oldText", *old_text}, {"newText", *new_text}});
  json::Object rebuilt;
  bool placed = false;
  for (const json::Member& m : out.as_object()) {
    if (m.key == "oldText" || m.key == "newText") continue;
    if (m.key == "edits") {
      if (!placed) rebuilt.push_back({"edits", edits});
      placed = true;
      continue;
    }
    rebuilt.push_back(m);
  }
  if (!placed) rebuilt.push_back({"edits", std::move(edits)});
  return rebuilt;
}

namespace {

struct EditRequest {
  std::string path;
  std::vector<Edit> edits;
};

// The path and the edits, checked again here (as Pi does) though the schema has seen them.
Result<EditRequest> read_request(const json::Value& args, const CallContext& ctx) {
  constexpr std::string_view kInvalid =
      "Edit tool input is invalid. edits must contain at least one replacement.";
  const json::Value* path_value = args.find("path");
  if (path_value == nullptr || !path_value->is_string() || !ctx.workspace) {
    return refuse("edit needs a string path");
  }
  EditRequest request{path_value->as_string(), {}};
  const json::Value* edits_value = args.find("edits");
  if (edits_value == nullptr || !edits_value->is_array() || edits_value->as_array().empty()) {
    return refuse(std::string(kInvalid));
  }
  for (const json::Value& e : edits_value->as_array()) {
    const json::Value* o = e.find("oldText");
    const json::Value* n = e.find("newText");
    if (o == nullptr || n == nullptr || !o->is_string() || !n->is_string()) {
      return refuse(std::string(kInvalid));
    }
    request.edits.push_back({o->as_string(), n->as_string()});
  }
  return request;
}

// The file opened for reading and writing, once it is known to be a regular file within the size
// limit. The type is checked first, through O_PATH, so a FIFO or device is never opened for
// reading.
Result<Fd> open_for_edit(const Workspace& ws, const std::string& relative,
                         const std::string& path) {
  Fd probe(ws.open_at(relative, O_PATH));
  if (probe.get() == -EXDEV) return refuse(escape_message(path));
  if (probe.get() == -ENOENT) return not_found(could_not_edit(path, ENOENT));
  if (probe.get() < 0) return refuse(could_not_edit(path, -probe.get()));
  struct stat st {};
  if (::fstat(probe.get(), &st) != 0) return refuse(could_not_edit(path, errno));
  if (S_ISDIR(st.st_mode)) return refuse(node_error(EISDIR, "read"));
  if (names_directory(path)) return refuse(could_not_edit(path, ENOTDIR));
  if (!S_ISREG(st.st_mode)) return refuse("Not a regular file: " + path);
  if (static_cast<std::uint64_t>(st.st_size) > kMaxToolFileBytes) {
    return refuse(too_large_message("edit", path, std::to_string(st.st_size)));
  }
  // Read and write through one descriptor: what is written back replaces exactly what was read.
  Fd fd(ws.open_at(relative, O_RDWR | O_NONBLOCK | O_NOCTTY));
  if (fd.get() == -EXDEV) return refuse(escape_message(path));
  if (fd.get() < 0) return refuse(could_not_edit(path, -fd.get()));
  struct stat again {};
  if (::fstat(fd.get(), &again) != 0 || !S_ISREG(again.st_mode)) {
    return refuse("Not a regular file: " + path);
  }
  return fd;
}

// The whole file as text (invalid UTF-8 decoded lossily), refused above the size limit.
Result<std::string> read_for_edit(int fd, const std::string& path) {
  std::string bytes;
  if (const int err = io::read_all(fd, bytes, kMaxToolFileBytes); err != 0) {
    return refuse(node_error(-err, "read"));
  }
  if (bytes.size() > kMaxToolFileBytes) return refuse(too_large_message("edit", path, "more than"));
  if (text::valid_utf8(bytes)) return bytes;
  return text::decode_utf8_lossy(bytes);
}

ToolResult edited(const EditRequest& request, const EditOutcome& outcome) {
  json::Object details{{"diff", outcome.diff}, {"patch", outcome.patch}};
  if (outcome.first_changed_line) {
    details.push_back(
        {"firstChangedLine", static_cast<std::uint64_t>(*outcome.first_changed_line)});
  }
  return {false,
          "Successfully replaced " + std::to_string(request.edits.size()) + " block(s) in " +
              request.path + ".",
          std::move(details)};
}

// Every refusal comes before the file is written: it is left as it was.
ToolResult refused(const diag::Diagnostics& ds) {
  ToolResult r = ToolResult::refusal(ds.front().message);
  r.soft = ds.front().code == diag::codes::kNotFound;
  return r;
}

}  // namespace

ToolResult run_edit(const json::Value& args, const CallContext& ctx) {
  const ToolResult aborted = ToolResult::refusal(std::string(kAborted));
  if (ctx.cancelled()) return aborted;
  Result<EditRequest> request = read_request(args, ctx);
  if (!request) return refused(request.diagnostics());
  const std::string& path = request->path;
  auto resolved = ctx.workspace->resolve(path);
  if (!resolved) return refused(resolved.diagnostics());
  const Workspace& ws = *ctx.workspace;
  const std::string& relative = *resolved;
  FileLock lock(file_lock_key(ws, relative));
  if (ctx.cancelled()) return aborted;

  Result<Fd> fd = open_for_edit(ws, relative, path);
  if (!fd) return refused(fd.diagnostics());
  Result<std::string> text = read_for_edit(fd->get(), path);
  if (!text) return refused(text.diagnostics());
  if (ctx.cancelled()) return aborted;
  auto outcome = apply_edits(*text, request->edits, path);
  if (!outcome) return refused(outcome.diagnostics());
  if (ctx.cancelled()) return aborted;
  if (auto error = store_content(ws, fd->get(), outcome->content, ctx.deferred_sync)) {
    return ToolResult::error(*error);
  }
  if (ctx.cancelled()) return ToolResult::error(std::string(kAborted));
  return edited(*request, *outcome);
}

}  // namespace mf::tools
