#ifndef PLRANK_TESTS_TESTING_TEST_MODELS_H_
#define PLRANK_TESTS_TESTING_TEST_MODELS_H_

// Small real models for server tests (unit and integration).

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/model/checksum.h"
#include "core/model/ensemble.h"
#include "core/model/model_io.h"
#include "plrank/v1/model.pb.h"

namespace plrank::testing {

inline constexpr int32_t kTestModelFeatures = 4;

// score(x) = 100 * tag + (x0 > 0.5 ? 1 : -1) + x1 (NaN x0 goes left, NaN x1
// counts 0). The tag (usually the version) shows which version scored.
inline Ensemble TestEnsemble(int64_t tag) {
  Ensemble model;
  model.num_features = kTestModelFeatures;
  model.objective = "plrank";
  model.num_outputs = 1;
  model.base_score = {100.0 * static_cast<double>(tag)};
  Tree tree;
  tree.split_feature = {0};
  tree.threshold = {0.5f};
  tree.default_left = {1};
  tree.left_child = {-1};   // leaf 0
  tree.right_child = {-2};  // leaf 1
  tree.split_gain = {1.0};
  tree.leaf_value = {-1.0, 1.0};
  tree.leaf_count = {10, 10};
  model.trees.push_back(tree);
  model.linear_weights = {0.0, 1.0, 0.0, 0.0};
  model.created_unix_seconds = 1700000000;
  IterationMetrics metrics;
  metrics.iteration = 1;
  metrics.train_loss = 0.5;
  metrics.valid["ndcg@10"] = 0.75;
  model.history.push_back(metrics);
  return model;
}

// TestEnsemble(tag) taking `num_features` features (>= 2; the extra ones
// are not used): what a model retrained on other data looks like to
// clients.
inline Ensemble TestEnsembleWithFeatures(int64_t tag, int32_t num_features) {
  Ensemble model = TestEnsemble(tag);
  model.num_features = num_features;
  model.linear_weights.assign(num_features, 0.0);
  model.linear_weights[1] = 1.0;
  return model;
}

inline double TestModelScore(int64_t tag, float x0, float x1) {
  return 100.0 * static_cast<double>(tag) + (x0 > 0.5f ? 1.0 : -1.0) + x1;
}

// Writes <base>/<model>/<version>/model.pb (atomically, as plrank-train
// does) and returns its path.
inline std::string WriteTestModel(const std::string& base,
                                  const std::string& model, int64_t version,
                                  int64_t tag) {
  const std::filesystem::path dir = std::filesystem::path(base) / model /
                                    std::to_string(version);
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "model.pb").string();
  absl::Status status = WriteModelFile(TestEnsemble(tag), path);
  if (!status.ok()) return "";
  return path;
}

inline std::string WriteTestModel(const std::string& base,
                                  const std::string& model, int64_t version) {
  return WriteTestModel(base, model, version, version);
}

// A version directory holding `bytes` as model.pb (corrupt models).
inline std::string WriteRawModelFile(const std::string& base,
                                     const std::string& model, int64_t version,
                                     const std::string& bytes) {
  const std::filesystem::path dir = std::filesystem::path(base) / model /
                                    std::to_string(version);
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "model.pb").string();
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

// A model file whose checksum is valid but whose payload declares
// `declared_features` features, whatever validation allows: what a hostile
// or buggy producer can drop into a repository. The trees are `model`'s.
inline std::string ModelBytesDeclaringFeatures(const Ensemble& model,
                                               uint32_t declared_features) {
  absl::StatusOr<std::string> bytes = SerializeModel(model);
  if (!bytes.ok()) return "";
  v1::ModelFile file;
  v1::Model payload;
  if (!file.ParseFromString(*bytes) ||
      !payload.ParseFromString(file.payload())) {
    return "";
  }
  payload.set_num_features(declared_features);
  payload.clear_linear_weights();
  payload.clear_feature_names();
  file.set_payload(payload.SerializeAsString());
  file.set_checksum(Fnv1a64(file.payload()));
  return file.SerializeAsString();
}

}  // namespace plrank::testing

#endif  // PLRANK_TESTS_TESTING_TEST_MODELS_H_
