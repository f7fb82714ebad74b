#include "server/health_reporter.h"

#include "absl/strings/str_cat.h"

namespace plrank::server {

std::string ModelHealthServiceName(const std::string& model) {
  return absl::StrCat(kRankerServiceName, "/", model);
}

HealthReporter::HealthReporter(grpc::HealthCheckServiceInterface* health)
    : health_(health) {
  health_->SetServingStatus("", false);
  health_->SetServingStatus(kRankerServiceName, false);
  health_->SetServingStatus(kLivenessServiceName, true);
}

void HealthReporter::Update(const ServingSnapshot& snapshot) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (shut_down_) return;
  for (const std::string& name : models_) {
    if (snapshot.models.count(name) == 0) {
      health_->SetServingStatus(ModelHealthServiceName(name), false);
    }
  }
  for (const auto& [name, model] : snapshot.models) {
    models_.insert(name);
    // A version loaded only as the shadow serves no unpinned request.
    health_->SetServingStatus(ModelHealthServiceName(name),
                              model.default_version() != 0);
  }
  const bool serving = snapshot.AnyModelAvailable();
  health_->SetServingStatus("", serving);
  health_->SetServingStatus(kRankerServiceName, serving);
}

void HealthReporter::Shutdown() {
  std::lock_guard<std::mutex> lock(mutex_);
  shut_down_ = true;
  health_->Shutdown();  // every name NOT_SERVING, further changes ignored
}

}  // namespace plrank::server
