// Eval reports rendered for people and CI systems (docs/formats/eval.md, "Rendering"): Markdown
// for pull-request comments, JUnit XML for test reporters, and one self-contained HTML page with
// inline SVG plots. Each is a pure function of a report that parse_report accepted.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "mf/json/value.hpp"

namespace mf::eval {

enum class Format { Markdown, JUnit, Html };

std::optional<Format> parse_format(std::string_view name);  // md, junit, html

// What the HTML page shows beside the report itself.
struct PageInputs {
  // Where the page links each attempt's trace (<href>/<id>.jsonl, or <id>.<n>.jsonl with
  // repeats), relative to the page; empty: no links.
  std::string traces_href;
  // Each attempt's transcript (transcript()) by its name in the report: <id>, or <id>.<n> with
  // repeats. An attempt without one says so in the page.
  std::map<std::string, json::Value> transcripts;
  // The attempts whose transcripts were not read: the page's budget was spent.
  std::set<std::string> left_out;
};

std::string render(const json::Value& report, Format format, const PageInputs& page = {});

// One attempt's JSONL trace as the page shows it (docs/reports.md): its run id, model, preset and
// trace-content mode, and its events without the envelope, each string cut to kTranscriptText
// bytes and the events after the first kTranscriptEvents left out (both say so). With
// --trace-content store, `stored` returns a reply kept in the store by its SHA-256.
inline constexpr std::size_t kTranscriptText = 4096;
inline constexpr std::size_t kTranscriptEvents = 400;
json::Value transcript(
    std::string_view trace,
    const std::function<std::optional<std::string>(const std::string& sha256)>& stored = {});

// At most this many bytes of transcripts go into one page; the attempts past it (the failed
// attempts are taken first) link their trace instead.
inline constexpr std::size_t kPageTranscriptBytes = std::size_t{8} << 20;

// `mf-eval compare --format md|html`: the comparison (to_json(Comparison)), each gate's decision
// ({gate, limit, value, passed}, in the order the gates are checked) and the gate's reasons, for a
// pull-request comment or a page.
std::string render_comparison(const json::Value& comparison, const json::Value& decisions,
                              const std::vector<std::string>& reasons, Format format);

}  // namespace mf::eval
