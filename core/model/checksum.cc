#include "core/model/checksum.h"

namespace plrank {

uint64_t Fnv1a64(std::string_view bytes) {
  return Fnv1a64(bytes, kFnv1a64Basis);
}

uint64_t Fnv1a64(std::string_view bytes, uint64_t hash) {
  for (unsigned char byte : bytes) {
    hash ^= byte;
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

}  // namespace plrank
