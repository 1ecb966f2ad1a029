// run_bash and process::run_shell against real children: Pi's bash cases (docs/tools.md), process
// tree cleanup, and the bubblewrap sandbox where this machine can create its namespaces.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "mf/process/process.hpp"
#include "mf/tools/pack.hpp"

namespace mf::tools {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string make_temp_dir(const char* stem) {
  std::string templ = (fs::temp_directory_path() / (std::string(stem) + "-XXXXXX")).string();
  return ::mkdtemp(templ.data()) != nullptr ? templ : std::string();
}

double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

// Alive and not a zombie: in a container nobody may reap orphans, so kill(pid, 0) alone would
// still succeed for a process that is already dead.
bool alive(pid_t pid) {
  if (::kill(pid, 0) != 0) return false;
  const std::string stat = slurp("/proc/" + std::to_string(pid) + "/stat");
  const std::size_t paren = stat.rfind(')');
  return paren == std::string::npos || paren + 2 >= stat.size() || stat[paren + 2] != 'Z';
}

bool any_alive(const std::vector<pid_t>& pids, std::chrono::milliseconds settle) {
  const auto until = Clock::now() + settle;
  while (true) {
    bool some = false;
    for (pid_t p : pids) some = some || alive(p);
    if (!some || Clock::now() >= until) return some;
    std::this_thread::sleep_for(10ms);
  }
}

// Processes whose command line contains `needle` (to find sandboxed processes by a unique arg).
std::vector<pid_t> processes_with(const std::string& needle) {
  std::vector<pid_t> out;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string cmdline = slurp(entry.path() / "cmdline");
    for (char& c : cmdline) c = c == '\0' ? ' ' : c;
    const pid_t pid = std::stoi(name);
    if (cmdline.find(needle) != std::string::npos && pid != ::getpid() && alive(pid)) {
      out.push_back(pid);
    }
  }
  return out;
}

class ToolsBash : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = make_temp_dir("mf-bash-ws");
    logs_ = make_temp_dir("mf-bash-logs");
    ASSERT_FALSE(root_.empty());
    ASSERT_FALSE(logs_.empty());
    auto ws = Workspace::open(root_);
    ASSERT_TRUE(ws.ok());
    ctx_.workspace = *ws;
    ctx_.temp_dir = logs_;
    ctx_.cancel = &cancel_;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(root_, ec);
    fs::remove_all(logs_, ec);
  }

  ToolResult bash(const std::string& command, double timeout = 0) {
    json::Object args{{"command", command}};
    if (timeout != 0) args.push_back({"timeout", timeout});
    return run_bash(args, ctx_);
  }

  // Skips the calling test when bwrap cannot run here; the reason is printed.
  bool sandbox_unavailable() {
    CallContext probe = ctx_;
    probe.sandbox = true;
    const ToolResult r = run_bash(json::Object{{"command", "true"}}, probe);
    if (r.text.rfind("Sandbox unavailable", 0) == 0) {
      reason_ = r.text;
      return true;
    }
    EXPECT_FALSE(r.is_error) << r.text;
    return false;
  }

  std::string root_, logs_, reason_;
  std::atomic<bool> cancel_{false};
  CallContext ctx_;
};

std::string log_path_of(const ToolResult& r) {
  const json::Value* path = r.details.is_null() ? nullptr : r.details.find("fullOutputPath");
  return path != nullptr && path->is_string() ? path->as_string() : std::string();
}

std::string expected_seq(int n) {
  std::string s;
  for (int i = 1; i <= n; ++i) s += std::to_string(i) + "\n";
  return s;
}

// --- Pi's cases ---

TEST_F(ToolsBash, EchoReturnsItsOutputWithoutDetails) {
  const ToolResult r = bash("echo 'test output'");
  EXPECT_FALSE(r.is_error);
  EXPECT_EQ(r.text, "test output\n");
  EXPECT_TRUE(r.details.is_null());
}

TEST_F(ToolsBash, NonZeroExitIsAnErrorWithTheCode) {
  const ToolResult r = bash("exit 1");
  EXPECT_TRUE(r.is_error);
  EXPECT_EQ(r.text, "(no output)\n\nCommand exited with code 1");
  const ToolResult with_output = bash("echo oops; exit 3");
  EXPECT_EQ(with_output.text, "oops\n\n\nCommand exited with code 3");
}

