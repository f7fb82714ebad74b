#ifndef PLRANK_TESTS_TESTING_TOY_DATA_H_
#define PLRANK_TESTS_TESTING_TOY_DATA_H_

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/data/dataset.h"
#include "core/data/random.h"

namespace plrank::testing {

// A random ranking set: labels in [0, max_label], feature f of a document is
// label * signal[f] + noise[f] * N(0, 1) (+ offset[f] so raw scales differ),
// with NaNs at rate nan_rate.
struct ToySpec {
  int32_t queries = 40;
  int32_t min_docs = 3;
  int32_t max_docs = 25;
  int32_t max_label = 3;
  std::vector<double> signal = {0.0, 1.0, 0.3};
  std::vector<double> noise = {1.0, 0.0, 1.0};
  std::vector<double> offset = {5.0, -100.0, 1000.0};
  std::vector<double> scale = {1.0, 50.0, 0.01};
  double nan_rate = 0.0;
  uint64_t seed = 7;
};

inline Dataset MakeToyDataset(const ToySpec& spec) {
  Xoshiro256 random(spec.seed, 0);
  Dataset data;
  data.num_features = static_cast<int32_t>(spec.signal.size());
  std::vector<std::vector<float>> rows;
  data.query_offsets.push_back(0);
  for (int32_t q = 0; q < spec.queries; ++q) {
    const int32_t docs =
        spec.min_docs +
        static_cast<int32_t>(random.Below(spec.max_docs - spec.min_docs + 1));
    for (int32_t d = 0; d < docs; ++d) {
      const int32_t label =
          static_cast<int32_t>(random.Below(spec.max_label + 1));
      data.labels.push_back(label);
      std::vector<float> row(data.num_features);
      for (int32_t f = 0; f < data.num_features; ++f) {
        const double value =
            spec.offset[f] +
            spec.scale[f] *
                (label * spec.signal[f] + spec.noise[f] * random.Gaussian());
        row[f] = random.Uniform() < spec.nan_rate
                     ? std::numeric_limits<float>::quiet_NaN()
                     : static_cast<float>(value);
      }
      rows.push_back(row);
    }
    data.query_offsets.push_back(static_cast<uint32_t>(data.labels.size()));
    data.query_ids.push_back(std::to_string(q));
  }
  const size_t n = data.labels.size();
  data.features.resize(n * data.num_features);
  for (size_t i = 0; i < n; ++i) {
    for (int32_t f = 0; f < data.num_features; ++f) {
      data.features[f * n + i] = rows[i][f];
    }
  }
  return data;
}

}  // namespace plrank::testing

#endif  // PLRANK_TESTS_TESTING_TOY_DATA_H_
