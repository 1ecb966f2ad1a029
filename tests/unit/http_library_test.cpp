// libcurl loaded on first use (common/net/src/http.cpp): the real libcurl.so.4 loads and serves a
// request, and a library that cannot be opened, or that lacks the functions called, gives one
// MF-H001 diagnostic naming the library and why.
#include <gtest/gtest.h>

#include "library.hpp"
#include "mf/diag/codes.hpp"
#include "mf/net/http.hpp"

namespace mf::net::http {
namespace {

TEST(HttpLibrary, TheInstalledLibcurlLoads) {
  EXPECT_TRUE(load().ok());
  EXPECT_TRUE(detail::probe_library("libcurl.so.4").ok());
}

TEST(HttpLibrary, AMissingLibraryIsOneDiagnostic) {
  const Status s = detail::probe_library("libmf-no-such-curl.so.4");
  ASSERT_FALSE(s.ok());
  ASSERT_EQ(s.diagnostics().size(), 1u);
  const diag::Diagnostic& d = s.diagnostics().front();
  EXPECT_EQ(d.code, diag::codes::kHttpLibrary);
  EXPECT_NE(d.message.find("libmf-no-such-curl.so.4 cannot be loaded ("), std::string::npos)
      << d.message;
  EXPECT_NE(d.message.find("libcurl4"), std::string::npos) << d.message;
  EXPECT_EQ(d.message.find('\n'), std::string::npos) << d.message;
}

TEST(HttpLibrary, ALibraryWithoutCurlFunctionsIsRefused) {
  // libc is loaded in every process: it opens, and has none of libcurl's functions.
  const Status s = detail::probe_library("libc.so.6");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.diagnostics().front().code, diag::codes::kHttpLibrary);
  EXPECT_NE(s.diagnostics().front().message.find("libc.so.6 cannot be loaded (it has no curl_"),
            std::string::npos)
      << s.diagnostics().front().message;
}

TEST(HttpLibrary, ARequestLoadsTheLibraryAndReachesTheNetwork) {
  // Port 1 on loopback refuses: the answer comes from libcurl's connect, not from the loader.
  Request r;
  r.url = "http://127.0.0.1:1/";
  r.connect_ms = 2000;
  const Response response = send(r);
  EXPECT_EQ(response.outcome, Outcome::ConnectFailed) << response.detail;
  EXPECT_EQ(response.detail, "connection refused by 127.0.0.1:1");
}

}  // namespace
}  // namespace mf::net::http
