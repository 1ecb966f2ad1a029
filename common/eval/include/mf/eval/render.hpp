// Eval reports rendered for people and CI systems (docs/formats/eval.md, "Rendering"): Markdown
// for pull-request comments, JUnit XML for test reporters, and one self-contained HTML page with
// inline SVG plots. Each is a pure function of a report that parse_report accepted.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mf/json/value.hpp"

namespace mf::eval {

enum class Format { Markdown, JUnit, Html };

std::optional<Format> parse_format(std::string_view name);  // md, junit, html

// `traces_dir`, when not empty, is where the HTML page links each attempt's trace
// (<dir>/<id>.jsonl, or <dir>/<id>.<n>.jsonl with repeats), relative to the page.
std::string render(const json::Value& report, Format format, const std::string& traces_dir = "");

// `mf-eval compare --format md`: the comparison (to_json(Comparison)) and the gate's reasons as
// Markdown for a pull-request comment.
std::string render_comparison(const json::Value& comparison,
                              const std::vector<std::string>& reasons);

}  // namespace mf::eval
