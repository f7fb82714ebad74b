#ifndef PLRANK_SERVER_LIFECYCLE_PROMOTION_H_
#define PLRANK_SERVER_LIFECYCLE_PROMOTION_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>

#include "server/lifecycle/model_status.h"

namespace plrank::server {

// Why a newer available version did not become the default.
struct PromotionRefusal {
  std::string reason;   // "num_features", "num_outputs" or "score_transform"
  std::string message;  // for status and logs, in a client's words
};

struct PromotionDecision {
  int64_t default_version = 0;  // 0 = nothing available
  // Available versions above the default that were passed over.
  std::map<int64_t, PromotionRefusal> refused;
};

// The default version of a model (what unpinned requests get), as a pure
// function of what is available and what serves now:
//  - with nothing serving (`current` 0, e.g. at startup) or `current` no
//    longer available, the highest available version;
//  - otherwise the highest available version above `current` that is
//    compatible with it (CheckCompatible: feature count, outputs, score
//    transform), or that a label points at, or any when
//    `allow_incompatible`; else `current` stays. Incompatible versions in
//    between are listed in `refused`.
// So a version trained on other features loads (and can be pinned) but never
// silently takes the traffic of clients built for the serving one.
PromotionDecision ChooseDefaultVersion(
    const std::map<int64_t, const ModelMetadata*>& available,
    const std::set<int64_t>& labelled, int64_t current,
    bool allow_incompatible);

}  // namespace plrank::server

#endif  // PLRANK_SERVER_LIFECYCLE_PROMOTION_H_
