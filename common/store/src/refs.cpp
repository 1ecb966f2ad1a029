// The ref names of refs.hpp, spelled in one place so every tool files its objects under the same
// names.
#include "mf/store/refs.hpp"

#include <initializer_list>

namespace mf::store::refs {
namespace {

std::string join(std::initializer_list<std::string_view> segments) {
  std::string out;
  for (const std::string_view s : segments) {
    if (!out.empty()) out += '/';
    out += s;
  }
  return out;
}

std::string compile_prefix(std::string_view harness_id, std::int64_t version) {
  return join({"compile", harness_id, std::to_string(version)});
}

}  // namespace

std::string run_trace(std::string_view run_id) {
  return join({"run", run_id, "trace"});
}

std::string run_result(std::string_view run_id) {
  return join({"run", run_id, "result"});
}

std::string run_response(std::string_view run_id, std::int64_t call) {
  return join({"run", run_id, "response", std::to_string(call)});
}

std::string model_cache(std::string_view request_sha256, std::int64_t repeat) {
  const std::string n = std::to_string(repeat);
  return join({"cache", "model", request_sha256, n});
}

std::string campaign_report(std::string_view suite_id) {
  return join({"campaign", suite_id, "report"});
}

std::string campaign_shard_report(std::string_view suite_id, std::int64_t index,
                                  std::int64_t count) {
  const std::string shard = std::to_string(index) + "-of-" + std::to_string(count);
  return join({"campaign", suite_id, "shard", shard, "report"});
}

std::string campaign_case_trace(std::string_view suite_id, std::string_view case_id) {
  return join({"campaign", suite_id, "case", case_id, "trace"});
}

std::string campaign_journal(std::string_view suite_id, std::string_view campaign) {
  return join({"campaign", suite_id, "journal", campaign});
}

std::string campaign_attempt_trace(std::string_view suite_id, std::string_view case_id,
                                   std::int64_t repeat) {
  const std::string n = std::to_string(repeat);
  return join({"campaign", suite_id, "case", case_id, "repeat", n, "trace"});
}

std::string compile_plan(std::string_view harness_id, std::int64_t version) {
  return compile_prefix(harness_id, version) + "/plan";
}

std::string compile_diagnostics(std::string_view harness_id, std::int64_t version) {
  return compile_prefix(harness_id, version) + "/diagnostics";
}

std::string compile_rejected(std::string_view request_sha256) {
  return join({"compile", "rejected", request_sha256});
}

}  // namespace mf::store::refs
