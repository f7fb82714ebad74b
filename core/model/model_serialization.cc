// SerializeModel / ParseModel: Ensemble <-> plrank.v1.ModelFile bytes.

#include <algorithm>
#include <limits>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/model/checksum.h"
#include "core/model/ensemble.h"
#include "core/model/model_io.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "plrank/v1/model.pb.h"

namespace plrank {
namespace {

// Deterministic so that the same Ensemble always yields the same bytes (maps
// are emitted in key order), which keeps artifacts diffable and reproducible.
template <typename Message>
std::string SerializeDeterministically(const Message& message) {
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream stream(&bytes);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    message.SerializeToCodedStream(&coded);
  }
  return bytes;
}

void TreeToProto(const Tree& tree, v1::Tree* proto) {
  proto->mutable_split_feature()->Assign(tree.split_feature.begin(),
                                         tree.split_feature.end());
  proto->mutable_threshold()->Assign(tree.threshold.begin(),
                                     tree.threshold.end());
  proto->mutable_default_left()->Reserve(tree.default_left.size());
  for (uint8_t left : tree.default_left) proto->add_default_left(left != 0);
  proto->mutable_left_child()->Assign(tree.left_child.begin(),
                                      tree.left_child.end());
  proto->mutable_right_child()->Assign(tree.right_child.begin(),
                                       tree.right_child.end());
  proto->mutable_split_gain()->Assign(tree.split_gain.begin(),
                                      tree.split_gain.end());
  proto->mutable_leaf_value()->Assign(tree.leaf_value.begin(),
                                      tree.leaf_value.end());
  proto->mutable_leaf_count()->Assign(tree.leaf_count.begin(),
                                      tree.leaf_count.end());
  proto->mutable_leaf_cover()->Assign(tree.leaf_cover.begin(),
                                      tree.leaf_cover.end());
  // Written only when some node uses it, so such a tree's bytes are the
  // same as before the field existed.
  if (std::any_of(tree.zero_as_missing.begin(), tree.zero_as_missing.end(),
                  [](uint8_t flag) { return flag != 0; })) {
    proto->mutable_zero_as_missing()->Reserve(tree.zero_as_missing.size());
    for (uint8_t flag : tree.zero_as_missing) {
      proto->add_zero_as_missing(flag != 0);
    }
  }
}

Tree TreeFromProto(const v1::Tree& proto) {
  Tree tree;
  tree.split_feature.assign(proto.split_feature().begin(),
                            proto.split_feature().end());
  tree.threshold.assign(proto.threshold().begin(), proto.threshold().end());
  tree.default_left.assign(proto.default_left().begin(),
                           proto.default_left().end());
  tree.left_child.assign(proto.left_child().begin(), proto.left_child().end());
  tree.right_child.assign(proto.right_child().begin(),
                          proto.right_child().end());
  tree.split_gain.assign(proto.split_gain().begin(), proto.split_gain().end());
  tree.leaf_value.assign(proto.leaf_value().begin(), proto.leaf_value().end());
  tree.leaf_count.assign(proto.leaf_count().begin(), proto.leaf_count().end());
  tree.leaf_cover.assign(proto.leaf_cover().begin(), proto.leaf_cover().end());
  tree.zero_as_missing.assign(proto.zero_as_missing().begin(),
                              proto.zero_as_missing().end());
  return tree;
}

v1::Model EnsembleToProto(const Ensemble& model, int32_t format_version) {
  v1::Model proto;
  proto.set_format_version(format_version);
  proto.set_objective(model.objective);
  for (const auto& [name, value] : model.parameters) {
    (*proto.mutable_parameters())[name] = value;
  }
  proto.set_num_features(model.num_features);
  for (const std::string& name : model.feature_names) {
    proto.add_feature_names(name);
  }
  proto.set_num_outputs(model.num_outputs);
  proto.set_transform(static_cast<v1::ScoreTransform>(model.transform));
  proto.mutable_base_score()->Assign(model.base_score.begin(),
                                     model.base_score.end());
  proto.mutable_trees()->Reserve(static_cast<int>(model.trees.size()));
  for (const Tree& tree : model.trees) TreeToProto(tree, proto.add_trees());
  proto.mutable_linear_weights()->Assign(model.linear_weights.begin(),
                                         model.linear_weights.end());
  v1::TrainingSummary* training = proto.mutable_training();
  for (const IterationMetrics& metrics : model.history) {
    v1::IterationMetrics* out = training->add_iterations();
    out->set_iteration(metrics.iteration);
    out->set_train_loss(metrics.train_loss);
    for (const auto& [name, value] : metrics.train) {
      (*out->mutable_train())[name] = value;
    }
    for (const auto& [name, value] : metrics.valid) {
      (*out->mutable_valid())[name] = value;
    }
  }
  training->set_best_iteration(model.best_iteration);
  training->set_train_data_hash(model.train_data_hash);
  training->set_valid_data_hash(model.valid_data_hash);
  proto.set_created_unix_seconds(model.created_unix_seconds);
  return proto;
}

Ensemble EnsembleFromProto(const v1::Model& proto) {
  Ensemble model;
  model.objective = proto.objective();
  model.parameters.insert(proto.parameters().begin(), proto.parameters().end());
  model.num_features = proto.num_features();
  model.feature_names.assign(proto.feature_names().begin(),
                             proto.feature_names().end());
  model.num_outputs = proto.num_outputs();
  // Unknown enum values survive the cast; ValidateEnsemble rejects them.
  model.transform = static_cast<ScoreTransform>(proto.transform());
  model.base_score.assign(proto.base_score().begin(), proto.base_score().end());
  model.trees.reserve(proto.trees_size());
  for (const v1::Tree& tree : proto.trees()) {
    model.trees.push_back(TreeFromProto(tree));
  }
  model.linear_weights.assign(proto.linear_weights().begin(),
                              proto.linear_weights().end());
  const v1::TrainingSummary& training = proto.training();
  model.history.reserve(training.iterations_size());
  for (const v1::IterationMetrics& in : training.iterations()) {
    IterationMetrics metrics;
    metrics.iteration = in.iteration();
    metrics.train_loss = in.train_loss();
    metrics.train.insert(in.train().begin(), in.train().end());
    metrics.valid.insert(in.valid().begin(), in.valid().end());
    model.history.push_back(std::move(metrics));
  }
  model.best_iteration = training.best_iteration();
  model.train_data_hash = training.train_data_hash();
  model.valid_data_hash = training.valid_data_hash();
  model.created_unix_seconds = proto.created_unix_seconds();
  return model;
}

}  // namespace

