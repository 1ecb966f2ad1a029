// Deterministic generator of trace-like JSONL events for the benchmarks and the bench corpus.
// Lines are written as raw JSON text (not through mf::json) so the reader is measured on input it
// did not produce: unsorted keys, escapes, non-ASCII and astral characters, and number lexemes that
// canonicalize to a different spelling (5E-7, 1e21, 2.50, 0.10000000000000001).
#pragma once

#include <array>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace mf::bench {

// splitmix64: tiny, fast and identical on every platform, so the corpus is byte-for-byte
// reproducible.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n).
  std::uint64_t below(std::uint64_t n) { return next() % n; }
  // Uniform in [0, 1).
  double unit() { return double(next() >> 11) * 0x1.0p-53; }
  bool chance(unsigned percent) { return below(100) < percent; }

 private:
  std::uint64_t state_;
};

namespace detail {

template <std::size_t N>
std::string_view pick(Rng& rng, const std::array<std::string_view, N>& items) {
  return items[rng.below(N)];
}

inline void append_uint(std::uint64_t v, std::string& out) {
  char buf[24];
  int n = std::snprintf(buf, sizeof buf, "%llu", static_cast<unsigned long long>(v));
  out.append(buf, static_cast<std::size_t>(n));
}

inline void append_hex(Rng& rng, std::size_t digits, std::string& out) {
  static constexpr char kHex[] = "0123456789abcdef";
  for (std::size_t i = 0; i < digits; ++i) out.push_back(kHex[rng.below(16)]);
}

// String fragments as JSON lexeme text (already escaped): plain words, escapes, raw UTF-8 of 2, 3
// and 4 bytes, and \u escapes including surrogate pairs.
inline constexpr std::array<std::string_view, 40> kFragments = {
    "the ",
    "file ",
    "returns ",
    "value ",
    "error ",
    "path ",
    "in ",
    "function ",
    "line ",
    "ok ",
    "result: ",
    "tool ",
    "call ",
    "model ",
    "budget ",
    "step ",
    "\\n",
    "\\t",
    "\\\"quoted\\\" ",
    "C:\\\\tmp\\\\x ",
    "a\\/b ",
    "\\u0001",
    "\\u001f",
    "\\r\\n",
    "caf\xc3\xa9 ",
    "na\xc3\xafve ",
    "\xe4\xb8\xad\xe6\x96\x87 ",
    "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e ",
    "\xf0\x9f\x98\x80 ",
    "\xf0\x9d\x84\x9e ",
    "\\u00e9",
    "\\u4e2d",
    "\\ud83d\\ude80 ",
    "\\ud834\\udd1e",
    "\xe2\x80\xa8",
    "\\u2028",
    "\xef\xbd\xa1 ",
    "<tag attr=\\\"v\\\"> ",
    "{\\\"k\\\": [1, 2]} ",
    "\xce\xbb x. x ",
};

inline void append_text(Rng& rng, std::size_t fragments, std::string& out) {
  out.push_back('"');
  for (std::size_t i = 0; i < fragments; ++i) out.append(pick(rng, kFragments));
  out.push_back('"');
}

// Number lexemes: the ES6 edge cases the canonical writer must get right, plus random doubles
// printed with too many digits (17) or few (6) so that parse + shortest round-trip both do real
// work.
inline void append_float(Rng& rng, std::string& out) {
  static constexpr std::array<std::string_view, 20> kFixed = {"0.1",
                                                              "0.2",
                                                              "0.30000000000000004",
                                                              "1e21",
                                                              "1E21",
                                                              "5e-7",
                                                              "5E-7",
                                                              "1e-7",
                                                              "123.456",
                                                              "-0.5",
                                                              "2.50",
                                                              "1.0",
                                                              "-1.5e-10",
                                                              "1e300",
                                                              "4.35",
                                                              "6.02214076e23",
                                                              "1.7976931348623157e308",
                                                              "2.5e-8",
                                                              "100e-2",
                                                              "0.000001"};
  char buf[40];
  int n = 0;
  switch (rng.below(4)) {
    case 0:
      out.append(pick(rng, kFixed));
      return;
    case 1:
      n = std::snprintf(buf, sizeof buf, "%.17g", rng.unit() * 1000.0);
      break;
    case 2:
      n = std::snprintf(buf, sizeof buf, "%.6g", (rng.unit() - 0.5) * 1e6);
      break;
    default:
      n = std::snprintf(buf, sizeof buf, "%.3f", rng.unit() * 10.0);
      break;
  }
  out.append(buf, static_cast<std::size_t>(n));
}

}  // namespace detail

