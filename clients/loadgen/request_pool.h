#ifndef PLRANK_CLIENTS_LOADGEN_REQUEST_POOL_H_
#define PLRANK_CLIENTS_LOADGEN_REQUEST_POOL_H_

#include <cstdint>
#include <vector>

#include "clients/cpp/ranker_client.h"
#include "core/data/dataset.h"
#include "grpcpp/support/byte_buffer.h"

namespace plrank::loadgen {

// Rank requests serialized once before the run, so that the measured loop
// does no protobuf encoding.
struct RequestPool {
  std::vector<grpc::ByteBuffer> requests;
  double documents_per_request = 0;
};

// One request per query of `data`, in query order.
RequestPool RequestsFromDataset(const Dataset& data, const ModelRef& model,
                                uint32_t top_k);

// `count` requests of `documents` dense documents with `features` uniform
// [0, 1) values each, from a fixed seed (the same pool every run).
RequestPool SyntheticRequests(int32_t count, int32_t documents, int32_t features,
                              const ModelRef& model, uint32_t top_k);

}  // namespace plrank::loadgen

#endif  // PLRANK_CLIENTS_LOADGEN_REQUEST_POOL_H_
