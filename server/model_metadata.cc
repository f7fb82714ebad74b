#include "server/model_metadata.h"

#include <cstdint>
#include <string>

namespace plrank::server {

v1::GetModelMetadataResponse DescribeModel(const ModelSnapshot& model,
                                           const ServableVersion& version) {
  v1::GetModelMetadataResponse out;
  const ModelMetadata& metadata = version.metadata();
  out.set_model_name(version.model());
  out.set_model_version(version.version());
  out.set_num_features(metadata.num_features);
  for (const std::string& name : metadata.feature_names) {
    out.add_feature_names(name);
  }
  out.set_num_outputs(metadata.num_outputs);
  out.set_score_transform(metadata.score_transform);
  out.set_objective(metadata.objective);
  for (const auto& [number, servable] : model.available) {
    out.add_available_versions(number);
  }
  out.set_default_version(model.default_version());
  for (const auto& [label, number] : model.labels) {
    if (model.available.count(number) > 0) {
      (*out.mutable_labels())[label] = number;
    }
  }
  return out;
}

}  // namespace plrank::server
