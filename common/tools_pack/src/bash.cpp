// bash: one shell command run in the workspace root, its interleaved stdout and stderr reduced to
// the tail Pi shows, with the complete output spilled to a private log file once the tail no longer
// holds all of it. Optionally confined by bubblewrap. Texts and differences from Pi: docs/tools.md.
#include <dirent.h>
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "mf/diag/codes.hpp"
#include "mf/io/file.hpp"
#include "mf/json/canonical.hpp"
#include "mf/process/process.hpp"
#include "mf/text/utf8.hpp"
#include "mf/tools/pack.hpp"
#include "seccomp.hpp"

namespace mf::tools {
namespace {

using Clock = std::chrono::steady_clock;

std::string random_hex16() {
  unsigned char bytes[8] = {};
  if (::getrandom(bytes, sizeof bytes, GRND_NONBLOCK) != static_cast<ssize_t>(sizeof bytes)) {
    // O_EXCL keeps the name unique anyway; this only has to avoid collisions.
    const auto now = static_cast<std::uint64_t>(Clock::now().time_since_epoch().count());
    std::memcpy(bytes, &now, sizeof bytes);
  }
  std::string hex;
  char two[3];
  for (unsigned char b : bytes) {
    std::snprintf(two, sizeof two, "%02x", b);
    hex += two;
  }
  return hex;
}

// Pi's output accumulator: totals over everything, a bounded tail in memory, and the raw bytes in
// a log file from the moment the output passes either limit (until then memory holds it all). The
// log keeps the last `log_max` bytes: once it holds twice that, its tail is moved to the front, so
// the disk used stays under 2 * log_max however much the command writes, at one extra copy of
// each byte at most; seal() cuts it to exactly log_max at the end.
class OutputAccumulator {
 public:
  OutputAccumulator(std::string temp_dir, std::size_t log_max)
      : temp_dir_(std::move(temp_dir)), log_max_(std::max<std::size_t>(log_max, 1)) {}
  OutputAccumulator(const OutputAccumulator&) = delete;
  OutputAccumulator& operator=(const OutputAccumulator&) = delete;

  void add(std::string_view chunk) {
    total_bytes_ += chunk.size();
    for (char c : chunk) {
      if (c == '\n') {
        ++newlines_;
        previous_line_ = current_line_;
        current_line_ = 0;
      } else {
        ++current_line_;
      }
    }
    tail_.append(chunk);
    if (!spill_attempted_) {
      if (total_bytes_ > kMaxBytes || total_lines() > kMaxLines) spill();
      return;
    }
    write_log(chunk);
    // Twice the byte limit always covers what truncate_tail can keep; trimming at four times
    // keeps the copying amortized.
    if (tail_.size() > 4 * kMaxBytes) tail_.erase(0, tail_.size() - 2 * kMaxBytes);
  }

  // Lines as Pi counts them: a trailing "\n" does not start another line.
  std::size_t total_lines() const { return newlines_ + (current_line_ > 0 ? 1 : 0); }
  std::size_t total_bytes() const { return total_bytes_; }
  // Bytes of the last counted line (the one a partial tail shows the end of).
  std::size_t last_line_bytes() const { return current_line_ > 0 ? current_line_ : previous_line_; }
  const std::string& tail() const { return tail_; }

  // Makes sure the full output is on disk (decoding can push a short raw output over a limit),
  // cut to its last log_max bytes.
  void seal() {
    if (!spill_attempted_) spill();
    if (log_bytes_ > log_max_) keep_tail();
  }
  const std::string& log_path() const { return path_; }  // empty when the log could not be kept
  const std::string& log_error() const { return error_; }
  // Whether the log lost its beginning to the cap; it then holds the last log_max() bytes.
  bool log_capped() const { return capped_; }
  std::size_t log_max() const { return log_max_; }

