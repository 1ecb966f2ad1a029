// The statistics of eval reports (docs/formats/eval.md, "Statistics"): interval estimates of pass
// rates, repeat-sampling summaries, order statistics and the paired test compare gates on. Every
// function is pure and deterministic, so a report's numbers are a function of its cases alone.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace mf::eval {

// The Wilson score interval at 95% (z = 1.959963984540054) for `passed` of `n`; [0, 1] when n is 0.
std::pair<double, double> wilson95(std::int64_t passed, std::int64_t n);

// Nearest-rank percentile (q in (0, 1]) of `values`: the smallest value at least q of them do not
// exceed. Nothing for an empty list.
std::optional<double> percentile(std::vector<double> values, double q);
// Where that value is among `n` sorted values (n > 0).
std::size_t percentile_index(std::size_t n, double q);

// The exact two-sided McNemar p-value for `b` and `c` discordant pairs: twice the binomial(b + c,
// 1/2) tail at min(b, c), at most 1; 1 when there is no discordant pair.
double mcnemar_p(std::int64_t b, std::int64_t c);

// The paired difference of pass rates (candidate minus baseline) over `n` pairs with `improved`
// and `regressed` discordant pairs, and its 95% Wald interval clamped to [-1, 1].
struct Difference {
  double estimate = 0;
  double low = 0;
  double high = 0;
};
Difference paired_difference(std::int64_t improved, std::int64_t regressed, std::int64_t n);

}  // namespace mf::eval
