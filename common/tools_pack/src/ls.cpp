// Pi's ls tool over a confined workspace: the directory is read through Workspace::open_at, its
// names listed in Pi's order (collation.hpp), links followed only beneath the root.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string>
#include <vector>

#include "args.hpp"
#include "collation.hpp"
#include "file_tools.hpp"
#include "mf/io/file.hpp"
#include "mf/text/utf8.hpp"
#include "mf/tools/pack.hpp"

namespace mf::tools {
using io::Fd;

namespace {

constexpr double kDefaultLsLimit = 500;

std::string join_relative(const std::string& dir, const std::string& name) {
  return dir.empty() ? name : dir + "/" + name;
}

struct Listed {
  std::string raw;   // the bytes on disk, for fstatat
  std::string name;  // what the model sees (UTF-8, invalid bytes replaced)
  collation::SortKey key;
};

// The directory's entries in Pi's order, or the error text. Node's readdir hands entries over in
// strcmp order (libuv sorts scandir's result), and V8's sort is stable, so names the collation
// cannot tell apart keep that order.
std::optional<std::vector<Listed>> list_sorted(int dirfd, const std::string& absolute,
                                               std::string* error) {
  std::vector<Listed> entries;
  const int listing = ::dup(dirfd);
  DIR* dir = listing < 0 ? nullptr : ::fdopendir(listing);
  if (dir == nullptr) {
    const int err = errno;
    if (listing >= 0) ::close(listing);
    *error = "Cannot read directory: " + node_error(err, "scandir", absolute);
    return std::nullopt;
  }
  for (;;) {
    errno = 0;
    const dirent* e = ::readdir(dir);
    if (e == nullptr) {
      const int err = errno;
      ::closedir(dir);
      if (err == 0) break;
      *error = "Cannot read directory: " + node_error(err, "scandir", absolute);
      return std::nullopt;
    }
    const std::string_view raw = e->d_name;
    if (raw == "." || raw == "..") continue;
    Listed entry{std::string(raw), text::decode_utf8_lossy(raw), {}};
    entry.key = collation::sort_key(collation::lowercase(entry.name));
    entries.push_back(std::move(entry));
  }
  std::sort(entries.begin(), entries.end(),
            [](const Listed& a, const Listed& b) { return a.raw < b.raw; });
  std::stable_sort(entries.begin(), entries.end(), [](const Listed& a, const Listed& b) {
    return collation::key_less(a.key, b.key);
  });
  return entries;
}

// Whether the entry shows as a directory; nullopt when it is skipped. A link is followed only
// beneath the root: one that leads out is listed as a plain entry (its name is inside the
// workspace; its target's type is not the model's to learn), and one that dangles or loops is
// skipped, as Pi skips entries it cannot stat.
std::optional<bool> shows_as_directory(const Workspace& ws, int dirfd, const std::string& relative,
                                       const Listed& e) {
  struct stat es {};
  if (::fstatat(dirfd, e.raw.c_str(), &es, AT_SYMLINK_NOFOLLOW) != 0) return std::nullopt;
  if (!S_ISLNK(es.st_mode)) return S_ISDIR(es.st_mode);
  Fd target(ws.open_at(join_relative(relative, e.raw), O_PATH));
  if (target.get() == -EXDEV) return false;
  if (target.get() < 0) return std::nullopt;
  struct stat ts {};
  if (::fstat(target.get(), &ts) != 0) return std::nullopt;
  return S_ISDIR(ts.st_mode);
}

// The listing joined by "\n" and cut to the byte limit, with Pi's notices and details.
ToolResult listing(const std::vector<std::string>& results, bool limit_reached, double limit) {
  std::string raw_output;
  for (std::size_t i = 0; i < results.size(); ++i) {
    if (i > 0) raw_output.push_back('\n');
    raw_output += results[i];
  }
  Truncation t = truncate_head(raw_output, kMaxSafeInteger, kMaxBytes);
  ToolResult r{false, t.content, {}};
  std::vector<std::string> notices;
  json::Object details;
  if (limit_reached) {
    notices.push_back(js_number(limit) +
                      " entries limit reached. Use limit=" + js_number(limit * 2) + " for more");
    details.push_back({"entryLimitReached", limit});
  }
  if (t.truncated) {
    notices.push_back(format_size(kMaxBytes) + " limit reached");
    details.push_back({"truncation", to_json(t)});
  }
  if (!notices.empty()) {
    r.text += "\n\n[";
    for (std::size_t i = 0; i < notices.size(); ++i) {
      if (i > 0) r.text += ". ";
      r.text += notices[i];
    }
    r.text += "]";
  }
  if (!details.empty()) r.details = std::move(details);
  return r;
}

}  // namespace

ToolResult run_ls(const json::Value& args, const CallContext& ctx) {
  if (ctx.cancelled()) return ToolResult::error(std::string(kAborted));
  if (!ctx.workspace) return ToolResult::error("ls needs a workspace");
  const std::string* arg_path = string_arg(args, "path");
  const std::string path = arg_path == nullptr || arg_path->empty() ? "." : *arg_path;
  auto resolved = ctx.workspace->resolve(path);
  if (!resolved) return ToolResult::error(resolved.diagnostics().front().message);
  const Workspace& ws = *ctx.workspace;
  const std::string& relative = *resolved;
  const std::string absolute = ws.absolute(relative);
  const double limit = number_arg(args, "limit").value_or(kDefaultLsLimit);
  // Pi would list nothing and call a full directory empty.
  if (!(limit > 0))
    return ToolResult::error("limit must be a positive number, got " + js_number(limit));

  Fd probe(ws.open_at(relative, O_PATH));
  if (probe.get() == -EXDEV) return ToolResult::error(escape_message(path));
  if (probe.get() == -ENOENT) return ToolResult::not_found("Path not found: " + absolute);
  if (probe.get() < 0) return ToolResult::error("Path not found: " + absolute);
  struct stat st {};
  if (::fstat(probe.get(), &st) != 0) return ToolResult::error("Path not found: " + absolute);
  if (!S_ISDIR(st.st_mode)) return ToolResult::error("Not a directory: " + absolute);
  Fd dirfd(ws.open_at(relative, O_RDONLY | O_DIRECTORY));
  if (dirfd.get() < 0) {
    return ToolResult::error("Cannot read directory: " +
                             node_error(-dirfd.get(), "scandir", absolute));
  }
  std::string error;
  const auto entries = list_sorted(dirfd.get(), absolute, &error);
  if (!entries) return ToolResult::error(error);

  std::vector<std::string> results;
  bool limit_reached = false;
  for (std::size_t i = 0; i < entries->size(); ++i) {
    if (static_cast<double>(results.size()) >= limit) {
      limit_reached = true;
      break;
    }
    if ((i & 255) == 255 && ctx.cancelled()) return ToolResult::error(std::string(kAborted));
    const Listed& e = (*entries)[i];
    const std::optional<bool> directory = shows_as_directory(ws, dirfd.get(), relative, e);
    if (!directory) continue;
    results.push_back(*directory ? e.name + "/" : e.name);
  }
  if (results.empty()) return {false, "(empty directory)", {}};
  return listing(results, limit_reached, limit);
}

}  // namespace mf::tools
