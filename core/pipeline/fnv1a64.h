#ifndef PLRANK_CORE_PIPELINE_FNV1A64_H_
#define PLRANK_CORE_PIPELINE_FNV1A64_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace plrank {

// 64-bit FNV-1a over bytes fed in order: the digests of data and jobs that
// the artifact records and the ranks of a distributed run compare. Not for
// security, only to tell different inputs apart.
class Fnv1a64 {
 public:
  void Add(const void* data, size_t size) {
    const auto* bytes = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < size; ++i) {
      hash_ = (hash_ ^ bytes[i]) * 1099511628211ull;
    }
  }
  // `text` and a newline, so that consecutive texts cannot run together.
  void AddLine(std::string_view text) {
    Add(text.data(), text.size());
    Add("\n", 1);
  }
  uint64_t value() const { return hash_; }

 private:
  uint64_t hash_ = 14695981039346656037ull;
};

}  // namespace plrank

#endif  // PLRANK_CORE_PIPELINE_FNV1A64_H_
