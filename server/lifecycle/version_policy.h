#ifndef PLRANK_SERVER_LIFECYCLE_VERSION_POLICY_H_
#define PLRANK_SERVER_LIFECYCLE_VERSION_POLICY_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "plrank/v1/server_config.pb.h"

namespace plrank::server {

// Which versions a VersionPolicy asks for, as a pure function of the
// versions on disk. Loading can fail, so the answer is an order to try them
// in and how many successes end the search: the manager loads `candidates`
// in order and stops once `max_versions` of them are available.
struct VersionPlan {
  std::vector<int64_t> candidates;
  size_t max_versions = 0;
};

// `on_disk` ascending. latest N: newest first, up to N available (a failed
// version does not count, so the last good ones keep serving when a new
// version is broken); all: every version; specific: the listed ones that
// are on disk. A latest policy with num_versions 0 means 1.
VersionPlan PlanVersions(const v1::VersionPolicy& policy,
                         const std::vector<int64_t>& on_disk);

// "latest:2", "all", "specific:3,5": for logs.
std::string PolicyName(const v1::VersionPolicy& policy);

// The labels that keep their version loaded and may promote it: all but the
// shadow label, whose version is measured, not served by default.
std::map<std::string, int64_t> PromotingLabels(
    const std::map<std::string, int64_t>& labels,
    const std::string& shadow_label);

// The version a model's shadow names: `shadow_version` if set, else the
// version `shadow_label` points at; 0 = none.
int64_t ShadowTarget(int64_t shadow_version, const std::string& shadow_label,
                     const std::map<std::string, int64_t>& labels);

}  // namespace plrank::server

#endif  // PLRANK_SERVER_LIFECYCLE_VERSION_POLICY_H_
