// Running child programs (process.hpp), the only translation unit that includes Boost.Process:
// one-shot runs, shell commands under the reaper, and long-lived servers on pipes.
#include "mf/process/process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <boost/process.hpp>
#include <boost/process/extend.hpp>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "mf/diag/codes.hpp"
#include "reaper.hpp"

namespace mf::process {

namespace bp = boost::process;

namespace {

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Output goes to private temporary files rather than pipes: no deadlock however much the child
// writes to either stream, and no reader threads.
struct TempFile {
  std::filesystem::path path;
  TempFile() {
    std::string templ = (std::filesystem::temp_directory_path() / "mf-proc-XXXXXX").string();
    const int fd = ::mkstemp(templ.data());
    if (fd >= 0) ::close(fd);
    path = templ;
  }
  ~TempFile() {
    std::error_code ec;
    std::filesystem::remove(path, ec);
  }
};

// Waits until the child `pid` has exited, without reaping it, for at most `timeout`. True when it
// exited. Boost.Process 1.74's child::wait_for can miss the exit and sleep to the full timeout;
// this wait cannot: a pidfd becomes readable at the exit (Linux 5.3 and later), and without one
// waitid(WNOWAIT) is polled at a step that only bounds how late the exit is seen.
bool wait_exited(pid_t pid, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  const auto exited = [pid] {
    siginfo_t info{};
    return ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
           info.si_pid == pid;
  };
  const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  for (;;) {
    if (exited()) break;
    const auto left =
        std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    if (pidfd >= 0) {
      pollfd p{pidfd, POLLIN, 0};
      ::poll(&p, 1, static_cast<int>(std::min<std::int64_t>(left.count(), 60000)));
    } else {
      ::usleep(static_cast<useconds_t>(std::min<std::int64_t>(left.count(), 5) * 1000));
    }
  }
  if (pidfd >= 0) ::close(pidfd);
  return exited();
}

}  // namespace

Result<Completed> run(const Command& command) {
  TempFile out, err;
  Completed done;
  try {
    const std::string in = command.stdin_path.empty() ? "/dev/null" : command.stdin_path;
    const std::string dir = command.cwd.empty() ? std::string(".") : command.cwd;
    bp::child child(command.program, bp::args(command.args), bp::start_dir = dir,
                    bp::std_in<in, bp::std_out> out.path.string(), bp::std_err > err.path.string());
    if (!wait_exited(child.id(), command.timeout)) {
      child.terminate();
      child.wait();
      done.exit_code = -1;
    } else {
      child.wait();  // reaps the exit just seen: returns at once
      done.exit_code = child.exit_code();
    }
  } catch (const std::exception& e) {
    return diag::error(diag::codes::kInternal, "cannot run " + command.program + ": " + e.what());
  }
  done.out = slurp(out.path);
  done.err = slurp(err.path);
  return done;
}

namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kPollStep = std::chrono::milliseconds(50);
// After the command's exit, output is drained until the pipe closes or the processes it left
// behind have been asleep for kDrainGrace with nothing new, looked at every kDrainStep (each look
// counts for at most one step, so a late wake-up of ours never shortens the grace). A process
// that is running or waiting for a CPU is awake: on a loaded machine a background job between two
// lines waits for a CPU, and the grace does not run out under it. One that stays busy without
// printing ends the drain once the left-behind processes have used kDrainCpu of CPU time since
// the latest output.
constexpr auto kDrainGrace = std::chrono::milliseconds(100);
constexpr auto kDrainStep = std::chrono::milliseconds(10);
constexpr auto kDrainCpu = std::chrono::milliseconds(500);

constexpr auto kReaperGrace = std::chrono::seconds(2);
int poll_ms(Clock::duration d) {
  const auto ms = std::chrono::ceil<std::chrono::milliseconds>(d).count();
  return static_cast<int>(std::clamp<decltype(ms)>(ms, 0, kPollStep.count()));
}

}  // namespace

