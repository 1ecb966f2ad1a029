// Secret-looking values (docs/diagnostics.md): recognised by shape (API keys, tokens, private keys,
// JWTs, bearer credentials) so that no diagnostic, report or trace repeats one, and so that inputs
// that must not carry credentials (harness sources) can refuse them.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace mf::diag {

// What kind of secret `text` contains ("an API key (sk-...)", ...), or nothing.
std::optional<std::string_view> find_secret(std::string_view text);

// `text` with every secret-looking run replaced by "[REDACTED]".
std::string redact_secrets(std::string_view text);

}  // namespace mf::diag