TEST_F(ToolsBash, TimeoutKillsTheCommand) {
  const ToolResult r = bash("sleep 100 & echo $! > pid; sleep 100", 1);
  EXPECT_TRUE(r.is_error);
  EXPECT_EQ(r.text, "Command timed out after 1 seconds");
  // Killed, not waited for: the sleep is dead when the call returns.
  const pid_t p = std::atoi(slurp(fs::path(root_) / "pid").c_str());
  ASSERT_GT(p, 0);
  EXPECT_FALSE(alive(p));
}

TEST_F(ToolsBash, FractionalTimeoutIsPrintedAsJavaScriptWould) {
  const ToolResult r = bash("sleep 5", 0.25);
  EXPECT_EQ(r.text, "Command timed out after 0.25 seconds");
}

TEST_F(ToolsBash, TimeoutAfterChattyOutputKeepsTheTailAndTheLog) {
  const ToolResult r = bash("seq 1 3000; sleep 5", 1);
  EXPECT_TRUE(r.is_error);
  EXPECT_NE(r.text.find("[Showing lines 1001-3000 of 3000. Full output: " + logs_ + "/pi-bash-"),
            std::string::npos)
      << r.text.substr(r.text.size() - 200);
  EXPECT_EQ(r.text.rfind("\n\nCommand timed out after 1 seconds"),
            r.text.size() - std::string("\n\nCommand timed out after 1 seconds").size());
  EXPECT_EQ(r.text.find("undefined"), std::string::npos);
  const std::regex notice(R"(Full output: (\S+)\])");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.text, m, notice));
  EXPECT_EQ(slurp(m[1].str()), expected_seq(3000));
}

TEST_F(ToolsBash, AbortAfterChattyOutputKeepsTheTailAndTheLog) {
  std::thread canceller([&] {
    std::this_thread::sleep_for(400ms);
    cancel_ = true;
  });
  const ToolResult r = bash("seq 1 3000; sleep 5");
  canceller.join();
  EXPECT_TRUE(r.is_error);
  EXPECT_TRUE(
      std::regex_search(r.text, std::regex(R"(\[Showing lines \d+-\d+ of \d+\. Full output: )")));
  EXPECT_EQ(r.text.substr(r.text.size() - 17), "\n\nCommand aborted");
}

TEST_F(ToolsBash, AlreadyCancelledDoesNotStart) {
  cancel_ = true;
  const ToolResult r = bash("touch started");
  EXPECT_TRUE(r.is_error);
  EXPECT_EQ(r.text, "Command aborted");
  EXPECT_FALSE(fs::exists(fs::path(root_) / "started"));
}

TEST_F(ToolsBash, SeqThreeThousandIsTruncatedByLinesWithAPrivateFullLog) {
  const ToolResult r = bash("seq 3000");
  EXPECT_FALSE(r.is_error);
  ASSERT_FALSE(r.details.is_null());
  const json::Value& t = *r.details.find("truncation");
  EXPECT_EQ(t.find("truncatedBy")->as_string(), "lines");
  EXPECT_EQ(t.find("totalLines")->as_number(), 3000);
  EXPECT_EQ(t.find("outputLines")->as_number(), 2000);
  const std::string path = log_path_of(r);
  EXPECT_TRUE(std::regex_match(path, std::regex(logs_ + "/pi-bash-[0-9a-f]{16}\\.log"))) << path;
  EXPECT_EQ(slurp(path), expected_seq(3000));
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(r.text.substr(0, 5), "1001\n");
  EXPECT_NE(r.text.find("3000\n\n[Showing lines 1001-3000 of 3000. Full output: " + path + "]"),
            std::string::npos);
}

TEST_F(ToolsBash, FourThousandLinesShowTheLastTwoThousand) {
  const ToolResult r = bash("for i in $(seq -f %04g 1 4000); do echo line-$i; done");
  const json::Value& t = *r.details.find("truncation");
  EXPECT_EQ(t.find("totalLines")->as_number(), 4000);
  EXPECT_EQ(t.find("outputLines")->as_number(), 2000);
  EXPECT_NE(r.text.find("[Showing lines 2001-4000 of 4000. Full output: "), std::string::npos);
  EXPECT_EQ(r.text.find("4001"), std::string::npos);
  EXPECT_EQ(r.text.find("line-2000\n"), std::string::npos);
  EXPECT_NE(r.text.find("line-2001\n"), std::string::npos);
}

