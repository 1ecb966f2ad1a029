// An eval report rendered as Markdown, JUnit XML or one HTML page (render.hpp); pure functions of
// the report, so the same report always renders to the same bytes.
#include "mf/eval/render.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <functional>
#include <map>
#include <utility>
#include <vector>

#include "mf/eval/junit.hpp"
#include "mf/hash/base64.hpp"
#include "mf/hash/sha256.hpp"
#include "mf/json/canonical.hpp"
#include "mf/json/pointer.hpp"
#include "mf/json/reader.hpp"
#include "mf/text/utf8.hpp"
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

std::string markdown_matrix(const Value& report, const std::vector<CaseView>& views);

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
  md += markdown_matrix(report, cases_of(report));
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

// --- Variants (a campaign matrix) ----------------------------------------------------------------

// One column of a campaign's matrix: its label, model and preset as its entries record them, and
// its statistics (summary.variants.<label>).
struct VariantView {
  std::string label, model, guardrails;
  const Value* stats;
};

std::vector<VariantView> variants_of(const Value& report) {
  std::vector<VariantView> out;
  const Value* by = json::find_at(*report.find("summary"), "/variants");
  if (by == nullptr || !by->is_object()) return out;
  for (const auto& m : by->as_object()) out.push_back({m.key, "", "", &m.value});
  for (const Value& c : report.find("cases")->as_array()) {
    const Value* v = c.find("variant");
    if (v == nullptr) continue;
    for (VariantView& view : out) {
      if (view.label != v->find("label")->as_string()) continue;
      if (const Value* m = v->find("model")) view.model = m->as_string();
      if (const Value* g = v->find("guardrails")) view.guardrails = g->as_string();
    }
  }
  return out;
}

// The matrix's rows: each case of the suite with its entry (one per variant) by variant label.
struct MatrixRow {
  std::string id;
  std::map<std::string, const CaseView*> cells;
};

std::vector<MatrixRow> matrix_rows(const Value& report, const std::vector<CaseView>& views) {
  std::vector<MatrixRow> rows;
  std::map<std::string, std::size_t> at;
  const auto& cases = report.find("cases")->as_array();
  for (std::size_t i = 0; i < views.size(); ++i) {
    const Value* label = json::find_at(cases[i], "/variant/label");
    if (label == nullptr) continue;
    const std::string& l = label->as_string();
    const std::string& id = views[i].id;
    const std::string base = id.size() > l.size() + 1 ? id.substr(0, id.size() - l.size() - 1) : id;
    auto [it, fresh] = at.emplace(base, rows.size());
    if (fresh) rows.push_back({base, {}});
    rows[it->second].cells[l] = &views[i];
  }
  return rows;
}

// A statistic of a variant as text: `pointer` into its statistics, shown by `show`; "–" without.
template <typename Show>
std::string stat(const VariantView& v, const char* pointer, Show show) {
  const Value* x = json::find_at(*v.stats, pointer);
  return x != nullptr && x->is_number() ? show(x->as_number()) : std::string("–");
}

std::string interval_text(const VariantView& v) {
  const Value* ci = v.stats->find("wilson95");
  if (ci == nullptr || !ci->is_array() || !ci->as_array()[0].is_number()) return "–";
  return percent(ci->as_array()[0].as_number()) + "–" + percent(ci->as_array()[1].as_number());
}

std::string usd(double v) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "$%.4f", v);
  return buf;
}

// The columns of the variant table: header, then the text of one variant's cell.
struct VariantColumn {
  const char* key;
  const char* header;
  std::function<std::string(const VariantView&)> text;
};

const std::vector<VariantColumn>& variant_columns() {
  static const std::vector<VariantColumn> columns{
      {"cases", "cases", [](const VariantView& v) { return text_of(*v.stats->find("cases")); }},
      {"passed", "passed", [](const VariantView& v) { return text_of(*v.stats->find("passed")); }},
      {"pass_rate", "pass rate",
       [](const VariantView& v) { return stat(v, "/pass_rate", percent); }},
      {"wilson95", "95% CI (Wilson)", interval_text},
      {"pass_at_k", "pass@k", [](const VariantView& v) { return stat(v, "/pass_at_k", percent); }},
      {"pass_hat_k", "pass^k",
       [](const VariantView& v) { return stat(v, "/pass_hat_k", percent); }},
      {"latency_median", "latency median (ms)",
       [](const VariantView& v) { return stat(v, "/latency_ms/median", number); }},
      {"latency_p90", "latency p90 (ms)",
       [](const VariantView& v) { return stat(v, "/latency_ms/p90", number); }},
      {"input_tokens", "input tokens (median)",
       [](const VariantView& v) { return stat(v, "/usage/input_tokens/median", number); }},
      {"output_tokens", "output tokens (median)",
       [](const VariantView& v) { return stat(v, "/usage/output_tokens/median", number); }},
      {"cost_usd", "cost (USD, total)",
       [](const VariantView& v) { return stat(v, "/usage/cost_usd/total", usd); }},
  };
  return columns;
}

