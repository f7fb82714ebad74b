#ifndef PLRANK_CORE_SCORING_SCORING_KERNEL_H_
#define PLRANK_CORE_SCORING_SCORING_KERNEL_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "core/cpu/cpu_features.h"

namespace plrank {

// The ways ForestScorer can add trees to documents' scores. Every kernel
// adds leaf values in tree order, so all give the same scores bit for bit;
// they differ in speed, in the models they take and in the CPU they need.
enum class ScoringKernelId {
  kRapidAvx512,      // RapidScorer: 64 documents per AVX-512 scan, <= 64 leaves
  kDenseAvx512Vbmi,  // DenseScorer: 1-2 documents, AVX-512 VBMI, <= 32 leaves
  kQuickAvx512,      // QuickScorer: 16 documents per AVX-512 scan, <= 32 leaves
  kQuickAvx2,        // QuickScorer: 8 documents per AVX2 scan, <= 32 leaves
  kChainedWalks,     // 8 documents walking a block's trees as one chain
  kLaneChains,       // one document's walks in 8 lanes of trees
  kLockstepWalks,    // 8 independent walks in lockstep; takes every model
};

// What decides whether a kernel can score a forest (ForestScorer fills it
// in while flattening the model).
struct ForestShape {
  int32_t num_outputs = 1;
  int32_t num_trees = 0;
  int32_t max_leaves = 0;  // leaves of the forest's largest tree
  size_t num_slots = 0;    // doubled-row slots (see ForestScorer::PrepareRows)
};

// A kernel as the chooser sees it (the engine factories of Yggdrasil
// Decision Forests: a name, a compatibility test, a preference).
struct ScoringKernel {
  ScoringKernelId id;
  // Stable name: the scorer option, plrank-server --scoring_kernel,
  // plrank-bench-scorer --kernel, logs and model status.
  absl::string_view name;
  // One line for --help and logs: which documents it takes, with what.
  absl::string_view summary;
  // Higher is preferred: the chooser's plan lists the compatible kernels by
  // decreasing preference, each taking the documents it scores best.
  int preference;
  // Empty when the kernel can score a forest of `shape` on `cpu`; else the
  // reason it cannot ("needs AVX-512 BITALG", "trees have 255 leaves, ...").
  // A kernel may still decline while it builds its tables (DenseScorer's
  // 256 slots of 255 thresholds); ForestScorer reports that too.
  std::string (*incompatibility)(const ForestShape& shape,
                                 const CpuFeatures& cpu);
};

// Every kernel, by decreasing preference.
absl::Span<const ScoringKernel> ScoringKernels();
// The kernel named `name`, or nullptr.
const ScoringKernel* FindScoringKernel(absl::string_view name);
const ScoringKernel& GetScoringKernel(ScoringKernelId id);
// "rapid_avx512, dense_avx512_vbmi, ..." (for flag help and errors).
std::string ScoringKernelNames();

// The reserved kernel name that lets the chooser decide (the default).
inline constexpr absl::string_view kAutoScoringKernel = "auto";

}  // namespace plrank

#endif  // PLRANK_CORE_SCORING_SCORING_KERNEL_H_
