// The statistics of stats.hpp: Wilson intervals, percentiles and the McNemar test, computed the
// same way on every machine so a report's numbers are reproducible.
#include "mf/eval/stats.hpp"

#include <algorithm>
#include <cmath>

namespace mf::eval {

namespace {
constexpr double kZ95 = 1.959963984540054;
}  // namespace

std::pair<double, double> wilson95(std::int64_t passed, std::int64_t n) {
  if (n <= 0) return {0.0, 1.0};
  const double nn = static_cast<double>(n);
  const double p = static_cast<double>(passed) / nn;
  const double z2 = kZ95 * kZ95;
  const double centre = p + z2 / (2 * nn);
  const double spread = kZ95 * std::sqrt(p * (1 - p) / nn + z2 / (4 * nn * nn));
  const double denominator = 1 + z2 / nn;
  // At the ends the bound is exactly 0 or 1; computed, it would be off by a rounding error.
  return {passed <= 0 ? 0.0 : std::max(0.0, (centre - spread) / denominator),
          passed >= n ? 1.0 : std::min(1.0, (centre + spread) / denominator)};
}

std::optional<double> percentile(std::vector<double> values, double q) {
  if (values.empty()) return std::nullopt;
  std::sort(values.begin(), values.end());
  return values[percentile_index(values.size(), q)];
}

std::size_t percentile_index(std::size_t n, double q) {
  const double rank = std::ceil(q * static_cast<double>(n));
  const std::size_t index = static_cast<std::size_t>(std::max(1.0, rank)) - 1;
  return std::min(index, n - 1);
}

double mcnemar_p(std::int64_t b, std::int64_t c) {
  const std::int64_t n = b + c;
  if (n <= 0) return 1.0;
  const std::int64_t k = std::min(b, c);
  double tail = 0;
  if (n <= 50) {
    // Exact: the binomial coefficients are integers below 2^53 and the scale a power of two.
    double coefficient = 1;
    for (std::int64_t i = 0; i <= k; ++i) {
      tail += coefficient;
      coefficient = coefficient * static_cast<double>(n - i) / static_cast<double>(i + 1);
    }
    return std::min(1.0, 2 * std::ldexp(tail, -static_cast<int>(n)));
  }
  // log C(n, i) by lgamma keeps large campaigns accurate without overflow.
  for (std::int64_t i = 0; i <= k; ++i) {
    tail += std::exp(
        std::lgamma(static_cast<double>(n) + 1) - std::lgamma(static_cast<double>(i) + 1) -
        std::lgamma(static_cast<double>(n - i) + 1) - static_cast<double>(n) * std::log(2.0));
  }
  return std::min(1.0, 2 * tail);
}

Difference paired_difference(std::int64_t improved, std::int64_t regressed, std::int64_t n) {
  Difference d;
  if (n <= 0) return d;
  const double nn = static_cast<double>(n);
  const double diff = static_cast<double>(improved - regressed) / nn;
  // Var(mean of d) for paired outcomes d in {-1, 0, 1}: ((b + c) - n * diff^2) / n^2.
  const double variance =
      (static_cast<double>(improved + regressed) - nn * diff * diff) / (nn * nn);
  const double half = kZ95 * std::sqrt(std::max(0.0, variance));
  d.estimate = diff;
  d.low = std::max(-1.0, diff - half);
  d.high = std::min(1.0, diff + half);
  return d;
}

}  // namespace mf::eval
