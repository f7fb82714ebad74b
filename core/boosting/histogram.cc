#include "core/boosting/histogram.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace plrank {
namespace {

// Two doubles in one SSE register: {g, 1} or {g, h} added in one instruction.
typedef double Pair __attribute__((vector_size(16)));
// The ordered {g, h} (or {g, 1}) of one document as stored: two floats, half
// the bytes to stream. Widening to doubles is exact, so the sums are the
// same as with double pairs.
typedef float FloatPair __attribute__((vector_size(8)));

inline Pair Widen(FloatPair pair) { return __builtin_convertvector(pair, Pair); }

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

// Adds documents [begin, end) of the run (begin a multiple of kCopies) to
// `copies`, kCopies copies of copy_size Pairs. kPairs = Pair slots per bin:
// 1 ({g, n}) or 2 ({g, h}, {n, 0}). column[j] is the bin of the j-th document.
template <int kPairs>
void AccumulateColumnBlock(const uint8_t* column, size_t begin, size_t end,
                           const FloatPair* pairs, size_t copy_size,
                           Pair* copies) {
  const Pair one = {1.0, 0.0};
  auto add = [&](Pair* copy, size_t j) {
    Pair* entry = copy + column[j] * kPairs;
    entry[0] += Widen(pairs[j]);
    if constexpr (kPairs == 2) entry[1] += one;
  };
  size_t j = begin;
  for (; j + kCopies <= end; j += kCopies) {
    for (int c = 0; c < kCopies; ++c) add(copies + c * copy_size, j + c);
  }
  for (int c = 0; j < end; ++j, ++c) add(copies + c * copy_size, j);
}

// histogram[s] = copy 0 + copy 1 + ... (in that order) over copy_size slots.
void FoldCopies(const Pair* copies, size_t copy_size, Pair* histogram) {
  for (size_t s = 0; s < copy_size; ++s) {
    Pair sum = copies[s];
    for (int c = 1; c < kCopies; ++c) sum += copies[c * copy_size + s];
    histogram[s] = sum;
  }
}

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

// Row kernel: documents[0, count) add their pair to the bin of each feature
// of the subgroup. offsets[k] is feature k's histogram offset in Pairs.
// kConsecutive: the subgroup is features[0] + [0, group_size), so a row's
// bins are read without indirection (the usual case: no feature sampling).
// When prefetching, rows up to documents[available - 1] are prefetched at
// bytes [prefetch_first, prefetch_last] (the whole group's span of a row).
template <int kPairs, bool kConsecutive>
void AccumulateRows(const uint8_t* rows, size_t row_length,
                    const uint32_t* documents, size_t count, size_t available,
                    bool prefetch, size_t prefetch_first, size_t prefetch_last,
                    const FloatPair* pairs, const int32_t* features,
                    const uint32_t* offsets, size_t group_size,
                    Pair* histogram) {
  const Pair one = {1.0, 0.0};
  const size_t first = features[0];
  for (size_t j = 0; j < count; ++j) {
    if (prefetch && j + kRowPrefetchAhead < available) {
      const uint8_t* ahead = rows + documents[j + kRowPrefetchAhead] * row_length;
      for (size_t b = prefetch_first; b < prefetch_last; b += 64) {
        __builtin_prefetch(ahead + b);
      }
      __builtin_prefetch(ahead + prefetch_last);
    }
    const uint8_t* row = rows + documents[j] * row_length;
    const Pair pair = Widen(pairs[j]);
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
  thread_local std::vector<Pair> copies;
  thread_local std::vector<size_t> copy_offsets;
  for (size_t start = 0; start < group.size();) {
    // The next subgroup: as many features as fit kColumnCopiesBytes (one at
    // least), each with kCopies copies of its slots.
    size_t end = start, total = 0;
    copy_offsets.clear();
    while (end < group.size()) {
      const size_t size =
          static_cast<size_t>(layout_.num_slots(group[end])) * kPairs;
      if (end > start && (total + size) * kCopies * sizeof(Pair) > kColumnCopiesBytes) {
        break;
      }
      copy_offsets.push_back(total * kCopies);
      total += size;
      ++end;
    }
    if (copies.size() < total * kCopies) copies.resize(total * kCopies);
    std::memset(static_cast<void*>(copies.data()), 0,
                sizeof(Pair) * total * kCopies);
    for (size_t begin = 0; begin < count; begin += kColumnBlockDocuments) {
      const size_t block_end = std::min(count, begin + kColumnBlockDocuments);
      for (size_t k = start; k < end; ++k) {
        const int32_t f = group[k];
        const uint8_t* column = data_.column(f) + first_document;
        const size_t copy_size = static_cast<size_t>(layout_.num_slots(f)) * kPairs;
        Pair* mine = copies.data() + copy_offsets[k - start];
        if (kPairs == 1) {
          AccumulateColumnBlock<1>(column, begin, block_end, pairs, copy_size, mine);
        } else {
          AccumulateColumnBlock<2>(column, begin, block_end, pairs, copy_size, mine);
        }
      }
    }
    for (size_t k = start; k < end; ++k) {
      const int32_t f = group[k];
      FoldCopies(copies.data() + copy_offsets[k - start],
                 static_cast<size_t>(layout_.num_slots(f)) * kPairs,
                 reinterpret_cast<Pair*>(histogram + layout_.offset(f)));
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
      sub.offsets[k] = static_cast<uint32_t>(layout_.offset(f) / 2);  // in Pairs
      std::memset(histogram + layout_.offset(f), 0,
                  sizeof(double) * layout_.num_slots(f) * layout_.stride());
    }
  }
  Pair* out = reinterpret_cast<Pair*>(histogram);
  const uint8_t* rows = data_.rows();
  const size_t length = data_.num_features();
  const size_t prefetch_first = group.front();
  const size_t prefetch_last = group.back();
  for (size_t begin = 0; begin < count; begin += kRowBlockDocuments) {
    const size_t block = std::min(kRowBlockDocuments, count - begin);
    const uint32_t* docs = documents.data() + begin;
    const FloatPair* block_pairs = pairs + begin;
    for (int32_t s = 0; s < num_subgroups; ++s) {
      const Subgroup& sub = subgroups[s];
      // The first subgroup fetches the rows (all of the group's span); the
      // others find them in cache.
      const bool prefetch = s == 0;
      const size_t available = count - begin;
      if (layout_.stride() == 2) {
        if (sub.consecutive) {
          AccumulateRows<1, true>(rows, length, docs, block, available, prefetch,
                                  prefetch_first, prefetch_last, block_pairs,
                                  sub.features, sub.offsets, sub.size, out);
        } else {
          AccumulateRows<1, false>(rows, length, docs, block, available, prefetch,
                                   prefetch_first, prefetch_last, block_pairs,
                                   sub.features, sub.offsets, sub.size, out);
        }
      } else {
        if (sub.consecutive) {
          AccumulateRows<2, true>(rows, length, docs, block, available, prefetch,
                                  prefetch_first, prefetch_last, block_pairs,
                                  sub.features, sub.offsets, sub.size, out);
        } else {
          AccumulateRows<2, false>(rows, length, docs, block, available, prefetch,
                                   prefetch_first, prefetch_last, block_pairs,
                                   sub.features, sub.offsets, sub.size, out);
        }
      }
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
