// The JSON form of diagnostics and bounded reports (docs/diagnostics.md):
// {"code","severity","message","pointer"[,"line","column","source"]} and
// {"diagnostics":[...],"truncated":N}.
#pragma once

#include "mf/diag/diagnostic.hpp"
#include "mf/diag/report.hpp"
#include "mf/json/value.hpp"

namespace mf::json {

Value to_json(const diag::Diagnostic& d);
Value to_json(const diag::Report& report);

}  // namespace mf::json
