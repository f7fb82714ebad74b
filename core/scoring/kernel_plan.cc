#include "core/scoring/kernel_plan.h"

#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/scoring/chained_walks.h"
#include "core/scoring/dense_scorer.h"
#include "core/scoring/lane_chains.h"
#include "core/scoring/lockstep_walks.h"
#include "core/scoring/quick_scorer.h"
#include "core/scoring/rapid_scorer.h"

namespace plrank::internal {
namespace {

template <typename Kernel>
std::shared_ptr<const ForestKernel> Shared(std::optional<Kernel> built) {
  if (!built.has_value()) return nullptr;
  return std::make_shared<const Kernel>(*std::move(built));
}

}  // namespace

KernelPlan ChooseKernels(const KernelInputs& inputs, bool allow_dense) {
  const auto compatible = [&](ScoringKernelId id) {
    return GetScoringKernel(id)
        .incompatibility(inputs.shape, inputs.cpu)
        .empty();
  };
  KernelPlan plan;
  // DenseScorer, when it builds, takes every document RapidScorer leaves,
  // and RapidScorer pads a remainder to a group later for it: decided first.
  std::shared_ptr<const ForestKernel> dense;
  if (allow_dense && compatible(ScoringKernelId::kDenseAvx512Vbmi)) {
    dense = Shared(DenseScorerForest::Build(inputs.model, inputs.split_slots));
  }
  if (compatible(ScoringKernelId::kRapidAvx512)) {
    std::shared_ptr<const ForestKernel> rapid = Shared(RapidScorerForest::Build(
        inputs.model, inputs.split_slots,
        dense != nullptr ? RapidScorerForest::kPadDocsBeforeDense
                         : RapidScorerForest::kPadDocs));
    if (rapid != nullptr) plan.push_back(std::move(rapid));
  }
  if (dense != nullptr) {
    plan.push_back(std::move(dense));
    return plan;
  }
  // One QuickScorer, AVX-512 preferred. The chained walks only without it:
  // after its groups fewer than 8 documents are left, which walk in lane
  // chains or in lockstep (the plan's rule since QuickScorer came; chaining
  // a padded remainder after it was not measured).
  std::shared_ptr<const ForestKernel> quick;
  if (compatible(ScoringKernelId::kQuickAvx512)) {
    quick = Shared(QuickScorerForest::Build(inputs.model, inputs.split_slots,
                                            /*avx512=*/true));
  } else if (compatible(ScoringKernelId::kQuickAvx2)) {
    quick = Shared(QuickScorerForest::Build(inputs.model, inputs.split_slots,
                                            /*avx512=*/false));
  }
  if (quick != nullptr) {
    plan.push_back(std::move(quick));
  } else if (compatible(ScoringKernelId::kChainedWalks)) {
    plan.push_back(std::make_shared<const ChainedWalksKernel>(inputs.forest));
  }
  if (compatible(ScoringKernelId::kLaneChains)) {
    std::shared_ptr<const ForestKernel> lanes = LaneChainsKernel::Build(
        *inputs.forest, LaneChainsKernel::Takes::kSingleRemainder);
    if (lanes != nullptr) plan.push_back(std::move(lanes));
  }
  plan.push_back(std::make_shared<const LockstepWalksKernel>(inputs.forest));
  return plan;
}

absl::StatusOr<KernelPlan> ForcedKernelPlan(const KernelInputs& inputs,
                                            const ScoringKernel& kernel) {
  if (std::string why = kernel.incompatibility(inputs.shape, inputs.cpu);
      !why.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("scoring kernel ", kernel.name, " ", why));
  }
  std::shared_ptr<const ForestKernel> built;
  switch (kernel.id) {
    case ScoringKernelId::kRapidAvx512:
      built =
          Shared(RapidScorerForest::Build(inputs.model, inputs.split_slots));
      break;
    case ScoringKernelId::kDenseAvx512Vbmi:
      built =
          Shared(DenseScorerForest::Build(inputs.model, inputs.split_slots));
      break;
    case ScoringKernelId::kQuickAvx512:
    case ScoringKernelId::kQuickAvx2:
      built = Shared(
          QuickScorerForest::Build(inputs.model, inputs.split_slots,
                                   kernel.id == ScoringKernelId::kQuickAvx512));
      break;
    case ScoringKernelId::kChainedWalks:
      built = std::make_shared<const ChainedWalksKernel>(inputs.forest);
      break;
    case ScoringKernelId::kLaneChains:
      built = LaneChainsKernel::Build(*inputs.forest,
                                      LaneChainsKernel::Takes::kEveryDocument);
      break;
    case ScoringKernelId::kLockstepWalks:
      built = std::make_shared<const LockstepWalksKernel>(inputs.forest);
      break;
  }
  if (built == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(
        "scoring kernel ", kernel.name,
        " cannot lay out this model (DenseScorer: at most ",
        DenseScorerForest::kMaxSlots,
        " tested slots of at most 255 thresholds each; lane chains: at most "
        "2^31 nodes)"));
  }
  KernelPlan plan = {std::move(built)};
  // Documents a kernel leaves (remainders of its groups, tree prefixes for
  // the lane chains) walk in lockstep; DenseScorer takes every document.
  if (kernel.id != ScoringKernelId::kDenseAvx512Vbmi &&
      kernel.id != ScoringKernelId::kLockstepWalks) {
    plan.push_back(std::make_shared<const LockstepWalksKernel>(inputs.forest));
  }
  return plan;
}

}  // namespace plrank::internal
