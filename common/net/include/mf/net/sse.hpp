// An incremental Server-Sent Events parser: the WHATWG event-stream rules over bytes that arrive
// in arbitrary pieces. The live backends read streamed replies with it, the MCP client the event
// streams of Streamable HTTP servers.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "mf/diag/diagnostic.hpp"

namespace mf::net {

// Incremental Server-Sent Events parser (the WHATWG event-stream rules: `data:` lines joined by
// '\n', `event:` names, comments, CR/LF/CRLF line ends, a BOM at the start). Bytes may arrive
// split anywhere, including inside a CRLF or a UTF-8 sequence. A line longer than `max_line`
// is an error.
class SseParser {
 public:
  using OnEvent = std::function<Status(std::string_view event, std::string_view data)>;
  explicit SseParser(OnEvent on_event, std::size_t max_line = 8u << 20);
  Status feed(std::string_view bytes);
  // End of stream: dispatches nothing that was not terminated by a blank line (per the rules).
  Status finish();

 private:
  Status scan(std::string_view bytes);
  Status line(std::string_view l);
  Status dispatch();

  OnEvent on_event_;
  std::size_t max_line_;
  std::string line_;   // the unterminated tail of what was fed (at the start: held BOM bytes)
  std::string data_;   // the event's data lines so far, joined by '\n'
  std::string event_;  // the event's type ("" = "message")
  bool has_data_ = false;
  bool after_cr_ = false;  // the last feed ended in CR: an LF starting the next one is its CRLF
  bool at_start_ = true;   // nothing decided yet about a leading BOM
  Status failure_;         // sticky: once a feed failed, every later feed returns the same
};

}  // namespace mf::net
