// libFuzzer target for the strict YAML front end. Accepted input must give a value whose canonical
// form the strict JSON reader reads back unchanged (YAML never yields anything JSON cannot hold);
// rejected input must give at least one diagnostic with an MF-S code. Violations trap.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "mf/json/canonical.hpp"
#include "mf/json/reader.hpp"
#include "mf/yaml/reader.hpp"

namespace {

void check(bool condition) {
  if (!condition) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const mf::yaml::ReadLimits limits = [] {
    mf::yaml::ReadLimits l;
    l.max_bytes = 1u << 16;
    l.max_depth = 16;
    l.max_entries = 512;
    l.max_scalar_bytes = 4096;
    return l;
  }();
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = mf::yaml::parse(text, limits);
  if (!parsed.ok()) {
    check(!parsed.diagnostics().empty());
    for (const auto& d : parsed.diagnostics()) check(d.code.rfind("MF-S", 0) == 0);
    return 0;
  }
  // Canonical form sorts members, so the round trip is compared as canonical bytes.
  const std::string canon = mf::json::canonical(parsed.value());
  auto reparsed = mf::json::parse(canon);
  check(reparsed.ok());
  check(mf::json::canonical(reparsed.value()) == canon);
  return 0;
}
