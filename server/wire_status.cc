#include "server/wire_status.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace plrank::server {

v1::VersionState ToWire(VersionState state) {
  switch (state) {
    case VersionState::kUnknown:
      return v1::VERSION_STATE_UNKNOWN;
    case VersionState::kLoading:
      return v1::VERSION_STATE_LOADING;
    case VersionState::kAvailable:
      return v1::VERSION_STATE_AVAILABLE;
    case VersionState::kFailed:
      return v1::VERSION_STATE_FAILED;
    case VersionState::kUnloading:
      return v1::VERSION_STATE_UNLOADING;
    case VersionState::kEnd:
      return v1::VERSION_STATE_END;
  }
  return v1::VERSION_STATE_UNKNOWN;
}

v1::ModelMetadata ToWire(const ModelMetadata& metadata) {
  v1::ModelMetadata out;
  out.set_objective(metadata.objective);
  out.set_num_trees(metadata.num_trees);
  out.set_num_features(metadata.num_features);
  out.set_num_outputs(metadata.num_outputs);
  out.set_has_linear_weights(metadata.has_linear_weights);
  out.set_created_unix_seconds(metadata.created_unix_seconds);
  out.set_checksum(metadata.checksum);
  out.mutable_training_metrics()->insert(metadata.training_metrics.begin(),
                                         metadata.training_metrics.end());
  out.set_file_bytes(metadata.file_bytes);
  out.set_score_transform(metadata.score_transform);
  out.set_scoring_kernel(metadata.scoring_kernel);
  out.set_scoring_kernels(metadata.scoring_kernel_plan);
  out.set_memory_bytes(metadata.memory_bytes);
  return out;
}

v1::ModelStatus ToWire(const ModelStatus& status) {
  v1::ModelStatus out;
  out.set_name(status.name);
  for (const VersionStatus& version : status.versions) {
    v1::VersionStatus* wire = out.add_versions();
    wire->set_version(version.version);
    wire->set_state(ToWire(version.state));
    wire->set_error(version.error);
    for (const std::string& label : version.labels) wire->add_labels(label);
    if (version.has_metadata) {
      *wire->mutable_metadata() = ToWire(version.metadata);
      wire->set_loaded_unix_seconds(version.loaded_unix_seconds);
    }
    wire->set_promotion_refused(version.promotion_refused);
  }
  out.set_default_version(status.default_version);
  return out;
}

absl::StatusOr<VersionSelector> SelectorFromWire(const v1::ModelSpec& spec) {
  if (spec.name().empty()) {
    return absl::InvalidArgumentError("model_spec.name is empty");
  }
  if (spec.version() < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("model_spec.version ", spec.version(), " is negative"));
  }
  return VersionSelector{.name = spec.name(),
                         .version = spec.version(),
                         .label = spec.version_label()};
}

}  // namespace plrank::server