namespace {

diag::Diagnostic cannot_run(const std::string& program, const std::string& why) {
  return diag::error(diag::codes::kInternal, "cannot run " + program + ": " + why);
}

// What a child is started from: the executable (a name without '/' looked up on PATH; empty when
// not found), its arguments, and the inherited environment (only the `keep` variables of it when
// given) with `env` set on top. The program is looked up on this process's PATH either way.
struct Program {
  boost::filesystem::path exe;
  std::vector<std::string> args;
  bp::environment env;
};
Program program_of(const std::vector<std::string>& argv,
                   const std::vector<std::pair<std::string, std::string>>& env,
                   const std::optional<std::vector<std::string>>& keep = std::nullopt) {
  const std::string& name = argv.front();
  Program p{
      name.find('/') == std::string::npos ? bp::search_path(name) : boost::filesystem::path(name),
      std::vector<std::string>(argv.begin() + 1, argv.end()), boost::this_process::environment()};
  // set(), not operator[]: Boost.Process's find() compares the key past the end of a shorter
  // entry (a heap over-read AddressSanitizer reports); the implementation's set() checks lengths.
  if (keep) {
    bp::environment kept;
    for (const auto& key : *keep) {
      if (const char* value = std::getenv(key.c_str()); value != nullptr) kept.set(key, value);
    }
    p.env = kept;
  }
  for (const auto& [key, value] : env) p.env.set(key, value);
  return p;
}

// In the forked child, before exec (its stdio already in place): only stdin, stdout and stderr
// (and `inherit`) reach the program, as with Node's spawn, so descriptors the caller holds
// (stores, traces) do not leak into it, least of all into a sandbox; close-on-exec rather than
// closed, because Boost still reports exec errors through one. Then the directory change (ours
// rather than bp::start_dir's, which ignores a failing chdir), and the fork under the reaper:
// only the program (the reaper's child) returns to be executed, in a process group of its own.
template <class Exec>
void become_reaped(Exec& exec, const char* cwd, int status_fd, const std::vector<int>& inherit) {
  if (::close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) != 0) {
    const long max_fd = std::min(::sysconf(_SC_OPEN_MAX), 65536L);
    for (int fd = 3; fd < max_fd; ++fd) ::fcntl(fd, F_SETFD, FD_CLOEXEC);
  }
  for (const int fd : inherit) ::fcntl(fd, F_SETFD, 0);
  if (cwd != nullptr && ::chdir(cwd) != 0) {
    exec.set_error(std::error_code(errno, std::system_category()), "chdir failed");
    ::_exit(127);
  }
  if (!reaper::fork_under_reaper(status_fd)) {
    exec.set_error(std::error_code(errno, std::system_category()), "cannot start the reaper");
    ::_exit(127);
  }
  ::setpgid(0, 0);
}

// Starts the command under its reaper (reaper.hpp), which reports the command's wait status on
// `status_fd`; the command in its own process group, stdin at /dev/null, stdout and stderr on
// `pipe`. Boost may throw; the caller catches.
Result<bp::child> launch(const ShellCommand& command, bp::pipe& pipe, int status_fd) {
  const std::string& program = command.argv.front();
  Program p = program_of(command.argv, command.env);
  if (p.exe.empty()) return cannot_run(program, "not found on PATH");
  const char* cwd = command.cwd.empty() ? nullptr : command.cwd.c_str();
  pid_t failed_pid = -1;
  std::error_code ec;
  const std::vector<int> inherit = command.inherit_fds;
  auto setup = [cwd, status_fd, &inherit](auto& exec) {
    ::setpgid(0, 0);  // the reaper's own group, out of reach of the terminal's signals
    become_reaped(exec, cwd, status_fd, inherit);
  };
  auto on_error = [&failed_pid](auto& exec, const std::error_code&) { failed_pid = exec.pid; };
  bp::child child(bp::exe = p.exe, bp::args = p.args, bp::std_in = bp::null,
                  (bp::std_out & bp::std_err) = pipe, p.env, bp::extend::on_exec_setup = setup,
                  bp::extend::on_error = on_error, ec);
  if (ec) {
    if (failed_pid > 0) ::waitpid(failed_pid, nullptr, 0);  // Boost leaves a failed fork unreaped
    return cannot_run(program, ec.message());
  }
  return child;
}

