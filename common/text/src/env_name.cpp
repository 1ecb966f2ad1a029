// The lexical rule for an environment variable's name (env_name.hpp).
#include "mf/text/env_name.hpp"

#include <algorithm>

namespace mf::text {

bool env_name(std::string_view name, EnvLetters letters) {
  const bool lower_ok = letters == EnvLetters::Any;
  const auto allowed = [lower_ok](char c) {
    return c == '_' || (c >= 'A' && c <= 'Z') || (lower_ok && c >= 'a' && c <= 'z') ||
           (c >= '0' && c <= '9');
  };
  if (name.empty() || name.size() > kMaxEnvName) return false;
  if (name.front() >= '0' && name.front() <= '9') return false;
  return std::all_of(name.begin(), name.end(), allowed);
}

}  // namespace mf::text
