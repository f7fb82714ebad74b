#include "core/boosting/histogram.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <type_traits>
#include <vector>

#include "core/cpu/cpu_features.h"

namespace plrank {
namespace {

// One bin of the stride-2 layout, {g, n}: two doubles in one SSE register.
typedef double Pair __attribute__((vector_size(16)));
// One bin of the stride-4 layout, {g, h, n, 0}; as aligned as Pair (the
// histograms are vectors of doubles).
typedef double Quad __attribute__((vector_size(32), aligned(16)));
// The ordered {g, h} (or {g, 1}) of one document as stored: two floats, half
// the bytes to stream. Widening to doubles is exact, so the sums are the
// same as with double pairs.
typedef float FloatPair __attribute__((vector_size(8)));

// Column kernel, for a contiguous run of documents (the root without
// bagging): the j-th document of the run goes to copy j % kCopies of the
// histogram so that runs of one bin (e.g. a mass of zeros) do not serialize
// on store-to-load forwarding; the copies are then added in a fixed order.
constexpr int kCopies = 4;
// Below this many documents the row kernel is used even for a contiguous run.
constexpr size_t kMinColumnKernelDocuments = 16384;
// The run is read in blocks of this many documents (a multiple of kCopies:
// a document's copy stays j % kCopies), every feature of a subgroup in turn
// over one block, so the block's pairs (128 KB) are read from L2, not once
// per feature from memory (which made the root's cost grow faster than the
// data once the pairs outgrew the last-level cache).
constexpr size_t kColumnBlockDocuments = 16384;
// Bytes of the copies of one subgroup of features, kept across blocks.
constexpr size_t kColumnCopiesBytes = 384 * 1024;

// Rows ahead to prefetch in the row kernel.
constexpr size_t kRowPrefetchAhead = 16;
// Histogram bytes of one feature subgroup in the row kernel: measured best at
// about half of a 512 KB L2 (64 features of 256 {g, n} bins).
constexpr size_t kGroupHistogramBytes = 256 * 1024;
// The row kernel reads a leaf's documents in blocks of this many, every
// subgroup of the group in turn over one block: the block's rows (~3 cache
// lines each at 136 features) are fetched from memory once, not once per
// subgroup (on large sets a leaf's rows do not stay in the last-level cache
// between two full passes).
constexpr size_t kRowBlockDocuments = 2048;

namespace baseline {
#include "core/boosting/histogram_kernels.inc"
}  // namespace baseline

#pragma GCC push_options
#pragma GCC target("avx2")
namespace avx2 {
#include "core/boosting/histogram_kernels.inc"
}  // namespace avx2
#pragma GCC pop_options

// The kernels of one compilation.
struct Kernels {
  decltype(&baseline::ColumnBlock) column_block;
  decltype(&baseline::Fold) fold;
  decltype(&baseline::Rows) rows;
};

std::atomic<bool> force_baseline_kernels{false};

const Kernels& PickKernels() {
  static const Kernels baseline_kernels = {baseline::ColumnBlock, baseline::Fold,
                                           baseline::Rows};
  static const Kernels avx2_kernels = {avx2::ColumnBlock, avx2::Fold, avx2::Rows};
  static const bool has_avx2 = CpuFeatures::Detected().avx2;
  const bool use_avx2 =
      has_avx2 && !force_baseline_kernels.load(std::memory_order_relaxed);
  return use_avx2 ? avx2_kernels : baseline_kernels;
}

}  // namespace

bool UseBaselineHistogramKernels(bool baseline) {
  force_baseline_kernels.store(baseline, std::memory_order_relaxed);
  return CpuFeatures::Detected().avx2;
}

size_t HistogramBuilder::max_group_size() const {
  return kGroupHistogramBytes / (256 * sizeof(double) * layout_.stride());
}

int32_t HistogramBuilder::GroupCount(size_t num_features,
                                     int32_t num_threads) const {
  const size_t threads = std::max(num_threads, 1);
  return static_cast<int32_t>(std::max<size_t>(std::min(threads, num_features), 1));
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

void HistogramBuilder::BuildColumns(absl::Span<const int32_t> group,
                                    size_t first_document, size_t count,
                                    const float* ordered_pairs,
                                    double* histogram) const {
  const FloatPair* pairs = reinterpret_cast<const FloatPair*>(ordered_pairs);
  const int kPairs = layout_.stride() / 2;
  // Reused by every call on this thread: no allocation per leaf.
  thread_local std::vector<double> copies;
  const Kernels& kernels = PickKernels();
  const size_t stride = layout_.stride();
  thread_local std::vector<size_t> copy_offsets;
  for (size_t start = 0; start < group.size();) {
    // The next subgroup: as many features as fit kColumnCopiesBytes (one at
    // least), each with kCopies copies of its slots.
    size_t end = start, total = 0;
    copy_offsets.clear();
    while (end < group.size()) {
      const size_t size = static_cast<size_t>(layout_.num_slots(group[end])) * stride;
      if (end > start && (total + size) * kCopies * sizeof(double) > kColumnCopiesBytes) {
        break;
      }
      copy_offsets.push_back(total * kCopies);
      total += size;
      ++end;
    }
    if (copies.size() < total * kCopies) copies.resize(total * kCopies);
    std::memset(copies.data(), 0, sizeof(double) * total * kCopies);
    for (size_t begin = 0; begin < count; begin += kColumnBlockDocuments) {
      const size_t block_end = std::min(count, begin + kColumnBlockDocuments);
      for (size_t k = start; k < end; ++k) {
        const int32_t f = group[k];
        const uint8_t* column = data_.column(f) + first_document;
        kernels.column_block(kPairs, column, begin, block_end, pairs,
                             layout_.num_slots(f),
                             copies.data() + copy_offsets[k - start]);
      }
    }
    for (size_t k = start; k < end; ++k) {
      const int32_t f = group[k];
      kernels.fold(kPairs, copies.data() + copy_offsets[k - start],
                   layout_.num_slots(f), histogram + layout_.offset(f));
    }
    start = end;
  }
}

void HistogramBuilder::BuildRows(absl::Span<const int32_t> group,
                                 absl::Span<const uint32_t> documents,
                                 const float* ordered_pairs,
                                 double* histogram) const {
  const FloatPair* pairs = reinterpret_cast<const FloatPair*>(ordered_pairs);
  const size_t count = documents.size();
  // Subgroups of at most max_group_size() features, as even as can be.
  const size_t max_size = max_group_size();
  const int32_t num_subgroups =
      static_cast<int32_t>((group.size() + max_size - 1) / max_size);
  struct Subgroup {
    const int32_t* features;
    size_t size;
    bool consecutive;
    uint32_t offsets[kGroupHistogramBytes / (256 * 16)];
  };
  thread_local std::vector<Subgroup> subgroups;
  subgroups.resize(num_subgroups);
  for (int32_t s = 0; s < num_subgroups; ++s) {
    const absl::Span<const int32_t> part = FeatureGroup(group, num_subgroups, s);
    Subgroup& sub = subgroups[s];
    sub.features = part.data();
    sub.size = part.size();
    sub.consecutive =
        static_cast<size_t>(part.back() - part.front()) + 1 == part.size();
    for (size_t k = 0; k < part.size(); ++k) {
      const int32_t f = part[k];
      sub.offsets[k] = static_cast<uint32_t>(layout_.offset(f) / layout_.stride());  // in bins
      std::memset(histogram + layout_.offset(f), 0,
                  sizeof(double) * layout_.num_slots(f) * layout_.stride());
    }
  }
  const Kernels& kernels = PickKernels();
  const int pairs_per_bin = layout_.stride() / 2;
  const uint8_t* rows = data_.rows();
  const size_t length = data_.num_features();
  const size_t prefetch_first = group.front();
  const size_t prefetch_last = group.back();
  for (size_t begin = 0; begin < count; begin += kRowBlockDocuments) {
    const size_t block = std::min(kRowBlockDocuments, count - begin);
    for (int32_t s = 0; s < num_subgroups; ++s) {
      const Subgroup& sub = subgroups[s];
      // The first subgroup fetches the rows (all of the group's span); the
      // others find them in cache.
      kernels.rows(pairs_per_bin, sub.consecutive, rows, length,
                   documents.data() + begin, block, count - begin,
                   /*prefetch=*/s == 0, prefetch_first, prefetch_last,
                   pairs + begin, sub.features, sub.offsets, sub.size,
                   histogram);
    }
  }
}

void HistogramBuilder::BuildGroup(absl::Span<const int32_t> group,
                                  absl::Span<const uint32_t> documents,
                                  const float* ordered_pairs,
                                  double* histogram) const {
  if (group.empty()) return;
  const size_t count = documents.size();
  const bool contiguous =
      count > 0 && documents[count - 1] - documents[0] + 1 == count;
  if (contiguous && count >= kMinColumnKernelDocuments) {
    BuildColumns(group, documents[0], count, ordered_pairs, histogram);
  } else {
    BuildRows(group, documents, ordered_pairs, histogram);
  }
}

void HistogramBuilder::Build(absl::Span<const uint32_t> documents,
                             const float* ordered_pairs,
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
