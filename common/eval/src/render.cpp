// An eval report rendered as Markdown, JUnit XML or one HTML page (render.hpp); pure functions of
// the report, so the same report always renders to the same bytes.
#include "mf/eval/render.hpp"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "mf/eval/junit.hpp"
#include "mf/json/canonical.hpp"
#include "mf/json/pointer.hpp"
#include "xml.hpp"

namespace mf::eval {

namespace {

using json::Value;

// One run of a case as the renderers see it: a case without repeats is its own single run.
struct Run {
  std::string id;
  std::optional<std::int64_t> repeat;
  const Value* entry;
  bool passed;
};

struct CaseView {
  std::string id;
  bool passed;
  std::vector<Run> runs;
};

std::vector<CaseView> cases_of(const Value& report) {
  std::vector<CaseView> out;
  for (const Value& c : report.find("cases")->as_array()) {
    CaseView v{c.find("id")->as_string(), c.find("status")->as_string() == "passed", {}};
    if (const Value* attempts = c.find("attempts")) {
      for (const Value& a : attempts->as_array()) {
        v.runs.push_back({v.id, a.find("repeat")->as_exact_int(), &a,
                          a.find("status")->as_string() == "passed"});
      }
    } else {
      v.runs.push_back({v.id, std::nullopt, &c, v.passed});
    }
    out.push_back(std::move(v));
  }
  return out;
}

std::string text_of(const Value& v) {
  return v.is_string() ? v.as_string() : json::canonical(v);
}

// "check: expected E, got A" for the first failure of a run; empty when it passed.
std::string first_failure(const Run& r) {
  const Value* failures = r.entry->find("failures");
  if (failures == nullptr || failures->as_array().empty()) return "";
  const Value& f = failures->as_array().front();
  std::string s = f.find("check")->as_string() + ": expected " + text_of(*f.find("expected"));
  const Value* actual = f.find("actual");
  s += actual != nullptr ? ", got " + text_of(*actual) : ", got nothing";
  return s;
}

std::string percent(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", v * 100);
  return buf;
}

std::string number(double v) {
  return json::canonical(Value(v));
}

std::string run_name(const Run& r) {
  return r.id + (r.repeat ? "." + std::to_string(*r.repeat) : "");
}

// --- Markdown ------------------------------------------------------------------------------------

// A table cell: no line breaks, pipes escaped, code spans never closed early, and no markup (a
// Markdown renderer passes HTML through): <, > and & as entities, control characters as U+FFFD.
std::string cell(std::string s) {
  std::string out;
  for (unsigned char c : s) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '\n' || c == '\r' || c == '\t') {
      out += ' ';
    } else if (c == '`') {
      out += '\'';
    } else if (c == '<') {
      out += "&lt;";
    } else if (c == '>') {
      out += "&gt;";
    } else if (c == '&') {
      out += "&amp;";
    } else if (c < 0x20 || c == 0x7f) {
      out += "\xEF\xBF\xBD";
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

std::string markdown(const Value& report) {
  const Value& s = *report.find("summary");
  const auto count = [&](const char* key) { return text_of(*s.find(key)); };
  std::string md = "# Eval report: " + cell(report.find("suite_id")->as_string()) + "\n\n";
  md += "| cases | passed | failed | pass rate (95% CI) |\n|---:|---:|---:|---|\n";
  const Value* rate = s.find("pass_rate");
  const Value* ci = s.find("wilson95");
  md += "| " + count("cases") + " | " + count("passed") + " | " + count("failed") + " | ";
  if (rate != nullptr && rate->is_number() && ci != nullptr) {
    md += percent(rate->as_number()) + " (" + percent(ci->as_array()[0].as_number()) + "–" +
          percent(ci->as_array()[1].as_number()) + ")";
  } else {
    md += "–";
  }
  md += " |\n\n";
  if (const Value* k = s.find("repeat")) {
    md += "Each case ran " + text_of(*k) + " times: pass@k " +
          percent(s.find("pass_at_k")->as_number()) + ", pass^k " +
          percent(s.find("pass_hat_k")->as_number()) + ", attempts passed " +
          count("attempts_passed") + " of " + count("attempts") + ".";
    const auto& flaky = s.find("flaky")->as_array();
    if (!flaky.empty()) {
      md += " Flaky:";
      for (const Value& id : flaky) md += " `" + cell(id.as_string()) + "`";
    }
    md += "\n\n";
  }
  if (const Value* l = s.find("latency_ms")) {
    md += "Latency: median " + text_of(*l->find("median")) + " ms, p90 " +
          text_of(*l->find("p90")) + " ms.\n\n";
  }
  if (const Value* u = s.find("usage")) {
    for (const auto& m : u->as_object()) {
      md += "`" + m.key + "`: total " + text_of(*m.value.find("total")) + ", median " +
            text_of(*m.value.find("median")) + ", p90 " + text_of(*m.value.find("p90")) + ".\n";
    }
    md += "\n";
  }
  std::string failed;
  for (const CaseView& c : cases_of(report)) {
    for (const Run& r : c.runs) {
      if (r.passed) continue;
      failed += "| `" + cell(run_name(r)) + "` | " + cell(text_of(*r.entry->find("terminal"))) +
                " | " + cell(first_failure(r)) + " |\n";
    }
  }
  md += failed.empty()
            ? "No failures.\n"
            : "## Failures\n\n| case | terminal | first failure |\n|---|---|---|\n" + failed;
  return md;
}

// --- JUnit XML: junit.cpp ------------------------------------------------------------------------

using detail::xml;

// --- HTML
// ------------------------------------------------------------------------------------------

std::string html_escape(std::string_view s) {
  return xml(s);
}

// The pass rate as a bar with its Wilson interval as a whisker.
std::string rate_svg(const std::string& label, double rate, double low, double high) {
  const auto x = [](double v) { return number(40 + v * 500); };
  return "<figure><figcaption>" + html_escape(label) + "</figcaption>" +
         "<svg width=\"600\" height=\"50\" role=\"img\" viewBox=\"0 0 600 50\">"
         "<rect x=\"40\" y=\"10\" width=\"500\" height=\"20\" fill=\"#eee\"/>"
         "<rect x=\"40\" y=\"10\" width=\"" +
         number(rate * 500) + "\" height=\"20\" fill=\"#2a7\"/>" + "<line x1=\"" + x(low) +
         "\" x2=\"" + x(high) + "\" y1=\"20\" y2=\"20\" stroke=\"#000\" stroke-width=\"2\"/>" +
         "<line x1=\"" + x(low) + "\" x2=\"" + x(low) + "\" y1=\"14\" y2=\"26\" stroke=\"#000\"/>" +
         "<line x1=\"" + x(high) + "\" x2=\"" + x(high) +
         "\" y1=\"14\" y2=\"26\" stroke=\"#000\"/>" + "<text x=\"545\" y=\"25\" font-size=\"12\">" +
         percent(rate) + "</text>" + "<text x=\"40\" y=\"45\" font-size=\"10\">95% CI " +
         percent(low) + "–" + percent(high) + "</text></svg></figure>\n";
}

// The distribution of one measure over the runs: a strip of ticks with the median and p90 marked.
std::string strip_svg(const std::string& label, const std::vector<double>& values, double median,
                      double p90) {
  const double top = std::max(1.0, *std::max_element(values.begin(), values.end()));
  const auto x = [&](double v) { return number(40 + v / top * 500); };
  std::string svg = "<figure><figcaption>" + html_escape(label) + "</figcaption>" +
                    "<svg width=\"600\" height=\"60\" role=\"img\" viewBox=\"0 0 600 60\">" +
                    "<line x1=\"40\" x2=\"540\" y1=\"30\" y2=\"30\" stroke=\"#999\"/>";
  for (double v : values) {
    svg += "<line x1=\"" + x(v) + "\" x2=\"" + x(v) +
           "\" y1=\"20\" y2=\"40\" stroke=\"#36c\" stroke-opacity=\"0.5\"/>";
  }
  svg += "<line x1=\"" + x(median) + "\" x2=\"" + x(median) +
         "\" y1=\"12\" y2=\"48\" stroke=\"#000\" stroke-width=\"2\"/>" + "<line x1=\"" + x(p90) +
         "\" x2=\"" + x(p90) + "\" y1=\"12\" y2=\"48\" stroke=\"#c33\" stroke-width=\"2\"/>" +
         "<text x=\"40\" y=\"58\" font-size=\"10\">median " + number(median) + ", p90 " +
         number(p90) + ", max " + number(top) + "</text></svg></figure>\n";
  return svg;
}

// Cases down, attempts across: one square per run, green passed, red failed, with a tooltip.
std::string matrix_svg(const std::vector<CaseView>& views) {
  std::size_t width = 1;
  for (const auto& c : views) width = std::max(width, c.runs.size());
  const std::size_t cell = 14, left = 220;
  const std::size_t w = left + width * cell + 10, h = views.size() * cell + 10;
  std::string svg = "<figure><figcaption>Outcome per case and attempt</figcaption><svg width=\"" +
                    std::to_string(w) + "\" height=\"" + std::to_string(h) +
                    "\" role=\"img\" viewBox=\"0 0 " + std::to_string(w) + " " + std::to_string(h) +
                    "\">";
  for (std::size_t row = 0; row < views.size(); ++row) {
    const auto y = std::to_string(row * cell + 5);
    svg += "<text x=\"0\" y=\"" + std::to_string(row * cell + 15) + "\" font-size=\"11\">" +
           html_escape(views[row].id.substr(0, 32)) + "</text>";
    for (std::size_t col = 0; col < views[row].runs.size(); ++col) {
      const Run& r = views[row].runs[col];
      svg += "<rect x=\"" + std::to_string(left + col * cell) + "\" y=\"" + y + "\" width=\"" +
             std::to_string(cell - 2) + "\" height=\"" + std::to_string(cell - 2) + "\" fill=\"" +
             (r.passed ? "#2a7" : "#c33") + "\"><title>" + html_escape(run_name(r)) + ": " +
             (r.passed ? "passed" : html_escape(first_failure(r))) + "</title></rect>";
    }
  }
  return svg + "</svg></figure>\n";
}

std::string html(const Value& report, const std::string& traces_dir) {
  const Value& s = *report.find("summary");
  const auto views = cases_of(report);
  const std::string suite = report.find("suite_id")->as_string();
  std::string page =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Eval report: " +
      html_escape(suite) +
      "</title><style>body{font:14px sans-serif;margin:2em}table{border-collapse:collapse}"
      "td,th{border:1px solid #ccc;padding:2px 6px;text-align:left}.failed{color:#c33}"
      "figure{margin:1em 0}code{font-size:12px}</style></head><body>\n<h1>Eval report: " +
      html_escape(suite) + "</h1>\n";
  page += "<p>" + text_of(*s.find("cases")) + " cases, " + text_of(*s.find("passed")) +
          " passed, " + text_of(*s.find("failed")) + " failed. Suite SHA-256 <code>" +
          html_escape(report.find("suite_sha256")->as_string()) + "</code>.</p>\n";
  const Value* rate = s.find("pass_rate");
  const Value* ci = s.find("wilson95");
  if (rate != nullptr && rate->is_number() && ci != nullptr) {
    page += rate_svg("Pass rate (cases)", rate->as_number(), ci->as_array()[0].as_number(),
                     ci->as_array()[1].as_number());
  }
  if (const Value* a = s.find("attempt_pass_rate"); a != nullptr && a->is_number()) {
    const auto& aci = s.find("attempt_wilson95")->as_array();
    page += rate_svg("Pass rate (attempts; pass@k " + percent(s.find("pass_at_k")->as_number()) +
                         ", pass^k " + percent(s.find("pass_hat_k")->as_number()) + ")",
                     a->as_number(), aci[0].as_number(), aci[1].as_number());
  }
  // One measure over the runs (`pointer` into a run), with the summary's median and p90 of it.
  const auto measure = [&](const std::string& label, const std::string& pointer) {
    const Value* summary = json::find_at(s, pointer);
    if (summary == nullptr) return;
    std::vector<double> values;
    for (const auto& c : views) {
      for (const Run& r : c.runs) {
        if (const Value* v = json::find_at(*r.entry, pointer); v != nullptr && v->is_number()) {
          values.push_back(v->as_number());
        }
      }
    }
    if (values.empty()) return;
    page += strip_svg(label, values, summary->find("median")->as_number(),
                      summary->find("p90")->as_number());
  };
  measure("Latency per attempt (ms)", "/latency_ms");
  for (const char* key : {"input_tokens", "output_tokens", "cost_usd"}) {
    measure(std::string(key) + " per attempt", std::string("/usage/") + key);
  }
  page += matrix_svg(views);
  page +=
      "<table><tr><th>case</th><th>status</th><th>terminal</th><th>model calls</th>"
      "<th>trace</th><th>first failure</th></tr>\n";
  for (const auto& c : views) {
    for (const Run& r : c.runs) {
      const std::string digest = r.entry->find("trace_sha256")->as_string();
      std::string trace = "<code>" + digest.substr(0, 12) + "</code>";
      if (!traces_dir.empty()) {
        trace = "<a href=\"" + html_escape(traces_dir + "/" + run_name(r) + ".jsonl") + "\">" +
                trace + "</a>";
      }
      page += std::string("<tr") + (r.passed ? "" : " class=\"failed\"") + "><td>" +
              html_escape(run_name(r)) + "</td><td>" + (r.passed ? "passed" : "failed") +
              "</td><td>" + html_escape(text_of(*r.entry->find("terminal"))) + "</td><td>" +
              text_of(*r.entry->find("model_calls")) + "</td><td>" + trace + "</td><td>" +
              html_escape(first_failure(r)) + "</td></tr>\n";
    }
  }
  return page + "</table>\n</body></html>\n";
}

}  // namespace

std::string render_comparison(const json::Value& c, const std::vector<std::string>& reasons) {
  const auto ids = [&](const char* key) {
    std::string out;
    for (const Value& id : c.find(key)->as_array()) {
      out += (out.empty() ? "`" : ", `") + cell(id.as_string()) + "`";
    }
    return out.empty() ? std::string("–") : out;
  };
  const auto rate = [&](const char* key) {
    const Value* v = c.find(key);
    return v != nullptr && v->is_number() ? percent(v->as_number()) : std::string("–");
  };
  const auto ratio = [&](const char* key) {
    const Value* v = c.find(key);
    return v != nullptr && v->is_number() ? number(v->as_number()) + "×" : std::string("–");
  };
  const Value& d = *c.find("pass_rate_difference");
  std::string md = std::string("# Eval comparison: ") +
                   (reasons.empty() ? "gate passed" : "gate failed") +
                   "\n\n| | baseline | candidate |\n|---|---:|---:|\n| pass rate | " +
                   rate("baseline_pass_rate") + " | " + rate("candidate_pass_rate") + " |\n\n";
  md += "Paired difference " + percent(d.find("estimate")->as_number()) + " (95% CI " +
        percent(d.find("ci95")->as_array()[0].as_number()) + " to " +
        percent(d.find("ci95")->as_array()[1].as_number()) +
        "), McNemar p = " + number(c.find("mcnemar_p")->as_number()) + "; latency " +
        ratio("latency_ratio") + ", cost " + ratio("cost_ratio") + ".\n\n";
  md += "| | cases |\n|---|---|\n| regressed | " + ids("regressed") + " |\n| improved | " +
        ids("improved") + " |\n| missing | " + ids("missing") + " |\n| new | " + ids("new") +
        " |\n";
  if (!reasons.empty()) {
    md += "\nThe gate failed:\n\n";
    for (const auto& r : reasons) md += "- " + cell(r) + "\n";
  }
  return md;
}

std::optional<Format> parse_format(std::string_view name) {
  if (name == "md") return Format::Markdown;
  if (name == "junit") return Format::JUnit;
  if (name == "html") return Format::Html;
  return std::nullopt;
}

std::string render(const json::Value& report, Format format, const std::string& traces_dir) {
  switch (format) {
    case Format::Markdown:
      return markdown(report);
    case Format::JUnit:
      return render_junit(report, {.traces_dir = traces_dir, .fixed_clock = true});
    case Format::Html:
      return html(report, traces_dir);
  }
  return {};
}

}  // namespace mf::eval
