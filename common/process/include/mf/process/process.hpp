// Running child programs: the only module that includes Boost.Process (slow to compile, so it stays
// in one translation unit). Used by mf-audit to execute the product's binaries as a user would.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
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
// drained. Fails only when the child cannot start.
Result<ShellOutcome> run_shell(const ShellCommand& command);

// The directory holding the running executable (where the sibling mf-* binaries are).
std::string self_directory();

}  // namespace mf::process
