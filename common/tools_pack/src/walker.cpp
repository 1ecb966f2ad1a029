// The walk: what ripgrep and fd would visit, applying the ignore files of every directory on the
// way (walk.hpp).
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "mf/io/file.hpp"
#include "mf/tools/pack.hpp"
#include "walk.hpp"

namespace mf::tools::walk {
namespace {

struct Item {
  std::string name;
  Type type;
};

// Byte order of the full paths: a directory's name sorts as if followed by '/'.
bool item_less(const Item& a, const Item& b) {
  const std::size_t n = std::min(a.name.size(), b.name.size());
  const int c = std::memcmp(a.name.data(), b.name.data(), n);
  if (c != 0) return c < 0;
  auto next = [n](const Item& i) -> int {
    if (i.name.size() > n) return static_cast<unsigned char>(i.name[n]);
    return i.type == Type::Dir ? '/' : -1;
  };
  return next(a) < next(b);
}

// One directory's ignore files, by the ignore crate's precedence: the tool's own file (.rgignore,
// .fdignore) over .ignore over .gitignore. Only .gitignore needs a repository.
struct Level {
  IgnoreFile custom;
  IgnoreFile plain;
  IgnoreFile git;
  bool has_git = false;
  std::size_t prefix_len = 0;  // bytes of a root-relative path naming this directory and its '/'

  bool any() const { return !custom.empty() || !plain.empty() || !git.empty(); }
};

// The levels that speak for entries of one directory, innermost first.
struct Active {
  std::size_t level;
  bool git;  // its .gitignore counts (a repository is in sight, and no nearer root is between)
};

constexpr std::size_t kMaxIgnoreFileBytes = 4u << 20;

std::string read_small(int dirfd, const char* name) {
  std::string out;
  const int fd = ::openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return out;
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    const std::size_t want =
        std::min<std::size_t>(static_cast<std::size_t>(st.st_size), kMaxIgnoreFileBytes);
    // What fstat saw, at most the cap: the bytes past it (a file over the cap, or grown since) are
    // cut, and a read error keeps what came before it.
    io::read_capped(fd, out, want, want);
    if (out.size() > want) out.resize(want);
  }
  ::close(fd);
  return out;
}

bool has_git_entry(int dirfd) {
  struct stat st {};
  return ::fstatat(dirfd, ".git", &st, AT_SYMLINK_NOFOLLOW) == 0 &&
         (S_ISDIR(st.st_mode) || S_ISREG(st.st_mode));
}

Type type_of(int dirfd, const char* name, unsigned char d_type) {
  switch (d_type) {
    case DT_REG:
      return Type::File;
    case DT_DIR:
      return Type::Dir;
    case DT_LNK:
      return Type::Symlink;
    case DT_UNKNOWN:
      break;
    default:
      return Type::Other;
  }
  struct stat st {};
  if (::fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) return Type::Other;
  if (S_ISREG(st.st_mode)) return Type::File;
  if (S_ISDIR(st.st_mode)) return Type::Dir;
  if (S_ISLNK(st.st_mode)) return Type::Symlink;
  return Type::Other;
}

class Walker {
 public:
  Walker(const Options& options, const std::function<Action(const Entry&)>& visit)
      : options_(options), visit_(visit) {}

  Outcome run(const Workspace& ws, std::string_view start, int start_fd) {
    // The start's ancestors inside the workspace contribute their .gitignore files (rg and fd
    // read parents too), each matched relative to its own directory.
    std::size_t end = 0;  // the ancestor at hand is start[0, end): "", then "a", "a/b", ...
    while (!start.empty()) {
      const std::string prefix(start.substr(0, end));
      const int fd = ws.open_at(prefix, O_RDONLY | O_DIRECTORY);
      if (fd >= 0) {
        Level level;
        level.has_git = has_git_entry(fd);
        level.git = IgnoreFile::parse(read_small(fd, ".gitignore"));
        level.plain = IgnoreFile::parse(read_small(fd, ".ignore"));
        if (!options_.custom_ignore.empty()) {
          level.custom = IgnoreFile::parse(read_small(fd, options_.custom_ignore.c_str()));
        }
        level.prefix_len = prefix.empty() ? 0 : prefix.size() + 1;
        levels_.push_back(std::move(level));
        ::close(fd);
      }
      const auto slash = start.find('/', end == 0 ? 0 : end + 1);
      if (slash == std::string_view::npos) break;
      end = slash;
    }
    path_ = std::string(start);
    start_len_ = start.empty() ? 0 : start.size() + 1;
    directory(start_fd, 1);
    return outcome_;
  }

 private:
  bool stopping() const { return outcome_.stopped || outcome_.entry_limit; }

  bool list(int fd, std::vector<Item>& items) {
    const int dup = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (dup < 0) return false;
    DIR* dir = ::fdopendir(dup);
    if (dir == nullptr) {
      ::close(dup);
      return false;
    }
    while (const dirent* d = ::readdir(dir)) {
      const char* name = d->d_name;
      if (name[0] == '.' && (name[1] == 0 || (name[1] == '.' && name[2] == 0))) continue;
      if (++entries_ > options_.max_entries) {
        outcome_.entry_limit = true;
        outcome_.entry_limit_visits = visits_;
        break;
      }
      items.push_back({name, type_of(fd, name, d->d_type)});
    }
    ::closedir(dir);
    std::sort(items.begin(), items.end(), item_less);
    return true;
  }

