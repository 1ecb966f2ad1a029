// Connectors (docs/connectors.md): a server's tools go from a discovery snapshot, through an
// admission policy, into a tool catalog whose descriptors pin the server and each tool's digest;
// at run time the Broker restarts the server, re-lists its tools and refuses any drift before the
// first call, then carries the calls the execution boundary lets through.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "mf/diag/diagnostic.hpp"
#include "mf/json/value.hpp"
#include "mf/mcp/client.hpp"
#include "mf/tools/executor.hpp"

namespace mf::mcp {

// The digest admission pins and runs compare: SHA-256 of the canonical JSON of the listed tool's
// name, title, description, inputSchema, outputSchema and annotations (those present).
std::string provider_sha256(const json::Value& tool);

// Starts the server, lists its tools and returns the snapshot document (kind
// millforge_connector_snapshot): the server, the negotiated protocol version, the server's name,
// version and capabilities, and each tool as listed with its provider_sha256, sorted by name.
Result<json::Value> discover(const ServerSpec& spec, const Limits& limits = {},
                             const std::atomic<bool>* cancel = nullptr);

// Admits the tools a policy (kind millforge_connector_policy) allows out of a snapshot into a
// tool catalog (docs/formats/catalog.md) with a `connector` member per descriptor. Every fault is
// reported (MF-N003..MF-N010, MF-S020/S021), each with a pointer into the snapshot or the policy
// and `source` "snapshot" or "policy" saying which.
Result<json::Value> admit(const json::Value& snapshot, const json::Value& policy);

// The live sessions of one run: one client per server the bindings name.
class Broker : public tools::Connectors {
 public:
  // Connects to every server the bindings' connector tools name, and compares what it finds with
  // the pins: the server's name, version and protocol version, and every bound tool's digest.
  // A tool removed or changed, or another server, is MF-N011 with the pointer of the node's
  // connector in the plan (nodes in binding order); a server that cannot be reached is MF-N001.
  // Returns null when no binding is a connector tool.
  static Result<std::shared_ptr<Broker>> open(const std::vector<tools::Binding>& bindings,
                                              const Limits& limits = {},
                                              const std::atomic<bool>* cancel = nullptr);

  tools::ToolResult call(const tools::ToolDescriptor& tool, const json::Value& args,
                         const tools::CallContext& ctx, json::Value& evidence) override;

 private:
  std::map<std::string, std::unique_ptr<Client>> clients_;  // by connector_id
};

// The model-facing text of a CallToolResult: its text blocks joined by newlines, other blocks
// named ("[image image/png, 1234 bytes of base64]"); details are its structuredContent, moved out
// of the result rather than copied.
tools::ToolResult tool_result(json::Value call_result);

}  // namespace mf::mcp
