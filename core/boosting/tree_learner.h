#ifndef PLRANK_CORE_BOOSTING_TREE_LEARNER_H_
#define PLRANK_CORE_BOOSTING_TREE_LEARNER_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "core/boosting/binned_dataset.h"
#include "core/boosting/histogram.h"
#include "core/boosting/reducer.h"
#include "core/boosting/split_finder.h"
#include "core/model/ensemble.h"

namespace plrank {

// How a distributed run finds its splits (LightGBM's tree_learner).
enum class ParallelSplits {
  // Every built histogram is summed over the ranks: the tree is the one
  // single-process training grows (up to the sums' rounding).
  kData,
  // Voting-parallel (core/boosting/feature_voting.h): each rank proposes
  // its top_k features of each leaf by its local gains, and only the
  // histograms of the (at most 2 top_k) elected features of both children
  // are summed; splits are then chosen among the elected features on the
  // exact global histograms. Fewer bytes per split when 2 top_k is below
  // the feature count; the tree may differ from data-parallel's where a
  // feature no rank proposed would have been the global best.
  kVoting,
};

struct TreeLearnerConfig {
  int32_t num_leaves = 31;
  // LightGBM's meaning: a leaf at depth max_depth (the root is at 0) is not
  // split; <= 0: no limit.
  int32_t max_depth = 0;
  // A split is made only when its gain exceeds this (gains as in
  // FindBestSplit).
  double min_gain_to_split = 0.0;
  SplitRules rules;
  int32_t num_threads = 1;
  // Distributed training: the root sums and every built histogram are summed
  // over ranks before any decision, so every rank grows the same tree from
  // its own documents. Null (or one rank): single-process.
  Reducer* reducer = nullptr;
  // Distributed only (ignored single-process).
  ParallelSplits parallel_splits = ParallelSplits::kData;
  int32_t top_k = 20;  // kVoting: features each rank proposes per leaf
};

// A tree as grown: the model-facing Tree (leaf_value zero, to be filled from
// the objective) plus the same splits in bin space for fast routing of binned
// rows.
struct GrownTree {
  Tree tree;
  std::vector<int32_t> split_binned_feature;  // BinnedDataset feature index
  std::vector<uint8_t> split_bin;    // left iff bin <= split_bin
  std::vector<uint8_t> missing_bin;  // the feature's missing slot

  // The leaf of a binned document. Agrees with routing the raw values
  // through `tree` (see BinMapper's contract).
  int32_t LeafOf(const BinnedDataset& data, size_t document) const {
    if (tree.num_internal_nodes() == 0) return 0;
    int32_t node = 0;
    while (node >= 0) {
      const uint8_t bin = data.bin(document, split_binned_feature[node]);
      const bool left = bin == missing_bin[node] ? tree.default_left[node] != 0
                                                 : bin <= split_bin[node];
      node = left ? tree.left_child[node] : tree.right_child[node];
    }
    return ~node;
  }
};

// Leaf-wise (best-first) growth: repeatedly split the leaf whose best split
// gains most, until num_leaves leaves or no admissible split. Every leaf owns
// a contiguous stretch of one index array, partitioned stably in place when
// it splits, so documents stay ascending inside a leaf and each histogram
// pass reads rows in memory order. Only the smaller child's histogram is
// built; the larger one is parent minus smaller. All buffers are allocated
// once here and reused by every tree.
class TreeLearner {
 public:
  TreeLearner(const BinnedDataset& data, const TreeLearnerConfig& config);

  // Grows one tree on the documents `bag` (ascending) with per-document
  // `gradients` and `hessians` (hessians are read under the Newton gain only),
  // splitting only on `features` (ascending BinnedDataset indices).
  void Grow(absl::Span<const uint32_t> bag, absl::Span<const float> gradients,
            absl::Span<const float> hessians, absl::Span<const int32_t> features,
            GrownTree* out);

  // leaf_of_document[i] = leaf of document i for every document of the last
  // bag; other entries are left untouched.
  void AssignBagLeaves(absl::Span<int32_t> leaf_of_document) const;

