#ifndef PLRANK_SERVER_WIRE_STATUS_H_
#define PLRANK_SERVER_WIRE_STATUS_H_

#include "absl/status/statusor.h"
#include "plrank/v1/ranker.pb.h"
#include "server/lifecycle/model_status.h"

namespace plrank::server {

// The RPC layer's translation between ranker.proto and the serving
// lifecycle's own types (server/lifecycle/model_status.h).

v1::VersionState ToWire(VersionState state);
v1::ModelMetadata ToWire(const ModelMetadata& metadata);
v1::ModelStatus ToWire(const ModelStatus& status);

// The selector of a request's model_spec. INVALID_ARGUMENT, naming the
// field, for an empty name or a negative version.
absl::StatusOr<VersionSelector> SelectorFromWire(const v1::ModelSpec& spec);

}  // namespace plrank::server

#endif  // PLRANK_SERVER_WIRE_STATUS_H_
