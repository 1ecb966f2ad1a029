#include "mf/process/process.hpp"

#include <unistd.h>

#include <boost/process.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "mf/diag/codes.hpp"

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

}  // namespace

Result<Completed> run(const Command& command) {
  TempFile out, err;
  Completed done;
  try {
    const std::string in = command.stdin_path.empty() ? "/dev/null" : command.stdin_path;
    bp::child child(command.program, bp::args(command.args),
                    bp::std_in<in, bp::std_out> out.path.string(), bp::std_err > err.path.string());
    if (!child.wait_for(command.timeout)) {
      child.terminate();
      child.wait();
      done.exit_code = -1;
    } else {
      done.exit_code = child.exit_code();
    }
  } catch (const std::exception& e) {
    return diag::error(diag::codes::kInternal, "cannot run " + command.program + ": " + e.what());
  }
  done.out = slurp(out.path);
  done.err = slurp(err.path);
  return done;
}

std::string self_directory() {
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(".") : exe.parent_path().string();
}

}  // namespace mf::process
