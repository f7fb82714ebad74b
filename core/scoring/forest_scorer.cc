#include "core/scoring/forest_scorer.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/cpu/cpu_features.h"
#include "core/model/model_io.h"
#include "core/scoring/doubled_rows.h"
#include "core/scoring/flat_forest.h"
#include "core/scoring/forest_kernel.h"
#include "core/scoring/kernel_plan.h"

namespace plrank {
namespace {

// Stack buffer for raw multi-output scores inside Score (no allocation).
constexpr size_t kStackRawScores = 1024;

void CheckOrDie(bool condition, const char* what) {
  if (!condition) {
    std::fprintf(stderr, "ForestScorer precondition failed: %s\n", what);
    std::abort();
  }
}

// Per-thread scratch for doubled rows; grows once per thread, so scoring
// does not allocate in steady state.
uint32_t* Scratch(size_t entries) {
  thread_local std::vector<uint32_t> scratch;
  if (scratch.size() < entries) scratch.resize(entries);
  return scratch.data();
}

}  // namespace

absl::StatusOr<ForestScorer> ForestScorer::Create(const Ensemble& model,
                                                  DenseScoring dense) {
  Options options;
  options.dense = dense;
  return Create(model, options);
}

absl::StatusOr<ForestScorer> ForestScorer::Create(const Ensemble& model,
                                                  const Options& options) {
  // An unknown kernel name fails before any work.
  const absl::string_view forced_name = options.kernel;
  const ScoringKernel* forced = nullptr;
  if (!forced_name.empty() && forced_name != kAutoScoringKernel) {
    forced = FindScoringKernel(forced_name);
    if (forced == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown scoring kernel '", forced_name,
          "' (known: ", kAutoScoringKernel, ", ", ScoringKernelNames(), ")"));
    }
  }
  if (absl::Status status = ValidateEnsemble(model); !status.ok()) {
    return status;
  }
  ForestScorer scorer;
  scorer.num_features_ = model.num_features;
  scorer.num_outputs_ = model.num_outputs;
  scorer.transform_ = model.transform;
  scorer.base_score_ = model.base_score;
  scorer.base_score_.resize(model.num_outputs, 0.0);
  scorer.linear_weights_ = model.linear_weights;

  absl::StatusOr<internal::DoubledRows> rows =
      internal::DoubledRows::Create(model);
  if (!rows.ok()) return rows.status();
  scorer.rows_ = *std::move(rows);
  // Rows are read up to the widest split, or whole for the linear part.
  scorer.row_width_ = model.linear_weights.empty() ? scorer.rows_.split_width()
                                                   : model.num_features;
  const std::vector<std::vector<uint32_t>> split_slots =
      scorer.rows_.SplitSlots(model);
  absl::StatusOr<internal::FlatForest> forest =
      internal::BuildFlatForest(model, split_slots, scorer.num_slots());
  if (!forest.ok()) return forest.status();
  scorer.forest_ =
      std::make_shared<const internal::FlatForest>(*std::move(forest));

  int32_t max_leaves = 0;
  for (const Tree& tree : model.trees) {
    max_leaves = std::max(max_leaves, tree.num_leaves());
  }
  scorer.shape_ = {model.num_outputs, static_cast<int32_t>(model.trees.size()),
                   max_leaves, scorer.num_slots()};
  const internal::KernelInputs inputs = {model, split_slots, scorer.forest_,
                                         scorer.shape_,
                                         CpuFeatures::Detected()};
  if (forced != nullptr) {
    absl::StatusOr<internal::KernelPlan> plan =
        internal::ForcedKernelPlan(inputs, *forced);
    if (!plan.ok()) return plan.status();
    scorer.kernels_ = *std::move(plan);
  } else {
    scorer.kernels_ =
        internal::ChooseKernels(inputs, options.dense == DenseScoring::kAllow);
  }
  for (const auto& kernel : scorer.kernels_) {
    scorer.plan_.push_back(kernel->id());
  }
  scorer.quick_behind_dense_ =
      forced == nullptr && scorer.plans(ScoringKernelId::kDenseAvx512Vbmi) &&
      GetScoringKernel(ScoringKernelId::kQuickAvx2)
          .incompatibility(scorer.shape_, inputs.cpu)
          .empty();
  return scorer;
}

