// mf-replay's verify and export commands (command.hpp), as outcomes named after the trace file.
#include "mf/trace/command.hpp"

#include <sys/stat.h>

#include <chrono>

#include "mf/io/file.hpp"
#include "mf/json/canonical.hpp"
#include "mf/json/jsonl.hpp"
#include "mf/json/reader.hpp"
#include "mf/trace/otlp.hpp"

namespace mf::trace {
namespace {

using diag::CommandOutcome;

std::string source_name(const std::string& path) {
  return path == "-" ? "<stdin>" : path;
}

// When the file was last written (its modification time), or now for stdin.
std::int64_t written_unix_ms(const std::string& path) {
  struct stat st {};
  if (path != "-" && ::stat(path.c_str(), &st) == 0) {
    return static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000 + st.st_mtim.tv_nsec / 1000000;
  }
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

CommandOutcome verify_command(const std::string& path, const VerifyOptions& options, int out_fd,
                              const Progress& progress) {
  auto summary = verify_file(path, options, progress);
  if (!summary) return CommandOutcome::stopped_by(summary.take_diagnostics(), source_name(path));
  std::string line;
  json::append_jsonl(to_json(*summary), line);
  if (Status written = io::write_all(out_fd, line); !written) {
    return CommandOutcome::stopped_by(written.take_diagnostics());
  }
  if (summary->status == Outcome::Ok) return {};
  return CommandOutcome::stopped_by({*summary->first_error}, source_name(path), diag::Job::Check);
}

std::int64_t run_start_ms(std::string_view trace, std::int64_t written_unix_ms) {
  std::int64_t last = 0;
  const auto end = trace.find_last_of('\n', trace.size() >= 2 ? trace.size() - 2 : 0);
  if (auto line = json::parse(trace.substr(end == std::string_view::npos ? 0 : end + 1))) {
    if (const auto* t = line->find("t_ms")) last = t->as_exact_int().value_or(0);
  }
  return written_unix_ms - last;
}

CommandOutcome export_otlp_command(const std::string& path,
                                   std::optional<std::int64_t> start_unix_ms) {
  const std::string source = source_name(path);
  Result<std::string> bytes = io::read_input(path, 256u << 20);
  if (!bytes) return CommandOutcome::stopped_by(bytes.take_diagnostics(), source);
  auto summary = verify(*bytes);
  if (!summary) return CommandOutcome::stopped_by(summary.take_diagnostics(), source);
  if (summary->status == Outcome::Corrupt) {
    return CommandOutcome::stopped_by({*summary->first_error}, source, diag::Job::Check);
  }
  const std::int64_t start =
      start_unix_ms ? *start_unix_ms : run_start_ms(*bytes, written_unix_ms(path));
  auto spans = to_otlp(*bytes, start);
  if (!spans) return CommandOutcome::stopped_by(spans.take_diagnostics(), source);
  if (Status written = io::write_output("-", json::canonical_file(*spans)); !written) {
    return CommandOutcome::stopped_by(written.take_diagnostics());
  }
  return {};
}

}  // namespace mf::trace