// A case's cell in the matrix: passed or failed, with repeats how many attempts passed.
std::string outcome_text(const CaseView& c) {
  std::string s = c.passed ? "passed" : "failed";
  if (c.runs.size() > 1 || c.runs.front().repeat) {
    const auto n =
        std::count_if(c.runs.begin(), c.runs.end(), [](const Run& r) { return r.passed; });
    s += " " + std::to_string(n) + "/" + std::to_string(c.runs.size());
  }
  return s;
}

std::string markdown_matrix(const Value& report, const std::vector<CaseView>& views) {
  const auto variants = variants_of(report);
  if (variants.empty()) return "";
  std::string md = "## Variants\n\n| variant | model | guardrails |";
  std::string rule = "|---|---|---|";
  for (const auto& col : variant_columns()) {
    md += std::string(" ") + col.header + " |";
    rule += "---:|";
  }
  md += "\n" + rule + "\n";
  for (const auto& v : variants) {
    md += "| `" + cell(v.label) + "` | " + (v.model.empty() ? "–" : "`" + cell(v.model) + "`") +
          " | " + (v.guardrails.empty() ? "–" : cell(v.guardrails)) + " |";
    for (const auto& col : variant_columns()) md += " " + cell(col.text(v)) + " |";
    md += "\n";
  }
  md += "\n## Cases across variants\n\n| case |";
  rule = "|---|";
  for (const auto& v : variants) {
    md += " `" + cell(v.label) + "` |";
    rule += "---|";
  }
  md += "\n" + rule + "\n";
  for (const auto& row : matrix_rows(report, views)) {
    md += "| `" + cell(row.id) + "` |";
    for (const auto& v : variants) {
      auto it = row.cells.find(v.label);
      md += " " + (it == row.cells.end() ? std::string("–") : outcome_text(*it->second)) + " |";
    }
    md += "\n";
  }
  return md + "\n";
}

// --- HTML ----------------------------------------------------------------------------------------

// Escaped for HTML text and attribute values: the XML escaping, which HTML reads the same.
std::string html_escape(std::string_view s) {
  return detail::xml(s);
}

