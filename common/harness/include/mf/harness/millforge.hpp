// Plans in Millforge's form (docs/formats/plan.md, "Millforge form"): what `mf-compile --emit
// millforge-v1` writes and `mf-compile verify` accepts besides the product's own plans. Their
// digests follow Millforge's rule (json/millforge_form.hpp); they are verified, not run.
#pragma once

#include <string>

#include "mf/diag/diagnostic.hpp"
#include "mf/json/value.hpp"

namespace mf::harness {

inline constexpr const char* kMillforgeForm = "millforge-v1";

// A plan whose compiler_identity names Millforge's compiler ("millforge").
bool is_millforge_plan(const json::Value& plan);

// The file bytes of a Millforge plan (its hashing form, ending in '\n').
std::string millforge_plan_bytes(const json::Value& plan);

// Millforge's compiled_sha256 of a plan: the digest of its form without compiled_sha256.
std::string millforge_plan_digest(const json::Value& plan);

// Reads Millforge plan bytes: its file form exactly, the digest (MF-L004), then every structural
// rule of Millforge's plan model (MF-L002).
Result<json::Value> load_millforge_plan(std::string_view bytes);

}  // namespace mf::harness
