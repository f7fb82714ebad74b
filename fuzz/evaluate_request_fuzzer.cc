// Fuzzes Evaluate request validation and metrics (server/
// evaluation_accumulator.h: Create, AddQueries, Finish, as RankerService::
// Evaluate calls them), on a model loaded by the server's loader.
//
// Input: one option byte (bit 0: small limits: 16 documents per query,
// 4 queries per message, 32 documents per evaluation), then a binary
// plrank.v1.EvaluateRequest (seeds: fuzz/make_seeds.py). With bit 1 the
// same message is added twice, as two messages of an EvaluateStream.
// Invariants: errors are INVALID_ARGUMENT or RESOURCE_EXHAUSTED with a
// message; a success reports the query and document counts it was given,
// ndcg@k for every requested k (default 1,3,5,10) then err and map, every
// value in [0, 1] (NaN only for a per-query value left out, which is
// omitted) .

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "fuzz/fuzz_util.h"
#include "fuzz/request_fuzz_model.h"
#include "plrank/v1/ranker.pb.h"
#include "server/evaluation_accumulator.h"

[[maybe_unused]] static const bool kQuiet = plrank::fuzz::QuietProtobufLogs();

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const auto* version =
      new std::shared_ptr<const plrank::server::ServableVersion>(
          plrank::fuzz::LoadFuzzVersion());
  if (size == 0) return 0;
  plrank::server::RequestLimits limits;
  if (data[0] & 1) {
    limits.max_documents_per_request = 16;
    limits.max_queries_per_request = 4;
    limits.max_evaluate_documents = 32;
  }
  const int messages = (data[0] & 2) ? 2 : 1;
  plrank::v1::EvaluateRequest request;
  if (!request.ParseFromArray(data + 1, static_cast<int>(size - 1))) return 0;

  auto check_error = [](const absl::Status& status) {
    PLRANK_FUZZ_CHECK(
        status.code() == absl::StatusCode::kInvalidArgument ||
            status.code() == absl::StatusCode::kResourceExhausted,
        status.ToString());
    PLRANK_FUZZ_CHECK(!status.message().empty(), "an error without a message");
  };
  auto accumulator =
      plrank::server::EvaluationAccumulator::Create(request, limits);
  if (!accumulator.ok()) {
    check_error(accumulator.status());
    return 0;
  }
  auto keep_going = [] { return absl::OkStatus(); };
  uint64_t documents = 0;
  for (int m = 0; m < messages; ++m) {
    const absl::Status added =
        accumulator->AddQueries(**version, request, keep_going);
    if (!added.ok()) {
      check_error(added);
      return 0;
    }
    for (const auto& query : request.queries()) {
      documents += static_cast<uint64_t>(query.documents_size());
    }
  }
  PLRANK_FUZZ_CHECK(accumulator->num_documents() == documents,
                    "document count differs");
  plrank::v1::EvaluateResponse response;
  const absl::Status finished = accumulator->Finish(**version, &response);
  if (!finished.ok()) {
    check_error(finished);
    return 0;
  }
  PLRANK_FUZZ_CHECK(response.query_count() ==
                        static_cast<uint32_t>(messages * request.queries_size()),
                    "query count differs");
  PLRANK_FUZZ_CHECK(response.document_count() == documents,
                    "response document count differs");
  const int cutoffs = request.ndcg_at_size() == 0 ? 4 : request.ndcg_at_size();
  PLRANK_FUZZ_CHECK(response.metrics_size() == cutoffs + 2,
                    "wrong number of metrics");
  auto in_unit_interval = [](double value) {
    return value >= 0.0 && value <= 1.0;  // false for NaN
  };
  for (const auto& metric : response.metrics()) {
    // Under skip_empty_queries a mean over no query is NaN: documented.
    if (request.skip_empty_queries() && std::isnan(metric.value())) continue;
    PLRANK_FUZZ_CHECK(in_unit_interval(metric.value()),
                      metric.name() + " = " + std::to_string(metric.value()));
  }
  for (const auto& query : response.per_query()) {
    for (const auto& metric : query.metrics()) {
      PLRANK_FUZZ_CHECK(in_unit_interval(metric.value()),
                        "per-query " + metric.name() + " = " +
                            std::to_string(metric.value()));
    }
  }
  return 0;
}