// A relative path as a URL path: bytes other than unreserved characters and '/' percent-encoded,
// so a directory named with a space, '#' or '?' still links to its files.
std::string url_path(std::string_view path) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : path) {
    if (std::isalnum(c) != 0 || c == '/' || c == '.' || c == '-' || c == '_' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

// An SVG number with at most one decimal.
std::string px(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

std::string svg_text(double x, double y, const std::string& text, const char* extra = "") {
  return "<text x=\"" + px(x) + "\" y=\"" + px(y) + "\" font-size=\"11\"" + extra + ">" +
         html_escape(text) + "</text>";
}

std::string svg_line(double x1, double y1, double x2, double y2, const char* style) {
  return "<line x1=\"" + px(x1) + "\" y1=\"" + px(y1) + "\" x2=\"" + px(x2) + "\" y2=\"" + px(y2) +
         "\" " + style + "/>";
}

std::string svg_rect(double x, double y, double w, double h, const char* fill) {
  return "<rect x=\"" + px(x) + "\" y=\"" + px(y) + "\" width=\"" + px(w) + "\" height=\"" + px(h) +
         "\" fill=\"" + fill + "\"/>";
}

// A figure: its title as the caption and the SVG's accessible name, `body` drawn in w x h.
std::string figure(const std::string& title, double w, double h, const std::string& body) {
  return "<figure><figcaption>" + html_escape(title) + "</figcaption><svg width=\"" + px(w) +
         "\" height=\"" + px(h) + "\" viewBox=\"0 0 " + px(w) + " " + px(h) +
         "\" role=\"img\"><title>" + html_escape(title) + "</title>" + body + "</svg></figure>\n";
}

// A horizontal axis from x0 to x0 + width at height y: ticks at `ticks` (values in [0, 1] of the
// width) labelled by `label`, and the axis's name with its unit centred below.
std::string axis(double x0, double width, double y, const std::vector<double>& ticks,
                 const std::function<std::string(double)>& label, const std::string& name) {
  std::string s = svg_line(x0, y, x0 + width, y, "stroke=\"#333\"");
  for (double t : ticks) {
    s += svg_line(x0 + t * width, y, x0 + t * width, y + 4, "stroke=\"#333\"");
    s += svg_text(x0 + t * width, y + 15, label(t), " text-anchor=\"middle\"");
  }
  return s + svg_text(x0 + width / 2, y + 30, name, " text-anchor=\"middle\" class=\"axis\"");
}

// A legend: swatches (a fill colour, or a line colour when `line`) with their names, in a row.
struct Key {
  const char* colour;
  bool line;
  std::string name;
};
std::string legend(double x, double y, const std::vector<Key>& keys) {
  std::string s = "<g class=\"legend\">";
  for (const Key& k : keys) {
    if (k.line) {
      s += "<line x1=\"" + px(x) + "\" y1=\"" + px(y - 4) + "\" x2=\"" + px(x + 14) + "\" y2=\"" +
           px(y - 4) + "\" stroke=\"" + k.colour + "\" stroke-width=\"2\"/>";
    } else {
      s += svg_rect(x, y - 9, 14, 10, k.colour);
    }
    s += svg_text(x + 18, y, k.name);
    x += 28 + 6.5 * static_cast<double>(k.name.size());
  }
  return s + "</g>";
}

// Pass rates as bars, one row each, with their Wilson intervals as whiskers, on a 0-100% axis.
struct RateRow {
  std::string label;
  double rate, low, high;
};
std::string rates_svg(const std::string& title, const std::vector<RateRow>& rows) {
  const double left = 170, width = 400, row = 24, top = 8;
  const double h = top + row * static_cast<double>(rows.size()) + 60;
  std::string body;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const RateRow& r = rows[i];
    const double y = top + row * static_cast<double>(i);
    body += svg_text(0, y + 14, r.label.substr(0, 28));
    body += svg_rect(left, y + 3, width, 14, "#eee");
    body += svg_rect(left, y + 3, r.rate * width, 14, "#2a7");
    body += svg_line(left + r.low * width, y + 10, left + r.high * width, y + 10,
                     "stroke=\"#000\" stroke-width=\"2\"");
    for (double e : {r.low, r.high}) {
      body += svg_line(left + e * width, y + 5, left + e * width, y + 15, "stroke=\"#000\"");
    }
    body += svg_text(left + width + 6, y + 14, percent(r.rate));
  }
  const double y = top + row * static_cast<double>(rows.size());
  body += axis(
      left, width, y + 2, {0, 0.25, 0.5, 0.75, 1},
      [](double t) { return std::to_string(static_cast<int>(t * 100)); }, "pass rate (%)");
  body +=
      legend(left, y + 52, {{"#2a7", false, "pass rate"}, {"#000", true, "95% Wilson interval"}});
  return figure(title, left + width + 60, h, body);
}

// The distribution of one measure over the attempts: a tick per attempt on an axis from 0 to the
// largest value, with the median and p90 marked.
std::string strip_svg(const std::string& title, const std::string& unit,
                      const std::vector<double>& values, double median, double p90) {
  const double top = std::max(1.0, *std::max_element(values.begin(), values.end()));
  const double left = 20, width = 500;
  const auto x = [&](double v) { return left + v / top * width; };
  std::string body = svg_line(left, 24, left + width, 24, "stroke=\"#bbb\"");
  for (double v : values) {
    body += svg_line(x(v), 14, x(v), 34, "stroke=\"#36c\" stroke-opacity=\"0.5\"");
  }
  body += svg_line(x(median), 6, x(median), 42, "stroke=\"#000\" stroke-width=\"2\"");
  body += svg_line(x(p90), 6, x(p90), 42, "stroke=\"#c33\" stroke-width=\"2\"");
  body += axis(
      left, width, 44, {0, 0.25, 0.5, 0.75, 1}, [&](double t) { return number(t * top); }, unit);
  body += legend(left, 100,
                 {{"#36c", true, "one attempt"},
                  {"#000", true, "median " + number(median)},
                  {"#c33", true, "p90 " + number(p90)}});
  return figure(title, left + width + 40, 108, body);
}

// Cases down, attempts across: one square per attempt, green passed, red failed, with a tooltip.
std::string outcome_svg(const std::vector<CaseView>& views) {
  std::size_t width = 1;
  for (const auto& c : views) width = std::max(width, c.runs.size());
  const double cell = 14, left = 230, top = 30;
  const double w = std::max(left + static_cast<double>(width) * cell + 20, 460.0);
  const double h = top + static_cast<double>(views.size()) * cell + 30;
  std::string body = svg_text(left, 10, "attempt (repeat index) →");
  for (std::size_t col = 0; col < width; ++col) {
    body += svg_text(left + static_cast<double>(col) * cell + 6, 24, std::to_string(col),
                     " text-anchor=\"middle\" font-size=\"9\"");
  }
  body += svg_text(0, 24, "case ↓");
  for (std::size_t row = 0; row < views.size(); ++row) {
    const double y = top + static_cast<double>(row) * cell;
    body += svg_text(0, y + 10, views[row].id.substr(0, 34));
    for (std::size_t col = 0; col < views[row].runs.size(); ++col) {
      const Run& r = views[row].runs[col];
      body += "<rect x=\"" + px(left + static_cast<double>(col) * cell) + "\" y=\"" + px(y) +
              "\" width=\"" + px(cell - 2) + "\" height=\"" + px(cell - 2) + "\" fill=\"" +
              (r.passed ? "#2a7" : "#c33") + "\"><title>" + html_escape(run_name(r)) + ": " +
              (r.passed ? "passed" : html_escape(first_failure(r))) + "</title></rect>";
    }
  }
  body += legend(0, h - 8, {{"#2a7", false, "passed"}, {"#c33", false, "failed"}});
  return figure("Outcome per case and attempt", w, h, body);
}

// The page's script: each transcript drawn (as text, never markup) from the embedded JSON when
// its <details> first opens, or at load when the address names it (#transcript-<name>). Its
// SHA-256 is the one script the page's Content-Security-Policy allows.
constexpr std::string_view kScript = R"JS((function () {
  var data = null;
  function load() {
    if (data === null) {
      var n = document.getElementById('transcripts');
      data = n ? JSON.parse(n.textContent) : {};
    }
    return data;
  }
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function short(sha) { return sha ? 'sha256 ' + sha.slice(0, 16) + '…' : ''; }
  function pretty(v) {
    if (typeof v === 'string') {
      try { return JSON.stringify(JSON.parse(v), null, 2); } catch (e) { return v; }
    }
    return JSON.stringify(v, null, 2);
  }
  var NOTE = {
    digest: 'The replies are recorded as digests only (--trace-content digest): their sizes and SHA-256 are shown, not their text. Run with --trace-content inline or store to read them here.',
    store: 'The replies were kept in the store (--trace-content store); those found there are shown, the others by digest.',
    none: 'The replies are recorded by size only (--trace-content none).'
  };
  function build(box, t) {
    box.appendChild(el('p', 'meta', 'Run ' + t.run_id + (t.model ? ', model ' + t.model : '') +
      (t.guardrails ? ', guardrails ' + t.guardrails : '') + '; replies recorded as ' + t.content + '.'));
    if (NOTE[t.content]) box.appendChild(el('p', 'note', NOTE[t.content]));
    var turn = box;
    function add(n) { turn.appendChild(n); return n; }
    t.events.forEach(function (e) {
      var d;
      switch (e.event) {
        case 'run_started':
          break;
        case 'projection_compiled':
          add(el('p', 'tools', 'Projection: tools visible ' + (e.visible || []).join(', ')));
          break;
        case 'model_requested':
          turn = el('section', 'turn');
          box.appendChild(turn);
          turn.appendChild(el('h4', null, 'Turn ' + e.call + (e.kind ? ' (' + e.kind + ')' : '')));
          if (e.tools) add(el('p', 'tools', 'Tools shown: ' + e.tools.join(', ')));
          break;
        case 'model_responded':
          d = add(el('div', 'reply'));
          if (typeof e.content === 'string') {
            d.appendChild(el('div', 'who', 'Model' + (e.content_from_store ? ' (reply from the store)' : '')));
            d.appendChild(el('pre', 'content', e.content === '' ? '(no text)' : e.content));
          } else {
            d.appendChild(el('div', 'who', 'Model: reply of ' + e.content_bytes + ' bytes, ' +
              (short(e.content_sha256) || 'no digest') + ' (text not recorded)'));
          }
          if (typeof e.reasoning === 'string') d.appendChild(el('pre', 'reasoning', e.reasoning));
          (e.tool_calls || []).forEach(function (c) {
            var call = el('div', 'call');
            call.appendChild(el('span', 'name', 'calls ' + c.name));
            call.appendChild(el('pre', 'args', pretty(c.arguments)));
            d.appendChild(call);
          });
          if (e.tool_call_count && !e.tool_calls) {
            d.appendChild(el('div', 'call', e.tool_call_count + ' tool call(s), ' + short(e.tool_calls_sha256)));
          }
          if (e.usage) d.appendChild(el('div', 'usage', 'usage ' + JSON.stringify(e.usage)));
          break;
        case 'model_failed':
          add(el('div', 'error', 'Model failed: ' + e.error));
          break;
        case 'tool_called':
          d = add(el('div', 'tool'));
          d.appendChild(el('span', 'name', '→ ' + e.tool + ' (' + e.call_id + ')'));
          d.appendChild(e.arguments !== undefined ? el('pre', 'args', pretty(e.arguments))
                                                  : el('span', 'digest', ' arguments ' + short(e.input_sha256)));
          break;
        case 'tool_completed':
          d = add(el('div', e.ok ? 'result ok' : 'result failed',
            '← ' + e.call_id + ' ' + (e.ok ? 'ok' : 'failed' + (e.error_kind ? ' (' + e.error_kind + ')' : '')) +
            (e.summary ? ': ' + e.summary : '') + (e.output_sha256 ? ' — output ' + short(e.output_sha256) : '')));
          break;
        case 'tool_denied':
          add(el('div', 'guardrail', 'Denied ' + e.tool + ' (' + e.call_id + '): ' + e.reason));
          break;
        case 'guardrail_violation':
          add(el('div', 'guardrail', 'Guardrail ' + e.kind + ': ' + (e.message || '') +
            (e.budget ? ' [' + e.budget.name + ' ' + e.budget.used + '/' + e.budget.limit + ']' : '')));
          break;
        case 'nudge_sent':
          add(el('div', 'correction', 'Correction sent' + (e.channel ? ' (' + e.channel + ')' : '') + ': ' + e.message));
          break;
        case 'verification_failed':
          add(el('div', 'guardrail', 'Verification failed: ' + JSON.stringify(e.violations) +
            '; repairs remaining ' + e.repairs_remaining));
          break;
        case 'budget_exhausted':
          add(el('div', 'guardrail', 'Budget exhausted: ' + e.budget + ' (limit ' + e.limit + ')'));
          break;
        case 'run_completed':
        case 'run_failed':
          turn = box;
          d = add(el('section', 'terminal'));
          d.appendChild(el('h4', null, 'Terminal: ' + e.terminal));
          var o = e.output || {};
          if (o.disposition) d.appendChild(el('p', null, 'Disposition ' + o.disposition + (o.summary ? ': ' + o.summary : '')));
          if (e.error) d.appendChild(el('p', 'error', e.error));
          if (o.artifacts && o.artifacts.length) {
            var table = el('table', 'artifacts'), head = el('tr');
            ['artifact', 'bytes', 'sha256'].forEach(function (h) { head.appendChild(el('th', null, h)); });
            table.appendChild(head);
            o.artifacts.forEach(function (a) {
              var r = el('tr');
              [a.artifact_id, String(a.bytes), a.sha256].forEach(function (v) { r.appendChild(el('td', null, v)); });
              table.appendChild(r);
            });
            d.appendChild(table);
          } else if (e.output !== undefined && !o.disposition) {
            d.appendChild(el('pre', 'args', pretty(e.output)));
          }
          break;
        case 'left_out':
          add(el('p', 'note', e.count + ' more event(s) left out of the page: open the trace.'));
          break;
        default:
          add(el('div', 'other', e.event + ' ' + JSON.stringify(e)));
      }
    });
  }
  function show(d) {
    if (d.dataset.done) return;
    d.dataset.done = '1';
    var t = load()[d.dataset.t], box = el('div', 'transcript');
    if (t) build(box, t);
    else box.appendChild(el('p', 'note', d.dataset.why));
    d.appendChild(box);
  }
  document.addEventListener('toggle', function (e) {
    var d = e.target;
    if (d.tagName === 'DETAILS' && d.open && d.dataset.t !== undefined) show(d);
  }, true);
  function follow() {
    var h;
    try { h = decodeURIComponent(location.hash.slice(1)); } catch (e) { return; }
    if (h.indexOf('transcript-') !== 0) return;
    var all = document.querySelectorAll('details[data-t]');
    for (var i = 0; i < all.length; i++) {
      if (all[i].dataset.t === h.slice(11)) {
        all[i].open = true;
        show(all[i]);
        all[i].scrollIntoView({block: 'start', inline: 'nearest'});
      }
    }
  }
  window.addEventListener('hashchange', follow);
  follow();
})();
)JS";

