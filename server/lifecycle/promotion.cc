#include "server/lifecycle/promotion.h"

#include "absl/strings/str_cat.h"
#include "server/lifecycle/servable_version.h"

namespace plrank::server {

PromotionDecision ChooseDefaultVersion(
    const std::map<int64_t, const ModelMetadata*>& available,
    const std::set<int64_t>& labelled, int64_t current,
    bool allow_incompatible) {
  PromotionDecision decision;
  if (available.empty()) return decision;
  auto serving = available.find(current);
  if (serving == available.end()) {
    decision.default_version = available.rbegin()->first;
    return decision;
  }
  decision.default_version = current;
  for (auto it = available.rbegin();
       it != available.rend() && it->first > current; ++it) {
    std::string reason;
    const absl::Status compatible =
        CheckCompatible(*serving->second, *it->second, &reason);
    if (compatible.ok() || allow_incompatible ||
        labelled.count(it->first) > 0) {
      decision.default_version = it->first;
      break;
    }
    decision.refused[it->first] = {
        reason,
        absl::StrCat("not promoted to default: incompatible with version ",
                     current, " serving now (", compatible.message(),
                     "); pin it, point a label at it, or set "
                     "allow_incompatible_promotion in the model config")};
  }
  return decision;
}

}  // namespace plrank::server
