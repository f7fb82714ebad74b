#ifndef PLRANK_CORE_SCORING_FOREST_SCORER_H_
#define PLRANK_CORE_SCORING_FOREST_SCORER_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "core/data/dataset.h"
#include "core/scoring/cache_aligned.h"
#include "core/scoring/dense_scorer.h"
#include "core/model/ensemble.h"
#include "core/scoring/quick_scorer.h"
#include "core/scoring/rapid_scorer.h"
#include "core/scoring/scoring_kernel.h"

namespace plrank {

// A validated Ensemble flattened for fast scoring: all trees' nodes in one
// contiguous array, evaluated block of trees by block of documents. Groups of
// 64 documents (a remainder of 36 or more padded to 64) go through
// RapidScorerForest when every tree has at most 64 leaves, the model one
// output and the CPU AVX-512 (BW, BITALG); groups of 16 documents (AVX-512;
// a remainder of 4 or more padded to 16) or 8 (AVX2) of the rest go through
// QuickScorer when every tree has at most 32 leaves, else through chained
// walks when the document block is large enough (ChainGroup); small
// batches and remainders walk in lockstep (WalkGroup), except a single
// document of a single-output model, which walks every 8th tree in each of
// 8 lanes without lockstep (LaneChainDocument). With one output,
// trees of at most 32 leaves and AVX-512 VBMI, all documents RapidScorer
// leaves go through DenseScorerForest instead, two at a time. Every path
// adds leaf values in tree order, so scores are bit-identical to the
// reference evaluator. Immutable and thread-safe after Create.
//
// Each of these paths is a kernel of scoring_kernel.h (name, compatibility
// with the model and CPU, preference). By default Create builds the plan of
// every compatible kernel as above (kernel_plan()); Options::kernel forces
// one kernel by name, which then scores every document it takes, the rest
// walking in lockstep (tests and benchmarks compare them; a server can pin
// one with --scoring_kernel).
class ForestScorer {
 public:
  // Whether small batches may go through DenseScorerForest (kOff keeps the
  // other paths; tests and benchmarks compare them).
  enum class DenseScoring { kAllow, kOff };

  struct Options {
    // kAutoScoringKernel ("auto") or empty: the chooser's plan. Else the name
    // of one kernel (ScoringKernels()): Create fails with InvalidArgument
    // for an unknown name and FailedPrecondition, giving the reason, when
    // the kernel cannot score this model on this CPU.
    std::string kernel;
    // Only for the chooser's plan (a forced kernel ignores it).
    DenseScoring dense = DenseScoring::kAllow;
  };

  // Validates `model` (ValidateEnsemble) and flattens it.
  static absl::StatusOr<ForestScorer> Create(
      const Ensemble& model, DenseScoring dense = DenseScoring::kAllow);
  static absl::StatusOr<ForestScorer> Create(const Ensemble& model,
                                             const Options& options);

  // Documents scored together; rows of a block stay in L2 while a block of
  // trees is walked, and each tree block is read from L3 once per document
  // block (300 x 255 at batch 1000: 1.59-1.67 us/doc with 512, 1.73-1.78
  // with 128; 1024 no better; bench/results/scorer.md).
  static constexpr size_t kBlockDocs = 512;

  int32_t num_features() const { return num_features_; }
  // The features scoring reads are [0, row_width()): up to the widest split
  // feature, or all num_features() with linear weights. Rows given to Score
  // may be this narrow (row_stride), so memory for rows is sized by what
  // the model uses, not by the width it declares.
  int32_t row_width() const { return row_width_; }
  int32_t num_outputs() const { return num_outputs_; }
  int32_t num_trees() const { return static_cast<int32_t>(tree_roots_.size()); }
  // True when groups of 8 or 16 documents are scored with QuickScorer
  // (every tree has at most 32 leaves and the CPU has AVX2; 16 with
  // AVX-512); scores are the same either way, bit for bit.
  bool uses_quick_scorer() const { return quick_.has_value(); }
  // True when groups of 64 documents are scored with RapidScorerForest
  // (one output, trees of at most 64 leaves, AVX-512 with BW and BITALG);
  // scores are the same either way, bit for bit.
  bool uses_rapid_scorer() const { return rapid_.has_value(); }
  // True when batches of a few documents are scored with DenseScorerForest
  // (one output, trees of at most 32 leaves, AVX-512 with BW and VBMI, at
  // most 256 tested slots of at most 255 thresholds each); scores are the
  // same either way, bit for bit.
  bool uses_dense_scorer() const { return dense_.has_value(); }
  // The kernels that score documents, by decreasing preference: the
  // chosen (or forced) kernel first, then those taking what it leaves.
  const std::vector<ScoringKernelId>& kernel_plan() const { return plan_; }
  // The chosen kernel's name: kernel_plan()'s first.
  absl::string_view kernel_name() const {
    return GetScoringKernel(plan_.front()).name;
  }
  // "quick_avx2+lane_chains+lockstep_walks": kernel_plan() by name (logs,
  // model status).
  std::string kernel_plan_name() const;
  // What the kernels' compatibility is decided on.
  const ForestShape& shape() const { return shape_; }

