#include "core/boosting/feature_voting.h"

#include <algorithm>

namespace plrank {
namespace {

// The features of `features` with value(f) > 0, at most `count` of them,
// largest value first, ties to the lower feature. A strict total order
// (value, then id) makes the answer independent of the input order.
template <typename Value>
std::vector<int32_t> LargestPositive(absl::Span<const int32_t> features,
                                     int32_t count, Value value) {
  std::vector<int32_t> candidates;
  candidates.reserve(features.size());
  for (int32_t f : features) {
    if (value(f) > 0.0) candidates.push_back(f);  // NaN fails: not proposed
  }
  const size_t kept = std::min(candidates.size(),
                               static_cast<size_t>(std::max(count, 0)));
  auto before = [&](int32_t a, int32_t b) {
    return value(a) != value(b) ? value(a) > value(b) : a < b;
  };
  std::partial_sort(candidates.begin(), candidates.begin() + kept,
                    candidates.end(), before);
  candidates.resize(kept);
  return candidates;
}

}  // namespace

void CastBallot(absl::Span<const double> local_gain,
                absl::Span<const int32_t> features, int32_t top_k,
                absl::Span<double> ballot) {
  std::fill(ballot.begin(), ballot.end(), 0.0);
  for (int32_t f : LargestPositive(features, top_k,
                                   [&](int32_t f) { return local_gain[f]; })) {
    ballot[f] = local_gain[f];
  }
}

std::vector<int32_t> ElectFeatures(absl::Span<const double> summed_ballot,
                                   absl::Span<const int32_t> features,
                                   int32_t seats) {
  std::vector<int32_t> elected = LargestPositive(
      features, seats, [&](int32_t f) { return summed_ballot[f]; });
  std::sort(elected.begin(), elected.end());
  return elected;
}

}  // namespace plrank
