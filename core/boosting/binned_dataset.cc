#include "core/boosting/binned_dataset.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace plrank {
namespace {

// BinOf for a whole column, faster than a binary search per value: a table
// indexed by the top 16 bits of an order-preserving integer key of the float
// gives the bin range of all floats sharing that prefix; mostly one entry.
class ColumnBinner {
 public:
  explicit ColumnBinner(const BinMapper& mapper) : mapper_(mapper), first_bin_(kPrefixes + 1) {
    // Sweep the prefixes in float order, moving the bin forward as needed.
    int32_t bin = 0;
    const int32_t last = mapper.num_bins() - 1;
    for (uint32_t p = 0; p < kPrefixes; ++p) {
      const float smallest = FromKey(p << 16);
      while (bin < last && mapper.upper_bound(bin) < smallest) ++bin;
      first_bin_[p] = static_cast<uint8_t>(bin);
    }
    first_bin_[kPrefixes] = static_cast<uint8_t>(last);
  }

  uint8_t BinOf(float x) const {
    if (std::isnan(x)) return mapper_.missing_bin();
    const uint32_t prefix = ToKey(x) >> 16;
    // The answer is in [first_bin_[prefix], first_bin_[prefix + 1]].
    int32_t low = first_bin_[prefix];
    int32_t high = first_bin_[prefix + 1];
    while (low < high) {
      const int32_t mid = (low + high) / 2;
      if (x <= mapper_.upper_bound(mid)) {
        high = mid;
      } else {
        low = mid + 1;
      }
    }
    return static_cast<uint8_t>(low);
  }

 private:
  static constexpr uint32_t kPrefixes = 1u << 16;
  static uint32_t ToKey(float x) {
    uint32_t bits;
    std::memcpy(&bits, &x, sizeof(bits));
    return (bits & 0x80000000u) ? ~bits : bits | 0x80000000u;
  }
  static float FromKey(uint32_t key) {
    const uint32_t bits = (key & 0x80000000u) ? key & 0x7fffffffu : ~key;
    float x;
    std::memcpy(&x, &bits, sizeof(x));
    return x;
  }

  const BinMapper& mapper_;
  std::vector<uint8_t> first_bin_;
};

}  // namespace

BinnedDataset BinnedDataset::Build(const Dataset& data, int32_t max_bin,
                                   size_t max_sample, int32_t num_threads) {
  const size_t n = data.num_documents();
  const size_t sample_size = std::min(n, std::max<size_t>(max_sample, 1));
  std::vector<BinMapper> all(data.num_features);
#pragma omp parallel for schedule(dynamic, 1) num_threads(num_threads)
  for (int32_t f = 0; f < data.num_features; ++f) {
    const float* column = data.column(f);
    std::vector<float> sample(sample_size);
    for (size_t k = 0; k < sample_size; ++k) {
      sample[k] = column[k * n / sample_size];  // n == sample_size: all
    }
    all[f] = BinMapper::Fit(std::move(sample), max_bin);
  }
  return FromMappers(data, std::move(all), num_threads);
}

BinnedDataset BinnedDataset::FromMappers(const Dataset& data,
                                         std::vector<BinMapper> all,
                                         int32_t num_threads) {
  const size_t n = data.num_documents();
  BinnedDataset binned;
  binned.num_documents_ = n;
  for (int32_t f = 0; f < data.num_features; ++f) {
    if (!all[f].is_useful()) continue;
    binned.original_.push_back(f);
    binned.mappers_.push_back(std::move(all[f]));
  }
  const int32_t num_used = binned.num_features();
  binned.columns_.resize(n * num_used);
#pragma omp parallel for schedule(dynamic, 1) num_threads(num_threads)
  for (int32_t f = 0; f < num_used; ++f) {
    const float* values = data.column(binned.original_[f]);
    const BinMapper& mapper = binned.mappers_[f];
    uint8_t* column = binned.columns_.data() + f * n;
    const ColumnBinner binner(mapper);
    for (size_t i = 0; i < n; ++i) column[i] = binner.BinOf(values[i]);
  }
  // Transpose in blocks of documents small enough for their rows to stay in
  // cache while the columns are swept.
  binned.rows_.resize(n * num_used);
  constexpr size_t kBlock = 2048;
  const int64_t num_blocks = static_cast<int64_t>((n + kBlock - 1) / kBlock);
#pragma omp parallel for schedule(dynamic, 1) num_threads(num_threads)
  for (int64_t block = 0; block < num_blocks; ++block) {
    const size_t begin = block * kBlock;
    const size_t end = std::min(n, begin + kBlock);
    for (int32_t f = 0; f < num_used; ++f) {
      const uint8_t* column = binned.columns_.data() + f * n;
      for (size_t i = begin; i < end; ++i) binned.rows_[i * num_used + f] = column[i];
    }
  }
  return binned;
}

BinnedDataset BinnedDataset::BuildWithMappers(const Dataset& data,
                                              const BinnedDataset& reference,
                                              int32_t num_threads) {
  BinnedDataset binned;
  const size_t n = data.num_documents();
  binned.num_documents_ = n;
  binned.original_ = reference.original_;
  binned.mappers_ = reference.mappers_;
  const size_t num_used = binned.original_.size();
  binned.rows_.resize(n * num_used);
  // Blocks of documents so each thread writes its own stretch of rows.
  constexpr size_t kBlock = 1024;
  const int64_t num_blocks = static_cast<int64_t>((n + kBlock - 1) / kBlock);
#pragma omp parallel for schedule(dynamic, 1) num_threads(num_threads)
  for (int64_t block = 0; block < num_blocks; ++block) {
    const size_t begin = block * kBlock;
    const size_t end = std::min(n, begin + kBlock);
    for (size_t f = 0; f < num_used; ++f) {
      const float* values = data.column(binned.original_[f]);
      const BinMapper& mapper = binned.mappers_[f];
      for (size_t i = begin; i < end; ++i) {
        binned.rows_[i * num_used + f] = mapper.BinOf(values[i]);
      }
    }
  }
  return binned;
}

}  // namespace plrank