std::string ForestScorer::kernel_plan_name() const {
  std::string name;
  for (ScoringKernelId id : plan_) {
    if (!name.empty()) name += '+';
    absl::StrAppend(&name, GetScoringKernel(id).name);
  }
  return name;
}

int32_t ForestScorer::ClampTrees(int32_t num_trees) const {
  const int32_t all = shape_.num_trees;
  if (num_trees <= 0 || num_trees >= all) return all;
  const int32_t iterations = (num_trees + num_outputs_ - 1) / num_outputs_;
  return std::min(all, iterations * num_outputs_);
}

void ForestScorer::AccumulateTrees(uint32_t* doubled, size_t num_docs,
                                   double* out, size_t out_stride,
                                   int32_t num_trees) const {
  const internal::KernelBatch batch = {
      doubled, num_slots(), num_docs, row_capacity(num_docs),
      out,     out_stride,  num_trees};
  internal::DocRange todo = {0, num_docs};
  for (const auto& kernel : kernels_) {
    todo = kernel->Accumulate(batch, todo);
    if (todo.empty()) return;
  }
  CheckOrDie(todo.empty(), "the scoring plan left documents unscored");
}

void ForestScorer::RawScoresBlock(const float* rows, size_t num_docs,
                                  size_t row_stride, double* out,
                                  size_t out_stride, int32_t num_trees,
                                  uint32_t* scratch) const {
  for (int32_t k = 0; k < num_outputs_; ++k) {
    std::fill_n(out + static_cast<size_t>(k) * out_stride, num_docs,
                base_score_[k]);
  }
  if (num_trees > 0) {
    rows_.Prepare(rows, num_docs, row_stride, scratch);
    AccumulateTrees(scratch, num_docs, out, out_stride, num_trees);
  }
  if (!linear_weights_.empty()) {
    const size_t features = static_cast<size_t>(num_features_);
    for (size_t i = 0; i < num_docs; ++i) {
      const float* row = rows + i * row_stride;
      double linear = 0.0;
      for (size_t f = 0; f < features; ++f) {
        if (!std::isnan(row[f])) linear += linear_weights_[f] * row[f];
      }
      out[i] += linear;
    }
  }
}

void ForestScorer::Transform(const double* raw, size_t raw_stride,
                             size_t num_docs, double* out) const {
  if (transform_ == ScoreTransform::kIdentity) {
    std::copy_n(raw, num_docs, out);
    return;
  }
  // kExpectedRelevance: sum_k k * softmax(raw)_k, shifted by the max for
  // stability.
  for (size_t i = 0; i < num_docs; ++i) {
    double max_raw = -std::numeric_limits<double>::infinity();
    for (int32_t k = 0; k < num_outputs_; ++k) {
      max_raw = std::max(max_raw, raw[k * raw_stride + i]);
    }
    double normalizer = 0.0;
    double weighted = 0.0;
    for (int32_t k = 0; k < num_outputs_; ++k) {
      const double e = std::exp(raw[k * raw_stride + i] - max_raw);
      normalizer += e;
      weighted += k * e;
    }
    out[i] = weighted / normalizer;
  }
}

void ForestScorer::RawScores(absl::Span<const float> rows, size_t num_docs,
                             absl::Span<double> out, int32_t num_trees) const {
  CheckOrDie(rows.size() >= num_docs * num_features_,
             "RawScores: rows.size() < num_docs * num_features");
  CheckOrDie(out.size() >= num_docs * num_outputs_,
             "RawScores: out.size() < num_docs * num_outputs");
  const int32_t trees = ClampTrees(num_trees);
  uint32_t* scratch = Scratch(block_row_entries(num_docs));
  for (size_t begin = 0; begin < num_docs; begin += kBlockDocs) {
    const size_t count = std::min(kBlockDocs, num_docs - begin);
    RawScoresBlock(rows.data() + begin * num_features_, count, num_features_,
                   out.data() + begin, num_docs, trees, scratch);
  }
}

