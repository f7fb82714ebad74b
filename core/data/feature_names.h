#ifndef PLRANK_CORE_DATA_FEATURE_NAMES_H_
#define PLRANK_CORE_DATA_FEATURE_NAMES_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace plrank {

// Reads a feature-names file: line i (1-based) names the LETOR file's
// feature i, i.e. the model's feature i - 1. Surrounding whitespace is
// dropped; an empty line leaves that feature unnamed. The result has
// num_features entries (missing trailing lines are unnamed). More named
// lines than num_features, or a name that is not UTF-8 (model files store
// text as UTF-8), is InvalidArgument naming the file and line; an unreadable
// file is the reader's error.
absl::StatusOr<std::vector<std::string>> ReadFeatureNamesFile(
    const std::string& path, int32_t num_features);

}  // namespace plrank

#endif  // PLRANK_CORE_DATA_FEATURE_NAMES_H_
