#ifndef PLRANK_CORE_SCORING_CACHE_ALIGNED_H_
#define PLRANK_CORE_SCORING_CACHE_ALIGNED_H_

// std::vector whose storage starts at a cache-line boundary (internal to
// core/scoring): the flat forest lays a tree's nodes out by cache line,
// which only holds if the array's first node starts a line.

#include <cstddef>
#include <new>
#include <vector>

namespace plrank::internal {

inline constexpr size_t kCacheLineBytes = 64;

template <typename T>
struct CacheAlignedAllocator {
  using value_type = T;
  CacheAlignedAllocator() = default;
  template <typename U>
  explicit CacheAlignedAllocator(const CacheAlignedAllocator<U>&) {}
  T* allocate(size_t n) {
    return static_cast<T*>(
        ::operator new (n * sizeof(T), std::align_val_t{kCacheLineBytes}));
  }
  void deallocate(T* p, size_t) {
    ::operator delete (p, std::align_val_t{kCacheLineBytes});
  }
  friend bool operator==(const CacheAlignedAllocator&,
                         const CacheAlignedAllocator&) {
    return true;
  }
};

template <typename T>
using CacheAlignedVector = std::vector<T, CacheAlignedAllocator<T>>;

}  // namespace plrank::internal

#endif  // PLRANK_CORE_SCORING_CACHE_ALIGNED_H_
