// libFuzzer target for tool-call rescue (docs/rescue.md): on any text, every rescued call names a
// known tool and carries an object of arguments, the rescue's JSON form reads back unchanged
// through the strict reader, and the same text always gives the same rescue. Violations trap.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "mf/json/canonical.hpp"
#include "mf/json/reader.hpp"
#include "mf/runtime/rescue.hpp"

namespace {

void check(bool condition) {
  if (!condition) __builtin_trap();
}

const std::vector<std::string> kTools = {"read", "write", "web-search", "ls_2"};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto rescued = mf::runtime::rescue_tool_calls(text, kTools);
  if (!rescued) return 0;
  check(!rescued->calls.empty());
  for (const auto& call : rescued->calls) {
    check(std::find(kTools.begin(), kTools.end(), call.name) != kTools.end());
    check(call.arguments.is_object());
  }
  const std::string form = mf::json::canonical(mf::runtime::to_json(*rescued));
  auto back = mf::json::parse(form);
  check(back.ok() && mf::json::canonical(*back) == form);
  const auto again = mf::runtime::rescue_tool_calls(text, kTools);
  check(again && mf::json::canonical(mf::runtime::to_json(*again)) == form);
  return 0;
}
