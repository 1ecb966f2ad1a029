// The ref names the tools file their objects under (docs/store.md, "Refs"): the one place that
// spells them. An id used as a segment must itself fit the ref alphabet; callers check the result
// with valid_ref_name (mf/store/store.hpp) and refuse a name that does not fit, never rewrite it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace mf::store::refs {

// mf-run --store: run/<run_id>/{trace,result,response/<n>}.
std::string run_trace(std::string_view run_id);
std::string run_result(std::string_view run_id);
std::string run_response(std::string_view run_id, std::int64_t call);

// mf-eval --store: campaign/<suite_id>/report and campaign/<suite_id>/case/<case_id>/trace; with
// --repeat, campaign/<suite_id>/case/<case_id>/repeat/<n>/trace per attempt.
std::string campaign_report(std::string_view suite_id);
// With --shard i/n: campaign/<suite_id>/shard/<i>-of-<n>/report, one per shard, so that the shard
// stores of a campaign merge (mf-store merge) without two reports behind one ref.
std::string campaign_shard_report(std::string_view suite_id, std::int64_t index,
                                  std::int64_t count);
std::string campaign_case_trace(std::string_view suite_id, std::string_view case_id);
std::string campaign_attempt_trace(std::string_view suite_id, std::string_view case_id,
                                   std::int64_t repeat);
// The journal of one campaign in the store (mf-eval run --store): one ref per attempt below
// campaign/<suite_id>/journal/<campaign digest prefix>.
std::string campaign_journal(std::string_view suite_id, std::string_view campaign);

// mf-compile --store: compile/<harness_id>/<version>/{plan,diagnostics}; a rejected compilation
// has no identity yet and files its report under compile/rejected/<request_sha256>.
std::string compile_plan(std::string_view harness_id, std::int64_t version);
std::string compile_diagnostics(std::string_view harness_id, std::int64_t version);
std::string compile_rejected(std::string_view request_sha256);

// The live backends' reply cache: cache/model/<request_sha256>/<repeat>.
std::string model_cache(std::string_view request_sha256, std::int64_t repeat);

// mf-audit: its exit report (--store), and the ref its store round trip sets and exports.
inline constexpr std::string_view kAuditReport = "audit/report";
inline constexpr std::string_view kAuditTrace = "audit/trace";

}  // namespace mf::store::refs
