#ifndef PLRANK_CORE_OBJECTIVES_SPLITMIX64_H_
#define PLRANK_CORE_OBJECTIVES_SPLITMIX64_H_

#include <cstdint>

namespace plrank {

// The splitmix64 finalizer: a bijective 64-bit mixer.
inline uint64_t Mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// A tiny self-contained PRNG (Steele, Lea & Flood's splitmix64). Used instead
// of <random> distributions, whose outputs differ between standard libraries,
// so that permutations are reproducible everywhere.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}

  uint64_t Next() {
    state_ += 0x9E3779B97F4A7C15ULL;
    return Mix64(state_);
  }

  // Uniform in [0, range), range > 0, without modulo bias (Lemire 2019).
  uint64_t Below(uint64_t range) {
    __uint128_t product = static_cast<__uint128_t>(Next()) * range;
    uint64_t low = static_cast<uint64_t>(product);
    if (low < range) {
      const uint64_t threshold = (0 - range) % range;
      while (low < threshold) {
        product = static_cast<__uint128_t>(Next()) * range;
        low = static_cast<uint64_t>(product);
      }
    }
    return static_cast<uint64_t>(product >> 64);
  }

 private:
  uint64_t state_;
};

}  // namespace plrank

#endif  // PLRANK_CORE_OBJECTIVES_SPLITMIX64_H_
