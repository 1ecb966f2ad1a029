// `mf-compile connector`'s file side: discover a server into a snapshot, admit a snapshot under a
// policy into a manifest (a tool catalog). Each prints the document on stdout (`out_fd`);
// diagnostics carry the file they are about.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "mf/diag/outcome.hpp"

namespace mf::mcp {

// --timeout-ms: a positive number of milliseconds, read as std::stoll reads it (leading blanks and
// a sign allowed, what follows the digits ignored); nothing otherwise.
std::optional<std::int64_t> parse_timeout_ms(const std::string& text);

// `--server CMD|URL` (a command line split as a shell splits words), `--server-env` names,
// `--bearer-env` and `--timeout-ms` as given (parse_timeout_ms; nothing: the default). The
// snapshot goes to `out_fd` as canonical JSON.
diag::CommandOutcome discover_command(const std::string& server,
                                      const std::vector<std::string>& env,
                                      const std::string& bearer_env,
                                      const std::optional<std::string>& timeout_ms, int out_fd);
// Snapshot and policy files (`-` = stdin for one of them); the manifest goes to `out_fd` as
// canonical JSON.
diag::CommandOutcome admit_command(const std::string& snapshot_path, const std::string& policy_path,
                                   int out_fd);

// `mf-compile connector discover|admit SNAPSHOT`: the operands (from "connector" on) and the
// options as given (each initialized: callers designate the ones they use); discover needs
// --server, admit --policy (usage errors otherwise).
struct ConnectorArgs {
  std::vector<std::string> operands{};
  std::optional<std::string> server{};
  std::vector<std::string> server_env{};
  std::string bearer_env{};
  std::optional<std::string> timeout_ms{};
  std::optional<std::string> policy{};
};
diag::CommandOutcome connector_command(const ConnectorArgs& args, int out_fd);

}  // namespace mf::mcp