TEST_F(ToolsBash, ChattyOutputKeepsTheEnd) {
  const ToolResult r = bash("for i in $(seq 0 4999); do echo \"line $i\"; done");
  EXPECT_FALSE(r.is_error);
  EXPECT_NE(r.text.find("line 4999"), std::string::npos);
  EXPECT_EQ(double(slurp(log_path_of(r)).size()),
            r.details.find("truncation")->find("totalBytes")->as_number());
}

TEST_F(ToolsBash, LongLinesAreTruncatedByBytes) {
  const ToolResult r = bash("for i in $(seq 1 500); do printf 'Line %d: %0200d\\n' $i 0; done");
  EXPECT_TRUE(std::regex_search(
      r.text, std::regex(R"(\[Showing lines \d+-500 of 500 \(50\.0KB limit\)\. Full output: )")));
  EXPECT_EQ(r.details.find("truncation")->find("truncatedBy")->as_string(), "bytes");
}

TEST_F(ToolsBash, OneHugeLineShowsItsEnd) {
  const ToolResult r = bash("head -c 60000 /dev/zero | tr '\\0' x");
  EXPECT_FALSE(r.is_error);
  EXPECT_NE(r.text.find("[Showing last 50.0KB of line 1 (line is 58.6KB). Full output: "),
            std::string::npos);
  EXPECT_TRUE(r.details.find("truncation")->find("lastLinePartial")->as_bool());
  EXPECT_EQ(slurp(log_path_of(r)), std::string(60000, 'x'));
}

TEST_F(ToolsBash, MultibyteCharacterSplitAcrossWritesIsJoined) {
  const ToolResult r = bash("printf '\\xe2'; sleep 0.05; printf '\\x82\\xac\\n'");
  EXPECT_EQ(r.text, "\xE2\x82\xAC\n");
}

TEST_F(ToolsBash, InvalidUtf8BecomesReplacementCharacters) {
  const ToolResult r = bash("printf 'a\\xffb\\xe2\\x82c\\n'");
  EXPECT_EQ(r.text,
            "a\xEF\xBF\xBD"
            "b\xEF\xBF\xBD"
            "c\n");
}

TEST_F(ToolsBash, StdoutAndStderrAreOneStreamInOrder) {
  const ToolResult r = bash("echo out; sleep 0.02; echo err >&2; sleep 0.02; echo out2");
  EXPECT_EQ(r.text, "out\nerr\nout2\n");
}

TEST_F(ToolsBash, RunsInTheWorkspaceRootWithStdinClosed) {
  EXPECT_EQ(bash("pwd").text, root_ + "\n");
  // With stdin open, cat would wait for input until the timeout ended it.
  EXPECT_EQ(bash("cat", 30).text, "(no output)");
}

TEST_F(ToolsBash, BackgroundOutputAfterTheExitIsCaptured) {
  // Ticks 20 ms apart, each one a fork and exec of sleep: on a loaded machine the job spends
  // much of each gap waiting for a CPU, which does not count as the quiet that ends the capture.
  const ToolResult r =
      bash("printf HEAD; (for i in 1 2 3 4 5 6; do sleep 0.02; echo TICK$i; done) &");
  EXPECT_FALSE(r.is_error);
  EXPECT_EQ(r.text.substr(0, 4), "HEAD");
  EXPECT_NE(r.text.find("TICK6"), std::string::npos) << r.text;
}

TEST_F(ToolsBash, BackgroundJobBusyBeforeItPrintsIsWaitedFor) {
  // Silent for 300 ms, three times the grace, but never asleep: it spins on the clock, so it
  // uses at most 300 ms of CPU (below the 500 ms that ends the capture), then prints.
  const ToolResult r = bash(
      "printf HEAD; (t=${EPOCHREALTIME/./}; while (( ${EPOCHREALTIME/./} - t < 300000 )); do :; "
      "done; echo LATE) &");
  EXPECT_FALSE(r.is_error);
  EXPECT_EQ(r.text, "HEADLATE\n");
}

