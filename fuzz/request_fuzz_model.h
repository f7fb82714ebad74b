#ifndef PLRANK_FUZZ_REQUEST_FUZZ_MODEL_H_
#define PLRANK_FUZZ_REQUEST_FUZZ_MODEL_H_

// The served model of the request fuzzers: written to a temporary file and
// loaded through the server's own loader (LoadServableVersion: parse,
// validate, flatten, warm up), as a repository version would be.

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "core/model/ensemble.h"
#include "core/model/model_io.h"
#include "server/lifecycle/servable_version.h"

namespace plrank::fuzz {

inline constexpr int32_t kFuzzModelFeatures = 6;

// Two trees over features 0..5 with both default directions, plus a linear
// part: scores depend on every feature, NaN and the sparse zeros.
inline Ensemble FuzzEnsemble() {
  Ensemble model;
  model.num_features = kFuzzModelFeatures;
  model.objective = "plrank";
  model.base_score = {0.25};
  Tree a;
  a.split_feature = {0, 1, 2};
  a.threshold = {0.5f, -1.0f, 3.0f};
  a.default_left = {1, 0, 1};
  a.left_child = {1, ~0, ~2};
  a.right_child = {2, ~1, ~3};
  a.leaf_value = {-1.0, 0.5, 2.0, -0.25};
  Tree b;
  b.split_feature = {5};
  b.threshold = {0.0f};
  b.default_left = {0};
  b.left_child = {~0};
  b.right_child = {~1};
  b.leaf_value = {0.125, -0.125};
  model.trees = {a, b};
  model.linear_weights = {0.0, 0.0, 0.0, 1e-3, -2.0, 0.0};
  return model;
}

inline std::shared_ptr<const server::ServableVersion> LoadFuzzVersion() {
  std::string dir =
      (std::filesystem::temp_directory_path() / "plrank-fuzz-XXXXXX").string();
  if (mkdtemp(dir.data()) == nullptr) std::abort();
  const std::string path = dir + "/model.pb";
  if (!WriteModelFile(FuzzEnsemble(), path).ok()) std::abort();
  auto version = server::LoadServableVersion("fuzz", 1, path);
  std::filesystem::remove_all(dir);
  if (!version.ok()) std::abort();
  return *version;
}

}  // namespace plrank::fuzz

#endif  // PLRANK_FUZZ_REQUEST_FUZZ_MODEL_H_
