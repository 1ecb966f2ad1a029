// Edit distance and the closest known name (suggest.hpp).
#include "mf/text/suggest.hpp"

#include <algorithm>

namespace mf::text {
namespace {
constexpr std::size_t kMaxSuggestedLength = 256;
}  // namespace

std::size_t edit_distance(std::string_view a, std::string_view b) {
  // Three rows of the dynamic-programming table: the one two back serves the adjacent swaps.
  const std::size_t n = b.size();
  std::vector<std::size_t> before(n + 1), previous(n + 1), current(n + 1);
  for (std::size_t j = 0; j <= n; ++j) previous[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    current[0] = i;
    for (std::size_t j = 1; j <= n; ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        current[j] = std::min(current[j], before[j - 2] + 1);
      }
    }
    std::swap(before, previous);
    std::swap(previous, current);
  }
  return previous[n];
}

std::optional<std::string> closest(std::string_view given,
                                   const std::vector<std::string_view>& known) {
  // A name no one types (a pasted blob) is not compared: the distance costs the product of lengths.
  if (given.size() > kMaxSuggestedLength) return std::nullopt;
  if (std::find(known.begin(), known.end(), given) != known.end()) return std::nullopt;
  const std::string_view* best = nullptr;
  std::size_t best_distance = 0;
  for (const auto& name : known) {
    const std::size_t longer = std::max(given.size(), name.size());
    const std::size_t shorter = std::min(given.size(), name.size());
    const std::size_t d = edit_distance(given, name);
    if (d > std::max<std::size_t>(2, longer / 3) || d >= shorter) continue;
    if (best == nullptr || d < best_distance) {
      best = &name;
      best_distance = d;
    }
  }
  if (best == nullptr) return std::nullopt;
  return std::string(*best);
}

namespace {

// The last part of a dotted id without its version: "read" of "builtin.pi_compat.read@1".
std::string_view last_part(std::string_view id) {
  id = id.substr(0, id.find('@'));
  const std::size_t dot = id.rfind('.');
  return dot == std::string_view::npos ? id : id.substr(dot + 1);
}

}  // namespace

std::vector<std::string> same_last_part(std::string_view given,
                                        const std::vector<std::string_view>& known) {
  std::vector<std::string> out;
  if (given.size() > kMaxSuggestedLength || given.find('.') == std::string_view::npos) return out;
  const std::string_view part = last_part(given);
  if (part.empty()) return out;
  for (const auto& name : known) {
    if (name != given && name.find('.') != std::string_view::npos && last_part(name) == part &&
        std::find(out.begin(), out.end(), name) == out.end()) {
      out.emplace_back(name);
    }
  }
  return out;
}

std::string did_you_mean(std::string_view given, const std::vector<std::string_view>& known) {
  if (auto name = closest(given, known)) return " (did you mean \"" + *name + "\"?)";
  const std::vector<std::string> alike = same_last_part(given, known);
  if (alike.empty() || alike.size() > 3) return {};
  std::string names;
  for (std::size_t i = 0; i < alike.size(); ++i) {
    names += (i == 0 ? "" : i + 1 == alike.size() ? " or " : ", ") + ("\"" + alike[i] + "\"");
  }
  return " (did you mean " + names + "?)";
}

std::string did_you_mean(std::string_view given, const std::vector<std::string>& known) {
  return did_you_mean(given, std::vector<std::string_view>(known.begin(), known.end()));
}

std::string did_you_mean(std::string_view given, std::initializer_list<std::string_view> known) {
  return did_you_mean(given, std::vector<std::string_view>(known));
}

std::string unknown_command(std::string_view given, const std::vector<std::string>& known) {
  std::string hint = did_you_mean(given, known);
  if (hint.empty()) {
    for (const auto& name : known) hint += (hint.empty() ? " (commands: " : ", ") + name;
    hint += ")";
  }
  return "unknown command '" + std::string(given) + "'" + hint;
}

}  // namespace mf::text