TEST_F(ToolsBash, BackgroundJobBusyWithoutPrintingEndsTheCapture) {
  // Never asleep and never printing: the capture ends once it has used 500 ms of CPU, and the job
  // dies with the call.
  const ToolResult r = bash("printf HEAD; (while :; do :; done) & echo $! > bg.pid");
  EXPECT_FALSE(r.is_error);
  EXPECT_EQ(r.text, "HEAD");
  const pid_t bg = std::atoi(slurp(fs::path(root_) / "bg.pid").c_str());
  ASSERT_GT(bg, 0);
  EXPECT_FALSE(alive(bg));
}

TEST_F(ToolsBash, BackgroundChildHoldingThePipeDoesNotHang) {
  // A call that waited for the sleep would end by its timeout instead.
  const ToolResult r = bash("(sleep 100) & echo $! > bg.pid", 60);
  EXPECT_FALSE(r.is_error) << r.text;
  const pid_t bg = std::atoi(slurp(fs::path(root_) / "bg.pid").c_str());
  ASSERT_GT(bg, 0);
  const pid_t group = ::getpgid(bg);
  if (group > 0) ::kill(-group, SIGKILL);  // the test's own cleanup, not the tool's job
}

TEST_F(ToolsBash, TheReaperTakesOrdersOnlyFromItsCaller) {
  // A scheduler stopping a job signals every process of it, children first: the reaper (the
  // shell's parent) gets a SIGTERM from outside before the caller gets its own. A command that
  // ignores the signal runs on to its end; only the caller's stop would end it.
  const ToolResult r = bash("trap '' TERM; kill -TERM $PPID; sleep 0.5; echo ran on");
  EXPECT_FALSE(r.is_error) << r.text;
  EXPECT_EQ(r.text, "ran on\n");
}

TEST_F(ToolsBash, CancellationKillsTheWholeTree) {
  std::thread canceller([&] {
    std::this_thread::sleep_for(200ms);
    cancel_ = true;
  });
  const ToolResult r =
      bash("sleep 100 & echo $! > pids; sleep 100 & echo $! >> pids; sleep 100; wait");
  canceller.join();
  EXPECT_TRUE(r.is_error);
  EXPECT_EQ(r.text, "Command aborted");
  std::vector<pid_t> pids;
  std::istringstream in(slurp(fs::path(root_) / "pids"));
  for (pid_t p; in >> p;) pids.push_back(p);
  ASSERT_EQ(pids.size(), 2u);
  EXPECT_FALSE(any_alive(pids, 500ms));
}

// Every way a command can leave a process behind without the sandbox: a background job, a
// `setsid` child in its own session, and a daemon whose parent exits at once (double fork, new
// session). Each writes its pid to `pids`.
const std::string kLeftBehind =
    "sleep 100 & echo $! >> pids; "
    "setsid sleep 100 & echo $! >> pids; "
    "sh -c 'setsid sleep 100 >/dev/null 2>&1 & echo $! >> pids'; "
    "(sh -c 'sleep 100 <&- >&- 2>&- & echo $! >> pids' &); sleep 0.1; ";

std::vector<pid_t> pids_in(const fs::path& file) {
  std::vector<pid_t> pids;
  std::istringstream in(slurp(file));
  for (pid_t p; in >> p;) pids.push_back(p);
  return pids;
}

// No process outlives its call, however it ends. Checked at once, with no settling time: when
// run_bash returns, every one of them is dead and reaped. CI runs this as root.
TEST_F(ToolsBash, NothingOutlivesANormalExit) {
  // Not waited for: a call that waited for the sleeps would end by its timeout instead.
  const ToolResult r = bash(kLeftBehind + "echo done", 60);
  EXPECT_FALSE(r.is_error) << r.text;
  const auto pids = pids_in(fs::path(root_) / "pids");
  ASSERT_EQ(pids.size(), 4u) << slurp(fs::path(root_) / "pids");
  for (pid_t p : pids) EXPECT_FALSE(alive(p)) << p;
}

TEST_F(ToolsBash, NothingOutlivesATimeout) {
  const ToolResult r = bash(kLeftBehind + "sleep 100", 0.5);
  EXPECT_EQ(r.text, "Command timed out after 0.5 seconds");
  const auto pids = pids_in(fs::path(root_) / "pids");
  ASSERT_EQ(pids.size(), 4u);
  for (pid_t p : pids) EXPECT_FALSE(alive(p)) << p;
}

