#include "mf/mcp/command.hpp"

#include "mf/diag/codes.hpp"
#include "mf/io/file.hpp"
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

}  // namespace

Result<json::Value> discover_command(const std::string& server, const std::vector<std::string>& env,
                                     const std::string& bearer_env, std::int64_t timeout_ms) {
  auto spec = parse_server_argument(server, env, bearer_env);
  if (!spec) return spec.take_diagnostics();
  Limits limits;
  if (timeout_ms > 0) limits.connect_timeout_ms = timeout_ms;
  return discover(*spec, limits);
}

Result<json::Value> admit_command(const std::string& snapshot_path,
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

}  // namespace mf::mcp
