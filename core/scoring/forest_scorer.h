#ifndef PLRANK_CORE_SCORING_FOREST_SCORER_H_
#define PLRANK_CORE_SCORING_FOREST_SCORER_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "core/data/dataset.h"
#include "core/model/ensemble.h"
#include "core/scoring/doubled_rows.h"
#include "core/scoring/scoring_kernel.h"

namespace plrank {
namespace internal {
struct FlatForest;
class ForestKernel;
}  // namespace internal

// A validated Ensemble flattened for fast scoring: all trees' nodes in one
// contiguous array (flat_forest.h), scored block of trees by block of
// documents through a plan of kernels (forest_kernel.h: one interface, each
// kernel in its own files with its own tables). Every kernel adds leaf
// values in tree order, so scores are bit-identical to the reference
// evaluator whichever kernels score a document. Immutable and thread-safe
// after Create; copies share the immutable forest and kernels.
//
// The kernels are those of scoring_kernel.h (name, compatibility with the
// model and CPU, preference). By default Create builds the chooser's plan
// (kernel_plan.h, docs/scoring_kernels.md): RapidScorer takes groups of 64
// documents (AVX-512 BW and BITALG; one output, trees of at most 64 leaves);
// for trees of at most 32 leaves DenseScorer then takes every other
// document, two at a time (AVX-512 VBMI; one output), or else QuickScorer
// groups of 16 (AVX-512) or 8 (AVX2); without QuickScorer, single-output
// forests chain their walks in groups of 8; a single document left walks in
// lane chains, the rest in lockstep (kernel_plan()). Options::kernel forces
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
  int32_t num_trees() const { return shape_.num_trees; }
  // True when groups of 8 or 16 documents are scored with QuickScorer
  // (every tree has at most 32 leaves and the CPU has AVX2; 16 with
  // AVX-512), or would be but for DenseScorer taking every document first
  // (DenseScoring::kOff then plans QuickScorer); scores are the same either
  // way, bit for bit. kernel_plan() says which kernels score.
  bool uses_quick_scorer() const {
    return quick_behind_dense_ || plans(ScoringKernelId::kQuickAvx512) ||
           plans(ScoringKernelId::kQuickAvx2);
  }
  // True when groups of 64 documents are scored with RapidScorerForest
  // (one output, trees of at most 64 leaves, AVX-512 with BW and BITALG);
  // scores are the same either way, bit for bit.
  bool uses_rapid_scorer() const {
    return plans(ScoringKernelId::kRapidAvx512);
  }
  // True when batches of a few documents are scored with DenseScorerForest
  // (one output, trees of at most 32 leaves, AVX-512 with BW and VBMI, at
  // most 256 tested slots of at most 255 thresholds each); scores are the
  // same either way, bit for bit.
  bool uses_dense_scorer() const {
    return plans(ScoringKernelId::kDenseAvx512Vbmi);
  }
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
  ForestScorer() = default;

  size_t num_slots() const { return rows_.num_slots(); }
  // Documents the doubled rows of a block of `docs` documents (at most
  // kBlockDocs) have room for: rounded up to a multiple of 64, the largest
  // group any kernel pads to (forest_kernel.h), so a request of a few
  // documents does not grow a thread's scratch to a whole block.
  static size_t row_capacity(size_t docs) {
    constexpr size_t kPadDocs = 64;
    static_assert(kBlockDocs % kPadDocs == 0);
    return (std::min(std::max<size_t>(docs, 1), kBlockDocs) + kPadDocs - 1) /
           kPadDocs * kPadDocs;
  }
  // Entries of those doubled rows. Never 0: a model whose trees are all
  // single leaves has no slots, and its walks still address (and a leaf
  // step reads) a group's first slot.
  size_t block_row_entries(size_t docs = kBlockDocs) const {
    return row_capacity(docs) * std::max<size_t>(num_slots(), 1);
  }
  // Adds trees [0, num_trees) to out[k * out_stride + i], i < num_docs, for
  // doubled rows (block_row_entries(num_docs) entries: lanes past num_docs
  // may be overwritten by padding): each kernel of the plan in turn takes
  // some of the documents the ones before it left.
  void AccumulateTrees(uint32_t* doubled, size_t num_docs, double* out,
                       size_t out_stride, int32_t num_trees) const;
  // Whether kernel `id` is in the plan.
  bool plans(ScoringKernelId id) const {
    return std::find(plan_.begin(), plan_.end(), id) != plan_.end();
  }
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
  std::vector<double> base_score_;  // num_outputs_ entries
  // How rows become the kernels' doubled rows (doubled_rows.h).
  internal::DoubledRows rows_;
  std::vector<double> linear_weights_;  // empty or num_features_
  // The trees as the walking kernels read them, shared with those kernels.
  std::shared_ptr<const internal::FlatForest> forest_;
  // The plan: the kernels scoring documents by decreasing preference, the
  // order they take documents in (the last takes every document left).
  std::vector<std::shared_ptr<const internal::ForestKernel>> kernels_;
  ForestShape shape_;
  std::vector<ScoringKernelId> plan_;  // kernels_' ids
  // The chooser left QuickScorer out only because DenseScorer takes every
  // document (see uses_quick_scorer()).
  bool quick_behind_dense_ = false;
};

}  // namespace plrank

#endif  // PLRANK_CORE_SCORING_FOREST_SCORER_H_