 private:
  void spill() {
    spill_attempted_ = true;
    for (int attempt = 0; attempt < 8 && !fd_.valid(); ++attempt) {
      path_ = temp_dir_ + "/pi-bash-" + random_hex16() + ".log";
      fd_.reset(::open(path_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600));
      if (!fd_.valid() && errno != EEXIST) break;
    }
    if (!fd_.valid()) {
      error_ = std::string(std::strerror(errno)) + " (" + temp_dir_ + ")";
      path_.clear();
      return;
    }
    write_log(tail_);
  }

  void write_log(std::string_view bytes) {
    if (!fd_.valid()) return;
    if (Status s = io::write_all(fd_.get(), bytes); !s) return drop_log(s);
    log_bytes_ += bytes.size();
    if (log_bytes_ >= 2 * log_max_) keep_tail();
  }

  // Moves the log's last log_max bytes to its start and cuts it there. The two ranges never
  // overlap: this runs only once the log holds more than log_max.
  void keep_tail() {
    std::string buffer(std::min<std::size_t>(log_max_, 1u << 20), '\0');
    const std::uint64_t from = log_bytes_ - log_max_;
    for (std::size_t done = 0; done < log_max_;) {
      const std::size_t want = std::min(buffer.size(), log_max_ - done);
      const std::int64_t n = io::pread_all(fd_.get(), buffer.data(), want, from + done);
      if (n != static_cast<std::int64_t>(want) ||
          ::pwrite(fd_.get(), buffer.data(), want, static_cast<off_t>(done)) !=
              static_cast<ssize_t>(want)) {
        return drop_log(diag::error(diag::codes::kWriteFailed, std::strerror(n < 0 ? -n : EIO)));
      }
      done += want;
    }
    if (::ftruncate(fd_.get(), static_cast<off_t>(log_max_)) != 0 ||
        ::lseek(fd_.get(), static_cast<off_t>(log_max_), SEEK_SET) < 0) {
      return drop_log(diag::error(diag::codes::kWriteFailed, std::strerror(errno)));
    }
    log_bytes_ = log_max_;
    capped_ = true;
  }

  // A log missing part of what it claims to hold would be worse than none: drop it and say why.
  void drop_log(const Status& why) {
    error_ = why.diagnostics().front().message;
    fd_.reset();
    ::unlink(path_.c_str());
    path_.clear();
  }

