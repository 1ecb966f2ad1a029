#include "mf/diag/secrets.hpp"

#include <array>
#include <regex>
#include <vector>

namespace mf::diag {
namespace {

struct Pattern {
  std::string_view kind;
  std::regex re;
};

const std::vector<Pattern>& patterns() {
  static const std::vector<Pattern> list = [] {
    std::vector<Pattern> p;
    auto add = [&](std::string_view kind, const char* re) {
      p.push_back({kind, std::regex(re, std::regex::ECMAScript | std::regex::optimize)});
    };
    add("an API key (sk-...)", R"(\bsk-(ant-|proj-)?[A-Za-z0-9_-]{20,})");
    add("a GitHub token", R"(\b(gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}))");
    add("an AWS access key id", R"(\b(AKIA|ASIA)[0-9A-Z]{16}\b)");
    add("a Slack token", R"(\bxox[abprs]-[A-Za-z0-9-]{10,})");
    add("a Google API key", R"(\bAIza[0-9A-Za-z_-]{35})");
    add("a private key", R"(-----BEGIN [A-Z ]*PRIVATE KEY-----)");
    add("a JSON Web Token",
        R"(\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,})");
    add("a bearer credential", R"(\b[Bb]earer\s+[A-Za-z0-9._~+/-]{20,}=*)");
    return p;
  }();
  return list;
}

// Substrings every pattern needs; text without any of them skips the regex engine entirely.
bool may_hold_secret(std::string_view text) {
  static constexpr std::array<std::string_view, 11> kMarkers = {
      "sk-",  "gh",          "github_pat_", "AKIA",  "ASIA", "xox",
      "AIza", "PRIVATE KEY", "eyJ",         "earer", "EARER"};
  for (auto m : kMarkers) {
    if (text.find(m) != std::string_view::npos) return true;
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
  for (const auto& p : patterns()) out = std::regex_replace(out, p.re, "[REDACTED]");
  return out;
}

}  // namespace mf::diag
