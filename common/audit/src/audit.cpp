// The audit of audit.hpp: each check of the manifest runs a binary in the manifest's directory on
// the paths the manifest gives, so what the binaries print, and with it the report, does not depend
// on where the project is checked out.
#include "mf/audit/audit.hpp"

#include <algorithm>
#include <filesystem>

#include "mf/diag/codes.hpp"
#include "mf/hash/sha256.hpp"
#include "mf/io/file.hpp"
#include "mf/json/canonical.hpp"
#include "mf/json/reader.hpp"
#include "mf/process/process.hpp"
#include "mf/store/plumbing.hpp"
#include "mf/store/refs.hpp"
#include "mf/store/store.hpp"
#include "receipt.hpp"

namespace mf::audit {

namespace fs = std::filesystem;

json::Value Receipt::to_json() const {
  json::Value r;
  r.set("capability", capability_);
  if (!subject_.empty()) r.set("subject", subject_);
  if (!inputs_.is_null()) r.set("inputs", inputs_);
  r.set("holds", holds());
  if (!evidence_.is_null()) r.set("evidence", evidence_);
  r.set("evidence_sha256",
        !evidence_sha256_.empty()
            ? evidence_sha256_
            : json::canonical_digest(evidence_.is_null() ? json::Object{} : evidence_));
  json::Array f;
  for (const auto& s : failures_) f.push_back(s);
  r.set("failures", std::move(f));
  return r;
}

Result<Ran> exec(const std::string& bin_dir, const std::string& cwd, const std::string& tool,
                 std::vector<std::string> args) {
  process::Command c;
  c.program = (fs::path(bin_dir) / tool).string();
  c.args = std::move(args);
  c.cwd = cwd;
  // A campaign of many thousand traces takes longer than a single run; the audit waits for it.
  c.timeout = std::chrono::hours(6);
  Result<process::Completed> done = process::run(c);
  if (!done) return done.take_diagnostics();
  return Ran{done->exit_code, std::move(done->out), std::move(done->err)};
}

std::string string_at(const json::Value& v, std::string_view key) {
  const json::Value* f = v.find(key);
  return f && f->is_string() ? f->as_string() : std::string();
}

std::int64_t int_at(const json::Value& v, std::string_view key) {
  const json::Value* f = v.find(key);
  return f ? f->as_exact_int().value_or(-1) : -1;
}

namespace {

// A receipt's failure lines at most: the rest is counted, so a campaign with thousands of bad
// traces still gives a readable report.
constexpr std::size_t kMaxFailures = 20;

class Checks {
 public:
  explicit Checks(const AuditRequest& request) : req_(request), m_(request.manifest) {}

  Status run(std::vector<Receipt>& receipts) {
    for (const TraceCheck& t : m_.traces) total_ += t.strict ? 2 : 1;
    for (const CampaignCheck& c : m_.campaigns) total_ += c.gate ? 3 : 2;
    total_ += m_.harnesses.size() + m_.plans.size() + m_.pins.size();
    for (const HarnessCheck& h : m_.harnesses) {
      if (Status s = harness(h, next(receipts, "compiled_harness", h.source)); !s) return s;
    }
    for (const PlanCheck& p : m_.plans) {
      if (Status s = plan(p, next(receipts, "verified_plan", p.path)); !s) return s;
    }
    for (const TraceCheck& t : m_.traces) {
      if (Status s = trace(t, next(receipts, "replayed_trace", t.path)); !s) return s;
      if (t.strict) {
        if (Status s = strict(t, next(receipts, "strict_replay", t.path)); !s) return s;
      }
    }
    for (const CampaignCheck& c : m_.campaigns) {
      if (Status s = campaign_traces(c, next(receipts, "campaign_traces", c.report)); !s) return s;
      if (Status s = campaign_statistics(c, next(receipts, "campaign_statistics", c.report)); !s) {
        return s;
      }
      if (c.gate) {
        if (Status s = gate(c, next(receipts, "evaluation_gate", c.report)); !s) return s;
      }
    }
    for (const PinCheck& p : m_.pins) {
      Receipt& r = next(receipts, "pinned_file", p.path);
      const std::string digest = input(r, p.path);
      r.check(digest == p.sha256,
              p.path + " has SHA-256 " + digest + ", not the pinned " + p.sha256);
      r.evidence_sha256(digest);
    }
    return {};
  }

