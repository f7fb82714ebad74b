#ifndef PLRANK_CORE_SCORING_KERNEL_PLAN_H_
#define PLRANK_CORE_SCORING_KERNEL_PLAN_H_

// Which kernels score a forest, and in what order (internal to
// core/scoring): the chooser's rules in one place. ForestScorer calls
// Accumulate on each kernel of a plan in turn, handing it the documents the
// ones before it left; the last kernel takes every document.

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "core/cpu/cpu_features.h"
#include "core/model/ensemble.h"
#include "core/scoring/flat_forest.h"
#include "core/scoring/forest_kernel.h"
#include "core/scoring/scoring_kernel.h"

namespace plrank::internal {

using KernelPlan = std::vector<std::shared_ptr<const ForestKernel>>;

// What kernels are built from: the validated model, the doubled-row slot of
// every split (split_slots[t][n] for internal node n of tree t), the flat
// forest built from them, the shape kernels' compatibility is decided on,
// and the CPU.
struct KernelInputs {
  const Ensemble& model;
  const std::vector<std::vector<uint32_t>>& split_slots;
  std::shared_ptr<const FlatForest> forest;
  ForestShape shape;
  const CpuFeatures& cpu;
};

// The chooser's plan: the compatible kernels (scoring_kernel.h) by
// decreasing preference, each taking the documents it scores best, except
// where a preferred kernel leaves another nothing worth taking (see
// kernel_plan.cc). `allow_dense` false leaves DenseScorer out.
KernelPlan ChooseKernels(const KernelInputs& inputs, bool allow_dense);

// The plan of `kernel` forced by name: that kernel, then the lockstep walks
// for what it leaves (nothing after DenseScorer or the walks themselves).
// FailedPrecondition with the reason when it cannot score this model on this
// CPU (its incompatibility, or a layout it declines while building).
absl::StatusOr<KernelPlan> ForcedKernelPlan(const KernelInputs& inputs,
                                            const ScoringKernel& kernel);

}  // namespace plrank::internal

#endif  // PLRANK_CORE_SCORING_KERNEL_PLAN_H_
