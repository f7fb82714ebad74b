#include "server/ranking_comparison.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace plrank::server {
namespace {

// NaN ranks last in Rank: as the lowest value, all NaNs tied.
double Key(double score) {
  return std::isnan(score) ? -std::numeric_limits<double>::infinity() : score;
}

// Pairs within runs of equal values of `values` taken in `order`.
template <typename Equal>
uint64_t TiedPairs(const std::vector<uint32_t>& order, Equal equal) {
  uint64_t pairs = 0;
  uint64_t run = 1;
  for (size_t i = 1; i <= order.size(); ++i) {
    if (i < order.size() && equal(order[i - 1], order[i])) {
      ++run;
      continue;
    }
    pairs += run * (run - 1) / 2;
    run = 1;
  }
  return pairs;
}

// Sorts `order` by y ascending (stable) and returns the number of strict
// inversions it removed: the discordant pairs.
uint64_t SortCountingInversions(std::vector<uint32_t>& order,
                                const std::vector<double>& y) {
  std::vector<uint32_t> buffer(order.size());
  uint64_t inversions = 0;
  for (size_t width = 1; width < order.size(); width *= 2) {
    for (size_t lo = 0; lo < order.size(); lo += 2 * width) {
      const size_t mid = std::min(lo + width, order.size());
      const size_t hi = std::min(lo + 2 * width, order.size());
      size_t i = lo, j = mid, out = lo;
      while (i < mid && j < hi) {
        if (y[order[j]] < y[order[i]]) {
          inversions += mid - i;  // order[j] jumps every remaining left one
          buffer[out++] = order[j++];
        } else {
          buffer[out++] = order[i++];
        }
      }
      while (i < mid) buffer[out++] = order[i++];
      while (j < hi) buffer[out++] = order[j++];
    }
    order.swap(buffer);
    // Elements past the last full block were copied too, so `order` is
    // complete after the swap.
  }
  return inversions;
}

}  // namespace

std::vector<uint32_t> TopIndices(absl::Span<const double> scores, size_t k) {
  std::vector<uint32_t> order(scores.size());
  std::iota(order.begin(), order.end(), 0u);
  k = std::min(k, order.size());
  // The same strict order as RankDocuments (server/ranking.cc).
  auto better = [&scores](uint32_t a, uint32_t b) {
    const bool a_nan = std::isnan(scores[a]);
    const bool b_nan = std::isnan(scores[b]);
    if (a_nan != b_nan) return b_nan;
    if (!a_nan && scores[a] != scores[b]) return scores[a] > scores[b];
    return a < b;
  };
  std::partial_sort(order.begin(), order.begin() + k, order.end(), better);
  order.resize(k);
  return order;
}

std::optional<double> KendallTauB(absl::Span<const double> a,
                                  absl::Span<const double> b) {
  const size_t n = std::min(a.size(), b.size());
  if (n < 2) return std::nullopt;
  std::vector<double> x(n), y(n);
  for (size_t i = 0; i < n; ++i) {
    x[i] = Key(a[i]);
    y[i] = Key(b[i]);
  }
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), [&](uint32_t i, uint32_t j) {
    return x[i] != x[j] ? x[i] < x[j] : y[i] < y[j];
  });
  const uint64_t total = uint64_t{n} * (n - 1) / 2;
  const uint64_t ties_x =
      TiedPairs(order, [&](uint32_t i, uint32_t j) { return x[i] == x[j]; });
  const uint64_t ties_xy = TiedPairs(order, [&](uint32_t i, uint32_t j) {
    return x[i] == x[j] && y[i] == y[j];
  });
  const uint64_t discordant = SortCountingInversions(order, y);
  const uint64_t ties_y =
      TiedPairs(order, [&](uint32_t i, uint32_t j) { return y[i] == y[j]; });
  if (ties_x == total || ties_y == total) return std::nullopt;
  // concordant - discordant = total - ties_x - ties_y + ties_xy - 2 D.
  const double numerator = static_cast<double>(total) -
                           static_cast<double>(ties_x) -
                           static_cast<double>(ties_y) +
                           static_cast<double>(ties_xy) -
                           2.0 * static_cast<double>(discordant);
  const double denominator =
      std::sqrt(static_cast<double>(total - ties_x)) *
      std::sqrt(static_cast<double>(total - ties_y));
  return std::clamp(numerator / denominator, -1.0, 1.0);
}

RankingComparison CompareRankings(absl::Span<const double> a,
                                  absl::Span<const double> b) {
  RankingComparison out;
  const size_t n = std::min(a.size(), b.size());
  a = a.subspan(0, n);
  b = b.subspan(0, n);
  if (n == 0) return out;
  out.kendall_tau = KendallTauB(a, b);
  const std::vector<uint32_t> top_a = TopIndices(a, 10);
  std::vector<uint32_t> top_b = TopIndices(b, 10);
  out.top1_agree = top_a.front() == top_b.front();
  std::sort(top_b.begin(), top_b.end());
  size_t common = 0;
  for (uint32_t index : top_a) {
    common += std::binary_search(top_b.begin(), top_b.end(), index) ? 1 : 0;
  }
  out.top10_overlap =
      static_cast<double>(common) / static_cast<double>(top_a.size());
  return out;
}

}  // namespace plrank::server