// Hands over whatever output is there without blocking; true at end of file (or a read error).
bool drain(int source, const ShellCommand& command, Clock::time_point& last_output) {
  char buffer[64 * 1024];
  while (true) {
    const ssize_t n = ::read(source, buffer, sizeof buffer);
    if (n > 0) {
      last_output = Clock::now();
      if (command.on_output) command.on_output(std::string_view(buffer, std::size_t(n)));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    return n == 0 || errno != EAGAIN;
  }
}

// What the processes the command left behind are doing: whether one of them is awake (running or
// waiting for a CPU, or in an uninterruptible wait) and the CPU time they have used, with the time
// of those that have exited and been reaped (the reaper's and their parents' children's time).
struct Leftovers {
  bool awake = false;
  std::int64_t cpu_ticks = 0;
};

// One /proc/PID/stat: the state, the parent, the thread count and the CPU times (own and reaped
// children's); false when the process is gone.
struct Stat {
  char state = '?';
  long parent = 0, threads = 1;
  std::int64_t own_ticks = 0, children_ticks = 0;
};
bool read_stat(const std::string& dir, Stat& st) {
  const std::string text = slurp(dir + "/stat");
  const std::size_t paren = text.rfind(')');
  if (paren == std::string::npos) return false;
  std::istringstream in(text.substr(paren + 1));
  std::string skip;
  std::int64_t utime = 0, stime = 0, cutime = 0, cstime = 0;
  in >> st.state >> st.parent;
  for (int field = 5; field <= 13; ++field) in >> skip;  // pgrp .. cmajflt
  in >> utime >> stime >> cutime >> cstime >> skip >> skip >> st.threads;
  if (!in) return false;
  st.own_ticks = utime + stime;
  st.children_ticks = cutime + cstime;
  return true;
}

bool awake_state(char state) {
  return state == 'R' || state == 'D';
}

// Every descendant of `reaper`, from one pass over /proc (threads looked at one by one when a
// process has several: a worker thread may be the one that is awake).
Leftovers leftovers_of(pid_t reaper) {
  std::map<long, std::pair<std::string, Stat>> all;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    Stat st;
    if (read_stat(entry.path().string(), st)) all[std::stol(name)] = {entry.path().string(), st};
  }
  std::multimap<long, long> children;
  for (const auto& [pid, e] : all) children.emplace(e.second.parent, pid);
  Leftovers out;
  if (auto self = all.find(reaper); self != all.end()) {
    out.cpu_ticks = self->second.second.children_ticks;
  }
  std::vector<long> stack{reaper};
  while (!stack.empty()) {
    const long parent = stack.back();
    stack.pop_back();
    for (auto [it, end] = children.equal_range(parent); it != end; ++it) {
      const auto& [dir, st] = all[it->second];
      out.cpu_ticks += st.own_ticks + st.children_ticks;
      bool awake = awake_state(st.state);
      if (!awake && st.threads > 1) {
        for (const auto& task : std::filesystem::directory_iterator(dir + "/task", ec)) {
          Stat t;
          if (read_stat(task.path().string(), t) && awake_state(t.state)) awake = true;
        }
      }
      out.awake = out.awake || awake;
      stack.push_back(it->second);
    }
  }
  return out;
}

// What the supervision has seen so far.
struct Watch {
  std::optional<int> status;  // the command's wait status, once its reaper reported the exit
  bool stopped = false;       // the reaper was asked to kill everything
  bool eof = false;           // the output pipe is closed: every writer is gone
  Clock::time_point last_output = Clock::now();
  // Since the exit (or the latest output after it): how long the left-behind processes have been
  // seen asleep in a row, when they were last looked at, and their CPU time at the first look.
  Clock::duration asleep{};
  Clock::time_point looked{};
  std::optional<std::int64_t> cpu_from;
};

