// An eval report as JUnit XML (junit.hpp). Repeated attempts follow Maven Surefire's rerun
// report: a case whose attempts disagree passed eventually, so it is a passing testcase with one
// flakyFailure per failed attempt; a case that failed every attempt is a failure (its first
// attempt) with one rerunFailure per later attempt.
#include "mf/eval/junit.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <ctime>
#include <optional>
#include <vector>

#include "mf/json/canonical.hpp"
#include "xml.hpp"

namespace mf::eval {

namespace detail {

std::string xml(std::string_view s) {
  std::string out;
  for (unsigned char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') {
          out += "\xEF\xBF\xBD";
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out;
}

}  // namespace detail

namespace {

using detail::xml;
using json::Value;

// One attempt of a case; a case without repeats is its own single attempt.
struct Attempt {
  std::string name;  // the trace's name: <id>, or <id>.<n> with repeats
  const Value* entry;
  bool passed;
};

std::string text_of(const Value& v) {
  return v.is_string() ? v.as_string() : json::canonical(v);
}

// "attempt N: check: expected E, got A (terminal T)" for a failed attempt.
std::string why(const Attempt& a, std::optional<std::int64_t> repeat) {
  std::string s = repeat ? "attempt " + std::to_string(*repeat) + ": " : "";
  const auto& failures = a.entry->find("failures")->as_array();
  if (!failures.empty()) {
    const Value& f = failures.front();
    s += f.find("check")->as_string() + ": expected " + text_of(*f.find("expected"));
    const Value* actual = f.find("actual");
    s += actual != nullptr ? ", got " + text_of(*actual) : ", got nothing";
  }
  return s + " (terminal " + text_of(*a.entry->find("terminal")) + ")";
}

// Seconds with three decimals, as the schemas' time pattern takes them.
std::string seconds_text(double seconds) {
  std::array<char, 32> buf{};
  std::snprintf(buf.data(), buf.size(), "%.3f", seconds);
  return buf.data();
}

std::string attachment(const JUnitOptions& o, const Attempt& a) {
  return o.traces_dir.empty() ? "" : "[[ATTACHMENT|" + o.traces_dir + "/" + a.name + ".jsonl]]\n";
}

std::string property(std::string_view name, std::string_view value) {
  return "      <property name=\"" + xml(name) + "\" value=\"" + xml(value) + "\"/>\n";
}

// The campaign as the report records it: its suite, the matrix's models and presets, the seeds
// those models draw from, and the number of attempts per case.
std::string properties(const Value& report) {
  std::vector<std::string> models, presets, seeds;
  const auto add = [](std::vector<std::string>& to, const std::string& v) {
    if (std::find(to.begin(), to.end(), v) == to.end()) to.push_back(v);
  };
  for (const Value& c : report.find("cases")->as_array()) {
    const Value* variant = c.find("variant");
    if (variant == nullptr) continue;
    const Value* g = variant->find("guardrails");
    if (const Value* m = variant->find("model")) {
      // The column's label is LABEL or LABEL.PRESET: the model's own label is LABEL.
      std::string label = variant->find("label")->as_string();
      if (g != nullptr && label.size() > g->as_string().size() &&
          label.compare(label.size() - g->as_string().size() - 1, std::string::npos,
                        "." + g->as_string()) == 0) {
        label.resize(label.size() - g->as_string().size() - 1);
      }
      add(models, label + "=" + m->as_string());
      // A sim's seed (sim:FILE?seed=S&...): sample n draws as seed S+n.
      const std::string& spec = m->as_string();
      for (std::size_t at = spec.find('?'); at != std::string::npos; at = spec.find('&', at + 1)) {
        if (spec.compare(at + 1, 5, "seed=") == 0) {
          add(seeds, spec.substr(at + 6, spec.find('&', at + 1) - at - 6));
        }
      }
    }
    if (g != nullptr) add(presets, g->as_string());
  }
  std::string out =
      "    <properties>\n" + property("suite_sha256", text_of(*report.find("suite_sha256")));
  for (const auto& m : models) out += property("model", m);
  for (const auto& p : presets) out += property("preset", p);
  for (const auto& s : seeds) out += property("seed", s);
  const Value* repeat = report.find("summary")->find("repeat");
  out += property("repeat", repeat != nullptr ? text_of(*repeat) : "1");
  return out + "    </properties>\n";
}

// "2026-12-05T10:39:34", UTC, as Ant's and Surefire's reports write it; and the host's name.
std::string timestamp() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  std::array<char, 32> buf{};
  std::strftime(buf.data(), buf.size(), "%Y-%m-%dT%H:%M:%S", &utc);
  return buf.data();
}

std::string hostname() {
  std::array<char, 256> buf{};
  if (::gethostname(buf.data(), buf.size() - 1) != 0) return "localhost";
  return buf.data();
}

}  // namespace

std::string render_junit(const Value& report, const JUnitOptions& options) {
  const std::string suite = report.find("suite_id")->as_string();
  std::string cases;
  std::int64_t tests = 0, failures = 0;
  double seconds = 0;
  for (const Value& c : report.find("cases")->as_array()) {
    const std::string id = c.find("id")->as_string();
    std::vector<Attempt> attempts;
    std::vector<std::optional<std::int64_t>> repeats;
    if (const Value* list = c.find("attempts")) {
      for (const Value& a : list->as_array()) {
        const std::int64_t n = *a.find("repeat")->as_exact_int();
        attempts.push_back(
            {id + "." + std::to_string(n), &a, a.find("status")->as_string() == "passed"});
        repeats.emplace_back(n);
      }
    } else {
      attempts.push_back({id, &c, c.find("status")->as_string() == "passed"});
      repeats.emplace_back();
    }
    double total = 0;
    for (const Attempt& a : attempts) {
      if (const Value* l = a.entry->find("latency_ms")) total += l->as_number();
    }
    seconds += total / 1000;
    ++tests;
    const bool any_passed =
        std::any_of(attempts.begin(), attempts.end(), [](const Attempt& a) { return a.passed; });
    std::string body, out;
    bool first_failure = true;
    for (std::size_t i = 0; i < attempts.size(); ++i) {
      const Attempt& a = attempts[i];
      out += attachment(options, a);
      if (a.passed) continue;
      const std::string message = why(a, repeats[i]);
      const std::string detail = json::canonical(*a.entry->find("failures"));
      if (!any_passed && first_failure) {
        body += "      <failure message=\"" + xml(message) + "\" type=\"expectation\">" +
                xml(message + "\n" + detail + "\n") + "</failure>\n";
        ++failures;
      } else {
        const char* element = any_passed ? "flakyFailure" : "rerunFailure";
        body += "      <" + std::string(element) + " message=\"" + xml(message) +
                "\" type=\"expectation\"><stackTrace>" + xml(detail) + "</stackTrace>";
        if (const std::string file = attachment(options, a); !file.empty()) {
          body += "<system-out>" + xml(file) + "</system-out>";
        }
        body += "</" + std::string(element) + ">\n";
      }
      first_failure = false;
    }
    if (!out.empty()) body += "      <system-out>" + xml(out) + "</system-out>\n";
    cases += "    <testcase classname=\"" + xml(suite) + "\" name=\"" + xml(id) + "\" time=\"" +
             seconds_text(total / 1000) + "\"" +
             (body.empty() ? "/>\n" : ">\n" + body + "    </testcase>\n");
  }
  const std::string counts = " tests=\"" + std::to_string(tests) + "\" failures=\"" +
                             std::to_string(failures) + "\" errors=\"0\"";
  const std::string time = " time=\"" + seconds_text(seconds) + "\"";
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"mf-eval\"" +
                    counts + time + ">\n  <testsuite name=\"" + xml(suite) + "\"" + counts +
                    " skipped=\"0\"" + time;
  if (!options.fixed_clock) {
    out += " timestamp=\"" + timestamp() + "\" hostname=\"" + xml(hostname()) + "\"";
  }
  out += ">\n" + properties(report) + cases + "  </testsuite>\n</testsuites>\n";
  return out;
}

}  // namespace mf::eval