  std::string temp_dir_;
  std::size_t log_max_;
  std::string tail_;
  std::size_t total_bytes_ = 0;
  std::size_t newlines_ = 0;
  std::size_t current_line_ = 0;   // bytes after the last '\n'
  std::size_t previous_line_ = 0;  // bytes of the line the last '\n' ended
  bool spill_attempted_ = false;
  io::Fd fd_;
  std::uint64_t log_bytes_ = 0;
  bool capped_ = false;
  std::string path_;
  std::string error_;
};

std::string number_text(double d) {
  std::string s;
  json::write_number(d, s);
  return s;
}

bool is_executable(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

std::string find_on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string_view dirs = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  while (true) {
    const std::size_t colon = dirs.find(':');
    const std::string dir(dirs.substr(0, colon));
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (is_executable(candidate)) return candidate;
    if (colon == std::string_view::npos) return {};
    dirs.remove_prefix(colon + 1);
  }
}

// Pi's choice on Unix: /bin/bash, else bash on PATH, else sh.
std::string shell_path() {
  if (is_executable("/bin/bash")) return "/bin/bash";
  std::string bash = find_on_path("bash");
  return bash.empty() ? std::string("sh") : bash;
}

// bwrap flags shared by the self-test and the real runs. Everything read-only, private /dev, /proc,
// /tmp, /var/tmp and /run (host Unix sockets live there: docker, systemd, D-Bus), no network, its
// own pid namespace (so killing bwrap ends every process inside), and a new session (no TIOCSTI
// into a terminal). The command runs as an unprivileged user (65534) in a new user namespace with
// every capability dropped and nested user namespaces refused, so the sandbox holds for any caller,
// root included: nothing inside can remount or unmount what bwrap set up (docs/tools.md). bwrap
// always sets no_new_privs, so setuid programs gain nothing, and installs the seccomp filter read
// from `filter` (seccomp.hpp) before the command runs.
std::vector<std::string> bwrap_prefix(const std::string& bwrap, const io::Fd& filter) {
  std::vector<std::string> argv = {
      bwrap,    "--seccomp", std::to_string(filter.get()), "--ro-bind", "/", "/", "--dev", "/dev",
      "--proc", "/proc"};
  // A private tmpfs over each of these directories that exists (/var/run only when it is not the
  // usual symbolic link to /run); bwrap could not create a missing one on the read-only root.
  for (const char* dir : {"/tmp", "/var/tmp", "/run", "/var/run"}) {
    struct stat st {};
    if (::lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) continue;
    argv.insert(argv.end(), {"--tmpfs", dir});
  }
  argv.insert(argv.end(),
              {"--unshare-user", "--disable-userns", "--uid", "65534", "--gid", "65534",
               "--cap-drop", "ALL", "--unshare-net", "--unshare-pid", "--unshare-ipc",
               "--unshare-uts", "--unshare-cgroup-try", "--die-with-parent", "--new-session"});
  return argv;
}

// Probed once per process: whether bwrap exists and can create its namespaces here (containers
// often forbid user namespaces). The text is the reason when it cannot.
const std::optional<std::string>& sandbox_problem() {
  static const std::optional<std::string> problem = []() -> std::optional<std::string> {
    const std::string bwrap = find_on_path("bwrap");
    if (bwrap.empty()) return "bwrap (bubblewrap) is not installed";
    auto filter = seccomp_filter_fd();
    if (!filter) return filter.diagnostics().front().message;
    const io::Fd filter_fd(*filter);
    process::ShellCommand probe;
    probe.argv = bwrap_prefix(bwrap, filter_fd);
    probe.inherit_fds = {filter_fd.get()};
    probe.argv.push_back("true");
    probe.deadline = Clock::now() + std::chrono::seconds(10);
    std::string output;
    probe.on_output = [&](std::string_view chunk) {
      if (output.size() < 1000) output.append(chunk);
    };
    auto outcome = process::run_shell(probe);
    if (!outcome) return outcome.diagnostics().front().message;
    if (outcome->timed_out) return "bwrap did not finish its self-test within 10 seconds";
    if (outcome->exit_code != 0) {
      while (!output.empty() && (output.back() == '\n' || output.back() == ' ')) output.pop_back();
      return "bwrap cannot create its namespaces here" +
             (output.empty() ? std::string() : ": " + text::decode_utf8_lossy(output));
    }
    return std::nullopt;
  }();
  return problem;
}

std::string notice(const Truncation& t, const OutputAccumulator& acc) {
  std::string where = acc.log_path().empty() ? "Full output could not be saved: " + acc.log_error()
                                             : "Full output: " + acc.log_path();
  if (acc.log_capped() && !acc.log_path().empty()) {
    where += " (its last " + format_size(acc.log_max()) + " only)";
  }
  const std::size_t end = t.total_lines;
  if (t.last_line_partial) {
    return "\n\n[Showing last " + format_size(t.output_bytes) + " of line " + std::to_string(end) +
           " (line is " + format_size(acc.last_line_bytes()) + "). " + where + "]";
  }
  const std::size_t start = end - t.output_lines + 1;
  std::string range = "\n\n[Showing lines " + std::to_string(start) + "-" + std::to_string(end) +
                      " of " + std::to_string(t.total_lines);
  if (t.truncated_by == "bytes") range += " (" + format_size(kMaxBytes) + " limit)";
  return range + ". " + where + "]";
}

// The command line: bash -c, behind bwrap when the call is sandboxed (with its seccomp filter in
// *filter, to keep open until the command has started); nullopt with `refusal` when the sandbox
// cannot be had.
std::optional<process::ShellCommand> shell_command(const std::string& command,
                                                   const CallContext& ctx, std::string* refusal,
                                                   io::Fd* filter) {
  const std::string& root = ctx.workspace->root();
  process::ShellCommand shell;
  if (ctx.sandbox) {
    if (const auto& problem = sandbox_problem()) {
      *refusal = "Sandbox unavailable: " + *problem;
      return std::nullopt;
    }
    auto fd = seccomp_filter_fd();
    if (!fd) {
      *refusal = "Sandbox unavailable: " + fd.diagnostics().front().message;
      return std::nullopt;
    }
    *filter = io::Fd(*fd);
    shell.argv = bwrap_prefix(find_on_path("bwrap"), *filter);
    shell.inherit_fds = {filter->get()};
    // After the private tmpfs mounts, so a workspace under /tmp is still the real directory.
    for (const char* arg : {"--bind", root.c_str(), root.c_str(), "--chdir", root.c_str(), "--"}) {
      shell.argv.emplace_back(arg);
    }
  }
  shell.argv.push_back(shell_path());
  shell.argv.push_back("-c");
  shell.argv.push_back(command);
  shell.cwd = root;
  shell.cancel = ctx.cancel;
  return shell;
}

// --- After a sandboxed call: no setuid or setgid file is left in the workspace ---

constexpr mode_t kSetIdBits = S_ISUID | S_ISGID;

struct SetIdScan {
  std::vector<std::pair<std::string, mode_t>> stripped;  // path under the root, mode before
  std::vector<std::string> problems;                     // "path (reason)"
};

// Clears S_ISUID and S_ISGID on `name` in `dirfd` if it is still the inode the walk saw. Opened
// O_PATH (never the file itself, which could be a device or lack the read permission) and changed
// through /proc/self/fd, since fchmod refuses an O_PATH descriptor; 0 or the errno.
int strip_setid(int dirfd, const char* name, const struct statx& seen) {
  const io::Fd fd(::openat(dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC));
  struct stat now {};
  if (!fd.valid() || ::fstat(fd.get(), &now) != 0) return errno;
  if (now.st_ino != seen.stx_ino || now.st_dev != makedev(seen.stx_dev_major, seen.stx_dev_minor)) {
    return ESTALE;  // replaced since
  }
  const std::string proc = "/proc/self/fd/" + std::to_string(fd.get());
  return ::chmod(proc.c_str(), now.st_mode & 07777 & ~kSetIdBits) == 0 ? 0 : errno;
}

// One walk of the workspace after a sandboxed call: every file and directory is stat'ed once
// (statx, symbolic links not followed, mount points inside the workspace not crossed, the root
// itself included) and any S_ISUID or S_ISGID bit is removed. One open directory per level.
SetIdScan strip_setid_bits(const std::string& root) {
  SetIdScan scan;
  constexpr unsigned kWant = STATX_TYPE | STATX_MODE | STATX_INO | STATX_MNT_ID;
  const auto problem = [&](const std::string& path, int err) {
    scan.problems.push_back((path.empty() ? std::string(".") : path) + " (" + std::strerror(err) +
                            ")");
  };
  const auto check = [&](int dirfd, const char* name, const std::string& path,
                         const struct statx& st) {
    if ((st.stx_mode & kSetIdBits) == 0 || S_ISLNK(st.stx_mode)) return;
    if (const int err = strip_setid(dirfd, name, st); err != 0) return problem(path, err);
    scan.stripped.emplace_back(path.empty() ? std::string(".") : path, st.stx_mode & 07777);
  };
  using Dir = std::unique_ptr<DIR, int (*)(DIR*)>;
  struct Level {
    Dir dir;
    std::string prefix;  // the directory's path under the root and a '/', empty for the root
  };
  const int root_fd = ::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  struct statx top {};
  if (root_fd < 0 || ::statx(root_fd, "", AT_EMPTY_PATH, kWant, &top) != 0) {
    problem("", errno);
    if (root_fd >= 0) ::close(root_fd);
    return scan;
  }
  // Mounts are told apart by mount id where the kernel reports it (bind mounts share a device).
  const bool by_mount = (top.stx_mask & STATX_MNT_ID) != 0;
  const auto same_mount = [&](const struct statx& st) {
    return by_mount
               ? st.stx_mnt_id == top.stx_mnt_id
               : st.stx_dev_major == top.stx_dev_major && st.stx_dev_minor == top.stx_dev_minor;
  };
  check(root_fd, ".", "", top);
  std::vector<Level> stack;
  stack.push_back({Dir(::fdopendir(root_fd), ::closedir), ""});
  if (!stack.back().dir) {
    ::close(root_fd);
    return scan;
  }
  while (!stack.empty()) {
    DIR* dir = stack.back().dir.get();
    errno = 0;
    const dirent* entry = ::readdir(dir);
    if (entry == nullptr) {
      if (errno != 0) problem(stack.back().prefix, errno);
      stack.pop_back();
      continue;
    }
    const char* name = entry->d_name;
    if (std::strcmp(name, ".") == 0 || std::strcmp(name, "..") == 0) continue;
    const int dfd = ::dirfd(dir);
    std::string path = stack.back().prefix + name;
    struct statx st {};
    if (::statx(dfd, name, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT, kWant, &st) != 0) {
      if (errno != ENOENT) problem(path, errno);
      continue;
    }
    if (!same_mount(st)) continue;  // another file system mounted here: not crossed
    check(dfd, name, path, st);
    if (!S_ISDIR(st.stx_mode)) continue;
    const int sub = ::openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    Dir sub_dir(sub >= 0 ? ::fdopendir(sub) : nullptr, ::closedir);
    if (!sub_dir) {
      problem(path, errno);
      if (sub >= 0) ::close(sub);
      continue;
    }
    stack.push_back({std::move(sub_dir), path + "/"});
  }
  return scan;
}

// What the scan did, a line for each kind of finding, for the end of the call's text: nothing when
// the workspace was clean.
std::string setid_notice(SetIdScan scan) {
  std::string text;
  constexpr std::size_t kListed = 10;
  if (!scan.stripped.empty()) {
    std::sort(scan.stripped.begin(), scan.stripped.end());
    const std::size_t n = scan.stripped.size();
    text += "\n[Sandbox: removed the setuid/setgid bits of " + std::to_string(n) +
            (n == 1 ? " file: " : " files: ");
    char mode[32];
    for (std::size_t i = 0; i < std::min(n, kListed); ++i) {
      const auto& [path, before] = scan.stripped[i];
      std::snprintf(mode, sizeof mode, "%o -> %o", static_cast<unsigned>(before),
                    static_cast<unsigned>(before & ~kSetIdBits));
      text += (i > 0 ? ", " : "") + path + " (" + mode + ")";
    }
    if (n > kListed) text += ", and " + std::to_string(n - kListed) + " more";
    text += "]";
  }
  if (!scan.problems.empty()) {
    std::sort(scan.problems.begin(), scan.problems.end());
    const std::size_t n = scan.problems.size();
    text += "\n[Sandbox: could not check or clear setuid/setgid bits in the workspace: ";
    for (std::size_t i = 0; i < std::min(n, kListed); ++i) {
      text += (i > 0 ? ", " : "") + scan.problems[i];
    }
    if (n > kListed) text += ", and " + std::to_string(n - kListed) + " more";
    text += "]";
  }
  return text;
}

// The call's own deadline from its `timeout` (seconds; none when 0 or not finite).
Clock::time_point own_deadline(double timeout, Clock::time_point started) {
  if (!(timeout > 0 && std::isfinite(timeout))) return Clock::time_point::max();
  const double capped = std::min(timeout, 1e7);  // far beyond any run; keeps the sum in range
  return started +
         std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(capped));
}

// What the run ended as: aborted, timed out (by the call's timeout, or by the descriptor's limit,
// reported in the same shape to a tenth of a second), a non-zero exit, or the output.
ToolResult bash_result(const process::ShellOutcome& outcome, std::string output,
                       const Truncation& t, const OutputAccumulator& acc, double timeout,
                       Clock::time_point started, Clock::time_point own, const CallContext& ctx) {
  auto with_output = [&](const std::string& message) {
    return ToolResult::error(output.empty() ? message : output + "\n\n" + message);
  };
  if (outcome.cancelled) return with_output("Command aborted");
  if (outcome.timed_out) {
    if (own <= ctx.deadline) {
      return with_output("Command timed out after " + number_text(timeout) + " seconds");
    }
    const double budget = std::chrono::duration<double>(ctx.deadline - started).count();
    return with_output("Command timed out after " +
                       number_text(std::max(0.0, std::round(budget * 10) / 10)) + " seconds");
  }
  if (output.empty()) output = "(no output)";
  // Pi: a child ended by a signal has no exit code, and that counts as success.
  if (outcome.exit_code && *outcome.exit_code != 0) {
    return ToolResult::error(output + "\n\nCommand exited with code " +
                             std::to_string(*outcome.exit_code));
  }
  ToolResult result{false, std::move(output), {}};
  if (t.truncated) {
    json::Object details{{"truncation", to_json(t)}};
    if (!acc.log_path().empty()) details.push_back({"fullOutputPath", acc.log_path()});
    if (acc.log_capped() && !acc.log_path().empty()) {
      details.push_back({"fullOutputCapped", true});
      details.push_back({"fullOutputMaxBytes", static_cast<std::uint64_t>(acc.log_max())});
    }
    result.details = std::move(details);
  }
  return result;
}

}  // namespace

