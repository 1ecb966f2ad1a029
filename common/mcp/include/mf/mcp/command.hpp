// `mf-compile connector`'s file side: discover a server into a snapshot, admit a snapshot under a
// policy into a manifest (a tool catalog). Each returns the document to print; diagnostics carry
// the file they are about.
#pragma once

#include <string>
#include <vector>

#include "mf/diag/diagnostic.hpp"
#include "mf/json/value.hpp"

namespace mf::mcp {

// `--server CMD|URL` (a command line split as a shell splits words), `--server-env` names,
// `--bearer-env` and the connect timeout.
Result<json::Value> discover_command(const std::string& server, const std::vector<std::string>& env,
                                     const std::string& bearer_env, std::int64_t timeout_ms);
// Snapshot and policy files (`-` = stdin for one of them).
Result<json::Value> admit_command(const std::string& snapshot_path, const std::string& policy_path);

}  // namespace mf::mcp