  // Raw per-output scores: out[k * num_docs + i]. `rows` is row-major
  // (num_docs x num_features). Uses the first `num_trees` trees (rounded to
  // whole iterations: ceil(num_trees / num_outputs) iterations, capped at
  // all); <= 0 = all. Preconditions (checked, abort on violation):
  // rows.size() >= num_docs * num_features(), out.size() >= num_docs *
  // num_outputs(). No allocation.
  void RawScores(absl::Span<const float> rows, size_t num_docs,
                 absl::Span<double> out, int32_t num_trees = 0) const;

  // Final ranking scores (transform applied), one per document; all trees.
  // Raw outputs sum as ((base + tree_0 + tree_1 + ...) + linear), trees in
  // order, so results are reproducible bit for bit. Row i starts at
  // rows[i * row_stride]; row_stride 0 means num_features(), else it must
  // be >= row_width() (checked, abort on violation), as must rows.size() >=
  // num_docs * row_stride.
  void Score(absl::Span<const float> rows, size_t num_docs,
             absl::Span<double> out, size_t row_stride = 0) const;

  // Convenience over a columnar Dataset, parallel over blocks of documents
  // when built with OpenMP (results do not depend on the thread count).
  // Columns the model lacks (data.num_features > num_features()) are ignored,
  // as no tree or weight can refer to them; columns the data lacks read as 0.
  // Output layout as in RawScores / Score.
  std::vector<double> ScoreDataset(const Dataset& data) const;
  std::vector<double> RawScoresDataset(const Dataset& data,
                                       int32_t num_trees = 0) const;

 private:
  // 8 bytes, eight to a cache line, so a 1000-tree x 31-leaf model (about
  // 61K nodes) fits in L2. A document at a node moves to child +
  // (threshold < value): the two children of a node are adjacent, left then
  // right, so a step is a compare and an add-with-carry. `value` is the
  // document's key in `slot` of its doubled row (see PrepareRows), so
  // missing values need no test in the walk; values and thresholds are
  // compared as order-preserving unsigned keys (OrderKey in the .cc). Leaves
  // are nodes too, whose child is themselves and whose threshold no value
  // exceeds: a group of walks proceeds in lockstep for the tree's depth with
  // no data-dependent branch.
  struct Node {
    uint32_t threshold;  // OrderKey of the float threshold; max for a leaf
    uint16_t slot;       // doubled-row slot * kLanes * 4 / 8 (8-byte units)
    uint16_t child;      // left child (right = child + 1), block-relative
  };
  static_assert(sizeof(Node) == 8);

  // Independent tree walks in lockstep: enough to hide load latency, few
  // enough to keep their positions in registers. Also the number of
  // documents whose doubled rows are interleaved slot by slot.
  static constexpr size_t kLanes = 8;
  static_assert(kBlockDocs % kLanes == 0);

  ForestScorer() = default;

