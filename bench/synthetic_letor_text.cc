#include "bench/synthetic_letor_text.h"

#include <cstdio>
#include <memory>
#include <random>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace plrank::bench {

absl::StatusOr<int64_t> WriteSyntheticLetorText(const std::string& path,
                                                int64_t target_bytes,
                                                int32_t num_features,
                                                uint64_t seed) {
  std::unique_ptr<FILE, int (*)(FILE*)> file(std::fopen(path.c_str(), "w"),
                                             &std::fclose);
  if (file == nullptr) {
    return absl::InternalError(absl::StrCat("cannot create ", path));
  }
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::string line;
  int64_t written = 0;
  for (int64_t query = 1; written < target_bytes; ++query) {
    const int docs = 60 + static_cast<int>(unit(rng) * 120);
    for (int d = 0; d < docs; ++d) {
      const double u = unit(rng);
      const int label = u < 0.5 ? 0 : u < 0.8 ? 1 : u < 0.93 ? 2 : u < 0.98 ? 3 : 4;
      line.clear();
      absl::StrAppend(&line, label, " qid:", query);
      char value[32];
      for (int32_t f = 1; f <= num_features; ++f) {
        // Feature families as in MSLR: counts, big counts, ratios/scores.
        switch (f % 4) {
          case 0:
            std::snprintf(value, sizeof(value), "%d",
                          static_cast<int>(unit(rng) * 8));
            break;
          case 1:
            std::snprintf(value, sizeof(value), "%d",
                          static_cast<int>(unit(rng) * 60000));
            break;
          case 2:
            std::snprintf(value, sizeof(value), "%.6g", unit(rng));
            break;
          default:
            std::snprintf(value, sizeof(value), "%.6g", unit(rng) * 40 - 5);
        }
        absl::StrAppend(&line, " ", f, ":", value);
      }
      line.push_back('\n');
      if (std::fwrite(line.data(), 1, line.size(), file.get()) != line.size()) {
        return absl::InternalError(absl::StrCat("write failed: ", path));
      }
      written += static_cast<int64_t>(line.size());
    }
  }
  if (std::fflush(file.get()) != 0) {
    return absl::InternalError(absl::StrCat("write failed: ", path));
  }
  return written;
}

}  // namespace plrank::bench