constexpr std::string_view kStyle =
    "body{font:14px sans-serif;margin:2em;max-width:1200px}table{border-collapse:collapse;"
    "margin:0.5em 0}td,th{border:1px solid #ccc;padding:2px 6px;text-align:left;vertical-align:"
    "top}td.num{text-align:right}.failed{color:#c33}td.passed{background:#e6f4ea}td.failed{"
    "background:#fce8e6}figure{margin:1em 0}figcaption{font-weight:bold}code{font-size:12px}"
    ".axis{font-style:italic}.note{color:#555;font-style:italic}.transcript{border-left:3px solid "
    "#ccc;padding-left:8px;width:60em;max-width:80vw;overflow-wrap:anywhere}.turn h4,.terminal "
    "h4{margin:0.6em 0 0.2em}pre{white-space:pre-wrap;"
    "margin:2px 0;background:#f6f6f6;padding:3px}.guardrail{color:#a50}.correction{color:#36c}"
    ".result.failed,.error{color:#c33}.tools{color:#555}";

// The embedded transcripts as JSON a <script> element holds unchanged: '<', '>' and '&' (only
// ever inside strings) as \u escapes, so no "</script>" or "<!--" can appear.
std::string script_json(const Value& v) {
  std::string out;
  for (char c : json::canonical(v)) {
    if (c == '<') {
      out += "\\u003c";
    } else if (c == '>') {
      out += "\\u003e";
    } else if (c == '&') {
      out += "\\u0026";
    } else {
      out += c;
    }
  }
  return out;
}

