// Rescue (docs/rescue.md): tool calls a model wrote as text instead of emitting them natively.
// Pure functions over the text and the names of the tools the model may call; a rescued call
// always names a known tool and carries an object of arguments. Whether those arguments fit the
// tool's schema is the execution boundary's decision, as for a native call.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mf/diag/diagnostic.hpp"
#include "mf/json/value.hpp"

namespace mf::runtime {

struct RescuedCall {
  std::string name;
  json::Value arguments;  // always an object
};

struct Rescue {
  std::string format;  // json | fenced_json | bracket | qwen_xml | mistral
  std::vector<RescuedCall> calls;
};

// The calls in `text`, in text order, all of the first format (json/fenced_json, bracket,
// qwen_xml, mistral) that yields any; reasoning blocks (<think>…</think>) are never read. Nothing
// when no call of a known tool can be read, or when the text is over 1 MiB.
std::optional<Rescue> rescue_tool_calls(std::string_view text,
                                        const std::vector<std::string>& known_tools);

// {"calls":[{"arguments":{…},"name":…}],"format":…}
json::Value to_json(const Rescue& r);

// `mf-run rescue`: each input line is one JSON string (model text); each output line is the
// canonical JSON of its rescue, or null. A line that is not a JSON string fails with a diagnostic
// naming the line (MF-S011, or the reader's own code such as MF-S004 when the line is not JSON at
// all); nothing is written for it or after it.
Status rescue_lines(std::istream& in, std::ostream& out,
                    const std::vector<std::string>& known_tools);

}  // namespace mf::runtime
