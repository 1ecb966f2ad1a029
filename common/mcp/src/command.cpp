// `mf-compile connector`'s file side (command.hpp): discover a server into a snapshot and admit a
// snapshot under a policy, each printing its document.
#include "mf/mcp/command.hpp"

#include <exception>
#include <string>

#include "mf/diag/codes.hpp"
#include "mf/io/file.hpp"
#include "mf/json/canonical.hpp"
#include "mf/json/reader.hpp"
#include "mf/mcp/connector.hpp"

namespace mf::mcp {
namespace {

Result<json::Value> read_document(const std::string& path) {
  auto bytes = io::read_input(path);
  Result<json::Value> doc =
      bytes ? json::parse_object(*bytes) : Result<json::Value>(bytes.take_diagnostics());
  if (!doc) {
    auto ds = doc.take_diagnostics();
    for (auto& d : ds) d.source = path == "-" ? "<stdin>" : path;
    return ds;
  }
  return doc;
}

Result<json::Value> admit_manifest(const std::string& snapshot_path,
                                   const std::string& policy_path) {
  if (snapshot_path == "-" && policy_path == "-") {
    return diag::error(diag::codes::kUsage, "only one of the snapshot and the policy can be -");
  }
  auto snapshot = read_document(snapshot_path);
  if (!snapshot) return snapshot.take_diagnostics();
  auto policy = read_document(policy_path);
  if (!policy) return policy.take_diagnostics();
  auto manifest = admit(*snapshot, *policy);
  if (!manifest) {
    auto ds = manifest.take_diagnostics();
    for (auto& d : ds) d.source = d.source == "policy" ? policy_path : snapshot_path;
    return ds;
  }
  return manifest;
}

// The document on `out_fd`, or the diagnostics that stopped it.
diag::CommandOutcome print(Result<json::Value> doc, int out_fd) {
  if (!doc) return diag::CommandOutcome::stopped_by(doc.take_diagnostics());
  if (Status written = io::write_all(out_fd, json::canonical_file(*doc)); !written) {
    return diag::CommandOutcome::stopped_by(written.take_diagnostics());
  }
  return {};
}

}  // namespace

std::optional<std::int64_t> parse_timeout_ms(const std::string& text) {
  std::int64_t timeout = 0;
  try {
    timeout = std::stoll(text);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (timeout < 1) return std::nullopt;
  return timeout;
}

diag::CommandOutcome discover_command(const std::string& server,
                                      const std::vector<std::string>& env,
                                      const std::string& bearer_env,
                                      const std::optional<std::string>& timeout_ms, int out_fd) {
  Limits limits;
  if (timeout_ms) {
    const auto ms = parse_timeout_ms(*timeout_ms);
    if (!ms) return diag::CommandOutcome::usage_error("--timeout-ms takes a positive integer");
    limits.connect_timeout_ms = *ms;
  }
  auto spec = parse_server_argument(server, env, bearer_env);
  if (!spec) return diag::CommandOutcome::stopped_by(spec.take_diagnostics());
  return print(discover(*spec, limits), out_fd);
}

diag::CommandOutcome admit_command(const std::string& snapshot_path, const std::string& policy_path,
                                   int out_fd) {
  return print(admit_manifest(snapshot_path, policy_path), out_fd);
}

diag::CommandOutcome connector_command(const ConnectorArgs& a, int out_fd) {
  const std::vector<std::string>& args = a.operands;
  const bool discover = args.size() == 2 && args[1] == "discover";
  if (!discover && !(args.size() == 3 && args[1] == "admit")) {
    return diag::CommandOutcome::usage_error(
        "connector takes 'discover --server CMD|URL' or 'admit SNAPSHOT --policy P'");
  }
  if (discover) {
    if (!a.server) return diag::CommandOutcome::usage_error("--server is required");
    return discover_command(*a.server, a.server_env, a.bearer_env, a.timeout_ms, out_fd);
  }
  if (!a.policy) return diag::CommandOutcome::usage_error("--policy is required");
  return admit_command(args[2], *a.policy, out_fd);
}

}  // namespace mf::mcp