 private:
  struct Leaf {
    uint32_t begin = 0;
    uint32_t count = 0;   // this rank's documents
    uint32_t total = 0;   // documents over all ranks (== count single-process)
    NodeSums sums;
    // This rank's sums (== sums single-process); kept for voting only.
    NodeSums local_sums;
    int32_t histogram = -1;     // index into histograms_
    int32_t parent_node = -1;   // -1 for the root
    bool is_left_child = false;
    int32_t depth = 0;  // the root's is 0
    SplitCandidate best;
  };

  static constexpr int kMaxThreads = 256;

  double* histogram(int32_t index) {
    return histograms_.data() + static_cast<size_t>(index) * layout_.size();
  }
  // One parallel pass over features: builds `built`'s histogram (gathering
  // its gradients first), turns the parent's histogram into `derived`'s by
  // subtraction (derived may be null, e.g. for the root), and finds the best
  // split of both while their histograms are still in cache.
  void BuildAndScan(Leaf* built, Leaf* derived,
                    absl::Span<const float> gradients,
                    absl::Span<const float> hessians,
                    absl::Span<const int32_t> features);
  // BuildAndScan of a distributed run: builds every group, sums the histogram
  // over ranks, then subtracts and scans.
  void BuildReduceAndScan(Leaf* built, Leaf* derived, bool scan_built,
                          bool scan_derived, int threads,
                          absl::Span<const int32_t> features);
  // BuildAndScan of a voting-parallel run (tree_learner_voting.cc): local
  // histograms and gains, the vote, the elected features' histograms
  // summed over ranks, then their scan on the global sums.
  void VoteReduceAndScan(Leaf* built, Leaf* derived, bool scan_built,
                         bool scan_derived, int threads,
                         absl::Span<const int32_t> features);
  // This rank's best gain of every feature of `features` for one leaf,
  // from its local histogram and sums, into local_gain_[offset + f].
  void LocalGains(const Leaf& leaf, const double* local_histogram,
                  absl::Span<const int32_t> group, size_t offset);
  // Sums over the leaf's documents on this rank.
  NodeSums LocalSums(const Leaf& leaf, absl::Span<const float> gradients,
                     absl::Span<const float> hessians) const;
  // Feature f's best split of `built` into *best_built (when scan_built),
  // and of `derived` after subtracting `built` from the parent's histogram
  // in derived_histogram (when scan_derived).
  void ScanFeature(int32_t f, const Leaf& built, const Leaf* derived,
                   bool scan_built, bool scan_derived,
                   const double* built_histogram, double* derived_histogram,
                   SplitCandidate* best_built,
                   SplitCandidate* best_derived) const;
  // Merges the threads' candidates in thread order (BetterSplit is a total
  // order, so the result does not depend on the schedule).
  static void KeepBest(const SplitCandidate* best_built,
                       const SplitCandidate* best_derived, int threads,
                       Leaf* built, Leaf* derived);
  // Stable partition of the leaf's documents; returns the left count.
  uint32_t Partition(const Leaf& leaf, const SplitCandidate& split);

  const BinnedDataset& data_;
  TreeLearnerConfig config_;
  bool distributed_ = false;
  bool voting_ = false;  // distributed and ParallelSplits::kVoting
  // Voting: the rules of the local vote (LightGBM's: minimum leaf sizes
  // divided by the rank count), per-feature local gains and the ballot of
  // both children ([0, F) built, [F, 2F) derived), the elected slots
  // packed for one Sum, and the global histograms of both children.
  SplitRules local_rules_;
  std::vector<double> local_gain_;
  std::vector<double> ballot_;
  std::vector<double> packed_;
  std::vector<double> global_built_;
  std::vector<double> global_derived_;
  HistogramLayout layout_;
  HistogramBuilder builder_;
  std::vector<double> histograms_;   // num_leaves histograms
  std::vector<uint32_t> indices_;    // documents, grouped by leaf
  std::vector<uint32_t> scratch_;    // right side while partitioning
  std::vector<float> ordered_pairs_;  // {g, 1} or {g, h} per document
  std::vector<Leaf> leaves_;
  int32_t num_leaves_of_last_tree_ = 0;
};

}  // namespace plrank

#endif  // PLRANK_CORE_BOOSTING_TREE_LEARNER_H_
