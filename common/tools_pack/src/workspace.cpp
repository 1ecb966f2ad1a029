// The workspace every pack tool is confined to (pack.hpp): opening its root, resolving a user's
// path the way Pi does, and opening beneath it.
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include "mf/diag/codes.hpp"
#include "mf/fs/beneath.hpp"
#include "mf/json/canonical.hpp"
#include "mf/tools/pack.hpp"

namespace mf::tools {
namespace {

// Pi maps these to a plain space before resolving (macOS screenshots name files with U+202F).
constexpr std::string_view kUnicodeSpaces[] = {"\u00A0", "\u2000", "\u2001", "\u2002", "\u2003",
                                               "\u2004", "\u2005", "\u2006", "\u2007", "\u2008",
                                               "\u2009", "\u200A", "\u202F", "\u205F", "\u3000"};

void replace_all(std::string& s, std::string_view from, std::string_view to) {
  for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) {
    s.replace(at, from.size(), to);
  }
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

json::Value to_json(const ToolResult& r) {
  return json::Object{
      {"is_error", r.is_error},
      {"content", json::Array{json::Object{{"type", "text"}, {"text", r.text}}}},
      {"details", r.details},
  };
}

Result<std::shared_ptr<const Workspace>> Workspace::open(const std::string& root) {
  char canonical[PATH_MAX];
  if (::realpath(root.c_str(), canonical) == nullptr) {
    return diag::error(diag::codes::kBadRoot, "workspace " + root + " cannot be resolved");
  }
  const int fd = ::open(canonical, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    return diag::error(diag::codes::kBadRoot, "workspace " + root + " is not a directory");
  }
  return std::shared_ptr<const Workspace>(new Workspace(fd, canonical));
}

Workspace::~Workspace() {
  ::close(fd_);
}

Result<std::string> Workspace::resolve(std::string_view user_path) const {
  std::string p(user_path);
  for (auto space : kUnicodeSpaces) replace_all(p, space, " ");
  if (!p.empty() && p[0] == '@') p.erase(0, 1);
  if (p.rfind("file://", 0) == 0) {
    std::string decoded;
    for (std::size_t i = 7; i < p.size(); ++i) {
      if (p[i] == '%' && i + 2 < p.size() && hex_value(p[i + 1]) >= 0 && hex_value(p[i + 2]) >= 0) {
        decoded.push_back(static_cast<char>(hex_value(p[i + 1]) * 16 + hex_value(p[i + 2])));
        i += 2;
      } else {
        decoded.push_back(p[i]);
      }
    }
    p = decoded;
  }
  auto escapes = [&] {
    return diag::error(diag::codes::kPathEscapes,
                       "Path escapes the workspace: " + std::string(user_path));
  };
  // "~" and "~/x" name the home directory, which is outside the workspace ("~x" is a file name).
  if (p == "~" || p.rfind("~/", 0) == 0) return escapes();
  if (!p.empty() && p[0] == '/') {
    if (p == root_) return std::string();
    if (p.rfind(root_ + "/", 0) != 0) return escapes();
    p = p.substr(root_.size() + 1);
  }
  if (p.empty() || p == ".") return std::string();
  auto normalized = fs::normalize_relative(p);
  if (!normalized) {
    const auto& d = normalized.diagnostics().front();
    if (d.code == diag::codes::kPathEscapes) return escapes();
    return diag::error(d.code, "Invalid path: " + std::string(user_path));
  }
  return normalized;
}

int Workspace::open_at(std::string_view relative, int flags, int mode) const {
  if (relative.empty()) return ::openat(fd_, ".", flags | O_CLOEXEC, mode);
  if ((flags & O_CREAT) != 0) {
    // openat2 cannot create through RESOLVE_BENEATH's parent check alone; open the parent beneath
    // the root, then create the last component in it without following a link there.
    const auto slash = relative.rfind('/');
    const std::string parent(slash == std::string_view::npos ? "" : relative.substr(0, slash));
    const std::string name(slash == std::string_view::npos ? relative : relative.substr(slash + 1));
    const int dir =
        parent.empty() ? ::dup(fd_) : fs::open_beneath(fd_, parent, O_RDONLY | O_DIRECTORY);
    if (dir < 0) return parent.empty() ? -errno : dir;
    const int fd = ::openat(dir, name.c_str(), flags | O_NOFOLLOW | O_CLOEXEC, mode);
    const int err = errno;
    ::close(dir);
    return fd < 0 ? -err : fd;
  }
  return fs::open_beneath(fd_, relative, flags | O_CLOEXEC);
}

int Workspace::make_directories(std::string_view relative) const {
  int made_count = 0;
  std::size_t start = 0;
  while (start < relative.size()) {
    std::size_t slash = relative.find('/', start);
    if (slash == std::string_view::npos) slash = relative.size();
    const std::string prefix(relative.substr(0, slash));
    const int dir = fs::open_beneath(fd_, prefix, O_RDONLY | O_DIRECTORY);
    if (dir >= 0) {
      ::close(dir);
    } else if (dir == -ENOENT) {
      const auto parent_end = prefix.rfind('/');
      const std::string parent =
          parent_end == std::string::npos ? "" : prefix.substr(0, parent_end);
      const std::string name =
          parent_end == std::string::npos ? prefix : prefix.substr(parent_end + 1);
      const int pfd =
          parent.empty() ? ::dup(fd_) : fs::open_beneath(fd_, parent, O_RDONLY | O_DIRECTORY);
      if (pfd < 0) return pfd;
      const int made = ::mkdirat(pfd, name.c_str(), 0777);
      const int err = errno;
      ::close(pfd);
      if (made != 0 && err != EEXIST) return -err;
      if (made == 0) ++made_count;
    } else {
      return dir;
    }
    start = slash + 1;
  }
  return made_count;
}

std::string Workspace::absolute(std::string_view relative) const {
  return relative.empty() ? root_ : root_ + "/" + std::string(relative);
}

}  // namespace mf::tools
