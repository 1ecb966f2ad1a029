// mf-audit: run the product end to end and hash its capability receipts into one report
// (docs/cli.md).
#include <unistd.h>

#include <filesystem>
#include <optional>

#include "mf/audit/audit.hpp"
#include "mf/audit/sign.hpp"
#include "mf/cli/cli.hpp"
#include "mf/io/file.hpp"
#include "mf/json/canonical.hpp"
#include "mf/process/process.hpp"

namespace cli = mf::cli;

namespace {

// The product's self-test manifest: in DIR when given, else the source tree's, else the one
// installed beside the binaries (PREFIX/share/millforge/fixtures).
std::string self_test_manifest(const std::string& fixtures) {
  const std::string rel = "audit/self-test.yaml";
  if (!fixtures.empty()) return fixtures + "/" + rel;
  if (std::filesystem::exists("fixtures/" + rel)) return "fixtures/" + rel;
  return mf::process::self_directory() + "/../share/millforge/fixtures/" + rel;
}

}  // namespace

int main(int argc, char** argv) {
  const cli::Tool tool{
      .name = "mf-audit",
      .summary =
          "Audit a project from a manifest: run the product's binaries over its harnesses, plans, "
          "traces and campaigns and hash the receipts into one reproducible exit report.",
      .usage =
          "mf-audit [MANIFEST] [--out-dir DIR] [-j N] [--expect-sha256 HEX]\n"
          "                [--sign-key FILE | --sign-key-env NAME] [--mac-key-env NAME]\n"
          "       mf-audit verify REPORT [--envelope FILE] [--public-key PEM] [--mac-key-env NAME]",
      .examples =
          {
              "mkdir -p audit-out && mf-audit audit/manifest.yaml --out-dir audit-out",
              "mf-audit audit/manifest.yaml --out-dir audit-out --sign-key-env MF_AUDIT_KEY -j 4",
              "mf-audit --out-dir target/audit --expect-sha256 \"$PINNED\"",
              "mf-audit --quiet audit/manifest.yaml | jq '.receipts[] | {capability, subject, "
              "holds}'",
              "mf-audit verify audit-out/exit-report.json --public-key audit.pub.pem",
          },
      .positional = "operand",
      .details =
          "Reads MANIFEST (YAML or JSON, docs/formats/audit-manifest.md), refuses it with exit 2 "
          "before anything runs when a member is unknown, a file missing or a pin malformed, then "
          "runs the binaries in the manifest's directory: mf-compile for each harness (its "
          "compiled digest against the pin) and plan (verify), mf-replay for each trace (digest or "
          "MAC, and --strict when asked) and for every trace of each campaign (--report, matched "
          "to the report's trace_sha256, none missing or extra), mf-eval verify for each "
          "campaign's statistics and mf-eval compare for its gate; pins are file digests. Writes "
          "DIR/exit-report.json (also on stdout): one receipt per check with its capability, "
          "subject, inputs' digests, outcome and evidence digest; byte-identical for identical "
          "inputs in any directory. Without MANIFEST: the product's self-test, "
          "fixtures/audit/self-test.yaml in the source tree, else the installed "
          "share/millforge/fixtures/audit/self-test.yaml (or DIR/audit/self-test.yaml with "
          "--fixtures DIR). The table goes to stderr. Exit 1 when a receipt does not hold (each "
          "named on stderr) or the report digest differs from --expect-sha256. With --sign-key or "
          "--sign-key-env, also DIR/exit-report.dsse.json: a DSSE envelope of an in-toto "
          "Statement about the report, signed with Ed25519; with --mac-key-env, "
          "DIR/exit-report.mac.json: the report's HMAC-SHA256. 'verify' checks them offline: exit "
          "0 verified, 1 a check failed (named on stderr), 2 unreadable or malformed input "
          "(docs/audit.md).",
      .commands = {"verify"},
      .command_lines = {{"verify", "check a report's signature or MAC offline"}},
  };
  cli::Options d;
  const auto fixtures =
      d.text({.name = "fixtures",
              .help = "the product self-test of this fixtures directory (DIR/audit/self-test.yaml)",
              .value = "DIR",
              .commands = {""},
              .path = cli::Path::InDir});
  const auto jobs = d.number({"jobs,j",
                              "threads for each campaign's traces (default: the binaries' own)",
                              "N",
                              {""},
                              {},
                              1});
  const auto out_dir = d.text({.name = "out-dir",
                               .help = "where exit-report.json and the work files go; it must "
                                       "exist (default: target/audit, made when missing)",
                               .value = "DIR",
                               .commands = {""},
                               .path = cli::Path::OutDir});
  const auto expect =
      d.text({"expect-sha256", "fail unless the report digest is exactly this", "HEX", {""}});
  const auto bin_dir = d.text({.name = "bin-dir",
                               .help = "where the mf-* binaries are (default: beside mf-audit)",
                               .value = "DIR",
                               .commands = {""},
                               .path = cli::Path::InDir});
  const auto store = d.text({.name = "store",
                             .help = "keep the report in this store (also MF_STORE)",
                             .value = "DIR",
                             .commands = {""},
                             .path = cli::Path::Store});
  const auto sign_key = d.text(
      {"sign-key", "sign the report with this Ed25519 private key (PKCS#8 PEM)", "FILE", {""}});
  const auto sign_key_env =
      d.text({"sign-key-env", "sign with the PEM private key held in this variable", "NAME", {""}});
  const auto mac_key_env =
      d.text({"mac-key-env", "HMAC-SHA256 key: the variable that holds it", "NAME"});
  const auto envelope =
      d.text({"envelope", "the DSSE envelope (default: beside REPORT)", "FILE", {"verify"}});
  const auto public_key =
      d.text({"public-key", "check the envelope's signature with this key", "PEM", {"verify"}});
  return cli::run(argc, argv, tool, d, [&](cli::Context& ctx) -> int {
    const auto operands = ctx.positionals();
    std::string mac_key;
    if (int rc = cli::secret_from_env(ctx, mac_key_env, mac_key)) return rc;
    if (!operands.empty() && operands[0] == "verify") {
      if (operands.size() != 2) return cli::usage_error(ctx.tool, "verify takes one REPORT");
      if (!ctx.given(public_key) && mac_key.empty()) {
        return cli::usage_error(ctx.tool, "verify needs --public-key or --mac-key-env");
      }
      mf::audit::VerifyRequest request{
          .report_path = operands[1], .envelope_path = ctx.get(envelope), .mac_key = mac_key};
      if (ctx.given(public_key)) {
        auto pem = mf::io::read_input(ctx.get(public_key), 1u << 20);
        if (!pem) return cli::report(ctx.tool, pem.diagnostics());
        request.public_key_pem = std::move(*pem);
      }
      auto verified = mf::audit::verify(request);
      if (!verified) return cli::report(ctx.tool, verified.diagnostics());
      auto written = mf::io::write_all(STDOUT_FILENO, mf::json::canonical_file(verified->summary));
      if (!written) return cli::report(ctx.tool, written.diagnostics());
      if (verified->failed.empty()) return cli::kSuccess;
      std::string which;
      for (const auto& f : verified->failed) which += (which.empty() ? "" : ", ") + f;
      cli::say(ctx.tool.name + ": " + mf::diag::printable(operands[1]) +
               ": does not verify: " + which);
      return cli::kFailure;
    }
    // The signing key is read and checked before any work, so a bad key leaves no files.
    mf::audit::Sealing sealing{.mac_key = mac_key};
    if (ctx.given(sign_key) && ctx.given(sign_key_env)) {
      return cli::usage_error(ctx.tool, "--sign-key and --sign-key-env are exclusive");
    }
    if (ctx.given(sign_key)) {
      auto pem = mf::io::read_input(ctx.get(sign_key), 1u << 20);
      if (!pem) return cli::report(ctx.tool, pem.diagnostics());
      sealing.sign_key_pem = std::move(*pem);
    } else if (int rc = cli::secret_from_env(ctx, sign_key_env, sealing.sign_key_pem)) {
      return rc;
    }
    if (!sealing.sign_key_pem.empty()) {
      if (auto problem = mf::audit::signing_key_problem(sealing.sign_key_pem); !problem.empty()) {
        return cli::usage_error(ctx.tool, "signing key: " + problem);
      }
    }
    if (operands.size() > 1) {
      return cli::usage_error(ctx.tool, "unexpected argument '" + operands[1] + "'");
    }
    if (!operands.empty() && ctx.given(fixtures)) {
      return cli::usage_error(ctx.tool, "a MANIFEST or --fixtures, not both");
    }
    const std::string manifest_path =
        !operands.empty() ? operands[0] : self_test_manifest(ctx.get(fixtures));
    auto manifest = mf::audit::load_manifest(manifest_path);
    if (!manifest) return cli::report(ctx.tool, manifest.diagnostics(), manifest_path);
    mf::audit::AuditRequest request;
    request.manifest = std::move(*manifest);
    request.jobs = static_cast<std::size_t>(ctx.get(jobs, 0));
    std::optional<cli::ProgressLine> progress;
    progress.emplace(ctx.progress(), "mf-audit " + manifest_path);
    if (progress->enabled()) {
      request.progress = [&progress](std::size_t i, std::size_t n, const std::string& what) {
        progress->draw("check " + std::to_string(i) + "/" + std::to_string(n) + ": " +
                       mf::diag::printable(what));
      };
    }
    request.out_dir = ctx.get(out_dir, "target/audit");
    request.store_dir = ctx.store_dir(store);
    request.bin_dir = ctx.get(bin_dir, mf::process::self_directory());
    auto outcome = mf::audit::run_audit(request);
    progress.reset();  // its line ends before anything else is written
    if (!outcome) return cli::report(ctx.tool, outcome.diagnostics());
    const std::string bytes = mf::json::canonical_file(outcome->report);
    if (auto sealed = mf::audit::seal(request.out_dir, bytes, outcome->report, sealing); !sealed) {
      return cli::report(ctx.tool, sealed.diagnostics());
    }
    if (!ctx.quiet) cli::say(mf::audit::render_table(*outcome));
    auto written = mf::io::write_all(STDOUT_FILENO, bytes);
    if (!written) return cli::report(ctx.tool, written.diagnostics());
    bool ok = outcome->passed;
    for (const auto& r : outcome->report.find("receipts")->as_array()) {
      if (r.find("holds")->as_bool()) continue;
      const auto& failures = r.find("failures")->as_array();
      cli::say(ctx.tool.name + ": " + r.find("capability")->as_string() +
               (r.find("subject") ? " " + mf::diag::printable(r.find("subject")->as_string())
                                  : std::string()) +
               " does not hold" +
               (failures.empty() ? std::string()
                                 : ": " + mf::diag::printable(failures.front().as_string())));
    }
    if (ctx.given(expect) && ctx.get(expect) != outcome->report_sha256) {
      cli::say(ctx.tool.name + ": report SHA-256 " + outcome->report_sha256 +
               " differs from the expected " + mf::diag::printable(ctx.get(expect)));
      ok = false;
    }
    return ok ? cli::kSuccess : cli::kFailure;
  });
}
