#include "server/calls_in_flight.h"

namespace plrank::server {
namespace {

// Lives exactly as long as its call's server-side state: created when a
// server thread takes the call, destroyed after the status is sent.
class CountingInterceptor final : public grpc::experimental::Interceptor {
 public:
  explicit CountingInterceptor(CallsInFlight* calls) : calls_(calls) {
    calls_->Begin();
  }
  ~CountingInterceptor() override { calls_->End(); }
  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    methods->Proceed();
  }

 private:
  CallsInFlight* const calls_;
};

class CountingFactory final
    : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  explicit CountingFactory(CallsInFlight* calls) : calls_(calls) {}
  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* /*info*/) override {
    return new CountingInterceptor(calls_);
  }

 private:
  CallsInFlight* const calls_;
};

}  // namespace

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
CallsInFlight::InterceptorFactory() {
  return std::make_unique<CountingFactory>(this);
}

int64_t CallsInFlight::in_flight() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return in_flight_;
}

uint64_t CallsInFlight::started() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return started_;
}

bool CallsInFlight::WaitUntilIdle(
    std::chrono::steady_clock::time_point deadline) const {
  std::unique_lock<std::mutex> lock(mutex_);
  return idle_.wait_until(lock, deadline, [this] { return in_flight_ == 0; });
}

void CallsInFlight::Begin() {
  std::lock_guard<std::mutex> lock(mutex_);
  ++in_flight_;
  ++started_;
}

void CallsInFlight::End() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (--in_flight_ == 0) idle_.notify_all();
}

}  // namespace plrank::server