 private:
  // mf-compile SOURCE [--catalog C] [--profiles P] -o -: the plan's compiled_sha256 is the pin.
  Status harness(const HarnessCheck& h, Receipt& r) {
    std::vector<std::string> args = {h.source};
    input(r, h.source);
    for (const auto& [option, path] :
         {std::pair{"--catalog", &h.catalog}, {"--profiles", &h.profiles}}) {
      if (path->empty()) continue;
      input(r, *path);
      args.insert(args.end(), {option, *path});
    }
    args.insert(args.end(), {"-o", "-"});
    Result<Ran> ran = exec_here(r, "mf-compile", args);
    if (!ran) return ran.take_diagnostics();
    if (!exited(r, "mf-compile " + h.source, *ran, 0)) return {};
    Result<json::Value> plan = json::parse_object(ran->out);
    const std::string compiled = plan ? string_at(*plan, "compiled_sha256") : std::string();
    r.check(compiled == h.compiled_sha256, h.source + " compiles to compiled_sha256 " + compiled +
                                               ", not the pinned " + h.compiled_sha256);
    return {};
  }

  // mf-compile verify PATH, and the pin on the plan's compiled_sha256.
  Status plan(const PlanCheck& p, Receipt& r) {
    input(r, p.path);
    Result<Ran> ran = exec_here(r, "mf-compile", {"verify", p.path});
    if (!ran) return ran.take_diagnostics();
    if (!exited(r, "mf-compile verify " + p.path, *ran, 0) || p.compiled_sha256.empty()) return {};
    Result<json::Value> verified = json::parse_object(ran->out);
    const std::string compiled = verified ? string_at(*verified, "compiled_sha256") : "";
    r.check(compiled == p.compiled_sha256,
            p.path + " has compiled_sha256 " + compiled + ", not the pinned " + p.compiled_sha256);
    return {};
  }

  // mf-replay [--expect-sha256 H] [--mac-key-env N] TRACE: the chain, the digest, the MAC.
  Status trace(const TraceCheck& t, Receipt& r) {
    input(r, t.path);
    std::vector<std::string> args;
    if (!t.sha256.empty()) args.insert(args.end(), {"--expect-sha256", t.sha256});
    if (!t.mac_key_env.empty()) args.insert(args.end(), {"--mac-key-env", t.mac_key_env});
    args.push_back(t.path);
    Result<Ran> ran = exec_here(r, "mf-replay", args);
    if (!ran) return ran.take_diagnostics();
    if (!exited(r, "mf-replay " + t.path, *ran, 0)) return {};
    Result<json::Value> summary = json::parse_object(ran->out);
    r.check(summary && string_at(*summary, "status") == "ok", t.path + " does not replay ok");
    if (!t.mac_key_env.empty()) {
      r.check(summary && string_at(*summary, "mac") == "verified",
              t.path + " carries no MAC to verify");
    }
    return {};
  }

  // mf-replay --strict: the run's every decision made again from its recorded replies.
  Status strict(const TraceCheck& t, Receipt& r) {
    input(r, t.path);
    input(r, t.strict->plan);
    Result<Ran> ran = exec_here(
        r, "mf-replay",
        {"--strict", "--plan", t.strict->plan, "--workspace", t.strict->workspace, t.path});
    if (!ran) return ran.take_diagnostics();
    if (!exited(r, "mf-replay --strict " + t.path, *ran, 0)) return {};
    Result<json::Value> summary = json::parse_object(ran->out);
    r.check(summary && string_at(*summary, "status") == "identical",
            t.path + " does not replay identically");
    return {};
  }

  // mf-replay --report: every attempt's trace verified and hashing to the report's trace_sha256,
  // and no trace the report does not name.
  Status campaign_traces(const CampaignCheck& c, Receipt& r) {
    input(r, c.report);
    std::vector<std::string> args = jobs();
    args.insert(args.end(), {"--report", c.report});
    if (!c.traces.empty()) args.push_back(c.traces);
    if (!c.store.empty()) args.insert(args.end(), {"--store", c.store});
    if (!c.mac_key_env.empty()) args.insert(args.end(), {"--mac-key-env", c.mac_key_env});
    Result<Ran> ran = exec_here(r, "mf-replay", args);
    if (!ran) return ran.take_diagnostics();
    exited(r, "mf-replay --report " + c.report, *ran, 0);
    return {};
  }

