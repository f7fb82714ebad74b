#ifndef PLRANK_CORE_BOOSTING_BIN_MAPPER_H_
#define PLRANK_CORE_BOOSTING_BIN_MAPPER_H_

#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

namespace plrank {

// Maps one feature's float values to small bin numbers.
//
// Contract: bin(x) is the first b with x <= upper_bound(b), the very
// comparison the scorer makes (x <= threshold). Hence "bin(x) <= b" holds
// exactly when "x <= upper_bound(b)", and a split on bins reproduces the same
// partition as the stored float threshold. The last upper bound is +inf so
// every non-NaN value has a bin; NaN gets its own slot, missing_bin() ==
// num_bins(), so with max_bin <= 255 every bin fits in a uint8.
class BinMapper {
 public:
  BinMapper() = default;

  // Quantile bins from a sample of the feature's values (NaN allowed; the
  // vector is consumed). At most max_bin (<= 255) non-missing bins; when the
  // sample has no more distinct values than that, each value gets its own
  // bin and the bounds are midpoints between neighbours.
  static BinMapper Fit(std::vector<float> sample, int32_t max_bin);

  // A mapper Fit made elsewhere, from its upper_bounds() (ascending, the
  // last +inf) and is_useful(): distributed training fits on rank 0 and
  // sends the bounds to every rank.
  static BinMapper FromBounds(std::vector<float> upper_bounds, bool useful) {
    BinMapper mapper;
    mapper.upper_bounds_ = std::move(upper_bounds);
    mapper.useful_ = useful;
    return mapper;
  }

  // Splittable: two distinct values, or one value plus missing ones.
  bool is_useful() const { return useful_; }
  int32_t num_bins() const { return static_cast<int32_t>(upper_bounds_.size()); }
  uint8_t missing_bin() const { return static_cast<uint8_t>(num_bins()); }
  float upper_bound(int32_t bin) const { return upper_bounds_[bin]; }
  const std::vector<float>& upper_bounds() const { return upper_bounds_; }

  uint8_t BinOf(float x) const {
    if (std::isnan(x)) return missing_bin();
    // Branch-light binary search for the first bound >= x.
    const float* base = upper_bounds_.data();
    size_t n = upper_bounds_.size();
    while (n > 1) {
      const size_t half = n / 2;
      base = (base[half - 1] < x) ? base + half : base;
      n -= half;
    }
    return static_cast<uint8_t>(base - upper_bounds_.data());
  }

 private:
  std::vector<float> upper_bounds_;
  bool useful_ = false;
};

}  // namespace plrank

#endif  // PLRANK_CORE_BOOSTING_BIN_MAPPER_H_
