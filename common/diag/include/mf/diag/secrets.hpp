// Secret-looking values (docs/diagnostics.md): recognised by shape (API keys, tokens, private keys,
// JWTs, bearer credentials) so that no diagnostic, report or trace repeats one, and so that inputs
// that must not carry credentials (harness sources) can refuse them.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace mf::diag {

// What kind of secret `text` contains ("an API key (sk-...)", ...), or nothing.
std::optional<std::string_view> find_secret(std::string_view text);

// `text` with every secret-looking run replaced by "[REDACTED]".
std::string redact_secrets(std::string_view text);

// Keys are read from the environment variable an option names, never from the command line, and
// are never printed. Fills `secret` from the variable `name` that --`option` names; the usage
// message when it is unset, empty or shorter than kMinSecretBytes (`secret` then empty), else "".
inline constexpr std::size_t kMinSecretBytes = 16;
std::string secret_from_env(std::string_view option, const std::string& name, std::string& secret);

}  // namespace mf::diag