ToolResult run_bash(const json::Value& args, const CallContext& ctx) {
  const json::Value* command = args.find("command");
  // Until the shell starts, nothing has been run: those errors are refusals.
  if (command == nullptr || !command->is_string())
    return ToolResult::refusal("command is required");
  const json::Value* timeout_arg = args.find("timeout");
  const double timeout =
      timeout_arg != nullptr && timeout_arg->is_number() ? timeout_arg->as_number() : 0.0;
  if (ctx.cancelled()) return ToolResult::refusal("Command aborted");

  const std::string& root = ctx.workspace->root();
  struct stat st {};
  if (::stat(root.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return ToolResult::refusal("Working directory does not exist: " + root +
                               "\nCannot execute bash commands.");
  }
  std::string refusal;
  io::Fd filter;
  std::optional<process::ShellCommand> shell =
      shell_command(command->as_string(), ctx, &refusal, &filter);
  if (!shell) return ToolResult::refusal(refusal);

  const auto started = Clock::now();
  // Whichever comes first kills the tree: the call's own timeout or the descriptor's deadline.
  const Clock::time_point own = own_deadline(timeout, started);
  shell->deadline = std::min(own, ctx.deadline);
  OutputAccumulator acc(ctx.temp_dir, ctx.bash_log_max_bytes);
  shell->on_output = [&acc](std::string_view chunk) { acc.add(chunk); };
  auto outcome = process::run_shell(*shell);
  if (!outcome) return ToolResult::refusal(outcome.diagnostics().front().message);

  Truncation t = truncate_tail(text::decode_utf8_lossy(acc.tail()));
  t.total_lines = acc.total_lines();
  t.total_bytes = acc.total_bytes();
  std::string output = t.content;
  if (t.truncated) {
    acc.seal();
    if (output.empty()) output = "(no output)";
    output += notice(t, acc);
  }
  ToolResult result = bash_result(*outcome, std::move(output), t, acc, timeout, started, own, ctx);
  // The sandbox refuses setuid and setgid modes (seccomp.hpp); this catches what is there anyway.
  if (ctx.sandbox) {
    if (const std::string notice = setid_notice(strip_setid_bits(root)); !notice.empty()) {
      // One blank line before it, whether or not the output ends with a newline.
      result.text += (!result.text.empty() && result.text.back() == '\n' ? "" : "\n") + notice;
    }
  }
  return result;
}

}  // namespace mf::tools