std::string html(const Value& report, const PageInputs& in) {
  const Value& s = *report.find("summary");
  const auto views = cases_of(report);
  const std::string suite = report.find("suite_id")->as_string();
  const hash::Digest script_sha = hash::sha256(kScript);
  const std::string csp =
      "default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-" +
      hash::base64_encode(
          std::string_view(reinterpret_cast<const char*>(script_sha.data()), script_sha.size())) +
      "'";
  std::string page =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"" +
      csp + "\"><title>Eval report: " + html_escape(suite) + "</title><style>" +
      std::string(kStyle) + "</style></head><body>\n<h1>Eval report: " + html_escape(suite) +
      "</h1>\n";
  page += "<p>" + text_of(*s.find("cases")) + " cases, " + text_of(*s.find("passed")) +
          " passed, " + text_of(*s.find("failed")) + " failed. Suite SHA-256 <code>" +
          html_escape(report.find("suite_sha256")->as_string()) + "</code>.</p>\n";
  std::vector<RateRow> rates;
  const Value* rate = s.find("pass_rate");
  const Value* ci = s.find("wilson95");
  if (rate != nullptr && rate->is_number() && ci != nullptr) {
    rates.push_back(
        {"cases", rate->as_number(), ci->as_array()[0].as_number(), ci->as_array()[1].as_number()});
  }
  if (const Value* a = s.find("attempt_pass_rate"); a != nullptr && a->is_number()) {
    const auto& aci = s.find("attempt_wilson95")->as_array();
    rates.push_back({"attempts", a->as_number(), aci[0].as_number(), aci[1].as_number()});
  }
  if (!rates.empty()) {
    std::string title = "Pass rate";
    if (const Value* k = s.find("pass_at_k")) {
      title += " (pass@k " + percent(k->as_number()) + ", pass^k " +
               percent(s.find("pass_hat_k")->as_number()) + ")";
    }
    page += rates_svg(title, rates);
  }
  // The campaign matrix: the variants' statistics, their pass rates, and each case across them.
  const auto variants = variants_of(report);
  if (!variants.empty()) {
    page +=
        "<h2>Variants</h2>\n<table id=\"variants\"><tr><th>variant</th><th>model</th>"
        "<th>guardrails</th>";
    for (const auto& col : variant_columns()) page += "<th>" + html_escape(col.header) + "</th>";
    page += "</tr>\n";
    std::vector<RateRow> by_variant;
    for (const auto& v : variants) {
      page += "<tr data-variant=\"" + html_escape(v.label) + "\"><td><code>" +
              html_escape(v.label) + "</code></td><td><code>" + html_escape(v.model) +
              "</code></td><td>" + html_escape(v.guardrails) + "</td>";
      for (const auto& col : variant_columns()) {
        page += "<td class=\"num\" data-metric=\"" + std::string(col.key) + "\">" +
                html_escape(col.text(v)) + "</td>";
      }
      page += "</tr>\n";
      const Value* r = v.stats->find("pass_rate");
      const Value* w = v.stats->find("wilson95");
      if (r != nullptr && r->is_number() && w != nullptr && w->as_array()[0].is_number()) {
        by_variant.push_back(
            {v.label, r->as_number(), w->as_array()[0].as_number(), w->as_array()[1].as_number()});
      }
    }
    page += "</table>\n";
    if (!by_variant.empty()) page += rates_svg("Pass rate per variant (cases)", by_variant);
    page += "<h2>Cases across variants</h2>\n<table id=\"matrix\"><tr><th>case</th>";
    for (const auto& v : variants) page += "<th><code>" + html_escape(v.label) + "</code></th>";
    page += "</tr>\n";
    for (const auto& row : matrix_rows(report, views)) {
      page += "<tr><td><code>" + html_escape(row.id) + "</code></td>";
      for (const auto& v : variants) {
        auto it = row.cells.find(v.label);
        if (it == row.cells.end()) {
          page += "<td>–</td>";
          continue;
        }
        const CaseView& c = *it->second;
        page += "<td class=\"" + std::string(c.passed ? "passed" : "failed") +
                "\" data-variant=\"" + html_escape(v.label) + "\" data-case=\"" +
                html_escape(row.id) + "\"><a href=\"#" +
                html_escape("transcript-" + run_name(c.runs.front())) + "\">" +
                html_escape(outcome_text(c)) + "</a></td>";
      }
      page += "</tr>\n";
    }
    page += "</table>\n";
  }
  // One measure over the attempts (`pointer` into an attempt), with the summary's median and p90.
  const auto measure = [&](const std::string& title, const std::string& unit,
                           const std::string& pointer) {
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
    page += strip_svg(title, unit, values, summary->find("median")->as_number(),
                      summary->find("p90")->as_number());
  };
  measure("Latency per attempt", "latency (ms)", "/latency_ms");
  measure("Input tokens per attempt", "input tokens", "/usage/input_tokens");
  measure("Output tokens per attempt", "output tokens", "/usage/output_tokens");
  measure("Cost per attempt", "cost (USD)", "/usage/cost_usd");
  page += outcome_svg(views);
  // The transcripts go in while the page's budget lasts, failed attempts first.
  std::map<std::string, std::string> embedded;  // run name -> its JSON
  std::size_t spent = 0;
  for (const bool failed : {true, false}) {
    for (const auto& c : views) {
      for (const Run& r : c.runs) {
        auto t = in.transcripts.find(run_name(r));
        if (r.passed == failed || t == in.transcripts.end()) continue;
        std::string bytes = script_json(t->second);
        if (spent + bytes.size() > kPageTranscriptBytes) continue;
        spent += bytes.size();
        embedded.emplace(run_name(r), std::move(bytes));
      }
    }
  }
  page += "<h2>Attempts</h2>\n";
  if (in.transcripts.empty()) {
    page +=
        "<p class=\"note\">No transcripts: render with --traces DIR or --store DIR to read "
        "each attempt's turns here.</p>\n";
  }
  page +=
      "<table id=\"attempts\"><tr><th>case</th><th>status</th><th>terminal</th><th>model "
      "calls</th><th>trace</th><th>first failure</th><th>transcript</th></tr>\n";
  for (const auto& c : views) {
    for (const Run& r : c.runs) {
      const std::string name = run_name(r);
      const std::string digest = r.entry->find("trace_sha256")->as_string();
      std::string trace = "<code>" + digest.substr(0, 12) + "</code>";
      if (!in.traces_href.empty()) {
        trace = "<a href=\"" + html_escape(url_path(in.traces_href + "/" + name + ".jsonl")) +
                "\">" + trace + "</a>";
      }
      std::string why;
      if (!embedded.contains(name)) {
        why = in.transcripts.contains(name) || in.left_out.contains(name)
                  ? "This transcript is left out: the page holds at most " +
                        std::to_string(kPageTranscriptBytes >> 20) +
                        " MiB of transcripts. Open the trace."
                  : "No transcript: its trace was not found (render with --traces DIR or --store "
                    "DIR).";
      }
      page += std::string("<tr") + (r.passed ? "" : " class=\"failed\"") + "><td>" +
              html_escape(name) + "</td><td>" + (r.passed ? "passed" : "failed") + "</td><td>" +
              html_escape(text_of(*r.entry->find("terminal"))) + "</td><td>" +
              text_of(*r.entry->find("model_calls")) + "</td><td>" + trace + "</td><td>" +
              html_escape(first_failure(r)) + "</td><td><details data-t=\"" + html_escape(name) +
              "\"" + (why.empty() ? "" : " data-why=\"" + html_escape(why) + "\"") +
              "><summary>turns</summary></details></td></tr>\n";
    }
  }
  page += "</table>\n";
  std::string data = "{";
  for (const auto& [name, bytes] : embedded) {
    if (data.size() > 1) data += ",";
    data += script_json(Value(name)) + ":" + bytes;
  }
  data += "}";
  page += "<script type=\"application/json\" id=\"transcripts\">" + data + "</script>\n";
  page += "<script>" + std::string(kScript) + "</script>\n";
  return page + "</body></html>\n";
}