  // Copies `num_docs` rows (`row_stride` floats apart) into doubled rows of
  // num_slots() order keys (see Node). With U = used_features_.size() and
  // Z = zero_features_.size(): slot j < U holds x_f, f = used_features_[j],
  // with NaN -> -inf (default left goes left: -inf <= any finite threshold);
  // slot U + j holds x_f with NaN -> +inf (default right). Splits that treat
  // zero as missing read slots 2U + k (missing -> -inf) and 2U + Z + k
  // (missing -> +inf), where f = zero_features_[k] and missing also covers
  // |x_f| <= kZeroAsMissingBound; so no walk ever tests for missing.
  // Thresholds are finite, so real infinities are routed as before. Rows are
  // interleaved in groups of kLanes documents: slot s of document i is at
  // doubled[(i / kLanes) * kLanes * num_slots() + s * kLanes + i % kLanes].
  void PrepareRows(const float* rows, size_t num_docs, size_t row_stride,
                   uint32_t* doubled) const;
  size_t num_slots() const {
    return 2 * (used_features_.size() + zero_features_.size());
  }
  // Entries of doubled rows for a block of `docs` documents (at most
  // kBlockDocs), rounded up to a multiple of 64 documents, the largest
  // padding any path writes: a request of a few documents does not grow a
  // thread's scratch to a whole block. Never 0: a model whose trees are all
  // single leaves has no slots, and its walks still address (and a leaf
  // step reads) a group's first slot.
  size_t block_row_entries(size_t docs = kBlockDocs) const {
    constexpr size_t kPadDocs = 64;
    static_assert(kBlockDocs % kPadDocs == 0);
    const size_t padded =
        (std::min(std::max<size_t>(docs, 1), kBlockDocs) + kPadDocs - 1) /
        kPadDocs * kPadDocs;
    return padded * std::max<size_t>(num_slots(), 1);
  }
  // Adds trees [0, num_trees) to out[k * out_stride + i], i < num_docs, for
  // doubled rows (block_row_entries(num_docs) entries: lanes past num_docs
  // may be overwritten by padding).
  void AccumulateTrees(uint32_t* doubled, size_t num_docs, double* out,
                       size_t out_stride, int32_t num_trees) const;
  // The QuickScorer part of AccumulateTrees (forest_scorer_quick.cc): scores
  // a prefix of the documents with quick_ and returns its length.
  size_t QuickScoreGroups(uint32_t* doubled, size_t num_docs, double* out,
                          size_t out_stride, int32_t num_trees) const;
  // Fills the doubled rows of documents [num_docs, padded_docs) with copies
  // of the last document's: padding lanes of a QuickScorer / RapidScorer
  // group then lengthen no threshold scan, and their sums are dropped.
  void PadWithLastDocument(uint32_t* doubled, size_t num_docs,
                           size_t padded_docs) const;
  // Adds all trees for documents [first, num_docs) with dense_, two at a
  // time (forest_scorer_quick.cc).
  void DenseScoreDocuments(const uint32_t* doubled, size_t first,
                           size_t num_docs, double* out,
                           int32_t num_trees) const;
  // The same with rapid_ (forest_scorer_quick.cc): groups of 64 documents,
  // a large enough remainder padded to 64; returns how many it scored (a
  // multiple of 64 or num_docs).
  size_t RapidScoreGroups(uint32_t* doubled, size_t num_docs, double* out,
                          int32_t num_trees) const;
  // Adds trees [begin, end) of tree block `block` for the kDocs doubled
  // rows `rows`: to sum[d] when there is one output, else to
  // out[(t % outputs) * out_stride + d]. `group_rows` points at the first
  // document's slot 0 in its interleaved group.
  template <size_t kDocs>
  void WalkGroup(const uint32_t* group_rows, size_t block, int32_t begin,
                 int32_t end, double* sum, double* out,
                 size_t out_stride) const;
  // The chained layout (see ChainGroup), for single-output models without
  // QuickScorer.
  void BuildChains();
  // Adds all trees of tree block `block` to sum[d] for kLanes documents.
  void ChainGroup(const uint32_t* group_rows, size_t block, double* sum) const;
  // The lane chains (see LaneChainDocument), for single-output models the
  // dense path does not take.
  void BuildLaneChains();
  // Sets plan_ from what Create built.
  void SetPlan();
  // Builds what the forced kernel `kernel` needs, or says why it cannot.
  absl::Status BuildForcedKernel(
      const ScoringKernel& kernel, const Ensemble& model,
      const std::vector<std::vector<uint32_t>>& split_slots);
  // Adds all trees to *sum for the document whose doubled row starts at
  // doc_row (slot s at doc_row[s * kLanes]); `record` holds num_trees() + 1
  // entries.
  void LaneChainDocument(const uint32_t* doc_row, double* sum,
                         uint32_t* record) const;
  // Full raw scores of at most kBlockDocs rows (`row_stride` floats apart,
  // >= row_width_): base score, trees, linear part. `scratch` holds
  // block_row_entries(num_docs) entries.
  void RawScoresBlock(const float* rows, size_t num_docs, size_t row_stride,
                      double* out, size_t out_stride, int32_t num_trees,
                      uint32_t* scratch) const;
  // Applies the transform to raw[k * raw_stride + i] -> out[i].
  void Transform(const double* raw, size_t raw_stride, size_t num_docs,
                 double* out) const;
  int32_t ClampTrees(int32_t num_trees) const;
  // Shared by ScoreDataset/RawScoresDataset; `transformed` picks Score.
  std::vector<double> ScoreColumns(const Dataset& data, int32_t num_trees,
                                   bool transformed) const;