  // mf-eval verify: each attempt's entry is what its trace gives (graded again against the suite
  // when there is one), and the summary is what the entries give.
  Status campaign_statistics(const CampaignCheck& c, Receipt& r) {
    input(r, c.report);
    std::vector<std::string> args = {"verify", c.report};
    const std::vector<std::string> j = jobs();
    args.insert(args.end(), j.begin(), j.end());
    if (!c.traces.empty()) args.insert(args.end(), {"--traces", c.traces});
    if (!c.store.empty()) args.insert(args.end(), {"--store", c.store});
    if (!c.suite.empty()) {
      input(r, c.suite);
      args.insert(args.end(), {"--suite", c.suite});
    }
    if (!c.mac_key_env.empty()) args.insert(args.end(), {"--mac-key-env", c.mac_key_env});
    Result<Ran> ran = exec_here(r, "mf-eval", args);
    if (!ran) return ran.take_diagnostics();
    exited(r, "mf-eval verify " + c.report, *ran, 0);
    return {};
  }

  // mf-eval compare against the baseline, with the manifest's thresholds.
  Status gate(const CampaignCheck& c, Receipt& r) {
    input(r, c.gate->baseline);
    input(r, c.report);
    std::vector<std::string> args = {"compare", "--baseline", c.gate->baseline, "--candidate",
                                     c.report};
    for (const auto& [option, value] : c.gate->options) args.insert(args.end(), {option, value});
    Result<Ran> ran = exec_here(r, "mf-eval", args);
    if (!ran) return ran.take_diagnostics();
    exited(r, "mf-eval compare --baseline " + c.gate->baseline, *ran, 0);
    return {};
  }

  // The receipt of the next check, announced to the progress callback.
  Receipt& next(std::vector<Receipt>& receipts, const char* capability,
                const std::string& subject) {
    if (req_.progress) req_.progress(++done_, total_, std::string(capability) + " " + subject);
    return receipts.emplace_back(capability, subject);
  }

  std::vector<std::string> jobs() const {
    if (req_.jobs == 0) return {};
    return {"-j", std::to_string(req_.jobs)};
  }

  // Runs the binary in the manifest's directory; what it printed is the receipt's evidence.
  Result<Ran> exec_here(Receipt& r, const std::string& tool, const std::vector<std::string>& args) {
    Result<Ran> ran = exec(req_.bin_dir, m_.dir, tool, args);
    if (ran) r.evidence_sha256(hash::sha256_hex(ran->out));
    return ran;
  }

  // Records the SHA-256 of the file at `path` (relative to the manifest) as an input, streamed as
  // `mf-store hash` streams it, so an input of any size costs a fixed buffer.
  std::string input(Receipt& r, const std::string& path) {
    Result<std::string> digest = store::hash_input((fs::path(m_.dir) / path).string());
    const std::string hex = digest ? *digest : std::string();
    r.check(digest.ok(), "cannot read " + path);
    r.input(path, hex);
    return hex;
  }

  // Whether the binary exited `want`; if not, the receipt fails with what the binary said on
  // stderr, line by line, each line naming its culprit, then its exit status.
  static bool exited(Receipt& r, const std::string& what, const Ran& ran, int want) {
    if (ran.exit_code == want) return true;
    std::size_t lines = 0, start = 0;
    while (start < ran.err.size()) {
      std::size_t end = ran.err.find('\n', start);
      if (end == std::string::npos) end = ran.err.size();
      if (end > start && lines++ < kMaxFailures) {
        r.check(false, diag::printable(std::string_view(ran.err).substr(start, end - start)));
      }
      start = end + 1;
    }
    if (lines > kMaxFailures) {
      r.check(false, "... and " + std::to_string(lines - kMaxFailures) + " more line(s)");
    }
    r.check(false, what + " exited " + std::to_string(ran.exit_code));
    return false;
  }

