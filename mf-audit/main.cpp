// mf-audit: run the product end to end and hash its capability receipts into one report
// (docs/cli.md).
#include <unistd.h>

#include <iostream>

#include "mf/audit/audit.hpp"
#include "mf/cli/cli.hpp"
#include "mf/io/file.hpp"
#include "mf/json/canonical.hpp"
#include "mf/process/process.hpp"

namespace cli = mf::cli;

int main(int argc, char** argv) {
  const cli::Tool tool{
      .name = "mf-audit",
      .summary =
          "Execute the product end to end through its binaries and hash the capability "
          "receipts into one reproducible exit report.",
      .usage = "mf-audit [--fixtures DIR] [--out DIR] [--expect-sha256 HEX]",
      .examples =
          {
              "mf-audit --fixtures fixtures --out target/audit",
              "mf-audit --fixtures fixtures --out target/audit --expect-sha256 \"$PINNED\"",
              "mf-audit --quiet | jq '.receipts[] | {capability, holds}'",
          },
      .details =
          "Runs mf-run (repair fixture, fixed run id and clock), mf-replay, mf-toolread, the "
          "four-case mf-eval suite, mf-compile and harness runs as a user would, checks what each "
          "produced, and writes DIR/exit-report.json (also printed on stdout). Receipts: "
          "typed_task_and_output_contract, bounded_targeted_repair, provider_free_replay, "
          "capability_scoped_tool, executable_evaluation_gate, compiled_harness, "
          "guarded_tool_run, prompt_projection, and with --store content_addressed_store. The "
          "table goes to stderr. Identical "
          "inputs give a byte-identical report. Exit 1 when a receipt does not hold or the report "
          "digest differs from --expect-sha256.",
  };
  cli::Options d;
  const auto fixtures = d.text(
      {"fixtures", "fixtures directory (forge/, harness/, repository/; default: fixtures)", "DIR"});
  const auto out = d.text(
      {"out", "where exit-report.json and the work files go (default: target/audit)", "DIR"});
  const auto expect =
      d.text({"expect-sha256", "fail unless the report digest is exactly this", "HEX"});
  const auto bin_dir =
      d.text({"bin-dir", "where the mf-* binaries are (default: beside mf-audit)", "DIR"});
  const auto store = d.text({"store", "keep the report in this store (also MF_STORE)", "DIR"});
  return cli::run(argc, argv, tool, d, [&](cli::Context& ctx) -> int {
    mf::audit::AuditRequest request;
    request.fixtures = ctx.get(fixtures, "fixtures");
    request.out_dir = ctx.get(out, "target/audit");
    request.store_dir = ctx.store_dir(store);
    request.bin_dir = ctx.get(bin_dir, mf::process::self_directory());
    auto outcome = mf::audit::run_audit(request);
    if (!outcome) return cli::report(ctx.tool, outcome.diagnostics());
    if (!ctx.quiet) std::cerr << mf::audit::render_table(*outcome);
    auto written = mf::io::write_all(STDOUT_FILENO, mf::json::canonical_file(outcome->report));
    if (!written) return cli::report(ctx.tool, written.diagnostics());
    bool ok = outcome->passed;
    if (!ok) std::cerr << ctx.tool.name << ": a capability receipt does not hold\n";
    if (ctx.given(expect) && ctx.get(expect) != outcome->report_sha256) {
      std::cerr << ctx.tool.name << ": report SHA-256 " << outcome->report_sha256
                << " differs from the expected " << ctx.get(expect) << "\n";
      ok = false;
    }
    return ok ? cli::kSuccess : cli::kFailure;
  });
}