TEST_F(ToolsBash, NothingOutlivesACancellation) {
  std::thread canceller([&] {
    std::this_thread::sleep_for(500ms);
    cancel_ = true;
  });
  const ToolResult r = bash(kLeftBehind + "sleep 100");
  canceller.join();
  EXPECT_EQ(r.text, "Command aborted");
  const auto pids = pids_in(fs::path(root_) / "pids");
  ASSERT_EQ(pids.size(), 4u);
  for (pid_t p : pids) EXPECT_FALSE(alive(p)) << p;
}

// A daemon that keeps forking while it is being killed is still gone at the end.
TEST_F(ToolsBash, AForkingDaemonIsKilledToo) {
  const ToolResult r =
      bash("setsid sh -c 'while :; do sleep 100 & echo $! >> pids; sleep 0.01; done' & sleep 0.3");
  EXPECT_FALSE(r.is_error) << r.text;
  const auto pids = pids_in(fs::path(root_) / "pids");
  ASSERT_GT(pids.size(), 3u);
  for (pid_t p : pids) EXPECT_FALSE(alive(p)) << p;
}

TEST_F(ToolsBash, DescriptorDeadlineAlsoKillsTheTree) {
  ctx_.deadline = Clock::now() + 300ms;
  const ToolResult r = bash("sleep 100 & echo $! > pid; sleep 100", 60);
  EXPECT_EQ(r.text, "Command timed out after 0.3 seconds");
  EXPECT_FALSE(any_alive({std::atoi(slurp(fs::path(root_) / "pid").c_str())}, 500ms));
}

TEST_F(ToolsBash, ChildKilledBySignalCountsAsSuccess) {
  const ToolResult r = bash("echo before; kill -9 $$");
  EXPECT_FALSE(r.is_error) << r.text;
  EXPECT_EQ(r.text, "before\n");
}

TEST_F(ToolsBash, MissingWorkingDirectoryIsReported) {
  ASSERT_TRUE(fs::remove(root_));
  const ToolResult r = bash("echo hi");
  EXPECT_TRUE(r.is_error);
  EXPECT_TRUE(r.untouched);  // nothing ran: the record says not_attempted
  EXPECT_EQ(r.text, "Working directory does not exist: " + ctx_.workspace->root() +
                        "\nCannot execute bash commands.");
}

TEST_F(ToolsBash, NoLogFileUnlessTruncated) {
  EXPECT_TRUE(bash("seq 2000").details.is_null());
  EXPECT_TRUE(fs::is_empty(logs_));
}

// The full-output log keeps the tail within its cap and says it was cut.
TEST_F(ToolsBash, FullOutputLogKeepsItsLastBytesWithinTheCap) {
  ctx_.bash_log_max_bytes = 1u << 20;
  const ToolResult r = bash("seq 1 2000000");
  ASSERT_FALSE(r.is_error) << r.text.substr(0, 200);
  const std::string log = log_path_of(r);
  ASSERT_FALSE(log.empty());
  const std::string all = expected_seq(2000000);
  EXPECT_EQ(slurp(log), all.substr(all.size() - (1u << 20)));
  EXPECT_EQ(*r.details.find("fullOutputCapped"), json::Value(true));
  EXPECT_EQ(*r.details.find("fullOutputMaxBytes"), json::Value(std::uint64_t{1} << 20));
  EXPECT_NE(r.text.find("Full output: " + log + " (its last 1.0MB only)]"), std::string::npos);
  // Under the cap nothing is said.
  const ToolResult small = bash("seq 3000");
  EXPECT_EQ(small.details.find("fullOutputCapped"), nullptr);
  EXPECT_EQ(slurp(log_path_of(small)), expected_seq(3000));
}

// The attack: `yes` until the timeout. The log never holds more than twice the cap while it runs,
// and the cap once the call is over.
TEST_F(ToolsBash, EndlessOutputCannotFillTheDisk) {
  ctx_.bash_log_max_bytes = 256u << 10;
  const ToolResult r = bash("yes", 1);
  EXPECT_NE(r.text.find("Command timed out after 1 seconds"), std::string::npos);
  std::size_t logs = 0;
  for (const auto& e : fs::directory_iterator(logs_)) {
    ++logs;
    EXPECT_LE(fs::file_size(e.path()), 256u << 10) << e.path();
  }
  EXPECT_EQ(logs, 1u);
}

