// Fuzzes Rank request validation and ranking (server/ranking.h:
// RankDocuments, which validates the documents through DocumentScorer), on
// a model loaded by the server's loader.
//
// Input: one option byte (bit 0: a small --max_documents_per_request, 16),
// then a binary plrank.v1.RankRequest (seeds: fuzz/make_seeds.py).
// Invariants: errors are INVALID_ARGUMENT or RESOURCE_EXHAUSTED with a
// message; a success returns min(top_k, n) documents (all when top_k = 0)
// ranked 1, 2, ..., with distinct request indices, finite scores in
// descending order, ties in request order, and each score equal to that
// document's score when it is ranked alone.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <set>

#include "absl/status/status.h"
#include "fuzz/fuzz_util.h"
#include "fuzz/request_fuzz_model.h"
#include "plrank/v1/ranker.pb.h"
#include "server/ranking.h"

[[maybe_unused]] static const bool kQuiet = plrank::fuzz::QuietProtobufLogs();

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const auto* version =
      new std::shared_ptr<const plrank::server::ServableVersion>(
          plrank::fuzz::LoadFuzzVersion());
  if (size == 0) return 0;
  plrank::server::RequestLimits limits;
  if (data[0] & 1) limits.max_documents_per_request = 16;
  plrank::v1::RankRequest request;
  if (!request.ParseFromArray(data + 1, static_cast<int>(size - 1))) return 0;

  auto keep_going = [] { return absl::OkStatus(); };
  plrank::v1::RankResponse response;
  const absl::Status status = plrank::server::RankDocuments(
      **version, request, limits, keep_going, &response);
  if (!status.ok()) {
    PLRANK_FUZZ_CHECK(
        status.code() == absl::StatusCode::kInvalidArgument ||
            status.code() == absl::StatusCode::kResourceExhausted,
        status.ToString());
    PLRANK_FUZZ_CHECK(!status.message().empty(), "an error without a message");
    return 0;
  }
  const int n = request.documents_size();
  // A sampling spec's own top_k, when set, replaces the request's; at a
  // temperature other than 0 the ranking is drawn from the Plackett-Luce
  // policy, so it is a permutation but not sorted by score.
  const uint32_t requested_k =
      request.has_sampling() && request.sampling().top_k() != 0
          ? request.sampling().top_k()
          : request.top_k();
  const bool sampled =
      request.has_sampling() && request.sampling().temperature() != 0;
  const int expected = requested_k == 0 || requested_k >= static_cast<uint32_t>(n)
                           ? n
                           : static_cast<int>(requested_k);
  PLRANK_FUZZ_CHECK(response.documents_size() == expected,
                    "wrong number of ranked documents");
  PLRANK_FUZZ_CHECK(response.model_version() == 1, "wrong version");
  std::set<uint32_t> seen;
  for (int r = 0; r < response.documents_size(); ++r) {
    const plrank::v1::ScoredDocument& d = response.documents(r);
    PLRANK_FUZZ_CHECK(d.rank() == static_cast<uint32_t>(r + 1), "bad rank");
    PLRANK_FUZZ_CHECK(d.request_index() < static_cast<uint32_t>(n),
                      "request index out of range");
    PLRANK_FUZZ_CHECK(seen.insert(d.request_index()).second,
                      "a document ranked twice");
    PLRANK_FUZZ_CHECK(
        d.id() == request.documents(static_cast<int>(d.request_index())).id(),
        "id does not match the request index");
    PLRANK_FUZZ_CHECK(std::isfinite(d.score()), "non-finite score");
    if (r > 0 && !sampled) {
      const plrank::v1::ScoredDocument& p = response.documents(r - 1);
      PLRANK_FUZZ_CHECK(p.score() > d.score() ||
                            (p.score() == d.score() &&
                             p.request_index() < d.request_index()),
                        "not sorted by score, then request order");
    }
  }
  // A document's score does not depend on the rest of the request.
  if (response.documents_size() > 0) {
    const plrank::v1::ScoredDocument& first = response.documents(0);
    plrank::v1::RankRequest alone;
    *alone.add_documents() =
        request.documents(static_cast<int>(first.request_index()));
    plrank::v1::RankResponse alone_response;
    const absl::Status alone_status = plrank::server::RankDocuments(
        **version, alone, limits, keep_going, &alone_response);
    PLRANK_FUZZ_CHECK(alone_status.ok(), alone_status.ToString());
    PLRANK_FUZZ_CHECK(alone_response.documents(0).score() == first.score(),
                      "a document scored differently alone");
  }
  return 0;
}
