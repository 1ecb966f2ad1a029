#include "mf/trace/verify.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

#include "mf/diag/codes.hpp"
#include "mf/json/canonical.hpp"
#include "mf/trace/events.hpp"

namespace mf::trace {
namespace {

namespace codes = diag::codes;

constexpr std::size_t kChunkBytes = 1u << 20;

// The member as an exact non-negative integer, or nothing.
std::optional<std::int64_t> natural(const json::Value& object, std::string_view key) {
  const auto* v = object.find(key);
  if (v == nullptr || !v->is_number()) return std::nullopt;
  auto n = v->as_exact_int();
  if (!n || *n < 0) return std::nullopt;
  return n;
}

const std::string* string_member(const json::Value& object, std::string_view key) {
  const auto* v = object.find(key);
  return v != nullptr && v->is_string() ? &v->as_string() : nullptr;
}

bool is_incomplete(const std::string& code) {
  return code == codes::kTraceTruncated || code == codes::kTraceNoTerminal;
}

}  // namespace

std::string_view outcome_name(Outcome o) {
  switch (o) {
    case Outcome::Ok:
      return "ok";
    case Outcome::Incomplete:
      return "incomplete";
    case Outcome::Corrupt:
      return "corrupt";
  }
  return "corrupt";
}

json::Value to_json(const Summary& s) {
  json::Value out = json::Object{};
  out.set("status", outcome_name(s.status));
  out.set("run_id", s.run_id ? json::Value(*s.run_id) : json::Value(nullptr));
  out.set("terminal", s.terminal ? json::Value(*s.terminal) : json::Value(nullptr));
  out.set("events", s.events);
  out.set("model_calls", s.model_calls);
  out.set("repairs", s.repairs);
  json::Value by_kind = json::Object{};
  for (const auto& [kind, count] : s.violations_by_kind) by_kind.set(kind, count);
  out.set("violations_by_kind", std::move(by_kind));
  out.set("tool_calls", s.tool_calls);
  out.set("trace_sha256", s.trace_sha256);
  if (s.first_error) {
    json::Value error = json::Object{};
    error.set("line", s.first_error->line);
    error.set("code", s.first_error->code);
    error.set("message", s.first_error->message);
    out.set("first_error", std::move(error));
  } else {
    out.set("first_error", nullptr);
  }
  return out;
}

Verifier::Verifier(VerifyOptions options) : options_(options) {
  limits_.max_bytes = options_.max_line_bytes;
}

void Verifier::fail(const char* code, std::string message, std::int64_t column) {
  summary_.first_error = diag::error(code, std::move(message), {}, line_, column);
}

void Verifier::feed(std::string_view bytes) {
  hasher_.update(bytes);
  // After the first error only the digest still needs the bytes.
  while (!bytes.empty() && !summary_.first_error) {
    const auto newline = bytes.find('\n');
    const auto head = bytes.substr(0, newline);
    if (partial_.size() + head.size() > options_.max_line_bytes) {
      ++line_;
      fail(codes::kTraceMalformedLine,
           "line is over the size limit of " + std::to_string(options_.max_line_bytes) + " bytes");
      return;
    }
    if (newline == std::string_view::npos) {
      partial_.append(head);
      return;
    }
    bytes.remove_prefix(newline + 1);
    // A line wholly inside this chunk is checked in place; only lines split across chunks are
    // copied.
    if (partial_.empty()) {
      check_line(head, true);
    } else {
      partial_.append(head);
      check_line(partial_, true);
      partial_.clear();
    }
  }
}

void Verifier::check_line(std::string_view text, bool terminated) {
  ++line_;
  if (!terminated) {
    // The writer appends each line with its '\n' in one write, so a missing '\n' is a crash
    // mid-write — unless the run had already ended.
    if (terminated_) {
      fail(codes::kTraceAfterTerminal, "unterminated bytes after the terminal event");
    } else {
      fail(codes::kTraceTruncated,
           "last line has no newline: the trace was cut short mid-write (incomplete)");
    }
    return;
  }
  if (text.empty()) return fail(codes::kTraceMalformedLine, "empty line");
  auto parsed = json::parse(text, limits_, line_ - 1);
  if (!parsed) {
    const auto& d = parsed.diagnostics().front();
    return fail(codes::kTraceMalformedLine, "not strict JSON (" + d.code + ": " + d.message + ")",
                d.column);
  }
  const json::Value& event_object = *parsed;
  if (!check_envelope(text, event_object)) return;
  const std::string& event = *string_member(event_object, "event");
  if (!check_order(event, *string_member(event_object, "run_id"), *natural(event_object, "seq"))) {
    return;
  }
  if (!check_and_count(event, event_object)) return;
  ++summary_.events;
}

// One strict JSON object with the envelope members, in canonical form, of a known event type.
bool Verifier::check_envelope(std::string_view text, const json::Value& event_object) {
  if (!event_object.is_object()) {
    fail(codes::kTraceMalformedLine, "line is not a JSON object");
    return false;
  }
  const auto version = natural(event_object, "v");
  const auto* run_id = string_member(event_object, "run_id");
  const auto* event = string_member(event_object, "event");
  if (!version || *version != 1) {
    fail(codes::kTraceBadEnvelope, "\"v\" must be 1");
  } else if (run_id == nullptr || run_id->empty()) {
    fail(codes::kTraceBadEnvelope, "\"run_id\" must be a non-empty string");
  } else if (!natural(event_object, "seq")) {
    fail(codes::kTraceBadEnvelope, "\"seq\" must be an integer >= 0");
  } else if (event == nullptr) {
    fail(codes::kTraceBadEnvelope, "\"event\" must be a string");
  } else if (!natural(event_object, "t_ms")) {
    fail(codes::kTraceBadEnvelope, "\"t_ms\" must be an integer >= 0");
  }
  if (summary_.first_error) return false;
  if (line_ == 1) summary_.run_id = *run_id;
  canonical_.clear();
  json::write_canonical(event_object, canonical_);
  if (canonical_ != text) {
    fail(codes::kTraceNotCanonical, "line is not in canonical form (RFC 8785)");
    return false;
  }
  if (!is_known_event(*event)) {
    fail(codes::kTraceUnknownEvent, "unknown event type \"" + *event + "\"");
    return false;
  }
  return true;
}

// run_started first and only first, one run id, contiguous seq, nothing after the terminal.
bool Verifier::check_order(const std::string& event, const std::string& run_id, std::int64_t seq) {
  if (line_ == 1 && event != "run_started") {
    fail(codes::kTraceNoRunStarted, "the first event is " + event + ", not run_started");
  } else if (line_ > 1 && event == "run_started") {
    fail(codes::kTraceNoRunStarted, "run_started appears again");
  } else if (line_ > 1 && run_id != *summary_.run_id) {
    fail(codes::kTraceForeignRunId,
         "run_id \"" + run_id + "\" differs from the first line's \"" + *summary_.run_id + "\"");
  } else if (seq != summary_.events) {
    fail(codes::kTraceSeqBroken,
         "seq " + std::to_string(seq) + " where " + std::to_string(summary_.events) +
             " was expected (" + (seq > summary_.events ? "gap" : "duplicate or reordered") + ")");
  } else if (terminated_) {
    fail(is_terminal_event(event) ? codes::kTraceSecondTerminal : codes::kTraceAfterTerminal,
         is_terminal_event(event) ? "a second terminal event (" + event + ")"
                                  : event + " after the terminal event");
  }
  return !summary_.first_error;
}

// The payload of its event type, tool calls paired, and the summary's counts.
bool Verifier::check_and_count(const std::string& event, const json::Value& event_object) {
  if (auto bad = check_payload(event, event_object)) {
    fail(codes::kTraceBadPayload, "ill-formed " + event + ": " + *bad);
    return false;
  }
  if (event == "tool_called" || event == "tool_completed") {
    const auto& call_id = event_object.find("call_id")->as_string();
    if (event == "tool_called") {
      if (!open_calls_.insert(call_id).second) {
        fail(codes::kTraceDuplicateCallId,
             "tool_called with call_id \"" + call_id + "\" while that call is still open");
        return false;
      }
      ++summary_.tool_calls;
    } else if (open_calls_.erase(call_id) == 0) {
      fail(codes::kTraceUnpairedTool,
           "tool_completed with call_id \"" + call_id + "\" has no preceding tool_called");
      return false;
    }
  } else if (event == "model_requested") {
    ++summary_.model_calls;
    if (event_object.find("kind")->as_string() == "repair") ++summary_.repairs;
  } else if (event == "verification_failed") {
    const auto& violations = event_object.find("violations")->as_array();
    for (const auto& v : violations) ++summary_.violations_by_kind[v.find("code")->as_string()];
    if (violations.empty()) ++summary_.violations_by_kind[event];
  } else if (event == "guardrail_violation") {
    const auto* kind = string_member(event_object, "kind");
    ++summary_.violations_by_kind[kind != nullptr ? *kind : event];
  } else if (event == "tool_denied") {
    ++summary_.violations_by_kind[event];
  } else if (is_terminal_event(event)) {
    terminated_ = true;
    summary_.terminal = event_object.find("terminal")->as_string();
  }
  return true;
}

Summary Verifier::finish() {
  if (!summary_.first_error) {
    if (!partial_.empty()) {
      check_line(partial_, false);
    } else if (!terminated_) {
      ++line_;  // the line where the terminal event should have been
      fail(codes::kTraceNoTerminal, summary_.events == 0
                                        ? "the trace has no events (incomplete)"
                                        : "the trace ends without a terminal event (incomplete)");
    }
  }
  partial_.clear();
  summary_.trace_sha256 = hash::to_hex(hasher_.finish());
  if (summary_.first_error) {
    summary_.status =
        is_incomplete(summary_.first_error->code) ? Outcome::Incomplete : Outcome::Corrupt;
  }
  return std::move(summary_);
}

Result<Summary> verify(std::string_view trace_bytes, const VerifyOptions& options) {
  Verifier verifier(options);
  verifier.feed(trace_bytes);
  return verifier.finish();
}

Result<Summary> verify_file(const std::string& path, const VerifyOptions& options) {
  const std::string name = path == "-" ? "<stdin>" : path;
  int fd = STDIN_FILENO;
  const bool owned = path != "-";
  if (owned) {
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      return diag::error(codes::kMissing,
                         "cannot open trace '" + path + "': " + std::strerror(errno));
    }
    struct stat st {};
    if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
      ::close(fd);
      return diag::error(codes::kNotRegularFile, "trace '" + path + "' is a directory");
    }
  }
  Verifier verifier(options);
  std::unique_ptr<char[]> buf(new char[kChunkBytes]);  // uninitialized: no page faults up front
  for (;;) {
    ssize_t n = ::read(fd, buf.get(), kChunkBytes);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      if (owned) ::close(fd);
      return diag::error(codes::kInternal, "cannot read " + name + ": " + std::strerror(err));
    }
    if (n == 0) break;
    verifier.feed({buf.get(), static_cast<std::size_t>(n)});
  }
  if (owned) ::close(fd);
  return verifier.finish();
}

}  // namespace mf::trace
