// Running child programs: the only module that includes Boost.Process (slow to compile, so it stays
// in one translation unit). Used by mf-audit to execute the product's binaries as a user would.
#pragma once

#include <chrono>
#include <string>
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

// The directory holding the running executable (where the sibling mf-* binaries are).
std::string self_directory();

}  // namespace mf::process