TEST_F(ToolsBash, UnwritableLogDirectoryIsSaidInsteadOfAPath) {
  ctx_.temp_dir = logs_ + "/missing";
  const ToolResult r = bash("seq 3000");
  EXPECT_NE(r.text.find("[Showing lines 1001-3000 of 3000. Full output could not be saved: "),
            std::string::npos);
  EXPECT_EQ(r.details.find("fullOutputPath"), nullptr);
  EXPECT_NE(r.details.find("truncation"), nullptr);
}

TEST_F(ToolsBash, SpawnOverheadIsReported) {
  double best = 1e9;
  for (int i = 0; i < 50; ++i) {
    const auto t0 = Clock::now();
    const ToolResult r = bash("true");
    best = std::min(best, ms_since(t0));
    ASSERT_EQ(r.text, "(no output)");
  }
  std::printf("[ bash ] spawn overhead of `true`: %.2f ms (best of 50)\n", best);
  if (sandbox_unavailable()) return;
  ctx_.sandbox = true;
  double sandboxed = 1e9;
  for (int i = 0; i < 10; ++i) {
    const auto t0 = Clock::now();
    ASSERT_EQ(bash("true").text, "(no output)");
    sandboxed = std::min(sandboxed, ms_since(t0));
  }
  std::printf("[ bash ] under bwrap: %.2f ms (best of 10)\n", sandboxed);

  // The setuid/setgid scan after each sandboxed call walks the workspace: the same call in one of
  // 10,000 files (100 directories of 100) costs its bwrap start plus one statx per file.
  for (int d = 0; d < 100; ++d) {
    const fs::path dir = fs::path(root_) / ("d" + std::to_string(d));
    fs::create_directory(dir);
    for (int f = 0; f < 100; ++f) std::ofstream(dir / ("f" + std::to_string(f))) << f;
  }
  double scanned = 1e9;
  for (int i = 0; i < 10; ++i) {
    const auto t0 = Clock::now();
    ASSERT_EQ(bash("true").text, "(no output)");
    scanned = std::min(scanned, ms_since(t0));
  }
  std::printf("[ bash ] under bwrap, 10,000-file workspace: %.2f ms (best of 10, %.2fx)\n", scanned,
              scanned / sandboxed);
}

// --- The sandbox ---

// A one-shot-per-connection HTTP responder on an ephemeral loopback port.
class LoopbackServer {
 public:
  LoopbackServer() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::listen(fd_, 8) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      return;
    }
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] {
      while (true) {
        const int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
        if (c < 0) return;  // shutdown() below
        char buf[1024];
        (void)::recv(c, buf, sizeof buf, 0);
        const std::string reply = "HTTP/1.0 200 OK\r\nContent-Length: 12\r\n\r\nhello-sbx-ok";
        (void)::send(c, reply.data(), reply.size(), MSG_NOSIGNAL);
        ::close(c);
      }
    });
  }
  ~LoopbackServer() {
    ::shutdown(fd_, SHUT_RDWR);
    if (thread_.joinable()) thread_.join();
    ::close(fd_);
  }
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
  std::thread thread_;
};

TEST_F(ToolsBash, SandboxHasNoNetwork) {
  if (sandbox_unavailable()) GTEST_SKIP() << reason_;
  LoopbackServer server;
  ASSERT_GT(server.port(), 0);
  std::string fetch =
      "curl -s --max-time 2 http://127.0.0.1:" + std::to_string(server.port()) + "/";
  if (std::system("command -v curl >/dev/null 2>&1") != 0) {
    fetch = "exec 3<>/dev/tcp/127.0.0.1/" + std::to_string(server.port()) +
            " && printf 'GET / HTTP/1.0\\r\\n\\r\\n' >&3 && cat <&3";
  }
  const ToolResult open = bash(fetch);
  EXPECT_FALSE(open.is_error) << open.text;
  EXPECT_NE(open.text.find("hello-sbx-ok"), std::string::npos) << open.text;

  ctx_.sandbox = true;
  const ToolResult closed = bash(fetch);
  EXPECT_TRUE(closed.is_error) << closed.text;
  EXPECT_EQ(closed.text.find("hello-sbx-ok"), std::string::npos) << closed.text;
}

