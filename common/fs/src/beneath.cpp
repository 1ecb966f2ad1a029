// Opening a path beneath a directory descriptor (beneath.hpp): openat2 RESOLVE_BENEATH where the
// kernel has it, else a component walk that resolves each link itself and never leaves the root.
#include "mf/fs/beneath.hpp"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "mf/diag/codes.hpp"
#include "mf/io/file.hpp"
#include "mf/text/utf8.hpp"

namespace mf::fs {
using io::Fd;

namespace {

namespace codes = diag::codes;

constexpr int kMaxLinks = 40;                    // symlinks expanded by the walk, as the kernel's
constexpr std::size_t kMaxPathBytes = PATH_MAX;  // relative paths and symlink targets

std::string quoted(std::string_view s) {
  return "'" + std::string(s) + "'";
}

}  // namespace

int openat_retry(int dirfd, const char* name, int flags) {
  int fd;
  do {
    fd = ::openat(dirfd, name, flags | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  return fd;
}

namespace {

// Splits on '/', dropping empty components (leading, doubled and trailing slashes).
void split_components(std::string_view path, std::deque<std::string>& out, bool front) {
  std::vector<std::string> parts;
  while (!path.empty()) {
    auto slash = path.find('/');
    auto part = path.substr(0, slash);
    if (!part.empty()) parts.emplace_back(part);
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash + 1);
  }
  if (front) {
    out.insert(out.begin(), parts.begin(), parts.end());
  } else {
    out.insert(out.end(), parts.begin(), parts.end());
  }
}

std::atomic<bool> g_openat2_missing{false};

int open_beneath_openat2(int root_fd, std::string_view relative, int flags) {
  open_how how{};
  how.flags = static_cast<std::uint64_t>(flags | O_CLOEXEC);
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
  const std::string path = relative.empty() ? std::string(".") : std::string(relative);
  for (int attempt = 0;; ++attempt) {
    long fd = ::syscall(SYS_openat2, root_fd, path.c_str(), &how, sizeof how);
    if (fd >= 0) return static_cast<int>(fd);
    const int err = errno;
    if (err == EINTR) continue;
    // The kernel asks for a retry when a concurrent rename or mount races a ".." step.
    if (err == EAGAIN && attempt < 16) continue;
    if (err == ENOSYS) g_openat2_missing.store(true, std::memory_order_relaxed);
    return -err;
  }
}

// The target of the link `name` in `dirfd`, or -errno.
int read_link(int dirfd, const std::string& name, std::string& target) {
  target.assign(kMaxPathBytes + 1, '\0');
  ssize_t n = ::readlinkat(dirfd, name.c_str(), target.data(), target.size());
  if (n < 0) return -errno;
  if (static_cast<std::size_t>(n) > kMaxPathBytes) return -ENAMETOOLONG;
  target.resize(static_cast<std::size_t>(n));
  return 0;
}

}  // namespace

Result<std::string> normalize_relative(std::string_view path) {
  const std::string shown(path);
  if (path.empty()) return diag::error(codes::kPathNotRelative, "the path is empty", "/path");
  if (path.size() > kMaxPathBytes) {
    return diag::error(codes::kPathNotRelative,
                       "the path is over " + std::to_string(kMaxPathBytes) + " bytes", "/path");
  }
  if (path.find('\0') != std::string_view::npos) {
    return diag::error(codes::kPathNotRelative, "the path contains a NUL byte", "/path");
  }
  if (!text::valid_utf8(path)) {
    return diag::error(codes::kPathNotRelative, "the path is not valid UTF-8", "/path");
  }
  if (path.front() == '/') {
    return diag::error(codes::kPathNotRelative,
                       quoted(shown) + " is absolute; give a path relative to the root", "/path");
  }
  std::deque<std::string> parts;
  split_components(path, parts, false);
  std::vector<std::string> kept;
  for (auto& part : parts) {
    if (part == ".") continue;
    if (part == "..") {
      if (kept.empty()) {
        return diag::error(codes::kPathEscapes, quoted(shown) + " climbs above the root", "/path");
      }
      kept.pop_back();
      continue;
    }
    kept.push_back(std::move(part));
  }
  std::string out;
  for (const auto& part : kept) {
    if (!out.empty()) out.push_back('/');
    out += part;
  }
  return out;
}

int open_beneath_walk(int root_fd, std::string_view relative, int flags) {
  std::deque<std::string> todo;
  split_components(relative, todo, false);
  std::vector<Fd> walked;  // directories entered below the root; ".." pops one
  auto top = [&] { return walked.empty() ? root_fd : walked.back().get(); };
  auto finish_here = [&] {
    const int fd = openat_retry(top(), ".", flags);
    return fd >= 0 ? fd : -errno;
  };
  if (todo.empty()) return finish_here();
  int links = 0;
  while (!todo.empty()) {
    std::string name = std::move(todo.front());
    todo.pop_front();
    const bool last = todo.empty();
    if (name == ".") {
      if (last) return finish_here();
      continue;
    }
    if (name == "..") {
      if (walked.empty()) return -EXDEV;
      walked.pop_back();
      if (last) return finish_here();
      continue;
    }
    // Never let the kernel follow a link: O_NOFOLLOW on every step, links expanded below.
    const int step_flags = last ? flags | O_NOFOLLOW : O_PATH | O_DIRECTORY | O_NOFOLLOW;
    int fd = openat_retry(top(), name.c_str(), step_flags);
    bool is_link = false;
    if (fd >= 0) {
      struct stat st {};
      if ((step_flags & O_PATH) != 0 && ::fstat(fd, &st) == 0 && S_ISLNK(st.st_mode)) {
        ::close(fd);  // O_PATH|O_NOFOLLOW opens the link itself
        is_link = true;
      }
    } else {
      const int err = errno;
      struct stat st {};
      if ((err == ELOOP || err == ENOTDIR || err == EMLINK) &&
          ::fstatat(top(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) {
        is_link = true;
      } else {
        return -err;
      }
    }
    if (!is_link) {
      if (last) return fd;
      walked.emplace_back(fd);
      continue;
    }
    if (++links > kMaxLinks) return -ELOOP;
    std::string target;
    if (int err = read_link(top(), name, target); err != 0) return err;
    if (target.empty()) return -ENOENT;
    if (target[0] == '/') return -EXDEV;  // as RESOLVE_BENEATH: absolute links never resolve
    split_components(target, todo, true);
    if (todo.empty()) return finish_here();
  }
  return finish_here();
}

int open_beneath(int root_fd, std::string_view relative, int flags, Resolver resolver) {
  if (resolver == Resolver::Walk) return open_beneath_walk(root_fd, relative, flags);
  if (resolver == Resolver::Auto && g_openat2_missing.load(std::memory_order_relaxed)) {
    return open_beneath_walk(root_fd, relative, flags);
  }
  const int fd = open_beneath_openat2(root_fd, relative, flags);
  if (fd == -ENOSYS && resolver == Resolver::Auto) {
    return open_beneath_walk(root_fd, relative, flags);
  }
  return fd;
}

}  // namespace mf::fs
