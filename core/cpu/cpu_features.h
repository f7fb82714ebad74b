#ifndef PLRANK_CORE_CPU_CPU_FEATURES_H_
#define PLRANK_CORE_CPU_CPU_FEATURES_H_

#include <string>

namespace plrank {

// The instruction-set extensions PLRank's kernels use, as the CPU reports
// them. Detected once per process (CpuFeatures::Detected); the scoring
// kernels (core/scoring), the histogram kernels (core/boosting) and the
// tests ask this instead of __builtin_cpu_supports, so what a kernel needs
// is stated in one place (scoring_kernel.cc for the scorers). Its own
// library below every layer that picks kernels (docs/ARCHITECTURE.md).
struct CpuFeatures {
  bool avx2 = false;
  bool bmi = false;
  bool bmi2 = false;
  bool avx512f = false;
  bool avx512bw = false;
  bool avx512cd = false;
  bool avx512bitalg = false;
  bool avx512vbmi = false;

  // The running CPU's features (false everywhere off x86-64 GCC/Clang).
  static const CpuFeatures& Detected();

  // "avx2 bmi bmi2 ..." for logs, the features present, in this order.
  std::string ToString() const;
};

}  // namespace plrank

#endif  // PLRANK_CORE_CPU_CPU_FEATURES_H_