  const AuditRequest& req_;
  const Manifest& m_;
  std::size_t total_ = 0;
  std::size_t done_ = 0;
};

std::string row(std::string_view label, std::string_view value) {
  std::string line(label);
  line.resize(std::max<std::size_t>(line.size() + 1, 29), ' ');
  const std::size_t width = 64;
  if (value.size() < width) line.append(width - value.size(), ' ');
  line.append(value);
  line.push_back('\n');
  return line;
}

std::string pair_of(const json::Value& v) {
  return std::to_string(int_at(v, "observed")) + " / " + std::to_string(int_at(v, "cap"));
}

}  // namespace

Result<AuditOutcome> run_audit(const AuditRequest& req) {
  std::vector<Receipt> receipts;
  json::Value product;
  // The product self-test keeps its scratch files under DIR/work.
  const std::string work = (fs::path(req.out_dir) / "work").string();
  std::error_code ec;
  fs::create_directories(req.manifest.fixtures.empty() ? req.out_dir : work, ec);
  if (ec) {
    return diag::error(diag::codes::kBadOutputPath,
                       "cannot create " + req.out_dir + ": " + ec.message());
  }
  if (!req.manifest.fixtures.empty()) {
    ProductRequest pr{.fixtures = (fs::path(req.manifest.dir) / req.manifest.fixtures).string(),
                      .work_dir = work,
                      .bin_dir = req.bin_dir,
                      .store_dir = req.store_dir};
    Result<std::vector<Receipt>> own = product_receipts(pr, product);
    if (!own) return own.take_diagnostics();
    receipts = std::move(*own);
  }
  if (Status s = Checks(req).run(receipts); !s) return s.take_diagnostics();

  json::Value report;
  report.set("v", 2);
  report.set("kind", "millforge_exit_report");
  json::Value manifest;
  manifest.set("name", req.manifest.name);
  manifest.set("sha256", req.manifest.sha256);
  report.set("manifest", std::move(manifest));
  if (!product.is_null()) report.set("product", std::move(product));
  json::Array items;
  bool all = true;
  for (const Receipt& r : receipts) {
    items.push_back(r.to_json());
    all = all && r.holds();
  }
  report.set("receipts", std::move(items));
  report.set("passed", all);
  AuditOutcome outcome;
  outcome.report_sha256 = json::canonical_digest(report);  // over the report without the field
  report.set("report_sha256", outcome.report_sha256);
  const std::string bytes = json::canonical_file(report);
  Status published = io::publish_atomic((fs::path(req.out_dir) / "exit-report.json").string(),
                                        bytes, io::Clobber::Replace);
  if (!published) return published.take_diagnostics();
  if (!req.store_dir.empty()) {
    auto store = store::Store::open(req.store_dir, store::Mode::ReadWrite);
    if (!store) return store.take_diagnostics();
    auto kept = (*store)->put_named(store::refs::kAuditReport, bytes);
    if (!kept) return kept.take_diagnostics();
  }
  outcome.report = std::move(report);
  outcome.report_bytes = bytes.size();
  outcome.passed = all;
  return outcome;
}

std::string render_table(const AuditOutcome& o) {
  const json::Value& r = o.report;
  std::string t;
  if (const json::Value* p = r.find("product")) {
    const json::Value& cases = *p->find("evaluation_cases");
    t += row("task SHA-256", string_at(*p, "task_sha256"));
    t += row("model calls observed / cap", pair_of(*p->find("model_calls")));
    t += row("repairs observed / cap", pair_of(*p->find("repairs")));
    t += row("output-byte cap", std::to_string(int_at(*p, "output_byte_cap")));
    t += row("evaluation cases", std::to_string(int_at(cases, "passed")) + " / " +
                                     std::to_string(int_at(cases, "total")));
  }
  std::size_t holding = 0;
  const json::Array& receipts = r.find("receipts")->as_array();
  for (const json::Value& receipt : receipts) {
    if (receipt.find("holds")->as_bool()) {
      ++holding;
      continue;
    }
    const json::Array& failures = receipt.find("failures")->as_array();
    std::string subject = string_at(receipt, "subject");
    t += "does not hold: " + string_at(receipt, "capability") +
         (subject.empty() ? "" : " " + diag::printable(subject)) +
         (failures.empty() ? "" : ": " + failures.front().as_string()) + "\n";
  }
  t +=
      row("capability receipts", std::to_string(holding) + " / " + std::to_string(receipts.size()));
  t += row("report bytes", std::to_string(o.report_bytes));
  t += row("report SHA-256", o.report_sha256);
  return t;
}

}  // namespace mf::audit
