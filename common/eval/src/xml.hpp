// XML escaping shared by the JUnit and HTML renderings.
#pragma once

#include <string>
#include <string_view>

namespace mf::eval::detail {

// Escaped for an XML attribute or text; characters XML 1.0 cannot hold become U+FFFD.
std::string xml(std::string_view s);

}  // namespace mf::eval::detail
