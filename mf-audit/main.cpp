// mf-audit: run the product end to end and hash its capability receipts into one report (SPEC §10).
#include <iostream>

#include "mf/audit/audit.hpp"
#include "mf/cli/cli.hpp"
#include "mf/json/canonical.hpp"
#include "mf/process/process.hpp"

namespace cli = mf::cli;
namespace po = boost::program_options;

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
          "Runs mf-run (repair fixture, fixed run id and clock), mf-replay, mf-toolread and the "
          "four-case mf-eval suite as a user would, checks what each produced, and writes "
          "DIR/exit-report.json (also printed on stdout). The table goes to stderr. Identical "
          "inputs give a byte-identical report. Exit 1 when a receipt does not hold or the report "
          "digest differs from --expect-sha256.",
  };
  po::options_description options;
  options.add_options()                                                                     //
      ("fixtures", po::value<std::string>()->default_value("fixtures")->value_name("DIR"),  //
       "fixtures directory (forge/, repository/)")                                          //
      ("out", po::value<std::string>()->default_value("target/audit")->value_name("DIR"),   //
       "where exit-report.json and the work files go")                                      //
      ("expect-sha256", po::value<std::string>()->value_name("HEX"),                        //
       "fail unless the report digest is exactly this")                                     //
      ("bin-dir", po::value<std::string>()->value_name("DIR"),                              //
       "where the mf-* binaries are (default: beside mf-audit)")                            //
      ("store", po::value<std::string>()->value_name("DIR"), "content-addressed store");    //
  return cli::run(argc, argv, tool, options, [](cli::Context& ctx) -> int {
    mf::audit::AuditRequest request;
    request.fixtures = ctx.vars["fixtures"].as<std::string>();
    request.out_dir = ctx.vars["out"].as<std::string>();
    request.store_dir = ctx.store_dir();
    request.bin_dir = ctx.vars.count("bin-dir") != 0 ? ctx.vars["bin-dir"].as<std::string>()
                                                     : mf::process::self_directory();
    auto outcome = mf::audit::run_audit(request);
    if (!outcome) return cli::report(ctx.tool, outcome.diagnostics());
    if (!ctx.quiet) std::cerr << mf::audit::render_table(*outcome);
    std::cout << mf::json::canonical_file(outcome->report) << std::flush;
    bool ok = outcome->passed;
    if (!ok) std::cerr << ctx.tool.name << ": a capability receipt does not hold\n";
    if (ctx.vars.count("expect-sha256") != 0 &&
        ctx.vars["expect-sha256"].as<std::string>() != outcome->report_sha256) {
      std::cerr << ctx.tool.name << ": report SHA-256 " << outcome->report_sha256
                << " differs from the expected " << ctx.vars["expect-sha256"].as<std::string>()
                << "\n";
      ok = false;
    }
    return ok ? cli::kSuccess : cli::kFailure;
  });
}