TEST_F(ToolsBash, SandboxWritesOnlyInsideTheWorkspace) {
  if (sandbox_unavailable()) GTEST_SKIP() << reason_;
  ctx_.sandbox = true;
  const std::string outside = "/var/mf-probe-" + std::to_string(::getpid());
  const ToolResult denied = bash("touch " + outside);
  EXPECT_TRUE(denied.is_error) << denied.text;
  EXPECT_NE(denied.text.find("Read-only file system"), std::string::npos) << denied.text;
  EXPECT_FALSE(fs::exists(outside));
  const ToolResult home =
      bash("touch \"$HOME/mf-sandbox-probe-" + std::to_string(::getpid()) + "\"");
  EXPECT_TRUE(home.is_error) << home.text;

  const ToolResult inside = bash("echo made > inside.txt && mkdir -p d && pwd");
  EXPECT_FALSE(inside.is_error) << inside.text;
  EXPECT_EQ(inside.text, root_ + "\n");
  EXPECT_EQ(slurp(fs::path(root_) / "inside.txt"), "made\n");

  // /tmp is private: a file made there does not appear outside.
  const std::string tmp_probe = "/tmp/mf-sbx-tmp-" + std::to_string(::getpid());
  EXPECT_FALSE(bash("touch " + tmp_probe).is_error);
  EXPECT_FALSE(fs::exists(tmp_probe));
  // So are /var/tmp and /run.
  for (const char* dir : {"/var/tmp", "/run"}) {
    const std::string probe = std::string(dir) + "/mf-sbx-tmp-" + std::to_string(::getpid());
    EXPECT_FALSE(bash("touch " + probe).is_error);
    EXPECT_FALSE(fs::exists(probe));
  }
}

TEST_F(ToolsBash, SandboxCancellationEndsEverythingInside) {
  if (sandbox_unavailable()) GTEST_SKIP() << reason_;
  ctx_.sandbox = true;
  // A unique duration marks the sandboxed sleeps in /proc.
  const std::string marker = "1" + std::to_string(::getpid() % 100000) + ".5";
  std::thread canceller([&] {
    std::this_thread::sleep_for(300ms);
    cancel_ = true;
  });
  const auto t0 = Clock::now();
  const ToolResult r = bash("sleep " + marker + " & sleep " + marker + "; wait");
  canceller.join();
  EXPECT_LT(ms_since(t0), 1500);
  EXPECT_EQ(r.text, "Command aborted");
  const auto until = Clock::now() + 1s;
  while (!processes_with("sleep " + marker).empty() && Clock::now() < until) {
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_TRUE(processes_with("sleep " + marker).empty());
}

TEST_F(ToolsBash, SandboxTruncatedOutputIsLoggedOutside) {
  if (sandbox_unavailable()) GTEST_SKIP() << reason_;
  ctx_.sandbox = true;
  const ToolResult r = bash("seq 3000");
  EXPECT_FALSE(r.is_error) << r.text;
  EXPECT_EQ(slurp(log_path_of(r)), expected_seq(3000));
}

// After a sandboxed call no setuid or setgid bit is left in the workspace, whatever the file type,
// however deep; a symbolic link is not followed out of it (its target keeps its mode), and a FIFO
// is changed without being opened (which would block).
TEST_F(ToolsBash, SandboxStripsSetIdBitsWithoutFollowingLinks) {
  if (sandbox_unavailable()) GTEST_SKIP() << reason_;
  const std::string outside = make_temp_dir("mf-bash-outside");
  ASSERT_FALSE(outside.empty());
  const fs::path target = fs::path(outside) / "target";
  std::ofstream(target) << "#!/bin/sh\n";
  ASSERT_EQ(::chmod(target.c_str(), 04755), 0);
  const fs::path ws(root_);
  fs::create_directories(ws / "deep/a/b/c");
  std::ofstream(ws / "deep/a/b/c/file") << "x";
  ASSERT_EQ(::chmod((ws / "deep/a/b/c/file").c_str(), 06755), 0);
  ASSERT_EQ(::mkfifo((ws / "pipe").c_str(), 0644), 0);
  ASSERT_EQ(::chmod((ws / "pipe").c_str(), 04644), 0);
  fs::create_directory(ws / "g");
  ASSERT_EQ(::chmod((ws / "g").c_str(), 02755), 0);
  fs::create_symlink(target, ws / "link");

  ctx_.sandbox = true;
  const ToolResult r = bash("echo done");
  EXPECT_FALSE(r.is_error) << r.text;
  EXPECT_EQ(r.text,
            "done\n\n[Sandbox: removed the setuid/setgid bits of 3 files: deep/a/b/c/file (6755 -> "
            "755), g (2755 -> 755), pipe (4644 -> 644)]");
  const auto mode = [](const fs::path& p) {
    struct stat st {};
    return ::lstat(p.c_str(), &st) == 0 ? st.st_mode & 07777 : 0;
  };
  EXPECT_EQ(mode(ws / "deep/a/b/c/file"), 0755u);
  EXPECT_EQ(mode(ws / "pipe"), 0644u);
  EXPECT_EQ(mode(ws / "g"), 0755u);
  EXPECT_EQ(mode(target), 04755u);  // the link's target, outside the workspace
  std::error_code ec;
  fs::remove_all(outside, ec);
}

// --- process::run_shell directly ---

TEST(ProcessRunShell, ReportsExitCodesAndSignals) {
  process::ShellCommand c;
  c.argv = {"/bin/sh", "-c", "exit 7"};
  auto r = process::run_shell(c);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exit_code, 7);
  c.argv = {"sh", "-c", "kill -TERM $$"};  // found on PATH
  r = process::run_shell(c);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->exit_code.has_value());
  EXPECT_FALSE(r->timed_out || r->cancelled);
}

