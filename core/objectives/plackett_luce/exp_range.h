#ifndef PLRANK_CORE_OBJECTIVES_PLACKETT_LUCE_EXP_RANGE_H_
#define PLRANK_CORE_OBJECTIVES_PLACKETT_LUCE_EXP_RANGE_H_

// Internal to the Plackett-Luce objectives: how a query's scores become the
// exponentials e_d = exp(PlExpArgument(s_d, shift)) that every context sum,
// derivative, loss and leaf step is built from.
//
// Shifting by the query's top score keeps e_d <= 1, but the derivatives also
// form 1 / S^2 for context sums S: a context whose documents all score more
// than ~354 below the top has S < 1e-154 and 1 / S^2 overflows (an infinite
// hessian), and documents ~745 below the top underflow to e_d = 0. Boosting
// reaches such spreads with unbounded leaf steps (e.g. the paper's settings,
// learning rate 0.3, 1000 trees). So a query whose scores spread over more
// than kPlWideSpread is shifted to the middle of its range instead (the top
// gets e <= e^340, every product of the derivatives stays a ratio bounded by
// the context sums), and arguments are floored at kPlExpFloor: beyond a
// spread of 680 the lowest documents are treated as tied. Queries within
// kPlWideSpread, i.e. every query of ordinary training, keep the top-score
// shift exactly (bit-identical results).

#include <algorithm>
#include <cstdint>

namespace plrank::pl_internal {

inline constexpr double kPlWideSpread = 300.0;
inline constexpr double kPlExpFloor = -340.0;

// The shift of one query's scores (see above).
inline double PlExpShift(const double* scores, uint32_t n) {
  const auto [low, high] = std::minmax_element(scores, scores + n);
  const double spread = *high - *low;
  if (!(spread > kPlWideSpread)) return *high;
  return *high - std::min(spread / 2.0, -kPlExpFloor);
}

// log e_d: the shifted score, floored.
inline double PlExpArgument(double score, double shift) {
  return std::max(score - shift, kPlExpFloor);
}

}  // namespace plrank::pl_internal

#endif  // PLRANK_CORE_OBJECTIVES_PLACKETT_LUCE_EXP_RANGE_H_
