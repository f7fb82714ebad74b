#ifndef PLRANK_CORE_BOOSTING_HISTOGRAM_H_
#define PLRANK_CORE_BOOSTING_HISTOGRAM_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "core/boosting/binned_dataset.h"

namespace plrank {

// Where each feature's bins live in a flat histogram of doubles. An entry is
// {sum_g, count} (stride 2) when the split gain needs no hessians (least
// squares: every document weighs 1, so the hessian IS the count), or
// {sum_g, sum_h, count, unused} (stride 4, two SSE lanes) otherwise. Each
// feature has num_bins + 1 slots, the last one for missing values.
class HistogramLayout {
 public:
  HistogramLayout(const BinnedDataset& data, bool with_hessians);

  int32_t stride() const { return stride_; }
  bool with_hessians() const { return stride_ == 4; }
  // Offsets and sizes in doubles.
  size_t offset(int32_t feature) const { return offsets_[feature]; }
  int32_t num_slots(int32_t feature) const { return num_slots_[feature]; }
  size_t size() const { return size_; }

 private:
  int32_t stride_;
  std::vector<size_t> offsets_;
  std::vector<int32_t> num_slots_;
  size_t size_ = 0;
};

// Builds histograms for a group of features at a time. `documents` must be
// ascending and distinct (leaf partitions are). `ordered_pairs` holds two
// floats per document, in the same order ("ordered gradients", gathered
// once per leaf): {g, 1} for the stride-2 layout, {g, h} for stride 4. They
// are widened to doubles (exactly) and summed in doubles.
//
// Two kernels, picked by the leaf alone (never by the thread count), and
// every bin is summed in a fixed document order, so results never depend on
// threads, groups or blocks:
//  - a contiguous run of documents (the root without bagging) is read
//    column by column, each feature's histogram in kCopies interleaved
//    copies; the run goes in blocks of documents, all features of a
//    subgroup over one block, so the block's pairs stay in L2;
//  - otherwise rows are read: one row brings all of a document's bins in two
//    or three cache lines, where columns would cost one line per feature
//    (measured 2-5x faster on leaves holding < 10% of the documents). The
//    group's features go in subgroups whose histograms stay in L2, all
//    subgroups over one block of documents before the next, so every row is
//    fetched from memory once per group.
class HistogramBuilder {
 public:
  HistogramBuilder(const HistogramLayout& layout, const BinnedDataset& data)
      : layout_(layout), data_(data) {}

  // Fills the slots of `group` (ascending features) in `histogram`;
  // thread-safe for disjoint groups.
  void BuildGroup(absl::Span<const int32_t> group,
                  absl::Span<const uint32_t> documents,
                  const float* ordered_pairs, double* histogram) const;

  // All of `features` (others untouched), in groups spread over threads.
  void Build(absl::Span<const uint32_t> documents, const float* ordered_pairs,
             absl::Span<const int32_t> features, double* histogram,
             int32_t num_threads) const;

  // How many consecutive groups (see FeatureGroup) to split features into:
  // one per thread, so that each thread reads every row of the leaf once.
  int32_t GroupCount(size_t num_features, int32_t num_threads) const;

 private:
  // Row kernel subgroups: at most this many features.
  size_t max_group_size() const;
  // The column kernel over documents [first, first + count).
  void BuildColumns(absl::Span<const int32_t> group, size_t first_document,
                    size_t count, const float* ordered_pairs,
                    double* histogram) const;
  // The row kernel.
  void BuildRows(absl::Span<const int32_t> group,
                 absl::Span<const uint32_t> documents,
                 const float* ordered_pairs, double* histogram) const;

  const HistogramLayout& layout_;
  const BinnedDataset& data_;
};

// For tests: true makes every builder use the baseline-target kernels even
// where the AVX2 ones could run (both must give the same sums, bit for bit);
// false restores the choice by CPU. Returns whether the CPU has AVX2 (i.e.
// whether the two choices differ).
bool UseBaselineHistogramKernels(bool baseline);

// Group `group` of `features` split into num_groups consecutive groups.
absl::Span<const int32_t> FeatureGroup(absl::Span<const int32_t> features,
                                       int32_t num_groups, int32_t group);

// parent -= child on one feature's slots: the parent's histogram becomes its
// other child's ("subtraction trick": only the smaller child is built).
void SubtractFeature(const HistogramLayout& layout, int32_t feature,
                     const double* child, double* parent);

// parent[slot] -= child[slot] over `features`: the parent's histogram becomes
// its other child's ("subtraction trick": only the smaller child is built).
void SubtractHistogram(const HistogramLayout& layout,
                       absl::Span<const int32_t> features, const double* child,
                       double* parent, int32_t num_threads);

}  // namespace plrank

#endif  // PLRANK_CORE_BOOSTING_HISTOGRAM_H_
