#include "core/scoring/scoring_kernel.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "core/scoring/dense_scorer.h"
#include "core/scoring/quick_scorer.h"
#include "core/scoring/rapid_scorer.h"

namespace plrank {
namespace {

// "needs AVX-512 F, BW, BITALG; this CPU lacks avx512bitalg" style reasons.
std::string MissingCpu(absl::string_view needs,
                       std::initializer_list<std::pair<bool, const char*>> have) {
  std::string lacks;
  for (const auto& [present, name] : have) {
    if (present) continue;
    if (!lacks.empty()) lacks += ", ";
    lacks += name;
  }
  if (lacks.empty()) return "";
  return absl::StrCat("needs ", needs, "; this CPU lacks ", lacks);
}

std::string TooManyLeaves(const ForestShape& shape, int32_t max_leaves) {
  if (shape.max_leaves <= max_leaves) return "";
  return absl::StrCat("takes trees of at most ", max_leaves,
                      " leaves; this model's largest has ", shape.max_leaves);
}

std::string NeedsOneOutput(const ForestShape& shape) {
  if (shape.num_outputs == 1) return "";
  return absl::StrCat("takes single-output models; this one has ",
                      shape.num_outputs, " outputs");
}

std::string NeedsTrees(const ForestShape& shape) {
  return shape.num_trees > 0 ? "" : "has no trees to score";
}

// The first non-empty reason.
std::string FirstReason(std::initializer_list<std::string> reasons) {
  for (const std::string& reason : reasons) {
    if (!reason.empty()) return reason;
  }
  return "";
}

std::string RapidIncompatibility(const ForestShape& shape,
                                 const CpuFeatures& cpu) {
  return FirstReason(
      {MissingCpu("AVX-512 F, BW and BITALG", {{cpu.avx512f, "avx512f"},
                                                {cpu.avx512bw, "avx512bw"},
                                                {cpu.avx512bitalg, "avx512bitalg"}}),
       NeedsOneOutput(shape), NeedsTrees(shape),
       TooManyLeaves(shape, RapidScorerForest::kMaxLeaves)});
}

std::string DenseIncompatibility(const ForestShape& shape,
                                 const CpuFeatures& cpu) {
  return FirstReason(
      {MissingCpu("AVX-512 F, BW and VBMI", {{cpu.avx512f, "avx512f"},
                                              {cpu.avx512bw, "avx512bw"},
                                              {cpu.avx512vbmi, "avx512vbmi"}}),
       NeedsOneOutput(shape), NeedsTrees(shape),
       TooManyLeaves(shape, DenseScorerForest::kMaxLeaves)});
}

std::string QuickOutputs(const ForestShape& shape) {
  if (shape.num_outputs <= QuickScorerForest::kMaxOutputs) return "";
  return absl::StrCat("takes at most ", QuickScorerForest::kMaxOutputs,
                      " outputs; this model has ", shape.num_outputs);
}

std::string QuickAvx512Incompatibility(const ForestShape& shape,
                                       const CpuFeatures& cpu) {
  return FirstReason(
      {MissingCpu("AVX2 and AVX-512 F and CD", {{cpu.avx2, "avx2"},
                                                 {cpu.avx512f, "avx512f"},
                                                 {cpu.avx512cd, "avx512cd"}}),
       QuickOutputs(shape),
       TooManyLeaves(shape, QuickScorerForest::kMaxLeaves)});
}

std::string QuickAvx2Incompatibility(const ForestShape& shape,
                                     const CpuFeatures& cpu) {
  return FirstReason({MissingCpu("AVX2", {{cpu.avx2, "avx2"}}),
                      QuickOutputs(shape),
                      TooManyLeaves(shape, QuickScorerForest::kMaxLeaves)});
}

std::string ChainedIncompatibility(const ForestShape& shape,
                                   const CpuFeatures&) {
  return NeedsOneOutput(shape);
}

std::string LaneIncompatibility(const ForestShape& shape, const CpuFeatures&) {
  return FirstReason({NeedsOneOutput(shape),
                      shape.num_slots == 0
                          ? std::string("has no split to walk (every tree is "
                                        "a single leaf)")
                          : std::string()});
}

std::string LockstepIncompatibility(const ForestShape&, const CpuFeatures&) {
  return "";
}

constexpr ScoringKernel kKernels[] = {
    {ScoringKernelId::kRapidAvx512, "rapid_avx512",
     "RapidScorer: groups of 64 documents per AVX-512 scan, trees of <= 64 "
     "leaves, one output",
     100, RapidIncompatibility},
    {ScoringKernelId::kDenseAvx512Vbmi, "dense_avx512_vbmi",
     "DenseScorer: one or two documents at a time with AVX-512 VBMI, trees "
     "of <= 32 leaves, one output",
     90, DenseIncompatibility},
    {ScoringKernelId::kQuickAvx512, "quick_avx512",
     "QuickScorer: groups of 16 documents per AVX-512 scan (8 with AVX2), "
     "trees of <= 32 leaves",
     80, QuickAvx512Incompatibility},
    {ScoringKernelId::kQuickAvx2, "quick_avx2",
     "QuickScorer: groups of 8 documents per AVX2 scan, trees of <= 32 "
     "leaves",
     70, QuickAvx2Incompatibility},
    {ScoringKernelId::kChainedWalks, "chained_walks",
     "8 documents walk a block's trees as one chain, one output", 60,
     ChainedIncompatibility},
    {ScoringKernelId::kLaneChains, "lane_chains",
     "a single document walks every 8th tree in each of 8 lanes, one output",
     50, LaneIncompatibility},
    {ScoringKernelId::kLockstepWalks, "lockstep_walks",
     "8 walks in lockstep (1, 2 or 4 documents each); every model", 0,
     LockstepIncompatibility},
};

}  // namespace

absl::Span<const ScoringKernel> ScoringKernels() { return kKernels; }

const ScoringKernel* FindScoringKernel(absl::string_view name) {
  for (const ScoringKernel& kernel : kKernels) {
    if (kernel.name == name) return &kernel;
  }
  return nullptr;
}

const ScoringKernel& GetScoringKernel(ScoringKernelId id) {
  for (const ScoringKernel& kernel : kKernels) {
    if (kernel.id == id) return kernel;
  }
  return kKernels[std::size(kKernels) - 1];
}

std::string ScoringKernelNames() {
  std::string names;
  for (const ScoringKernel& kernel : kKernels) {
    if (!names.empty()) names += ", ";
    absl::StrAppend(&names, kernel.name);
  }
  return names;
}

}  // namespace plrank
