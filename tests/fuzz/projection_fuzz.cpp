// libFuzzer target for prompt projection (docs/projection.md) end to end: the bytes are one JSON
// document {"units": [...], "tools": [{name, description, capabilities}], "input": {...}}, read by
// the strict reader, then units_from_json, with_tools, Catalog::build, input_from_json and
// project. Anything may be refused with a diagnostic; nothing may crash. A projection that is
// produced must keep its invariants, which trap when broken: visible tools are active tool units,
// every active unit is selected and has exactly one ledger item, the ledger adds up within the
// budget, no active unit needs a capability the input does not grant, and projecting again gives
// the same fingerprint.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "mf/json/reader.hpp"
#include "mf/prompt/projection.hpp"

namespace {

void check(bool condition) {
  if (!condition) __builtin_trap();
}

std::vector<mf::prompt::ToolSource> tools_of(const mf::json::Value* tools) {
  std::vector<mf::prompt::ToolSource> out;
  if (tools == nullptr || !tools->is_array()) return out;
  for (const auto& t : tools->as_array()) {
    const auto* name = t.is_object() ? t.find("name") : nullptr;
    if (name == nullptr || !name->is_string() || name->as_string().empty()) continue;
    mf::prompt::ToolSource s;
    s.name = name->as_string();
    if (const auto* d = t.find("description"); d != nullptr && d->is_string()) {
      s.description = d->as_string();
    }
    s.input_schema = mf::json::Object{{"type", "object"}};
    if (const auto* caps = t.find("capabilities"); caps != nullptr && caps->is_array()) {
      for (const auto& c : caps->as_array()) {
        if (c.is_string()) s.capabilities.push_back(c.as_string());
      }
    }
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  mf::json::ReadLimits limits;
  limits.max_bytes = 1 << 16;
  auto doc = mf::json::parse(std::string_view(reinterpret_cast<const char*>(data), size), limits);
  if (!doc || !doc->is_object()) return 0;
  const auto* units_json = doc->find("units");
  const auto* input_json = doc->find("input");
  if (input_json == nullptr) return 0;
  std::vector<mf::prompt::Unit> declared;
  if (units_json != nullptr) {
    auto read = mf::prompt::units_from_json(*units_json, "/units");
    if (!read) return 0;
    declared = std::move(*read);
  }
  auto all = mf::prompt::with_tools(std::move(declared), tools_of(doc->find("tools")));
  if (!all) return 0;
  auto catalog = mf::prompt::Catalog::build(std::move(*all));
  if (!catalog) return 0;
  auto input = mf::prompt::input_from_json(*input_json);
  if (!input) return 0;
  auto p = mf::prompt::project(*catalog, *input);
  if (!p) return 0;

  std::set<std::string> selected, active(p->active.begin(), p->active.end());
  for (const auto& d : p->selected) selected.insert(d.unit);
  const std::set<std::string> granted(input->capabilities.begin(), input->capabilities.end());
  for (const auto& id : active) {
    check(selected.count(id) == 1);
    const auto* unit = catalog->find(id);
    check(unit != nullptr);
    for (const auto& c : unit->capabilities) check(granted.count(c) == 1);
  }
  check(p->visible_tools.size() == p->tool_schemas.size());
  for (const auto& name : p->visible_tools) {
    check(active.count("tool:" + name) == 1 || active.count("mcp_tool:" + name) == 1);
  }
  std::int64_t tokens = 0, bytes = 0;
  std::set<std::string> charged;
  for (const auto& item : p->ledger.items) {
    check(charged.insert(item.unit).second);
    check(item.tokens == mf::prompt::estimate_tokens(item.bytes));
    tokens += item.tokens;
    bytes += item.bytes;
  }
  check(charged == active);
  check(tokens == p->ledger.charged && bytes == p->ledger.bytes);
  check(p->ledger.charged <= p->ledger.limit && p->ledger.limit == input->budget_tokens);
  check(p->ledger.remaining == p->ledger.limit - p->ledger.charged);
  auto again = mf::prompt::project(*catalog, *input);
  check(again.ok() && again->fingerprint == p->fingerprint && again->active == p->active);
  return 0;
}
