// libFuzzer target holding the reader's fast path (mf/json/tape.hpp) to the strict reader: every
// input is read both ways under small limits (so every limit is reached) and under the defaults,
// and any disagreement traps (tape_oracle.hpp says which rule broke).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "fuzz_limits.hpp"
#include "tape_oracle.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const mf::json::ReadLimits small = mf::json::fuzz_limits();
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  for (const auto& limits : {small, mf::json::ReadLimits{}}) {
    const std::string why = mf::json::oracle::tape_disagreement(text, limits);
    if (!why.empty()) {
      std::fprintf(stderr, "tape_differential: %s\n", why.c_str());
      __builtin_trap();
    }
  }
  return 0;
}
