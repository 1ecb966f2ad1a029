// The check of an endpoint URL (url.hpp): what is refused and the words that describe it.
#include "mf/net/url.hpp"

#include <algorithm>

namespace mf::net {

UrlFault url_fault(std::string_view url, UrlRules rules) {
  std::string_view rest;
  if (url.starts_with("https://")) {
    rest = url.substr(8);
  } else if (url.starts_with("http://")) {
    rest = url.substr(7);
  } else {
    return UrlFault::Scheme;
  }
  const std::string_view authority = rest.substr(0, rest.find_first_of("/?#"));
  if (authority.find('@') != std::string_view::npos) return UrlFault::Credentials;
  if (authority.empty() || authority.front() == ':') return UrlFault::NoHost;
  if (!rules.allow_query && rest.find_first_of("?#") != std::string_view::npos) {
    return UrlFault::Query;
  }
  if (!std::all_of(url.begin(), url.end(), [](char c) { return c > 0x20 && c < 0x7F; })) {
    return UrlFault::NotVisible;
  }
  if (url.size() > kMaxUrl) return UrlFault::TooLong;
  return UrlFault::None;
}

std::string describe(UrlFault fault, std::string_view subject) {
  std::string s(subject);
  switch (fault) {
    case UrlFault::None:
      return {};
    case UrlFault::Scheme:
      return s + " must start with http:// or https://";
    case UrlFault::Credentials:
      return s + " must not carry credentials (user:password@)";
    case UrlFault::NoHost:
      return s + " names no host";
    case UrlFault::Query:
      return s + " must not have a query or a fragment";
    case UrlFault::NotVisible:
      return s + " must be visible ASCII (percent-encode the rest)";
    case UrlFault::TooLong:
      return s + " is longer than " + std::to_string(kMaxUrl) + " bytes";
  }
  return {};
}

}  // namespace mf::net
