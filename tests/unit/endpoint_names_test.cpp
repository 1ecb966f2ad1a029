// The shared checks of an endpoint URL (mf/net/url.hpp) and of an environment variable's name
// (mf/text/env_name.hpp), in both of the flavours their callers use.
#include <gtest/gtest.h>

#include <string>

#include "mf/net/url.hpp"
#include "mf/text/env_name.hpp"

namespace mf {
namespace {

using net::UrlFault;

constexpr net::UrlRules kBaseUrl{.allow_query = false};

TEST(UrlFault, AcceptsHttpAndHttpsEndpoints) {
  for (const char* u : {"http://h", "https://h", "http://127.0.0.1:8080/v1/", "https://h:443/a/b",
                        "http://[::1]:9/mcp", "http://h/a%20b"}) {
    EXPECT_EQ(net::url_fault(u), UrlFault::None) << u;
    EXPECT_EQ(net::url_fault(u, kBaseUrl), UrlFault::None) << u;
  }
}

TEST(UrlFault, RefusesOtherSchemes) {
  for (const char* u : {"ftp://h/x", "", "h/x", "HTTP://h", "http:/h", "file:///etc/passwd"}) {
    EXPECT_EQ(net::url_fault(u), UrlFault::Scheme) << u;
  }
}

TEST(UrlFault, RefusesCredentials) {
  EXPECT_EQ(net::url_fault("http://u:p@h"), UrlFault::Credentials);
  EXPECT_EQ(net::url_fault("https://token@h/v1"), UrlFault::Credentials);
  EXPECT_EQ(net::url_fault("http://u:p@h", kBaseUrl), UrlFault::Credentials);
  // An '@' after the authority is part of the path, not a credential.
  EXPECT_EQ(net::url_fault("http://h/users/@me"), UrlFault::None);
  EXPECT_EQ(net::url_fault("http://h?to=a@b"), UrlFault::None);
}

TEST(UrlFault, RefusesAMissingHost) {
  for (const char* u : {"http://", "http://:80", "https:///v1", "http://:80/mcp", "http://?x"}) {
    EXPECT_EQ(net::url_fault(u), UrlFault::NoHost) << u;
  }
}

TEST(UrlFault, QueryAndFragmentOnlyWhereAllowed) {
  for (const char* u : {"http://h/v1?key=1", "http://h/v1#x", "http://h?x", "http://h#"}) {
    EXPECT_EQ(net::url_fault(u), UrlFault::None) << u;
    EXPECT_EQ(net::url_fault(u, kBaseUrl), UrlFault::Query) << u;
  }
}

TEST(UrlFault, RefusesBytesOutsideVisibleAscii) {
  for (const std::string& u :
       {std::string("http://h/a b"), std::string("http://h/a\tb"), std::string("http://h/\x01"),
        std::string("http://h/\x7f"), std::string("http://h/caf\xc3\xa9"),
        std::string("http://h/a\0b", 12)}) {
    EXPECT_EQ(net::url_fault(u), UrlFault::NotVisible) << u;
  }
}

TEST(UrlFault, RefusesMoreThan2048Bytes) {
  const std::string prefix = "http://h/";
  const std::string at_limit = prefix + std::string(net::kMaxUrl - prefix.size(), 'a');
  EXPECT_EQ(net::url_fault(at_limit), UrlFault::None);
  EXPECT_EQ(net::url_fault(at_limit + "a"), UrlFault::TooLong);
  EXPECT_EQ(net::url_fault(at_limit + "a", kBaseUrl), UrlFault::TooLong);
}

TEST(UrlFault, DescribesEachFaultAboutItsSubject) {
  EXPECT_EQ(net::describe(UrlFault::None, "base_url"), "");
  EXPECT_EQ(net::describe(UrlFault::NoHost, "base_url"), "base_url names no host");
  EXPECT_EQ(net::describe(UrlFault::TooLong, "a server URL"),
            "a server URL is longer than 2048 bytes");
  for (UrlFault f : {UrlFault::Scheme, UrlFault::Credentials, UrlFault::NoHost, UrlFault::Query,
                     UrlFault::NotVisible, UrlFault::TooLong}) {
    EXPECT_TRUE(net::describe(f, "x").starts_with("x ")) << static_cast<int>(f);
  }
}

TEST(EnvName, AcceptsPortableNames) {
  for (const char* n : {"A_1", "_x", "_", "x", "MF_TEST_BEARER", "path"}) {
    EXPECT_TRUE(text::env_name(n)) << n;
  }
  EXPECT_TRUE(text::env_name(std::string(text::kMaxEnvName, 'A')));
}

TEST(EnvName, RefusesOtherWords) {
  for (const std::string& n : {std::string("1A"), std::string("A-B"), std::string(""),
                               std::string("A=B"), std::string("A B"), std::string("A.B"),
                               std::string("\xc3\x89T\xc3\x89"), std::string("A\0B", 3)}) {
    EXPECT_FALSE(text::env_name(n)) << n;
    EXPECT_FALSE(text::env_name(n, text::EnvLetters::Upper)) << n;
  }
  EXPECT_FALSE(text::env_name(std::string(text::kMaxEnvName + 1, 'A')));
  EXPECT_FALSE(text::env_name(std::string(129, 'A'), text::EnvLetters::Upper));
}

TEST(EnvName, UpperRefusesLowerCaseLetters) {
  for (const char* n : {"A_1", "_", "MY_KEY", "K9"}) {
    EXPECT_TRUE(text::env_name(n, text::EnvLetters::Upper)) << n;
  }
  for (const char* n : {"_x", "lower", "My_Key"}) {
    EXPECT_FALSE(text::env_name(n, text::EnvLetters::Upper)) << n;
  }
}

}  // namespace
}  // namespace mf