// A string cut to kTranscriptText bytes (on a UTF-8 boundary), saying how much was left out.
void cut_strings(Value& v) {
  if (v.is_string()) {
    std::string& s = v.as_string();
    if (s.size() <= kTranscriptText) return;
    const std::size_t keep = text::utf8_prefix(s, kTranscriptText).size();
    const std::size_t more = s.size() - keep;
    s.resize(keep);
    s += "… [" + std::to_string(more) + " more bytes in the trace]";
  } else if (v.is_array()) {
    for (Value& x : v.as_array()) cut_strings(x);
  } else if (v.is_object()) {
    for (json::Member& m : v.as_object()) cut_strings(m.value);
  }
}

}  // namespace

json::Value transcript(
    std::string_view trace,
    const std::function<std::optional<std::string>(const std::string&)>& stored) {
  Value out = json::Object{};
  json::Array events;
  std::size_t left_out = 0;
  std::string content = "digest";
  while (!trace.empty()) {
    const std::size_t nl = trace.find('\n');
    const std::string_view line = trace.substr(0, nl);
    trace = nl == std::string_view::npos ? std::string_view() : trace.substr(nl + 1);
    if (line.empty()) continue;
    Result<Value> parsed = json::parse(line);
    if (!parsed || !parsed->is_object()) continue;
    const Value& e = *parsed;
    const Value* kind = e.find("event");
    if (kind == nullptr || !kind->is_string()) continue;
    const std::string& name = kind->as_string();
    if (name == "run_started") {
      for (const char* key : {"run_id", "model", "guardrails", "trace_content"}) {
        if (const Value* v = e.find(key); v != nullptr && v->is_string()) {
          out.set(key == std::string("trace_content") ? "content" : key, *v);
        }
      }
      if (const Value* c = e.find("trace_content"); c != nullptr && c->is_string()) {
        content = c->as_string();
      }
      continue;
    }
    if (events.size() >= kTranscriptEvents) {
      ++left_out;
      continue;
    }
    // The event without its envelope; a tool's record reduced to what a reader follows.
    Value shown = json::Object{};
    for (const json::Member& m : e.as_object()) {
      if (m.key == "v" || m.key == "run_id" || m.key == "prev" || m.key == "seq" ||
          m.key == "t_ms" || m.key == "hmac_sha256") {
        continue;
      }
      if (m.key == "record" && m.value.is_object()) {
        for (const char* key : {"summary", "output_sha256", "execution_status"}) {
          if (const Value* v = m.value.find(key)) shown.set(key, *v);
        }
        continue;
      }
      shown.set(m.key, m.value);
    }
    if (name == "model_responded" && content == "store" && stored && !shown.find("content")) {
      if (const Value* sha = shown.find("content_sha256"); sha != nullptr && sha->is_string()) {
        if (auto bytes = stored(sha->as_string())) {
          shown.set("content", std::move(*bytes));
          shown.set("content_from_store", true);
        }
      }
    }
    cut_strings(shown);
    events.push_back(std::move(shown));
  }
  if (left_out > 0) {
    events.push_back(
        json::Object{{"event", "left_out"}, {"count", static_cast<std::int64_t>(left_out)}});
  }
  if (!out.find("content")) out.set("content", content);
  if (!out.find("run_id")) out.set("run_id", "");
  out.set("events", std::move(events));
  return out;
}

