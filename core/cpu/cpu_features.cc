#include "core/cpu/cpu_features.h"

#include <string>
#include <utility>

namespace plrank {
namespace {

CpuFeatures Detect() {
  CpuFeatures cpu;
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  cpu.avx2 = __builtin_cpu_supports("avx2");
  cpu.bmi = __builtin_cpu_supports("bmi");
  cpu.bmi2 = __builtin_cpu_supports("bmi2");
  cpu.avx512f = __builtin_cpu_supports("avx512f");
  cpu.avx512bw = __builtin_cpu_supports("avx512bw");
  cpu.avx512cd = __builtin_cpu_supports("avx512cd");
  cpu.avx512bitalg = __builtin_cpu_supports("avx512bitalg");
  cpu.avx512vbmi = __builtin_cpu_supports("avx512vbmi");
#endif
  return cpu;
}

}  // namespace

const CpuFeatures& CpuFeatures::Detected() {
  static const CpuFeatures detected = Detect();
  return detected;
}

std::string CpuFeatures::ToString() const {
  const std::pair<bool, const char*> features[] = {
      {avx2, "avx2"},         {bmi, "bmi"},
      {bmi2, "bmi2"},         {avx512f, "avx512f"},
      {avx512bw, "avx512bw"}, {avx512cd, "avx512cd"},
      {avx512bitalg, "avx512bitalg"}, {avx512vbmi, "avx512vbmi"}};
  std::string out;
  for (const auto& [present, name] : features) {
    if (!present) continue;
    if (!out.empty()) out += ' ';
    out += name;
  }
  return out.empty() ? "none of avx2, bmi, avx512" : out;
}

}  // namespace plrank
