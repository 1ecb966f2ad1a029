// Compiled plans (docs/formats/plan.md): the digest rule, the invariants every plan satisfies, and
// the one loader mf-compile verify, mf-run --plan and mf-replay use. A plan that fails any check is
// refused with the reason: MF-L004 for a digest mismatch, MF-L002 for a broken invariant.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "mf/diag/diagnostic.hpp"
#include "mf/json/value.hpp"
#include "mf/prompt/projection.hpp"

namespace mf::harness {

inline constexpr const char* kPlanKind = "compiled_millforge_harness";

// budgets.max_tool_calls_per_reply: how many tool calls of one model reply run (the rest are
// refused, docs/harness-run.md). Optional in a plan: without it the default applies.
inline constexpr std::int64_t kDefaultMaxToolCallsPerReply = 64;
inline constexpr std::int64_t kMaxToolCallsPerReply = 1024;

// SHA-256 of the canonical plan with only the compiled_sha256 member removed.
std::string plan_digest(const json::Value& plan);

// Every structural rule and invariant of a plan except the digest; diagnostics point into it.
Status check_plan(const json::Value& plan);

// Digest first (MF-L004), then check_plan (MF-L002).
Status verify_plan(const json::Value& plan);

// Reads plan bytes with the strict reader, requires canonical file form, verifies. A harness source
// (YAML, or JSON of kind millforge_harness) is refused as harness_source_given(path) says, not as
// a parse error: `path`, the file the bytes came from, words the mf-compile command to run.
Result<json::Value> load_plan(std::string_view bytes, std::string_view path = {});

// MF-L002: a harness source where a compiled plan belongs, and the command that compiles it.
diag::Diagnostic harness_source_given(std::string_view path);

// What a plan with a projection member shows each model turn (docs/projection.md, "In a
// harness"): the mode, budget and candidate limit, and the catalog of its declared units over the
// tools of its nodes.
struct PlanProjection {
  prompt::Mode mode = prompt::Mode::Compiled;
  std::int64_t budget_tokens = 0;
  std::int64_t candidate_limit = 0;
  prompt::Catalog catalog;
};

// Nothing when the plan has no projection member. MF-L002 when the member is malformed or its
// catalog_sha256 is not the digest of the catalog it describes (check_plan runs this too).
Result<std::optional<PlanProjection>> plan_projection(const json::Value& plan);

// "<harness_id>@<version>.<compiled_sha256>.compiled.json"
std::string plan_file_name(const json::Value& plan);

}  // namespace mf::harness
