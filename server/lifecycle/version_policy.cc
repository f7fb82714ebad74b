#include "server/lifecycle/version_policy.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"

namespace plrank::server {
namespace {

uint32_t LatestCount(const v1::VersionPolicy& policy) {
  return policy.has_latest() && policy.latest().num_versions() > 0
             ? policy.latest().num_versions()
             : 1;
}

}  // namespace

VersionPlan PlanVersions(const v1::VersionPolicy& policy,
                         const std::vector<int64_t>& on_disk) {
  VersionPlan plan;
  if (policy.has_all()) {
    plan.candidates = on_disk;
    plan.max_versions = std::numeric_limits<size_t>::max();
  } else if (policy.has_specific()) {
    const auto& list = policy.specific().versions();
    for (int64_t version : on_disk) {
      if (std::find(list.begin(), list.end(), version) != list.end()) {
        plan.candidates.push_back(version);
      }
    }
    plan.max_versions = std::numeric_limits<size_t>::max();
  } else {
    plan.candidates.assign(on_disk.rbegin(), on_disk.rend());
    plan.max_versions = LatestCount(policy);
  }
  return plan;
}

std::string PolicyName(const v1::VersionPolicy& policy) {
  if (policy.has_all()) return "all";
  if (policy.has_specific()) {
    std::string out = "specific:";
    for (int64_t v : policy.specific().versions()) {
      absl::StrAppend(&out, out.back() == ':' ? "" : ",", v);
    }
    return out;
  }
  return absl::StrCat("latest:", LatestCount(policy));
}

std::map<std::string, int64_t> PromotingLabels(
    const std::map<std::string, int64_t>& labels,
    const std::string& shadow_label) {
  std::map<std::string, int64_t> out = labels;
  out.erase(shadow_label);
  return out;
}

int64_t ShadowTarget(int64_t shadow_version, const std::string& shadow_label,
                     const std::map<std::string, int64_t>& labels) {
  if (shadow_version > 0) return shadow_version;
  auto it = labels.find(shadow_label);
  return it == labels.end() ? 0 : it->second;
}

}  // namespace plrank::server