  Verdict overridden(std::string_view rel, bool is_dir) const {
    const IgnoreFile* o = options_.overrides;
    if (o == nullptr || o->empty()) return Verdict::None;
    // rg's --glob reads like a .gitignore turned inside out: a glob shows, a `!glob` hides.
    switch (o->match(rel, is_dir)) {
      case Verdict::Ignore:
        return Verdict::Whitelist;
      case Verdict::Whitelist:
        return Verdict::Ignore;
      case Verdict::None:
        break;
    }
    const bool any_positive = o->whitelist_count() < o->size();
    return any_positive && !is_dir ? Verdict::Ignore : Verdict::None;
  }

  bool ignored(const std::vector<Active>& active, std::string_view rel, bool is_dir) const {
    switch (overridden(rel, is_dir)) {
      case Verdict::Ignore:
        return true;
      case Verdict::Whitelist:
        return false;
      case Verdict::None:
        break;
    }
    if (!options_.ignore_files) return false;
    // Per kind of file the innermost one with an opinion decides; then the kinds in precedence.
    Verdict custom = Verdict::None;
    Verdict plain = Verdict::None;
    Verdict git = Verdict::None;
    for (const Active& a : active) {
      const Level& level = levels_[a.level];
      const std::string_view path = std::string_view(path_).substr(level.prefix_len);
      if (custom == Verdict::None && !level.custom.empty())
        custom = level.custom.match(path, is_dir);
      if (plain == Verdict::None && !level.plain.empty()) plain = level.plain.match(path, is_dir);
      if (a.git && git == Verdict::None && !level.git.empty()) git = level.git.match(path, is_dir);
    }
    const Verdict v = custom != Verdict::None ? custom : plain != Verdict::None ? plain : git;
    return v == Verdict::Ignore;
  }

  // Lists the directory open as `fd` (root-relative path in path_) whose entries lie at `depth`.
  void directory(int fd, std::size_t depth) {
    std::vector<Item> items;
    if (!list(fd, items)) return;
    Level level;
    level.prefix_len = path_.empty() ? 0 : path_.size() + 1;
    for (const auto& item : items) {
      if (item.name[0] != '.') continue;
      if (item.name == ".git" && (item.type == Type::Dir || item.type == Type::File)) {
        level.has_git = true;
      } else if (item.type != Type::File) {
        continue;
      } else if (item.name == ".gitignore") {
        level.git = IgnoreFile::parse(read_small(fd, ".gitignore"));
      } else if (item.name == ".ignore") {
        level.plain = IgnoreFile::parse(read_small(fd, ".ignore"));
      } else if (!options_.custom_ignore.empty() && item.name == options_.custom_ignore) {
        level.custom = IgnoreFile::parse(read_small(fd, item.name.c_str()));
      }
    }
    levels_.push_back(std::move(level));

    // The ignore crate's any_git and saw_git: .gitignore files count only with a repository in
    // sight (when required), and not beyond the nearest repository root.
    std::vector<Active> active;
    const bool any_git =
        !options_.require_git ||
        std::any_of(levels_.begin(), levels_.end(), [](const Level& l) { return l.has_git; });
    bool saw_git = false;
    for (std::size_t i = levels_.size(); i-- > 0;) {
      if (levels_[i].any()) active.push_back({i, any_git && !saw_git});
      saw_git = saw_git || (options_.require_git && levels_[i].has_git);
    }

    const std::size_t base = path_.size();
    for (const auto& item : items) {
      if (stopping()) break;
      if (item.type == Type::Dir && item.name == ".git") continue;  // git's own store, never
      path_.resize(base);
      if (!path_.empty()) path_.push_back('/');
      path_ += item.name;
      const std::string_view rel = std::string_view(path_).substr(start_len_);
      const bool is_dir = item.type == Type::Dir;
      if (ignored(active, rel, is_dir)) continue;
      ++visits_;
      const Action action = visit_(Entry{rel, item.name, item.type, fd});
      if (action == Action::Stop) {
        outcome_.stopped = true;
        break;
      }
      if (!is_dir || action == Action::Prune) continue;
      if (depth >= options_.max_depth) {
        if (!outcome_.depth_limit) outcome_.depth_limit_visits = visits_;
        outcome_.depth_limit = true;
        continue;
      }
      const int child = ::openat(fd, item.name.c_str(),
                                 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
      if (child < 0) continue;  // vanished, replaced by a link, or unreadable: skipped, as rg does
      directory(child, depth + 1);
      ::close(child);
    }
    path_.resize(base);
    levels_.pop_back();
  }

  const Options& options_;
  const std::function<Action(const Entry&)>& visit_;
  std::vector<Level> levels_;
  std::string path_;  // root-relative path of the entry at hand
  std::size_t start_len_ = 0;
  std::size_t entries_ = 0;
  std::size_t visits_ = 0;
  Outcome outcome_;
};

}  // namespace

Outcome walk(const Workspace& ws, std::string_view start, int start_fd, const Options& options,
             const std::function<Action(const Entry&)>& visit) {
  return Walker(options, visit).run(ws, start, start_fd);
}

bool inside_git_repository(const Workspace& ws, std::string_view start) {
  std::string dir(start);
  for (;;) {
    const int fd = ws.open_at(dir, O_RDONLY | O_DIRECTORY);
    if (fd >= 0) {
      const bool found = has_git_entry(fd);
      ::close(fd);
      if (found) return true;
    }
    if (dir.empty()) return false;
    const auto slash = dir.rfind('/');
    dir.resize(slash == std::string::npos ? 0 : slash);
  }
}

}  // namespace mf::tools::walk