TEST(ProcessRunShell, MissingProgramOrDirectoryFails) {
  process::ShellCommand c;
  c.argv = {"mf-no-such-program-anywhere"};
  EXPECT_FALSE(process::run_shell(c).ok());
  c.argv = {"/bin/true"};
  c.cwd = "/nonexistent/mf-dir";
  EXPECT_FALSE(process::run_shell(c).ok());
}

TEST(ProcessRunShell, AddsEnvironmentAndUsesCwd) {
  process::ShellCommand c;
  c.argv = {"/bin/sh", "-c", "printf '%s %s' \"$MF_PROBE\" \"$PWD\""};
  c.env = {{"MF_PROBE", "set"}};
  c.cwd = "/";
  std::string out;
  c.on_output = [&](std::string_view chunk) { out.append(chunk); };
  ASSERT_TRUE(process::run_shell(c).ok());
  EXPECT_EQ(out, "set /");
}

TEST(ProcessRunShell, OnlyTheStandardDescriptorsAreInherited) {
  const int inheritable = ::open("/dev/null", O_RDONLY);  // deliberately without O_CLOEXEC
  ASSERT_GE(inheritable, 3);
  process::ShellCommand c;
  const std::string fd = std::to_string(inheritable);
  c.argv = {"/bin/bash", "-c", "[ -e /proc/self/fd/" + fd + " ] && echo leaked || echo closed"};
  std::string out;
  c.on_output = [&](std::string_view chunk) { out.append(chunk); };
  ASSERT_TRUE(process::run_shell(c).ok());
  ::close(inheritable);
  EXPECT_EQ(out, "closed\n");
}

TEST(ProcessRunShell, CancellationIsNoticedWithinAPollStep) {
  std::atomic<bool> cancel{false};
  process::ShellCommand c;
  c.argv = {"/bin/sh", "-c", "sleep 100"};
  c.cancel = &cancel;
  std::thread canceller([&] {
    std::this_thread::sleep_for(100ms);
    cancel = true;
  });
  const auto t0 = Clock::now();
  auto r = process::run_shell(c);
  canceller.join();
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->cancelled);
  EXPECT_FALSE(r->exit_code.has_value());
  EXPECT_LT(ms_since(t0), 400);
}

TEST(ProcessRunShell, DeadlineKillsTheGroup) {
  process::ShellCommand c;
  c.argv = {"/bin/sh", "-c", "sleep 100 & sleep 100"};
  c.deadline = Clock::now() + 150ms;
  const auto t0 = Clock::now();
  auto r = process::run_shell(c);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->timed_out);
  EXPECT_LT(ms_since(t0), 600);
}

}  // namespace
}  // namespace mf::tools
