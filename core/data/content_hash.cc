#include "core/data/content_hash.h"

#include <algorithm>
#include <cstring>

namespace plrank {
namespace {

constexpr uint64_t kPrime = 0x9fb21c651e98df25ULL;

uint64_t Rotate(uint64_t x, int bits) { return (x << bits) | (x >> (64 - bits)); }

// SplitMix64's finaliser: every input bit affects every output bit.
uint64_t Avalanche(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

uint64_t LoadWord(const unsigned char* bytes) {
  uint64_t word;
  std::memcpy(&word, bytes, sizeof(word));
  return word;
}

}  // namespace

void ContentHasher::Block(const unsigned char* block) {
  for (int lane = 0; lane < 4; ++lane) {
    lanes_[lane] = Rotate((lanes_[lane] ^ LoadWord(block + 8 * lane)) * kPrime,
                          29 + lane);
  }
}

void ContentHasher::Update(std::string_view bytes) {
  // An empty view may hold a null pointer, which memcpy must not get.
  if (bytes.empty()) return;
  const auto* data = reinterpret_cast<const unsigned char*>(bytes.data());
  size_t size = bytes.size();
  total_bytes_ += size;
  if (pending_bytes_ > 0) {
    const size_t take = std::min(size, sizeof(pending_) - pending_bytes_);
    std::memcpy(pending_ + pending_bytes_, data, take);
    pending_bytes_ += take;
    data += take;
    size -= take;
    if (pending_bytes_ < sizeof(pending_)) return;
    Block(pending_);
    pending_bytes_ = 0;
  }
  for (; size >= sizeof(pending_); data += sizeof(pending_), size -= sizeof(pending_)) {
    Block(data);
  }
  std::memcpy(pending_, data, size);
  pending_bytes_ = size;
}

uint64_t ContentHasher::Finish() {
  // The tail, zero-padded; the length below tells a short tail from zeros.
  if (pending_bytes_ > 0) {
    std::memset(pending_ + pending_bytes_, 0, sizeof(pending_) - pending_bytes_);
    Block(pending_);
    pending_bytes_ = 0;
  }
  uint64_t hash = total_bytes_ * kPrime;
  for (uint64_t lane : lanes_) hash = Avalanche(hash ^ lane) + kPrime;
  return Avalanche(hash);
}

uint64_t HashContent(std::string_view bytes) {
  ContentHasher hasher;
  hasher.Update(bytes);
  return hasher.Finish();
}

}  // namespace plrank
