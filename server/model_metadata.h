#ifndef PLRANK_SERVER_MODEL_METADATA_H_
#define PLRANK_SERVER_MODEL_METADATA_H_

#include "plrank/v1/ranker.pb.h"
#include "server/lifecycle/servable_version.h"
#include "server/lifecycle/serving_snapshot.h"

namespace plrank::server {

// The public description of a model (GetModelMetadata, and the KServe and
// HTTP forms built on it): `version` (resolved from `model` in the same
// snapshot) gives the feature count and names, outputs, score transform and
// objective; `model` gives the versions that can serve now, the default and
// the labels whose version can serve. Nothing about files, load errors or
// training metrics: those stay with the admin RPC GetModelStatus.
v1::GetModelMetadataResponse DescribeModel(const ModelSnapshot& model,
                                           const ServableVersion& version);

}  // namespace plrank::server

#endif  // PLRANK_SERVER_MODEL_METADATA_H_
