// Running child programs: the only module that includes Boost.Process (slow to compile, so it stays
// in one translation unit). Used by mf-audit to execute the product's binaries as a user would.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mf/diag/diagnostic.hpp"

namespace mf::process {

struct Command {
  std::string program;  // absolute path of the executable
  std::vector<std::string> args;
  std::string stdin_path;  // empty: /dev/null
  std::string cwd;         // empty: the caller's working directory
  std::chrono::milliseconds timeout{60000};
};

struct Completed {
  int exit_code = -1;  // -1 when killed by the timeout
  std::string out;     // everything the child wrote to stdout
  std::string err;     // and to stderr
};

// Runs the command to completion (or kills it at the timeout). Fails only when it cannot start.
Result<Completed> run(const Command& command);

// A child run the way a shell tool needs it: under a reaper of its own (a child subreaper that
// every process the command leaves behind is reparented to, and that kills them all when the
// command ends), in its own process group, stdin at /dev/null, stdout and stderr through one pipe
// (one stream in arrival order), output handed over as it arrives.
struct ShellCommand {
  std::vector<std::string> argv;  // argv[0]: a path, or a name looked up on PATH
  std::string cwd;                // empty: the caller's working directory
  std::vector<std::pair<std::string, std::string>> env;  // set on top of the inherited environment
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  const std::atomic<bool>* cancel = nullptr;              // polled at least every 50 ms
  std::function<void(std::string_view chunk)> on_output;  // never called after run_shell returns
  // Descriptors the command inherits under their numbers (a sandbox's seccomp filter); every
  // other one but stdin, stdout and stderr is closed for it.
  std::vector<int> inherit_fds{};
};

struct ShellOutcome {
  std::optional<int> exit_code;  // nullopt when a signal ended the child
  bool timed_out = false;        // the deadline passed and the group was killed
  bool cancelled = false;        // *cancel became true and the group was killed
};

// Runs the command until it exits; at the deadline or on cancellation its reaper SIGKILLs it.
// Either way, when run_shell returns no process the command started is left: background jobs,
// `setsid` children and double-forked daemons are killed with it. Output written until then is
// drained: after the exit, until the pipe closes or what the command left behind has been asleep
// for 100 ms with nothing new (a process waiting for a CPU is awake), or has used 500 ms of CPU
// since its latest output. Fails only when the child cannot start.
Result<ShellOutcome> run_shell(const ShellCommand& command);

// A long-lived child spoken to through its stdin and stdout (an MCP server). It runs under a
// reaper of its own, as run_shell's commands do: whatever it starts (a `setsid` grandchild, a
// daemon) is killed with it, and the reaper kills it when this process dies, however it dies
// (PR_SET_PDEATHSIG; note that the signal follows the thread that started the server). Its stderr
// is drained into a bounded tail whenever it is read from, so a chatty server never blocks.
struct ServerCommand {
  std::vector<std::string> argv;  // argv[0]: a path, or a name looked up on PATH
  std::string cwd;                // empty: the caller's working directory
  std::vector<std::pair<std::string, std::string>> env;  // set on top of the inherited environment
  // When set, only these inherited variables reach the child (those that are set), `env` on top.
  std::optional<std::vector<std::string>> keep_env;
};

enum class Io : std::uint8_t { Ok, Closed, TimedOut, Cancelled };

class Server {
 public:
  // Fails (MF-X001 wording: "cannot run ...") only when the program cannot be started.
  static Result<std::unique_ptr<Server>> start(const ServerCommand& command,
                                               std::size_t stderr_tail_bytes = 64 << 10);
  ~Server();  // stop(0 ms)
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Writes all of `bytes` to the child's stdin. Closed when the child no longer reads (its end
  // is gone: no SIGPIPE reaches this process).
  Io write(std::string_view bytes, std::chrono::steady_clock::time_point deadline,
           const std::atomic<bool>* cancel);
  // Appends what the child wrote to stdout (at least one byte unless the outcome is not Ok),
  // waiting until the deadline. Closed at end of file.
  Io read(std::string& out, std::chrono::steady_clock::time_point deadline,
          const std::atomic<bool>* cancel);
  // Ends the child: closes its stdin, gives it `grace` to exit, then kills it and everything it
  // started, and reaps. Idempotent.
  void stop(std::chrono::milliseconds grace);

  // The exit code once the child has exited (-1: a signal ended it), else nullopt.
  std::optional<int> exit_code();
  // The last stderr bytes (at most the tail size) and how many it wrote in all.
  std::string stderr_tail() const;
  std::uint64_t stderr_bytes() const { return err_total_; }

  struct Impl;

 private:
  explicit Server(std::unique_ptr<Impl> impl);
  void drain_stderr();
  std::unique_ptr<Impl> impl_;
  std::string err_ring_;
  std::size_t err_at_ = 0, err_cap_ = 0;
  std::uint64_t err_total_ = 0;
};

// The directory holding the running executable (where the sibling mf-* binaries are).
std::string self_directory();

}  // namespace mf::process
