// Keys read from the environment variable an option names (mf/diag/secrets.hpp), and the message
// refusing an unknown subcommand (mf/text/suggest.hpp): both shared by every program.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "mf/diag/secrets.hpp"
#include "mf/text/suggest.hpp"

namespace {

TEST(SecretFromEnv, AKeyOfSixteenBytesOrMore) {
  constexpr const char* kVar = "MF_SECRET_ENV_TEST_KEY";
  std::string key = "stale";
  ::unsetenv(kVar);
  EXPECT_EQ(mf::diag::secret_from_env("mac-key-env", kVar, key),
            "--mac-key-env: the environment variable MF_SECRET_ENV_TEST_KEY is not set or empty");
  EXPECT_EQ(key, "");
  ::setenv(kVar, "", 1);
  EXPECT_EQ(mf::diag::secret_from_env("sign-key-env", kVar, key),
            "--sign-key-env: the environment variable MF_SECRET_ENV_TEST_KEY is not set or empty");
  ::setenv(kVar, "fifteen-bytes!!", 1);
  EXPECT_EQ(mf::diag::secret_from_env("mac-key-env", kVar, key),
            "--mac-key-env: the key in MF_SECRET_ENV_TEST_KEY is shorter than 16 bytes");
  EXPECT_EQ(key, "");
  ::setenv(kVar, "sixteen-bytes!!!", 1);
  EXPECT_EQ(mf::diag::secret_from_env("mac-key-env", kVar, key), "");
  EXPECT_EQ(key, "sixteen-bytes!!!");
  ::unsetenv(kVar);
}

TEST(UnknownCommand, SuggestsTheClosestElseListsThem) {
  EXPECT_EQ(mf::text::unknown_command("verfy", {"run", "verify"}),
            "unknown command 'verfy' (did you mean \"verify\"?)");
  EXPECT_EQ(mf::text::unknown_command("zzzzzz", {"tool", "rescue"}),
            "unknown command 'zzzzzz' (commands: tool, rescue)");
}

}  // namespace
