// Recognising secret-looking values by shape (secrets.hpp), and redacting them, with a cheap
// first check so text that cannot hold one skips the patterns.
#include "mf/diag/secrets.hpp"

#include <array>
#include <cstdlib>
#include <cstring>
#include <regex>
#include <vector>

namespace mf::diag {
namespace {

struct Pattern {
  std::string_view kind;
  std::regex re;
  const char* replacement;  // "$1" keeps a character the pattern had to look at
};

const std::vector<Pattern>& patterns() {
  static const std::vector<Pattern> list = [] {
    std::vector<Pattern> p;
    auto add = [&](std::string_view kind, const char* re, const char* replacement = "[REDACTED]") {
      p.push_back(
          {kind, std::regex(re, std::regex::ECMAScript | std::regex::optimize), replacement});
    };
    // No word boundary before a key: "Xsk-..." and "token_sk-..." hold the key all the same. After
    // a lowercase letter ("task-management-...") the run must hold a digit to count as a key.
    add("an API key (sk-...)",
        R"((^|[^a-z])sk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}|sk-(?:ant-|proj-)?(?=[A-Za-z0-9_-]*[0-9])[A-Za-z0-9_-]{20,})",
        "$1[REDACTED]");
    add("a GitHub token", R"((gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}))");
    add("an AWS access key id", R"((AKIA|ASIA)[0-9A-Z]{16}(?![0-9A-Z]))");
    add("a Slack token", R"(xox[abprs]-[A-Za-z0-9-]{10,})");
    add("a Google API key", R"(AIza[0-9A-Za-z_-]{35})");
    add("a private key", R"(-----BEGIN [A-Z ]*PRIVATE KEY-----)");
    add("a JSON Web Token", R"(eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,})");
    add("a bearer credential", R"([Bb]earer\s+[A-Za-z0-9._~+/-]{20,}=*)");
    return p;
  }();
  return list;
}

// Substrings the patterns need (each pattern needs one of them); text without any of them skips
// the regex engine entirely. They are as long as the patterns allow: "gh" alone would send
// every "high" and "length" through the engine.
bool may_hold_secret(std::string_view text) {
  static constexpr std::array<std::string_view, 14> kMarkers = {
      "ghp_", "gho_", "ghu_", "ghs_",        "ghr_", "github_pat_", "AKIA",
      "ASIA", "xox",  "AIza", "PRIVATE KEY", "eyJ",  "earer",       "EARER"};
  for (auto m : kMarkers) {
    if (text.find(m) != std::string_view::npos) return true;
  }
  // "sk-" is in every "task-" and "risk-": a key needs at least 20 key characters after it.
  const auto key_char = [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
  };
  for (auto at = text.find("sk-"); at != std::string_view::npos; at = text.find("sk-", at + 1)) {
    std::size_t run = 0;
    for (std::size_t i = at + 3; i < text.size() && run < 20 && key_char(text[i]); ++i) ++run;
    if (run >= 20) return true;
  }
  return false;
}

}  // namespace

std::optional<std::string_view> find_secret(std::string_view text) {
  if (!may_hold_secret(text)) return std::nullopt;
  for (const auto& p : patterns()) {
    if (std::regex_search(text.begin(), text.end(), p.re)) return p.kind;
  }
  return std::nullopt;
}

std::string redact_secrets(std::string_view text) {
  std::string out(text);
  if (!may_hold_secret(text)) return out;
  for (const auto& p : patterns()) out = std::regex_replace(out, p.re, p.replacement);
  return out;
}

std::string secret_from_env(std::string_view option, const std::string& name, std::string& secret) {
  secret.clear();
  const char* value = std::getenv(name.c_str());
  const std::string flag = "--" + std::string(option);
  if (value == nullptr || *value == '\0') {
    return flag + ": the environment variable " + name + " is not set or empty";
  }
  if (std::strlen(value) < kMinSecretBytes) {
    return flag + ": the key in " + name + " is shorter than " + std::to_string(kMinSecretBytes) +
           " bytes";
  }
  secret = value;
  return {};
}

}  // namespace mf::diag
