#include "clients/loadgen/request_pool.h"

#include <random>
#include <string>

#include "absl/strings/str_cat.h"
#include "clients/cpp/dataset_documents.h"
#include "grpcpp/support/slice.h"

namespace plrank::loadgen {
namespace {

grpc::ByteBuffer Serialize(const v1::RankRequest& request) {
  const std::string bytes = request.SerializeAsString();
  grpc::Slice slice(bytes);
  return grpc::ByteBuffer(&slice, 1);
}

}  // namespace

RequestPool RequestsFromDataset(const Dataset& data, const ModelRef& model,
                                uint32_t top_k) {
  RequestPool pool;
  for (size_t q = 0; q < data.num_queries(); ++q) {
    v1::RankRequest request;
    *request.mutable_model_spec() = model.ToProto();
    request.set_top_k(top_k);
    FillRankRequest(data, q, &request);
    pool.requests.push_back(Serialize(request));
  }
  if (data.num_queries() > 0) {
    pool.documents_per_request =
        static_cast<double>(data.num_documents()) / data.num_queries();
  }
  return pool;
}

RequestPool SyntheticRequests(int32_t count, int32_t documents, int32_t features,
                              const ModelRef& model, uint32_t top_k) {
  RequestPool pool;
  std::mt19937_64 random(20240601);
  std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
  for (int32_t r = 0; r < count; ++r) {
    v1::RankRequest request;
    *request.mutable_model_spec() = model.ToProto();
    request.set_top_k(top_k);
    request.set_query_id(absl::StrCat("synthetic-", r));
    for (int32_t d = 0; d < documents; ++d) {
      v1::Document* document = request.add_documents();
      document->set_id(absl::StrCat(d));
      auto* values = document->mutable_dense()->mutable_values();
      values->Reserve(features);
      for (int32_t f = 0; f < features; ++f) values->Add(uniform(random));
    }
    pool.requests.push_back(Serialize(request));
  }
  pool.documents_per_request = documents;
  return pool;
}

}  // namespace plrank::loadgen
