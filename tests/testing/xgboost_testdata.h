#ifndef PLRANK_TESTS_TESTING_XGBOOST_TESTDATA_H_
#define PLRANK_TESTS_TESTING_XGBOOST_TESTDATA_H_

// The XGBoost fixtures of tests/unit/import/testdata (models saved by
// XGBoost 1.7.4 and what its predictor gave for them), for the import,
// Explain and serving tests.

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace plrank::testing {

inline std::string XgboostTestdataPath(const std::string& name) {
  const std::string here = __FILE__;
  return here.substr(0, here.find_last_of('/')) + "/../unit/import/testdata/" +
         name;
}

// Rows of a file of whitespace-separated floats, one row per line ("nan" =
// missing).
inline std::vector<std::vector<float>> ReadFloatRows(const std::string& path) {
  std::vector<std::vector<float>> rows;
  std::ifstream file(path);
  std::string line;
  while (std::getline(file, line)) {
    std::istringstream fields(line);
    std::string token;
    std::vector<float> row;
    while (fields >> token) row.push_back(std::strtof(token.c_str(), nullptr));
    rows.push_back(std::move(row));
  }
  return rows;
}

// A one-split model: feature 0 < 1.0 goes left (leaf 0.25), else right
// (leaf -0.5); node 3 and 4 are deleted (unreachable) nodes.
inline nlohmann::json OneSplitXgboostModel() {
  return nlohmann::json::parse(R"({
    "learner": {
      "feature_names": [],
      "gradient_booster": {"name": "gbtree", "model": {"trees": [{
        "tree_param": {"num_nodes": "5", "num_deleted": "2"},
        "left_children": [1, -1, -1, -1, -1],
        "right_children": [2, -1, -1, -1, -1],
        "split_indices": [0, 0, 0, 0, 0],
        "split_conditions": [1.0, 0.25, -0.5, 9.0, 9.0],
        "default_left": [1, 0, 0, 0, 0],
        "loss_changes": [3.0, 0, 0, 0, 0],
        "split_type": [0, 0, 0, 0, 0]}]}},
      "learner_model_param": {"base_score": "1E0", "num_class": "0",
                              "num_feature": "2", "num_target": "1"},
      "objective": {"name": "reg:squarederror"}},
    "version": [1, 7, 4]})");
}

}  // namespace plrank::testing

#endif  // PLRANK_TESTS_TESTING_XGBOOST_TESTDATA_H_