// Emits trace-like events (docs/formats/trace.md shape, payloads invented) one line at a time.
class TraceGenerator {
 public:
  explicit TraceGenerator(std::uint64_t seed) : rng_(seed) { new_run(); }

  // Appends one event line including its '\n'.
  void append_line(std::string& out) {
    using namespace detail;
    std::string_view event = next_event_type();
    out.append("{\"v\":1,\"seq\":");
    append_uint(seq_, out);
    out.append(",\"event\":\"").append(event).append("\",\"run_id\":\"").append(run_id_);
    out.append("\",\"t_ms\":");
    t_ms_ += rng_.below(2000);
    append_uint(t_ms_, out);
    if (event == "run_started") {
      run_started(out);
    } else if (event == "model_requested") {
      model_requested(out);
    } else if (event == "model_responded") {
      model_responded(out);
    } else if (event == "tool_called") {
      tool_called(out);
    } else if (event == "tool_completed") {
      tool_completed(out);
    } else if (event == "guardrail_violation") {
      guardrail_violation(out);
    } else {
      run_finished(out);
    }
    out.append("}\n");
    ++seq_;
    if (finished_) new_run();
  }

  // Appends lines until `out` has grown by at least `bytes`.
  void append_lines(std::size_t bytes, std::string& out) {
    const std::size_t target = out.size() + bytes;
    while (out.size() < target) append_line(out);
  }

 private:
  void new_run() {
    run_id_ = "run-";
    detail::append_hex(rng_, 16, run_id_);
    seq_ = 0;
    t_ms_ = 0;
    steps_left_ = 8 + rng_.below(120);
    finished_ = false;
    pending_tool_ = false;
  }

  std::string_view next_event_type() {
    if (seq_ == 0) return "run_started";
    if (steps_left_ == 0) {
      finished_ = true;
      return rng_.chance(80) ? "run_completed" : "run_failed";
    }
    --steps_left_;
    if (pending_tool_) {
      pending_tool_ = false;
      return "tool_completed";
    }
    switch (rng_.below(10)) {
      case 0:
      case 1:
      case 2:
        return "model_requested";
      case 3:
      case 4:
      case 5:
        return "model_responded";
      case 6:
      case 7:
      case 8:
        pending_tool_ = true;
        return "tool_called";
      default:
        return "guardrail_violation";
    }
  }

  void run_started(std::string& out) {
    using namespace detail;
    out.append(",\"task\":{\"name\":");
    append_text(rng_, 2, out);
    out.append(",\"params\":{\"z_last\":true,\"\xc3\xa9t\xc3\xa9\":");
    append_float(rng_, out);
    out.append(
        ",\"\xf0\x9f\x98\x80\":\"astral key\",\"\xef\xbd\xa1\":\"bmp key after astral\",\"a\":[");
    for (int i = 0, n = int(rng_.below(5)); i < n; ++i) {
      if (i) out.push_back(',');
      append_uint(rng_.below(1u << 20), out);
    }
    out.append("]},\"description\":");
    append_text(rng_, 10 + rng_.below(30), out);
    out.append("},\"durability\":\"event\",\"model\":{\"temperature\":");
    append_float(rng_, out);
    out.append(",\"profile\":\"scripted\",\"top_p\":1,\"max_tokens\":4096,\"stop\":null},");
    out.append("\"limits\":{\"max_steps\":64,\"budget_usd\":0.25,\"timeout_s\":1e3},");
    out.append("\"tools\":[\"read_file\",\"grep\",\"run_tests\",\"write_file\",\"list_dir\"]");
  }

  void model_requested(std::string& out) {
    using namespace detail;
    out.append(",\"request\":{\"messages\":[{\"role\":\"system\",\"content\":");
    append_text(rng_, 5 + rng_.below(20), out);
    out.append("},{\"content\":");
    append_text(rng_, 5 + rng_.below(40), out);
    out.append(",\"role\":\"user\"}],\"sha256\":\"");
    append_hex(rng_, 64, out);
    out.append("\",\"projection\":{\"units\":[");
    for (int i = 0, n = 1 + int(rng_.below(6)); i < n; ++i) {
      if (i) out.push_back(',');
      out.append("{\"id\":\"u");
      append_uint(rng_.below(500), out);
      out.append("\",\"weight\":");
      append_float(rng_, out);
      out.append(",\"active\":").append(rng_.chance(70) ? "true" : "false").append("}");
    }
    out.append("],\"fingerprint\":\"");
    append_hex(rng_, 64, out);
    out.append("\"}}");
  }