namespace {

// The gates' decisions as rows: gate, limit, value, and passed or failed.
std::string gate_value(const Value& v) {
  return v.is_null() ? "unknown" : text_of(v);
}

// A comparison's member `key` as text: a rate as a percentage, else a ratio ("1.5×"); "–"
// when the comparison has no such number.
std::string comparison_figure(const Value& c, const char* key, bool rate) {
  const Value* v = c.find(key);
  if (v == nullptr || !v->is_number()) return "–";
  return rate ? percent(v->as_number()) : number(v->as_number()) + "×";
}

std::string compare_html(const Value& c, const Value& decisions,
                         const std::vector<std::string>& reasons) {
  const auto rate = [&](const char* key) { return comparison_figure(c, key, true); };
  const auto ratio = [&](const char* key) { return comparison_figure(c, key, false); };
  const Value& d = *c.find("pass_rate_difference");
  const std::string verdict = reasons.empty() ? "gate passed" : "gate failed";
  std::string page =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
      "style-src 'unsafe-inline'\"><title>Eval comparison: " +
      verdict + "</title><style>" + std::string(kStyle) +
      "</style></head><body>\n<h1 id=\"verdict\">Eval comparison: " + verdict + "</h1>\n";
  page += "<table id=\"numbers\"><tr><th></th><th>value</th></tr>\n";
  const auto row = [&](const std::string& key, const std::string& name, const std::string& value) {
    page += "<tr data-key=\"" + key + "\"><th>" + html_escape(name) + "</th><td class=\"num\">" +
            html_escape(value) + "</td></tr>\n";
  };
  row("baseline_pass_rate", "baseline pass rate", rate("baseline_pass_rate"));
  row("candidate_pass_rate", "candidate pass rate", rate("candidate_pass_rate"));
  row("difference", "paired pass-rate difference (candidate − baseline)",
      percent(d.find("estimate")->as_number()));
  row("difference_ci95", "its 95% interval",
      percent(d.find("ci95")->as_array()[0].as_number()) + " to " +
          percent(d.find("ci95")->as_array()[1].as_number()));
  row("mcnemar_p", "McNemar p (exact)", number(c.find("mcnemar_p")->as_number()));
  row("latency_ratio", "median latency ratio (candidate / baseline)", ratio("latency_ratio"));
  row("cost_ratio", "median cost ratio (candidate / baseline)", ratio("cost_ratio"));
  row("candidate_false_closure_rate", "candidate false-closure rate",
      rate("candidate_false_closure_rate"));
  page +=
      "</table>\n<h2>Gates</h2>\n<table id=\"gates\"><tr><th>gate</th><th>limit</th>"
      "<th>value</th><th>decision</th></tr>\n";
  for (const Value& g : decisions.as_array()) {
    const bool passed = g.find("passed")->as_bool();
    page += "<tr class=\"" + std::string(passed ? "passed" : "failed") + "\" data-gate=\"" +
            html_escape(g.find("gate")->as_string()) + "\"><td>" +
            html_escape(g.find("gate")->as_string()) + "</td><td class=\"num\">" +
            html_escape(gate_value(*g.find("limit"))) + "</td><td class=\"num\">" +
            html_escape(gate_value(*g.find("value"))) + "</td><td>" +
            (passed ? "passed" : "failed") + "</td></tr>\n";
  }
  page += "</table>\n";
  if (!reasons.empty()) {
    page += "<ul id=\"reasons\">";
    for (const auto& r : reasons) page += "<li>" + html_escape(r) + "</li>";
    page += "</ul>\n";
  }
  page +=
      "<h2>Cases</h2>\n<table id=\"cases\"><tr><th>change</th><th>count</th><th>cases</th></tr>\n";
  for (const auto& [key, name] :
       {std::pair{"regressed", "regressed (passed → failed)"},
        std::pair{"improved", "improved (failed → passed)"}, std::pair{"unchanged", "unchanged"},
        std::pair{"missing", "missing from the candidate"},
        std::pair{"new", "new in the candidate"}}) {
    const auto& ids = c.find(key)->as_array();
    std::string list;
    for (const Value& id : ids) list += "<code>" + html_escape(id.as_string()) + "</code> ";
    page += "<tr data-change=\"" + std::string(key) + "\"" +
            (std::string_view(key) == "regressed" && !ids.empty() ? " class=\"failed\"" : "") +
            "><th>" + name + "</th><td class=\"num\">" + std::to_string(ids.size()) + "</td><td>" +
            (list.empty() ? "–" : list) + "</td></tr>\n";
  }
  return page + "</table>\n</body></html>\n";
}

}  // namespace