// Reads the command's wait status from its reaper; end of file without one (a reaper that died)
// counts as an exit with an unknown status.
void read_status(int status_fd, Watch& w) {
  int status = -1;
  std::int64_t n;
  do {
    n = ::read(status_fd, &status, sizeof status);
  } while (n < 0 && errno == EINTR);
  if (n < 0 && errno == EAGAIN) return;
  w.status = n == static_cast<std::int64_t>(sizeof status) ? status : -1;
  w.last_output = Clock::now();  // the grace runs from the exit or the latest chunk
}

// After the exit: true once the drain is over (see kDrainGrace), or cut short by cancellation or
// the deadline. Output restarts the count.
bool drained(pid_t reaper, const ShellCommand& command, Watch& w, Clock::time_point now) {
  if (w.eof || (command.cancel != nullptr && command.cancel->load()) || now >= command.deadline) {
    return true;
  }
  if (w.looked < w.last_output) {  // the exit or new output since the last look
    w.asleep = {};
    w.cpu_from.reset();
    w.looked = w.last_output;
  }
  if (now - w.looked < kDrainStep && w.cpu_from) return false;
  const Leftovers left = leftovers_of(reaper);
  if (!w.cpu_from) w.cpu_from = left.cpu_ticks;
  w.asleep = left.awake ? Clock::duration{}
                        : w.asleep + std::min<Clock::duration>(now - w.looked, kDrainStep);
  w.looked = now;
  static const long ticks_per_second = ::sysconf(_SC_CLK_TCK);
  const auto cpu = std::chrono::milliseconds((left.cpu_ticks - *w.cpu_from) * 1000 /
                                             std::max(ticks_per_second, 1L));
  return w.asleep >= kDrainGrace || cpu >= kDrainCpu;
}

// Watches the command until it has exited and its output is drained: asks the reaper to kill
// everything on cancellation or at the deadline, and after the exit drains as kDrainGrace says
// (a background job that keeps printing is captured until it stops).
ShellOutcome watch(pid_t reaper, int source, int status_fd, const ShellCommand& command, Watch& w) {
  ShellOutcome outcome;
  while (true) {
    const auto now = Clock::now();
    if (!w.stopped && !w.status) {
      outcome.cancelled = command.cancel != nullptr && command.cancel->load();
      outcome.timed_out = !outcome.cancelled && now >= command.deadline;
      if (outcome.cancelled || outcome.timed_out) {
        ::kill(reaper, SIGTERM);  // not reaped before end_reaper: the pid is still the reaper's
        w.stopped = true;
      }
    }
    if (w.status && (w.stopped ? w.eof || now - w.last_output >= kDrainGrace
                               : drained(reaper, command, w, now))) {
      return outcome;
    }
    Clock::duration wait = kPollStep;
    if (w.status) wait = std::min<Clock::duration>(wait, kDrainStep);
    if (!w.stopped && command.deadline != Clock::time_point::max()) {
      wait = std::min<Clock::duration>(wait, command.deadline - now);
    }
    pollfd p[2] = {{w.eof ? -1 : source, POLLIN, 0}, {w.status ? -1 : status_fd, POLLIN, 0}};
    if (::poll(p, 2, poll_ms(wait)) <= 0) continue;
    if (p[1].revents != 0) read_status(status_fd, w);
    if (p[0].revents != 0) w.eof = drain(source, command, w.last_output);
  }
}

