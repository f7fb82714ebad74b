#include "core/boosting/histogram.h"

#include <algorithm>
#include <cstring>

namespace plrank {
namespace {

// Two doubles in one SSE register: {g, 1} or {g, h} added in one instruction.
typedef double Pair __attribute__((vector_size(16)));

// Column kernel, for a contiguous run of documents (the root without
// bagging): documents rotate over kCopies interleaved copies of the
// histogram so that runs of one bin (e.g. a mass of zeros) do not serialize
// on store-to-load forwarding; the copies are then added in a fixed order.
constexpr int kCopies = 4;
// Below this many documents the row kernel is used even for a contiguous run.
constexpr size_t kMinColumnKernelDocuments = 16384;

// kPairs = Pair slots per bin: 1 ({g, n}) or 2 ({g, h}, {n, 0}).
// column[j] is the bin of the j-th document of the run.
template <int kPairs>
void AccumulateColumn(const uint8_t* column, size_t count, const Pair* pairs,
                      int32_t num_slots, Pair* histogram) {
  const size_t copy_size = static_cast<size_t>(num_slots) * kPairs;
  alignas(64) Pair copies[256 * kPairs * kCopies];
  std::memset(static_cast<void*>(copies), 0, sizeof(Pair) * copy_size * kCopies);
  const Pair one = {1.0, 0.0};
  auto add = [&](Pair* copy, size_t j) {
    Pair* entry = copy + column[j] * kPairs;
    entry[0] += pairs[j];
    if constexpr (kPairs == 2) entry[1] += one;
  };
  size_t j = 0;
  for (; j + kCopies <= count; j += kCopies) {
    for (int c = 0; c < kCopies; ++c) add(copies + c * copy_size, j + c);
  }
  for (int c = 0; j < count; ++j, ++c) add(copies + c * copy_size, j);
  for (size_t s = 0; s < copy_size; ++s) {
    Pair sum = copies[s];
    for (int c = 1; c < kCopies; ++c) sum += copies[c * copy_size + s];
    histogram[s] = sum;
  }
}

// Rows ahead to prefetch in the row kernel.
constexpr size_t kRowPrefetchAhead = 16;
// Histogram bytes of one feature group in the row kernel: measured best at
// about half of a 512 KB L2 (64 features of 256 {g, n} bins).
constexpr size_t kGroupHistogramBytes = 256 * 1024;

// Row kernel: every document of the leaf adds its pair to the bin of each
// feature of the group. offsets[k] is feature k's histogram offset in Pairs.
// kConsecutive: the group is features[0] + [0, group_size), so a row's bins
// are read without indirection (the usual case: no feature sampling).
template <int kPairs, bool kConsecutive>
void AccumulateRows(const uint8_t* rows, size_t row_length,
                    const uint32_t* documents, size_t count, const Pair* pairs,
                    const int32_t* features, const uint32_t* offsets,
                    size_t group_size, Pair* histogram) {
  const Pair one = {1.0, 0.0};
  const size_t first = features[0];
  for (size_t j = 0; j < count; ++j) {
    if (j + kRowPrefetchAhead < count) {
      const uint8_t* ahead = rows + documents[j + kRowPrefetchAhead] * row_length;
      __builtin_prefetch(ahead + first);
      __builtin_prefetch(ahead + features[group_size - 1]);
    }
    const uint8_t* row = rows + documents[j] * row_length;
    const Pair pair = pairs[j];
    for (size_t k = 0; k < group_size; ++k) {
      const uint8_t bin = kConsecutive ? row[first + k] : row[features[k]];
      Pair* entry = histogram + offsets[k] + bin * kPairs;
      entry[0] += pair;
      if constexpr (kPairs == 2) entry[1] += one;
    }
  }
}

}  // namespace

size_t HistogramBuilder::max_group_size() const {
  return kGroupHistogramBytes / (256 * sizeof(double) * layout_.stride());
}

int32_t HistogramBuilder::GroupCount(size_t num_features,
                                     int32_t num_threads) const {
  const size_t threads = std::max(num_threads, 1);
  const size_t group_size = max_group_size();
  size_t groups = (num_features + group_size - 1) / group_size;
  groups = (groups + threads - 1) / threads * threads;  // a multiple of threads
  return static_cast<int32_t>(std::max<size_t>(std::min(groups, num_features), 1));
}

absl::Span<const int32_t> FeatureGroup(absl::Span<const int32_t> features,
                                       int32_t num_groups, int32_t group) {
  const size_t n = features.size();
  const size_t begin = n * group / num_groups;
  const size_t end = n * (group + 1) / num_groups;
  return features.subspan(begin, end - begin);
}

HistogramLayout::HistogramLayout(const BinnedDataset& data, bool with_hessians)
    : stride_(with_hessians ? 4 : 2) {
  for (int32_t f = 0; f < data.num_features(); ++f) {
    offsets_.push_back(size_);
    num_slots_.push_back(data.mapper(f).num_bins() + 1);
    size_ += static_cast<size_t>(num_slots_.back()) * stride_;
  }
}

void HistogramBuilder::BuildGroup(absl::Span<const int32_t> group,
                                  absl::Span<const uint32_t> documents,
                                  const double* ordered_pairs,
                                  double* histogram) const {
  if (group.empty()) return;
  const Pair* pairs = reinterpret_cast<const Pair*>(ordered_pairs);
  const size_t count = documents.size();
  const bool contiguous =
      count > 0 && documents[count - 1] - documents[0] + 1 == count;
  if (contiguous && count >= kMinColumnKernelDocuments) {
    for (int32_t f : group) {
      const uint8_t* column = data_.column(f) + documents[0];
      Pair* out = reinterpret_cast<Pair*>(histogram + layout_.offset(f));
      if (layout_.stride() == 2) {
        AccumulateColumn<1>(column, count, pairs, layout_.num_slots(f), out);
      } else {
        AccumulateColumn<2>(column, count, pairs, layout_.num_slots(f), out);
      }
    }
    return;
  }
  const size_t group_size = max_group_size();
  for (size_t start = 0; start < group.size(); start += group_size) {
    const size_t size = std::min(group_size, group.size() - start);
    uint32_t offsets[kGroupHistogramBytes / (256 * 16)];
    for (size_t k = 0; k < size; ++k) {
      const int32_t f = group[start + k];
      offsets[k] = static_cast<uint32_t>(layout_.offset(f) / 2);  // in Pairs
      std::memset(histogram + layout_.offset(f), 0,
                  sizeof(double) * layout_.num_slots(f) * layout_.stride());
    }
    const int32_t* features = group.data() + start;
    const bool consecutive =
        static_cast<size_t>(features[size - 1] - features[0]) + 1 == size;
    Pair* out = reinterpret_cast<Pair*>(histogram);
    const uint8_t* rows = data_.rows();
    const size_t length = data_.num_features();
    if (layout_.stride() == 2) {
      if (consecutive) {
        AccumulateRows<1, true>(rows, length, documents.data(), count, pairs,
                                features, offsets, size, out);
      } else {
        AccumulateRows<1, false>(rows, length, documents.data(), count, pairs,
                                 features, offsets, size, out);
      }
    } else {
      if (consecutive) {
        AccumulateRows<2, true>(rows, length, documents.data(), count, pairs,
                                features, offsets, size, out);
      } else {
        AccumulateRows<2, false>(rows, length, documents.data(), count, pairs,
                                 features, offsets, size, out);
      }
    }
  }
}

void HistogramBuilder::Build(absl::Span<const uint32_t> documents,
                             const double* ordered_pairs,
                             absl::Span<const int32_t> features,
                             double* histogram, int32_t num_threads) const {
  const int32_t num_groups = GroupCount(features.size(), num_threads);
#pragma omp parallel for schedule(dynamic, 1) num_threads(num_threads)
  for (int32_t g = 0; g < num_groups; ++g) {
    BuildGroup(FeatureGroup(features, num_groups, g), documents, ordered_pairs,
               histogram);
  }
}

void SubtractFeature(const HistogramLayout& layout, int32_t feature,
                     const double* child, double* parent) {
  const size_t begin = layout.offset(feature);
  const size_t end =
      begin + static_cast<size_t>(layout.num_slots(feature)) * layout.stride();
  for (size_t s = begin; s < end; ++s) parent[s] -= child[s];
}

}  // namespace plrank
