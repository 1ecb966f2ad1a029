// The loading of libcurl behind http.cpp, for the unit tests of its diagnostic.
#pragma once

#include "mf/diag/diagnostic.hpp"

namespace mf::net::http::detail {

// Opens `soname` and resolves every libcurl function http.cpp calls, as load() does with
// libcurl.so.4, without installing the result: the MF-H001 diagnostic when either fails.
Status probe_library(const char* soname);

}  // namespace mf::net::http::detail
