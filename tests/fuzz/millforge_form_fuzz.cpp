// libFuzzer target for Millforge's hashing form (docs/json.md, "Millforge form") and the loader of
// Millforge plans (docs/formats/plan.md, "Millforge form"). The bytes go to load_millforge_plan,
// which may refuse them but must not crash; when the strict reader takes them, their Millforge form
// must be printable ASCII ending in one newline, read back by the strict reader, and give the same
// form again (so a digest over it is stable).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "mf/harness/millforge.hpp"
#include "mf/json/millforge_form.hpp"
#include "mf/json/reader.hpp"

namespace {

void check(bool condition) {
  if (!condition) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)mf::harness::load_millforge_plan(text);
  auto value = mf::json::parse(text);
  if (!value) return 0;
  const std::string form = mf::json::millforge_form(*value);
  check(!form.empty() && form.back() == '\n');
  for (std::size_t i = 0; i + 1 < form.size(); ++i) {
    check(form[i] >= 0x20 && form[i] < 0x7F);
  }
  auto again = mf::json::parse(std::string_view(form).substr(0, form.size() - 1));
  check(again.ok());
  check(mf::json::millforge_form(*again) == form);
  return 0;
}
