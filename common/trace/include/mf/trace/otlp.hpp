// A trace as OpenTelemetry spans (docs/formats/trace.md, "OpenTelemetry export"): the OTLP/JSON
// ExportTraceServiceRequest that Jaeger, Tempo and any OTLP collector read, following the GenAI
// semantic conventions: one span for the run, one per model call and one per tool call, the
// guardrail decisions as events of the run's span.
#pragma once

#include <cstdint>
#include <string_view>

#include "mf/diag/diagnostic.hpp"
#include "mf/json/value.hpp"

namespace mf::trace {

// `trace` must already have verified (ok or incomplete). Event times are t_ms after
// `start_unix_ms`. Ids are derived from the run id (trace id: the first 16 bytes of its SHA-256)
// and the seq of the event that opens each span, so one trace always exports the same spans.
Result<json::Value> to_otlp(std::string_view trace, std::int64_t start_unix_ms);

}  // namespace mf::trace