int32_t RequiredFormatVersion(const Ensemble& model) {
  for (const Tree& tree : model.trees) {
    for (uint8_t flag : tree.zero_as_missing) {
      if (flag != 0) return 2;
    }
  }
  return 1;
}

absl::StatusOr<std::string> SerializeModel(const Ensemble& model) {
  if (absl::Status status = ValidateEnsemble(model); !status.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "refusing to serialize an invalid model: ", status.message()));
  }
  const int32_t version = RequiredFormatVersion(model);
  v1::ModelFile file;
  file.set_format_version(version);
  file.set_payload(SerializeDeterministically(EnsembleToProto(model, version)));
  file.set_checksum(Fnv1a64(file.payload()));
  file.set_checksum_algorithm(std::string(kChecksumAlgorithm));
  return SerializeDeterministically(file);
}

absl::StatusOr<Ensemble> ParseModel(std::string_view bytes,
                                    const std::string& name_for_errors) {
  absl::StatusOr<ParsedModelFile> parsed =
      ParseModelFile(bytes, name_for_errors);
  if (!parsed.ok()) return parsed.status();
  return std::move(parsed->model);
}

absl::StatusOr<ParsedModelFile> ParseModelFile(
    std::string_view bytes, const std::string& name_for_errors) {
  const std::string& name = name_for_errors;
  if (bytes.empty()) {
    return absl::DataLossError(
        absl::StrCat(name, ": empty file, not a PLRank model"));
  }
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max())) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, ": ", bytes.size(), " bytes is larger than protobuf can parse"));
  }
  v1::ModelFile file;
  if (!file.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return absl::DataLossError(absl::StrCat(
        name, ": not a PLRank model file (truncated or corrupt envelope, ",
        bytes.size(), " bytes)"));
  }
  // The version decides how everything else is read, so it is checked first.
  if (file.format_version() == 0) {
    return absl::DataLossError(absl::StrCat(
        name, ": no format version; not a PLRank model file or corrupt"));
  }
  if (file.format_version() <
          static_cast<uint32_t>(kOldestModelFormatVersion) ||
      file.format_version() > static_cast<uint32_t>(kModelFormatVersion)) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s: unsupported model format version %d; this build reads versions "
        "%d to %d",
        name, file.format_version(), kOldestModelFormatVersion,
        kModelFormatVersion));
  }
  if (file.checksum_algorithm() != kChecksumAlgorithm) {
    return absl::DataLossError(absl::StrFormat(
        "%s: unknown or missing checksum algorithm \"%s\" (expected \"%s\"); "
        "file truncated or corrupt",
        name, file.checksum_algorithm(), kChecksumAlgorithm));
  }
  const uint64_t actual = Fnv1a64(file.payload());
  if (actual != file.checksum()) {
    return absl::DataLossError(absl::StrFormat(
        "%s: checksum mismatch (stored %016x, computed %016x over %d payload "
        "bytes); file truncated or corrupt",
        name, file.checksum(), actual, file.payload().size()));
  }
  v1::Model proto;
  if (!proto.ParseFromString(file.payload())) {
    return absl::DataLossError(
        absl::StrCat(name, ": model payload does not parse"));
  }
  if (proto.format_version() != file.format_version()) {
    return absl::DataLossError(absl::StrFormat(
        "%s: payload format version %d disagrees with file version %d", name,
        proto.format_version(), file.format_version()));
  }
  Ensemble model = EnsembleFromProto(proto);
  if (absl::Status status = ValidateEnsemble(model); !status.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": invalid model: ", status.message()));
  }
  // A writer stamps the version the model needs; an older stamp on a model
  // that needs more means the file was not written by a PLRank writer, and
  // a build that only knows the older version would mis-score it.
  if (file.format_version() <
      static_cast<uint32_t>(RequiredFormatVersion(model))) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: invalid model: it treats zero as missing in some split, which "
        "needs format version %d, but the file says version %d",
        name, RequiredFormatVersion(model), file.format_version()));
  }
  ParsedModelFile parsed;
  parsed.model = std::move(model);
  parsed.checksum = file.checksum();
  parsed.format_version = file.format_version();
  return parsed;
}

}  // namespace plrank