// Ends the call: the reaper kills whatever the command left behind and exits; one that has not
// gone kReaperGrace later is killed itself. Once reaped, its pid may belong to someone else, so it
// is signalled only before.
void end_reaper(bp::child& reaper, Watch& w) {
  std::error_code ec;
  if (!w.stopped && reaper.running(ec)) ::kill(reaper.id(), SIGTERM);
  const auto until = Clock::now() + kReaperGrace;
  while (reaper.running(ec) && Clock::now() < until) ::poll(nullptr, 0, 2);
  if (reaper.running(ec)) {
    ::kill(reaper.id(), SIGKILL);
    reaper.wait(ec);
  }
}

ShellOutcome supervise(bp::child& reaper, int source, int status_fd, const ShellCommand& command) {
  Watch w;
  ShellOutcome outcome = watch(reaper.id(), source, status_fd, command, w);
  end_reaper(reaper, w);
  if (w.status && WIFEXITED(*w.status)) outcome.exit_code = WEXITSTATUS(*w.status);
  return outcome;
}

}  // namespace

Result<ShellOutcome> run_shell(const ShellCommand& command) {
  if (command.argv.empty()) return diag::error(diag::codes::kInternal, "run_shell: empty argv");
  const std::string& program = command.argv.front();
  // Close-on-exec, so a child started concurrently by another thread does not inherit our pipe
  // and keep it open; the dup2 onto 1 and 2 in our own child clears the flag there.
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return cannot_run(program, std::strerror(errno));
  bp::pipe pipe(fds[0], fds[1]);  // owns both ends; the launch takes and closes the sink
  const int source = pipe.native_source();
  ::fcntl(source, F_SETFL, ::fcntl(source, F_GETFL) | O_NONBLOCK);

  // The reaper's report of the command's exit; our copy of the write end closes after the launch.
  int status_pipe[2];
  if (::pipe2(status_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
    return cannot_run(program, std::strerror(errno));
  }
  struct Owned {
    int fd;
    void close() { fd = fd >= 0 ? (::close(fd), -1) : -1; }
    ~Owned() { close(); }
  } status_source{status_pipe[0]}, status_sink{status_pipe[1]};
  try {
    Result<bp::child> child = launch(command, pipe, status_sink.fd);
    status_sink.close();
    if (!child) return child.take_diagnostics();
    return supervise(*child, source, status_source.fd, command);
  } catch (const std::exception& e) {
    return cannot_run(program, e.what());  // the child's destructor has killed the reaper
  }
}

// --- Server ---

struct Server::Impl {
  bp::child reaper;
  int in = -1, out = -1, err = -1, status = -1;
  std::optional<int> wait_status;
  bool stopped = false;

  ~Impl() {
    for (int fd : {in, out, err, status}) {
      if (fd >= 0) ::close(fd);
    }
  }
  void close_input() {
    if (in >= 0) ::close(in);
    in = -1;
  }
  // Reads the reaper's report of the child's exit, if it has come.
  void poll_status() {
    if (wait_status || status < 0) return;
    int st = -1;
    ssize_t n;
    do {
      n = ::read(status, &st, sizeof st);
    } while (n < 0 && errno == EINTR);
    if (n < 0 && errno == EAGAIN) return;
    wait_status = n == static_cast<ssize_t>(sizeof st) ? st : -1;
  }
};

namespace {

// Blocks SIGPIPE for this thread while it writes to a pipe whose reader may be gone, and takes a
// SIGPIPE the write raised before unblocking, so the broken pipe is only an EPIPE.
class SigpipeBlocked {
 public:
  SigpipeBlocked() {
    ::sigemptyset(&set_);
    ::sigaddset(&set_, SIGPIPE);
    sigset_t pending;
    ::sigpending(&pending);
    was_pending_ = ::sigismember(&pending, SIGPIPE) == 1;
    ::pthread_sigmask(SIG_BLOCK, &set_, &old_);
  }
  ~SigpipeBlocked() {
    if (!was_pending_) {
      sigset_t pending;
      ::sigpending(&pending);
      const timespec zero{0, 0};
      if (::sigismember(&pending, SIGPIPE) == 1) ::sigtimedwait(&set_, nullptr, &zero);
    }
    ::pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  SigpipeBlocked(const SigpipeBlocked&) = delete;
  SigpipeBlocked& operator=(const SigpipeBlocked&) = delete;

 private:
  sigset_t set_{}, old_{};
  bool was_pending_ = false;
};

int wait_ms(Clock::time_point deadline) {
  if (deadline == Clock::time_point::max()) return static_cast<int>(kPollStep.count());
  return poll_ms(deadline - Clock::now());
}

bool stop_requested(Clock::time_point deadline, const std::atomic<bool>* cancel, Io& why) {
  if (cancel != nullptr && cancel->load()) {
    why = Io::Cancelled;
    return true;
  }
  if (Clock::now() >= deadline) {
    why = Io::TimedOut;
    return true;
  }
  return false;
}

}  // namespace

Server::Server(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Server::~Server() {
  stop(std::chrono::milliseconds(0));
}

Result<std::unique_ptr<Server>> Server::start(const ServerCommand& command,
                                              std::size_t stderr_tail_bytes) {
  if (command.argv.empty()) return diag::error(diag::codes::kInternal, "server: empty argv");
  const std::string& program = command.argv.front();
  Program p = program_of(command.argv, command.env, command.keep_env);
  if (p.exe.empty()) return cannot_run(program, "not found on PATH");
  // [0] the child's end, [1] ours, for stdin, stdout, stderr and the reaper's exit report.
  int in[2], out[2], err[2], st[2];
  int* all[] = {in, out, err, st};
  int made = 0;
  for (; made < 4; ++made) {
    if (::pipe2(all[made], O_CLOEXEC) != 0) break;
  }
  auto impl = std::make_unique<Impl>();
  if (made < 4) {
    for (int i = 0; i < made; ++i) ::close(all[i][0]), ::close(all[i][1]);
    return cannot_run(program, std::strerror(errno));
  }
  impl->in = in[1];
  impl->out = out[0];
  impl->err = err[0];
  impl->status = st[0];
  const int child_in = in[0], child_out = out[1], child_err = err[1], status_sink = st[1];
  for (int fd : {impl->in, impl->out, impl->err, impl->status}) {
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  }
  const char* cwd = command.cwd.empty() ? nullptr : command.cwd.c_str();
  pid_t failed_pid = -1;
  std::error_code ec;
  auto setup = [=](auto& exec) {
    ::setpgid(0, 0);
    if (::dup2(child_in, 0) < 0 || ::dup2(child_out, 1) < 0 || ::dup2(child_err, 2) < 0) {
      exec.set_error(std::error_code(errno, std::system_category()), "dup2 failed");
      ::_exit(127);
    }
    become_reaped(exec, cwd, status_sink, {});
  };
  auto on_error = [&failed_pid](auto& exec, const std::error_code&) { failed_pid = exec.pid; };
  try {
    impl->reaper =
        bp::child(bp::exe = p.exe, bp::args = p.args, p.env, bp::extend::on_exec_setup = setup,
                  bp::extend::on_error = on_error, ec);
  } catch (const std::exception& e) {
    for (int fd : {child_in, child_out, child_err, status_sink}) ::close(fd);
    return cannot_run(program, e.what());
  }
  for (int fd : {child_in, child_out, child_err, status_sink}) ::close(fd);
  if (ec) {
    if (failed_pid > 0) ::waitpid(failed_pid, nullptr, 0);
    return cannot_run(program, ec.message());
  }
  std::unique_ptr<Server> server(new Server(std::move(impl)));
  server->err_cap_ = std::max<std::size_t>(stderr_tail_bytes, 1);
  return server;
}

void Server::drain_stderr() {
  if (impl_->err < 0) return;
  char buffer[64 * 1024];
  for (;;) {
    const ssize_t n = ::read(impl_->err, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n == 0 || (n < 0 && errno != EAGAIN)) {
      ::close(impl_->err);
      impl_->err = -1;
      return;
    }
    if (n < 0) return;
    err_total_ += static_cast<std::uint64_t>(n);
    // A ring of the last err_cap_ bytes.
    for (ssize_t i = 0; i < n; ++i) {
      if (err_ring_.size() < err_cap_) {
        err_ring_.push_back(buffer[i]);
      } else {
        err_ring_[err_at_] = buffer[i];
        err_at_ = (err_at_ + 1) % err_cap_;
      }
    }
  }
}

std::string Server::stderr_tail() const {
  if (err_ring_.size() < err_cap_) return err_ring_;
  return err_ring_.substr(err_at_) + err_ring_.substr(0, err_at_);
}

std::optional<int> Server::exit_code() {
  impl_->poll_status();
  if (!impl_->wait_status) return std::nullopt;
  const int st = *impl_->wait_status;
  return st >= 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

Io Server::write(std::string_view bytes, Clock::time_point deadline,
                 const std::atomic<bool>* cancel) {
  SigpipeBlocked blocked;
  while (!bytes.empty()) {
    if (impl_->in < 0) return Io::Closed;
    const ssize_t n = ::write(impl_->in, bytes.data(), bytes.size());
    if (n > 0) {
      bytes.remove_prefix(static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno != EAGAIN) return Io::Closed;
    Io why = Io::Ok;
    if (stop_requested(deadline, cancel, why)) return why;
    drain_stderr();
    pollfd p[2] = {{impl_->in, POLLOUT, 0}, {impl_->err, POLLIN, 0}};
    ::poll(p, 2, wait_ms(deadline));
    if (exit_code()) return Io::Closed;
  }
  return Io::Ok;
}

Io Server::read(std::string& out, Clock::time_point deadline, const std::atomic<bool>* cancel) {
  char buffer[64 * 1024];
  for (;;) {
    drain_stderr();
    if (impl_->out < 0) return Io::Closed;
    const ssize_t n = ::read(impl_->out, buffer, sizeof buffer);
    if (n > 0) {
      out.append(buffer, static_cast<std::size_t>(n));
      return Io::Ok;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n == 0 || errno != EAGAIN) return Io::Closed;
    // Nothing to read: an exited child with nothing left to say is closed even when a process it
    // left behind still holds its stdout open.
    if (exit_code()) return Io::Closed;
    Io why = Io::Ok;
    if (stop_requested(deadline, cancel, why)) return why;
    pollfd p[3] = {{impl_->out, POLLIN, 0}, {impl_->err, POLLIN, 0}, {impl_->status, POLLIN, 0}};
    ::poll(p, 3, wait_ms(deadline));
  }
}

void Server::stop(std::chrono::milliseconds grace) {
  if (!impl_ || impl_->stopped) return;
  impl_->stopped = true;
  impl_->close_input();
  const auto until = Clock::now() + grace;
  while (!exit_code() && Clock::now() < until) {
    drain_stderr();
    pollfd p[2] = {{impl_->status, POLLIN, 0}, {impl_->err, POLLIN, 0}};
    ::poll(p, 2, poll_ms(until - Clock::now()));
  }
  // The reaper kills the child's group and everything left below it, then exits.
  std::error_code ec;
  if (impl_->reaper.valid() && impl_->reaper.running(ec)) ::kill(impl_->reaper.id(), SIGTERM);
  const auto reaper_until = Clock::now() + kReaperGrace;
  while (impl_->reaper.valid() && impl_->reaper.running(ec) && Clock::now() < reaper_until) {
    drain_stderr();
    ::poll(nullptr, 0, 2);
  }
  if (impl_->reaper.valid() && impl_->reaper.running(ec)) {
    ::kill(impl_->reaper.id(), SIGKILL);
    impl_->reaper.wait(ec);
  }
  drain_stderr();
  impl_->poll_status();
}

std::string self_directory() {
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(".") : exe.parent_path().string();
}

}  // namespace mf::process
