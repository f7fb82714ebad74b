#ifndef PLRANK_CORE_DATA_RANDOM_H_
#define PLRANK_CORE_DATA_RANDOM_H_

// The project's random generators, all in this one header (two classes of
// one name in two headers were an ODR violation). The std and absl
// distributions are avoided on purpose: their output differs between library
// versions, and a seed must name the same generated file or model everywhere.
// tests/unit/data/random_test.cc pins every stream.

#include <cmath>
#include <cstdint>

namespace plrank {

// The splitmix64 finalizer: a bijective 64-bit mixer.
inline uint64_t Mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// One splitmix64 step as a hash: turns any 64-bit value into a well-mixed
// one. Used to derive independent stream seeds from (seed, stream id).
inline uint64_t SplitMix64Hash(uint64_t x) {
  return Mix64(x + 0x9e3779b97f4a7c15ULL);
}

// splitmix64 (Steele, Lea & Flood) as a generator: tiny and fast. Used by the
// trainer (bagging, feature subsets, PL tie-breaks, XE-NDCG gammas).
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}

  uint64_t Next() {
    state_ += 0x9e3779b97f4a7c15ULL;
    return Mix64(state_);
  }

  // Uniform in [0, range), range > 0, without modulo bias (Lemire 2019).
  uint64_t BelowUnbiased(uint64_t range) {
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

  // Next() % n, n > 0: one draw per call; the bias (< n / 2^64) does not
  // matter for bagging, and the stream names existing models.
  uint64_t BelowModulo(uint64_t n) { return Next() % n; }

 private:
  uint64_t state_;
};

// xoshiro256** (Blackman & Vigna).
class Xoshiro256 {
 public:
  // Stream `stream` of `seed`: streams of one seed are independent, so each
  // query can own one and be generated in any order.
  Xoshiro256(uint64_t seed, uint64_t stream) {
    uint64_t x =
        SplitMix64Hash(seed) ^ SplitMix64Hash(stream + 0x632be59bd9b4e019ULL);
    for (uint64_t& word : state_) {
      x = SplitMix64Hash(x);
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