std::string render_comparison(const json::Value& c, const json::Value& decisions,
                              const std::vector<std::string>& reasons, Format format) {
  if (format == Format::Html) return compare_html(c, decisions, reasons);
  const auto ids = [&](const char* key) {
    std::string out;
    for (const Value& id : c.find(key)->as_array()) {
      out += (out.empty() ? "`" : ", `") + cell(id.as_string()) + "`";
    }
    return out.empty() ? std::string("–") : out;
  };
  const auto rate = [&](const char* key) { return comparison_figure(c, key, true); };
  const auto ratio = [&](const char* key) { return comparison_figure(c, key, false); };
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
  md += "| gate | limit | value | decision |\n|---|---:|---:|---|\n";
  for (const Value& g : decisions.as_array()) {
    md += "| " + cell(g.find("gate")->as_string()) + " | " + cell(gate_value(*g.find("limit"))) +
          " | " + cell(gate_value(*g.find("value"))) + " | " +
          (g.find("passed")->as_bool() ? "passed" : "**failed**") + " |\n";
  }
  md += "\n| | cases |\n|---|---|\n| regressed | " + ids("regressed") + " |\n| improved | " +
        ids("improved") + " |\n| unchanged | " + ids("unchanged") + " |\n| missing | " +
        ids("missing") + " |\n| new | " + ids("new") + " |\n";
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

std::string render(const json::Value& report, Format format, const PageInputs& page) {
  switch (format) {
    case Format::Markdown:
      return markdown(report);
    case Format::JUnit:
      return render_junit(report, {.fixed_clock = true});
    case Format::Html:
      return html(report, page);
  }
  return {};
}

}  // namespace mf::eval
