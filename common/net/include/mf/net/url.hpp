// The one check of an HTTP endpoint given in configuration or on a command line (a live profile's
// base_url, an MCP server's url) before any request is made. What is refused is decided here; the
// diagnostic code and where it points stay with each caller.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace mf::net {

inline constexpr std::size_t kMaxUrl = 2048;

// Why a URL is refused, in the order the checks run: its shape first, then its bytes.
enum class UrlFault : std::uint8_t {
  None,
  Scheme,       // neither http:// nor https://
  Credentials,  // user:password@ in the authority
  NoHost,       // an empty authority, or only a port
  Query,        // a query or a fragment, where the caller refuses them
  NotVisible,   // a byte outside visible ASCII (0x21..0x7E): a space, a control, non-ASCII
  TooLong,      // more than kMaxUrl bytes
};

struct UrlRules {
  // A base URL that paths are appended to has no place for a query or a fragment; a full
  // endpoint may carry them.
  bool allow_query = true;
};

UrlFault url_fault(std::string_view url, UrlRules rules = {});

// The fault as a sentence about `subject` ("base_url", "a server URL"); "" for UrlFault::None.
std::string describe(UrlFault fault, std::string_view subject);

}  // namespace mf::net
