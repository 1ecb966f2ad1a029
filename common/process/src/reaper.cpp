// The per-call reaper of reaper.hpp: a subreaper child that kills whatever the command leaves
// behind; async-signal-safe only, as it runs after fork in a threaded process.
#include "reaper.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <ctime>
#include <initializer_list>

namespace mf::process::reaper {
namespace {

// The signals the reaper takes synchronously (sigtimedwait): the caller's stop request, its
// death, terminal signals, and the exits of children.
sigset_t handled_signals() {
  sigset_t set;
  ::sigemptyset(&set);
  for (int sig : {SIGTERM, SIGHUP, SIGINT, SIGQUIT, SIGCHLD}) ::sigaddset(&set, sig);
  return set;
}

// The parent of process `pid` from /proc/PID/stat (the field after the state, behind the last
// ')' of the command name), or -1.
long parent_of(const char* pid, std::size_t length) {
  char path[48] = "/proc/";
  std::size_t at = 6;
  for (std::size_t i = 0; i < length && at < 40; ++i) path[at++] = pid[i];
  for (const char* tail = "/stat"; *tail != '\0'; ++tail) path[at++] = *tail;
  path[at] = '\0';
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  char buffer[1024];
  const ssize_t n = ::read(fd, buffer, sizeof buffer);
  ::close(fd);
  if (n <= 0) return -1;
  ssize_t close_paren = n - 1;
  while (close_paren >= 0 && buffer[close_paren] != ')') --close_paren;
  ssize_t i = close_paren + 4;  // ") S " then the parent's pid
  if (close_paren < 0 || i >= n) return -1;
  long parent = 0;
  for (; i < n && buffer[i] >= '0' && buffer[i] <= '9'; ++i)
    parent = parent * 10 + (buffer[i] - '0');
  return parent;
}

struct LinuxDirent64 {
  std::uint64_t d_ino;
  std::int64_t d_off;
  unsigned short d_reclen;
  unsigned char d_type;
  char d_name[1];
};

// SIGKILLs every process whose parent is this one (found by scanning /proc with getdents64,
// which needs no allocation). Returns how many it signalled.
int kill_children() {
  const long self = ::getpid();
  const int proc = ::open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (proc < 0) return 0;
  int killed = 0;
  alignas(8) char buffer[8192];
  for (;;) {
    const long n = ::syscall(SYS_getdents64, proc, buffer, sizeof buffer);
    if (n <= 0) break;
    for (long at = 0; at < n;) {
      const auto* e = reinterpret_cast<const LinuxDirent64*>(buffer + at);
      at += e->d_reclen;
      std::size_t length = 0;
      long pid = 0;
      while (e->d_name[length] >= '0' && e->d_name[length] <= '9') {
        pid = pid * 10 + (e->d_name[length++] - '0');
      }
      if (length == 0 || e->d_name[length] != '\0') continue;
      if (parent_of(e->d_name, length) == self && ::kill(static_cast<pid_t>(pid), SIGKILL) == 0) {
        ++killed;
      }
    }
  }
  ::close(proc);
  return killed;
}

// Kills the command's process group and every process reparented here, until none is left.
void kill_everything(pid_t command) {
  ::kill(-command, SIGKILL);
  for (;;) {
    kill_children();
    if (::waitpid(-1, nullptr, 0) < 0 && errno == ECHILD) return;
  }
}

// Reaps what has exited; true once the command is among them (its status then in `status`).
bool reap_exited(pid_t command, int& status) {
  bool found = false;
  int st = 0;
  for (pid_t p; (p = ::waitpid(-1, &st, WNOHANG)) > 0;) {
    if (p == command) {
      status = st;
      found = true;
    }
  }
  return found;
}

// The reaper's life: report the command's exit, wait for the caller's stop request (or death),
// kill what is left.
[[noreturn]] void reap(pid_t command, pid_t caller, int status_fd) {
  // Nothing of the caller's stays open here, the output pipe least of all.
  ::close_range(0, static_cast<unsigned>(status_fd) - 1, 0);
  ::close_range(static_cast<unsigned>(status_fd) + 1, ~0U, 0);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  ::sigaction(SIGCHLD, &dfl, nullptr);  // SIG_IGN would reap children before we see them
  const sigset_t set = handled_signals();
  bool reported = false;
  bool stop = ::getppid() != caller;  // the caller died before PDEATHSIG was set
  while (!stop) {
    int status = 0;
    if (!reported && reap_exited(command, status)) {
      reported = true;
      (void)::write(status_fd, &status, sizeof status);
    } else if (reported) {
      reap_exited(command, status);
    }
    if (reported && ::waitpid(-1, nullptr, WNOHANG) < 0 && errno == ECHILD) ::_exit(0);
    const timespec step{0, 100'000'000};
    siginfo_t info{};
    const int sig = ::sigtimedwait(&set, &info, &step);
    // Orders come from the caller alone: its stop request, or its death (PR_SET_PDEATHSIG; by then
    // this process has another parent). A scheduler that stops a job signals every process of it,
    // children first (Slurm's proctrack/linuxproc): the command and this reaper get that signal
    // before the caller does, and the command, killed here, would end cut short in a call that
    // the caller, not yet told of the stop, records as finished. The caller's own stop follows
    // its signal.
    stop = sig > 0 && sig != SIGCHLD && (info.si_pid == caller || ::getppid() != caller);
  }
  kill_everything(command);
  if (!reported) {
    const int killed = SIGKILL;  // the wait status of a process SIGKILL ended
    (void)::write(status_fd, &killed, sizeof killed);
  }
  ::_exit(0);
}

}  // namespace

bool fork_under_reaper(int status_fd) {
  const pid_t caller = ::getppid();
  const sigset_t set = handled_signals();
  sigset_t old;
  // Blocked before the fork, so a stop request that comes at once is queued, never lost or fatal.
  ::sigprocmask(SIG_BLOCK, &set, &old);
  if (::prctl(PR_SET_CHILD_SUBREAPER, 1) != 0 || ::prctl(PR_SET_PDEATHSIG, SIGTERM) != 0) {
    return false;
  }
  const pid_t command = ::fork();
  if (command < 0) return false;
  if (command == 0) {
    ::sigprocmask(SIG_SETMASK, &old, nullptr);
    return true;
  }
  reap(command, caller, status_fd);
}

}  // namespace mf::process::reaper
