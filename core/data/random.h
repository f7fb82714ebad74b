#ifndef PLRANK_CORE_DATA_RANDOM_H_
#define PLRANK_CORE_DATA_RANDOM_H_

// A small self-contained PRNG for reproducible data generation. The std
// distributions are avoided on purpose: their output differs between
// standard-library versions, and generated files must be identical
// everywhere for a given seed.

#include <cmath>
#include <cstdint>

namespace plrank {

// splitmix64 step: turns any 64-bit value into a well-mixed one. Used to
// derive independent stream seeds from (seed, stream id).
inline uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// xoshiro256** (Blackman & Vigna).
class Xoshiro256 {
 public:
  // Stream `stream` of `seed`: streams of one seed are independent, so each
  // query can own one and be generated in any order.
  Xoshiro256(uint64_t seed, uint64_t stream) {
    uint64_t x = SplitMix64(seed) ^ SplitMix64(stream + 0x632be59bd9b4e019ULL);
    for (uint64_t& word : state_) {
      x = SplitMix64(x);
      word = x;
    }
  }

  uint64_t Next() {
    const uint64_t result = Rotl(state_[1] * 5, 7) * 9;
    const uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = Rotl(state_[3], 45);
    return result;
  }

  // Uniform in [0, 1), 53 bits.
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

  double Uniform(double low, double high) {
    return low + (high - low) * Uniform();
  }

  // Uniform integer in [0, n).
  uint64_t Below(uint64_t n) { return Next() % n; }

  // Standard normal by Box-Muller (one value per call, no hidden cache, so
  // the number of draws per value is fixed).
  double Gaussian() {
    const double u = 1.0 - Uniform();  // (0, 1]
    const double v = Uniform();
    return std::sqrt(-2.0 * std::log(u)) * std::cos(6.283185307179586 * v);
  }

 private:
  static uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t state_[4];
};

// Inverse of the standard normal CDF (Acklam's rational approximation,
// relative error below 1.2e-9), for p in (0, 1).
double InverseNormalCdf(double p);

}  // namespace plrank

#endif  // PLRANK_CORE_DATA_RANDOM_H_
