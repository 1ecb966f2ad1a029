// Compiled plans (docs/formats/plan.md): the digest rule, the invariants every plan satisfies, and
// the one loader mf-compile verify, mf-run --plan and mf-replay use. A plan that fails any check is
// refused with the reason: MF-L004 for a digest mismatch, MF-L002 for a broken invariant.
#pragma once

#include <string>
#include <string_view>

#include "mf/diag/diagnostic.hpp"
#include "mf/json/value.hpp"

namespace mf::harness {

inline constexpr const char* kPlanKind = "compiled_millforge_harness";

// SHA-256 of the canonical plan with only the compiled_sha256 member removed.
std::string plan_digest(const json::Value& plan);

// Every structural rule and invariant of a plan except the digest; diagnostics point into it.
Status check_plan(const json::Value& plan);

// Digest first (MF-L004), then check_plan (MF-L002).
Status verify_plan(const json::Value& plan);

// Reads plan bytes with the strict reader, requires canonical file form, verifies.
Result<json::Value> load_plan(std::string_view bytes);

// "<harness_id>@<version>.<compiled_sha256>.compiled.json"
std::string plan_file_name(const json::Value& plan);

}  // namespace mf::harness