void ForestScorer::Score(absl::Span<const float> rows, size_t num_docs,
                         absl::Span<double> out, size_t row_stride) const {
  if (row_stride == 0) row_stride = static_cast<size_t>(num_features_);
  CheckOrDie(row_stride >= static_cast<size_t>(row_width_),
             "Score: row_stride < row_width");
  CheckOrDie(rows.size() >= num_docs * row_stride,
             "Score: rows.size() < num_docs * row_stride");
  CheckOrDie(out.size() >= num_docs, "Score: out.size() < num_docs");
  const int32_t trees = ClampTrees(0);
  uint32_t* scratch = Scratch(block_row_entries(num_docs));
  if (num_outputs_ == 1 && transform_ == ScoreTransform::kIdentity) {
    for (size_t begin = 0; begin < num_docs; begin += kBlockDocs) {
      const size_t count = std::min(kBlockDocs, num_docs - begin);
      RawScoresBlock(rows.data() + begin * row_stride, count, row_stride,
                     out.data() + begin, num_docs, trees, scratch);
    }
    return;
  }
  const size_t outputs = static_cast<size_t>(num_outputs_);
  const size_t block =
      std::clamp<size_t>(kStackRawScores / outputs, 1, kBlockDocs);
  double stack_raw[kStackRawScores];
  std::vector<double> heap_raw;  // only for more than kStackRawScores outputs
  double* raw = stack_raw;
  if (outputs > kStackRawScores) {
    heap_raw.resize(outputs);
    raw = heap_raw.data();
  }
  for (size_t begin = 0; begin < num_docs; begin += block) {
    const size_t count = std::min(block, num_docs - begin);
    RawScoresBlock(rows.data() + begin * row_stride, count, row_stride, raw,
                   count, trees, scratch);
    Transform(raw, count, count, out.data() + begin);
  }
}

std::vector<double> ForestScorer::ScoreColumns(const Dataset& data,
                                               int32_t num_trees,
                                               bool transformed) const {
  const size_t num_docs = data.num_documents();
  const size_t outputs = static_cast<size_t>(num_outputs_);
  std::vector<double> result(transformed ? num_docs : num_docs * outputs);
  const int32_t trees = ClampTrees(num_trees);
  // Rows hold only the columns the model reads (row_width_), so a model
  // declaring many features costs no memory for columns it never tests.
  const size_t stride = static_cast<size_t>(row_width_);
  const int32_t shared_columns = std::min(data.num_features, row_width_);
  const int64_t num_blocks =
      static_cast<int64_t>((num_docs + kBlockDocs - 1) / kBlockDocs);
#ifdef _OPENMP
#pragma omp parallel
#endif
  {
    std::vector<float> rows(kBlockDocs * stride, 0.0f);
    std::vector<uint32_t> scratch(block_row_entries());
    std::vector<double> raw(transformed ? kBlockDocs * outputs : 0);
#ifdef _OPENMP
#pragma omp for schedule(static)
#endif
    for (int64_t b = 0; b < num_blocks; ++b) {
      const size_t begin = static_cast<size_t>(b) * kBlockDocs;
      const size_t count = std::min(kBlockDocs, num_docs - begin);
      // Transpose the block; columns beyond the data's stay 0.
      for (int32_t f = 0; f < shared_columns; ++f) {
        const float* column = data.column(f) + begin;
        for (size_t i = 0; i < count; ++i) {
          rows[i * stride + f] = column[i];
        }
      }
      if (transformed) {
        RawScoresBlock(rows.data(), count, stride, raw.data(), count, trees,
                       scratch.data());
        Transform(raw.data(), count, count, result.data() + begin);
      } else {
        RawScoresBlock(rows.data(), count, stride, result.data() + begin,
                       num_docs, trees, scratch.data());
      }
    }
  }
  return result;
}

std::vector<double> ForestScorer::ScoreDataset(const Dataset& data) const {
  return ScoreColumns(data, 0, /*transformed=*/true);
}

std::vector<double> ForestScorer::RawScoresDataset(const Dataset& data,
                                                   int32_t num_trees) const {
  return ScoreColumns(data, num_trees, /*transformed=*/false);
}

}  // namespace plrank
