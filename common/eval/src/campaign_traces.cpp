// An eval report's traces verified from a directory or a store (campaign_traces.hpp).
#include "mf/eval/campaign_traces.hpp"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <mutex>
#include <numeric>
#include <string_view>
#include <vector>

#include "mf/diag/codes.hpp"
#include "mf/eval/report.hpp"
#include "mf/io/file.hpp"
#include "mf/json/jsonl.hpp"
#include "mf/store/store.hpp"

namespace mf::eval {

namespace {

namespace codes = diag::codes;

constexpr std::string_view kSuffix = ".jsonl";

// The attempt a trace file in the directory stands for: its name less ".jsonl".
std::string_view attempt_of(std::string_view path, std::size_t prefix) {
  return path.substr(prefix, path.size() - prefix - kSuffix.size());
}

// The `*.jsonl` in `dir` that name no attempt, as DIR/<name>, sorted by name. MF-S013 when `dir`
// cannot be listed.
Result<std::vector<std::string>> extra_traces(const std::vector<AttemptTrace>& attempts,
                                              const std::string& dir) {
  auto listed = trace::traces_in(dir);
  if (!listed) return listed.take_diagnostics();
  std::vector<std::string_view> named;
  named.reserve(attempts.size());
  for (const AttemptTrace& a : attempts) named.emplace_back(a.attempt);
  std::sort(named.begin(), named.end());
  const std::size_t prefix = dir.ends_with('/') ? dir.size() : dir.size() + 1;
  std::vector<std::string> extra;
  for (std::string& path : *listed) {
    if (!std::binary_search(named.begin(), named.end(), attempt_of(path, prefix))) {
      extra.push_back(std::move(path));
    }
  }
  return extra;
}

// The attempt whose trace has `digest` (hex), by a binary search of `by_digest`; null for none.
const AttemptTrace* owner_of(const std::vector<AttemptTrace>& attempts,
                             const std::vector<std::uint32_t>& by_digest,
                             const std::string& digest) {
  hash::Digest d{};
  if (!hash::from_hex(digest, d)) return nullptr;
  const auto at = std::lower_bound(
      by_digest.begin(), by_digest.end(), d,
      [&](std::uint32_t i, const hash::Digest& want) { return attempts[i].trace_sha256 < want; });
  return at != by_digest.end() && attempts[*at].trace_sha256 == d ? &attempts[*at] : nullptr;
}

// Writes the line of a trace the report does not name; false when it cannot be written.
Status write_extra(const std::string& path, int out_fd) {
  json::Value line = json::Object{};
  line.set("path", path);
  line.set("status", "extra");
  std::string text;
  json::append_jsonl(line, text);
  return io::write_all(out_fd, text);
}

}  // namespace

diag::CommandOutcome campaign_traces_command(const CampaignTraces& from,
                                             const trace::VerifyOptions& options, std::size_t jobs,
                                             int out_fd, const trace::OnTraceError& on_error,
                                             const trace::Progress& progress) {
  auto attempts = report_attempt_traces(from.report);
  if (!attempts) return diag::CommandOutcome::stopped_by(attempts.take_diagnostics(), from.report);
  std::vector<std::string> extra;
  std::unique_ptr<store::Store> store;
  if (from.store.empty()) {
    auto listed = extra_traces(*attempts, from.dir);
    if (!listed) return diag::CommandOutcome::stopped_by(listed.take_diagnostics());
    extra = std::move(*listed);
  } else {
    auto opened = store::Store::open(from.store, store::Mode::ReadOnly);
    if (!opened) return diag::CommandOutcome::stopped_by(opened.take_diagnostics());
    store = std::move(*opened);
  }
  // The attempts by digest: a file that fails its digest may hold another attempt's trace.
  std::vector<std::uint32_t> by_digest(attempts->size());
  std::iota(by_digest.begin(), by_digest.end(), 0u);
  std::sort(by_digest.begin(), by_digest.end(), [&](std::uint32_t a, std::uint32_t b) {
    return (*attempts)[a].trace_sha256 < (*attempts)[b].trace_sha256;
  });
  const std::string prefix = from.dir.ends_with('/') ? from.dir : from.dir + "/";
  std::mutex store_mutex;  // a Store is used by one thread at a time
  const trace::LineOf line_of = [&](std::size_t i, std::optional<diag::Diagnostic>& error) {
    const AttemptTrace& a = (*attempts)[i];
    trace::VerifyOptions own = options;
    own.expect_sha256 = hash::to_hex(a.trace_sha256);
    const trace::TraceRef ref{store ? std::string() : prefix + a.attempt + std::string(kSuffix),
                              a.attempt, own.expect_sha256};
    Result<trace::Summary> verified = trace::Summary{};
    if (store) {
      // One trace per worker in memory: the object's bytes, copied out of the map under the lock.
      Result<std::string> bytes = [&] {
        const std::lock_guard lock(store_mutex);
        return store->get(a.trace_sha256);
      }();
      verified =
          bytes ? trace::verify(*bytes, own) : Result<trace::Summary>(bytes.take_diagnostics());
    } else {
      verified = trace::verify_file(ref.path, own);
    }
    if (verified && verified->first_error &&
        verified->first_error->code == codes::kTraceDigestMismatch) {
      if (const AttemptTrace* other = owner_of(*attempts, by_digest, verified->trace_sha256)) {
        verified->first_error->message += ": it holds the trace of attempt " + other->attempt;
      }
    }
    json::Value line = trace::summary_line(ref, std::move(verified), error);
    if (store) {
      line.set("object", own.expect_sha256);
      if (error) error->source = own.expect_sha256;
    }
    return line;
  };
  diag::CommandOutcome outcome =
      trace::verify_lines(attempts->size(), line_of, jobs, out_fd, on_error, progress);
  if (outcome.stopped()) return outcome;
  for (const std::string& path : extra) {
    if (Status written = write_extra(path, out_fd); !written) {
      return diag::CommandOutcome::stopped_by(written.take_diagnostics());
    }
    diag::Diagnostic d =
        diag::error(codes::kUnknownCase, "the report names no attempt \"" +
                                             std::string(attempt_of(path, prefix.size())) + "\"");
    d.source = path;
    on_error(d);
    outcome.failed = true;
  }
  return outcome;
}

}  // namespace mf::eval
