// The exit class of each diagnostic code, from the one table in codes.def, and the exit status a
// command's diagnostics add up to.
#include "mf/diag/codes.hpp"

#include <algorithm>
#include <array>
#include <utility>

namespace mf::diag {
namespace {

using Entry = std::pair<std::string_view, ExitClass>;

constexpr auto kTable = [] {
  std::array table{
#define MF_CODE(name, id, exit_class) Entry{id, ExitClass::exit_class},
#include "mf/diag/codes.def"
#undef MF_CODE
  };
  std::sort(table.begin(), table.end());
  return table;
}();

static_assert(std::adjacent_find(kTable.begin(), kTable.end(),
                                 [](const Entry& a, const Entry& b) {
                                   return a.first == b.first;
                                 }) == kTable.end(),
              "a diagnostic code is listed twice in codes.def");

int rank(ExitClass c) {
  switch (c) {
    case ExitClass::Rejected:
      return 0;
    case ExitClass::Integrity:
      return 1;
    case ExitClass::Internal:
      return 2;
  }
  return 2;
}

}  // namespace

ExitClass exit_class(std::string_view code) {
  const auto it = std::lower_bound(kTable.begin(), kTable.end(), code,
                                   [](const Entry& e, std::string_view c) { return e.first < c; });
  return it != kTable.end() && it->first == code ? it->second : ExitClass::Internal;
}

int exit_status(const Diagnostics& ds, Job job) {
  ExitClass gravest = ExitClass::Rejected;
  for (const auto& d : ds) {
    if (d.severity != Severity::Error) continue;
    const ExitClass c = exit_class(d.code);
    if (rank(c) > rank(gravest)) gravest = c;
  }
  switch (gravest) {
    case ExitClass::Rejected:
      return 2;
    case ExitClass::Integrity:
      return job == Job::Check ? 1 : 2;
    case ExitClass::Internal:
      return 3;
  }
  return 3;
}

}  // namespace mf::diag