  void model_responded(std::string& out) {
    using namespace detail;
    out.append(",\"response\":{\"size\":");
    append_uint(rng_.below(1u << 16), out);
    out.append(",\"usage\":{\"prompt_tokens\":");
    append_uint(rng_.below(100000), out);
    out.append(",\"cost_usd\":");
    append_float(rng_, out);
    out.append(",\"completion_tokens\":");
    append_uint(rng_.below(8000), out);
    out.append("},\"sha256\":\"");
    append_hex(rng_, 64, out);
    out.append("\",\"content\":");
    // Most responses are short; a few are long, as real model output is.
    append_text(rng_, rng_.chance(10) ? 200 + rng_.below(600) : 10 + rng_.below(80), out);
    out.append(",\"latency_s\":");
    append_float(rng_, out);
    out.append(",\"tool_calls\":[");
    for (int i = 0, n = int(rng_.below(3)); i < n; ++i) {
      if (i) out.push_back(',');
      out.append("{\"name\":\"grep\",\"arguments\":{\"pattern\":");
      append_text(rng_, 2, out);
      out.append(",\"max\":");
      append_uint(rng_.below(1000), out);
      out.append("}}");
    }
    out.append("]}");
  }

  void tool_called(std::string& out) {
    using namespace detail;
    static constexpr std::array<std::string_view, 5> kTools = {"read_file", "grep", "run_tests",
                                                               "write_file", "list_dir"};
    out.append(",\"tool\":\"").append(pick(rng_, kTools)).append("\",\"call_id\":\"call_");
    append_hex(rng_, 12, out);
    out.append("\",\"args\":{\"path\":\"src/");
    append_hex(rng_, 6, out);
    out.append("/main.cpp\",\"offset\":");
    append_uint(rng_.below(1u << 30), out);
    out.append(",\"limit\":1e21,\"flags\":[[\"-n\"],[\"-i\",\"--\"],[]],\"recursive\":");
    out.append(rng_.chance(50) ? "true" : "false").append("}");
  }

  void tool_completed(std::string& out) {
    using namespace detail;
    out.append(",\"result\":{\"stdout\":");
    append_text(rng_, 5 + rng_.below(120), out);
    out.append(",\"ok\":").append(rng_.chance(90) ? "true" : "false");
    out.append(",\"stderr\":null,\"exit_code\":");
    append_uint(rng_.below(3), out);
    out.append(",\"elapsed_ms\":");
    append_float(rng_, out);
    out.append(",\"bytes\":");
    append_uint(rng_.below(1u << 24), out);
    out.append(",\"truncated\":false}");
  }

  void guardrail_violation(std::string& out) {
    using namespace detail;
    static constexpr std::array<std::string_view, 5> kKinds = {
        "retry_nudge", "unknown_tool", "malformed_arguments", "premature_terminal", "tool_error"};
    out.append(",\"kind\":\"").append(pick(rng_, kKinds)).append("\",\"detail\":");
    append_text(rng_, 3 + rng_.below(10), out);
    out.append(",\"budget\":{\"steps_left\":");
    append_uint(steps_left_, out);
    out.append(",\"retries_left\":");
    append_uint(rng_.below(4), out);
    out.append(",\"usd_left\":");
    append_float(rng_, out);
    out.append("}");
  }

  void run_finished(std::string& out) {
    using namespace detail;
    out.append(",\"outcome\":{\"status\":\"").append(rng_.chance(50) ? "success" : "regressed");
    out.append("\",\"score\":");
    append_float(rng_, out);
    out.append(",\"metrics\":{\"recall\":");
    append_float(rng_, out);
    out.append(",\"precision\":");
    append_float(rng_, out);
    out.append(",\"steps\":");
    append_uint(seq_, out);
    out.append("},\"notes\":");
    append_text(rng_, 4, out);
    out.append("}");
  }

  Rng rng_;
  std::string run_id_;
  std::uint64_t seq_ = 0;
  std::uint64_t t_ms_ = 0;
  std::uint64_t steps_left_ = 0;
  bool finished_ = false;
  bool pending_tool_ = false;
};

}  // namespace mf::bench
