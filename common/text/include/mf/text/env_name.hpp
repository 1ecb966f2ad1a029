// The lexical rule for the name of an environment variable, once: a configuration or a command
// line that names a variable (a profile's secret_env, a connector's env and bearer_env) is checked
// here, so every place that accepts a name accepts the same names.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace mf::text {

inline constexpr std::size_t kMaxEnvName = 128;

enum class EnvLetters : std::uint8_t {
  Any,    // [A-Za-z_][A-Za-z0-9_]*
  Upper,  // [A-Z_][A-Z0-9_]*: where a lower-case word is more likely a pasted secret than a name
};

// True when `name` is 1..kMaxEnvName bytes of the rule `letters` selects.
bool env_name(std::string_view name, EnvLetters letters = EnvLetters::Any);

}  // namespace mf::text
