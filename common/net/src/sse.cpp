// The Server-Sent Events parser (mf/net/sse.hpp): the WHATWG event-stream rules
// over bytes that arrive in arbitrary pieces. Line ends are found with memchr, complete lines are
// handled in place in the caller's buffer, and only a line cut by the end of a feed is copied.
#include "mf/net/sse.hpp"

#include <cstring>

#include "mf/diag/codes.hpp"

namespace mf::net {

namespace {

constexpr std::string_view kBom = "\xEF\xBB\xBF";

}  // namespace

SseParser::SseParser(OnEvent on_event, std::size_t max_line)
    : on_event_(std::move(on_event)), max_line_(max_line) {}

Status SseParser::feed(std::string_view bytes) {
  if (!failure_.ok()) return failure_;
  if (at_start_) {
    // A BOM may itself be split across feeds: hold the first bytes until they decide.
    const std::size_t take = std::min(bytes.size(), kBom.size() - line_.size());
    line_.append(bytes.substr(0, take));
    bytes.remove_prefix(take);
    if (kBom.starts_with(line_)) {
      if (line_.size() < kBom.size()) return {};  // all of `bytes` is held
      line_.clear();                              // a whole BOM: dropped
      at_start_ = false;
    } else {
      at_start_ = false;
      std::string held = std::move(line_);
      line_.clear();
      if (Status s = scan(held); !s) return s;
    }
  }
  return scan(bytes);
}

Status SseParser::finish() {
  // An event not closed by a blank line is never dispatched, and neither is a last line without
  // its end: the stream was cut, which the caller judges from the events it did get.
  line_.clear();
  data_.clear();
  event_.clear();
  has_data_ = false;
  return failure_;
}

Status SseParser::scan(std::string_view bytes) {
  const char* p = bytes.data();
  const char* const end = p + bytes.size();
  if (after_cr_ && p < end) {
    if (*p == '\n') ++p;  // the LF of a CRLF split across feeds
    after_cr_ = false;
  }
  // The next LF at or after p (end when there is none). Kept across lines so that a stream of
  // CR-only line ends is not rescanned to its end once per line.
  const char* lf = nullptr;
  while (p < end) {
    if (lf == nullptr || lf < p) {
      const void* found = std::memchr(p, '\n', static_cast<std::size_t>(end - p));
      lf = found != nullptr ? static_cast<const char*>(found) : end;
    }
    const void* cr = std::memchr(p, '\r', static_cast<std::size_t>(lf - p));
    const char* eol = cr != nullptr ? static_cast<const char*>(cr) : lf;
    const std::size_t length = static_cast<std::size_t>(eol - p);
    if (line_.size() + length > max_line_) {
      failure_ = diag::error(diag::codes::kLimitExceeded, "an event-stream line is longer than " +
                                                              std::to_string(max_line_) + " bytes");
      return failure_;
    }
    if (eol == end) {  // no line end in the rest: keep it for the next feed
      line_.append(p, length);
      return {};
    }
    std::string_view l(p, length);
    if (!line_.empty()) {
      line_.append(p, length);
      l = line_;
    }
    p = eol + 1;
    if (*eol == '\r') {
      if (p == end) {
        after_cr_ = true;
      } else if (*p == '\n') {
        ++p;
      }
    }
    Status s = line(l);
    line_.clear();
    if (!s) {
      failure_ = std::move(s);
      return failure_;
    }
  }
  return {};
}

Status SseParser::line(std::string_view l) {
  if (l.empty()) return dispatch();
  if (l.front() == ':') return {};  // a comment (servers send them as keep-alives)
  const std::size_t colon = l.find(':');
  const std::string_view field = l.substr(0, colon);
  std::string_view value;
  if (colon != std::string_view::npos) {
    value = l.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  }
  if (field == "data") {
    if (has_data_) data_.push_back('\n');
    data_.append(value);
    has_data_ = true;
  } else if (field == "event") {
    event_.assign(value);
  }
  // `id` and `retry` only matter to reconnecting, which a model call never does (a cut stream is
  // a failed attempt, retried from the start); every other field is ignored, as the rules say.
  return {};
}

Status SseParser::dispatch() {
  if (!has_data_) {  // an event with no data line is dropped, type and all
    event_.clear();
    return {};
  }
  Status s =
      on_event_(event_.empty() ? std::string_view("message") : std::string_view(event_), data_);
  data_.clear();
  event_.clear();
  has_data_ = false;
  return s;
}

}  // namespace mf::net