  int32_t num_features_ = 0;
  int32_t row_width_ = 0;  // see row_width()
  int32_t num_outputs_ = 1;
  ScoreTransform transform_ = ScoreTransform::kIdentity;
  std::vector<double> base_score_;        // num_outputs_ entries
  // Features some split tests, in increasing order: only they are copied
  // into doubled rows.
  std::vector<int32_t> used_features_;
  // Features some split tests with zero as missing, in increasing order
  // (usually none): they get two more slots each.
  std::vector<int32_t> zero_features_;
  internal::CacheAlignedVector<Node> nodes_;  // all trees, leaves included
  internal::CacheAlignedVector<double>
      node_values_;  // leaf value per node (0 inside)
  // Trees [tree_block_begin_[b], tree_block_begin_[b + 1]) form block b, sized
  // so a block's nodes stay in L1 while a block of documents walks them. Its
  // nodes start at nodes_[block_node_begin_[b]]; indices in Node::child and
  // tree_roots_ are relative to that.
  std::vector<int32_t> tree_block_begin_;
  std::vector<size_t> block_node_begin_;
  std::vector<uint32_t> tree_roots_;       // block-relative index of each root
  std::vector<int32_t> tree_depths_;       // depth of each tree's deepest leaf
  std::vector<int32_t> tree_shallowest_leaf_;  // and of its shallowest leaf
  std::vector<double> linear_weights_;     // empty or num_features_
  // Scores whole groups of kLanes documents when every tree has at most 32
  // leaves and the CPU has AVX2; smaller groups walk the trees.
  std::optional<QuickScorerForest> quick_;
  // For one output and trees of up to 32 leaves with AVX-512 (VBMI):
  // scores every document RapidScorer leaves, two at a time.
  std::optional<DenseScorerForest> dense_;
  // For one output and trees of up to 64 leaves with AVX-512: scores groups
  // of 64 documents before quick_ or the walks take the rest.
  std::optional<RapidScorerForest> rapid_;
  // Copy of nodes_ where a leaf's child is the next tree's root (the block's
  // last tree: a parking node closing each block), and leaf values at leaves,
  // -0.0 elsewhere. Block b starts at chain_block_begin_[b]; its walks need
  // at least chain_min_rounds_[b] steps. Empty when not used.
  internal::CacheAlignedVector<Node> chain_nodes_;
  internal::CacheAlignedVector<double> chain_values_;
  std::vector<size_t> chain_block_begin_;
  std::vector<int32_t> chain_min_rounds_;
  // Lane chains: nodes_ with global child indices, where a leaf of tree t
  // records itself as tree t's exit and moves to the root of tree t + 8
  // (the parking node, last, when there is none), or makes that root's
  // move when it splits. Empty when not used.
  struct LaneNode {
    uint32_t threshold;
    uint32_t child;         // global index of the left child
    uint32_t value_offset;  // byte offset of the slot in a doubled row
    uint32_t record;        // tree of a leaf; num_trees() otherwise
  };
  internal::CacheAlignedVector<LaneNode> lane_nodes_;
  internal::CacheAlignedVector<double> lane_values_;  // leaf value per node
  std::vector<uint32_t> lane_first_roots_;  // per lane
  uint32_t lane_parking_ = 0;
  int32_t lane_min_rounds_ = 0;
  // lane_chains forced: every document (with all trees) goes through
  // LaneChainDocument, not only a group's single remainder.
  bool lanes_for_all_ = false;
  ForestShape shape_;
  std::vector<ScoringKernelId> plan_ = {ScoringKernelId::kLockstepWalks};
};

}  // namespace plrank

#endif  // PLRANK_CORE_SCORING_FOREST_SCORER_H_
