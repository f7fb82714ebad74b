#ifndef PLRANK_SERVER_LIFECYCLE_LIFECYCLE_OBSERVER_H_
#define PLRANK_SERVER_LIFECYCLE_LIFECYCLE_OBSERVER_H_

#include <cstdint>
#include <string>

namespace plrank::server {

class ServableVersion;

// What the serving lifecycle reports about itself, for metrics. The
// lifecycle knows no metrics library: the server's Prometheus metrics
// implement this interface (server/server_metrics.h), tests can count calls.
// Every method may be called from the scanning thread; OnVersionReleased
// from whichever thread drops the last reference to a version (a request
// thread, typically). Implementations must be thread-safe and must not call
// back into the version manager.
class LifecycleObserver {
 public:
  virtual ~LifecycleObserver() = default;

  // One load attempt of a version of `model` that counts: a success, or a
  // failure of a given file content (counted once per content).
  virtual void OnModelLoad(const std::string& model, bool success,
                           double seconds) = 0;
  // How many versions of `model` are loaded now (0 when it was removed).
  virtual void OnVersionsLoaded(const std::string& model, int64_t count) = 0;
  // A version became available; paired with one OnVersionUnloaded when the
  // manager retires it and one OnVersionReleased when it is freed.
  virtual void OnVersionAvailable(const ServableVersion& version) = 0;
  virtual void OnVersionUnloaded(const std::string& model, int64_t version) = 0;
  // The version object was freed: its last request ended.
  virtual void OnVersionReleased(const std::string& model, int64_t version) = 0;
  // A newer available version was refused promotion to default, once per
  // version and refusal. `reason`: num_features, num_outputs or
  // score_transform.
  virtual void OnPromotionRefused(const std::string& model,
                                  const std::string& reason) = 0;
};

}  // namespace plrank::server

#endif  // PLRANK_SERVER_LIFECYCLE_LIFECYCLE_OBSERVER_H_
