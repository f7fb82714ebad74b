#include "server/shadow_scoring.h"

#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <limits>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/data/random.h"
#include "server/document_scoring.h"
#include "server/lifecycle/structured_log.h"
#include "server/ranking_comparison.h"

namespace plrank::server {
namespace {

// Metric label of a shadow that could not be resolved.
constexpr char kUnresolved[] = "unresolved";

// Whether to shadow this request: a per-thread splitmix64 draw, so sampling
// costs a few instructions and no shared state. Seeded from the clock and
// the thread's own address, so threads draw different streams.
bool Sampled(double fraction) {
  if (fraction >= 1.0) return true;
  if (!(fraction > 0.0)) return false;
  thread_local uint64_t seed_anchor = 0;
  thread_local SplitMix64 rng(
      static_cast<uint64_t>(
          std::chrono::steady_clock::now().time_since_epoch().count()) ^
      (reinterpret_cast<uintptr_t>(&seed_anchor) * 0x9E3779B97F4A7C15ull));
  return static_cast<double>(rng.Next() >> 11) * 0x1.0p-53 < fraction;
}

// The worker runs only when the CPU would otherwise idle, so shadow
// scoring cannot take CPU from answers. Falls back to nice 19 where
// SCHED_IDLE is refused.
std::string LowerPriority() {
  sched_param param{};
  param.sched_priority = 0;
  if (pthread_setschedparam(pthread_self(), SCHED_IDLE, &param) == 0) {
    return "SCHED_IDLE";
  }
  if (setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), 19) ==
      0) {
    return "nice 19";
  }
  return "normal (could not lower it)";
}

}  // namespace

ShadowScorer::ShadowScorer(ShadowOptions options, ServerMetrics* metrics)
    : options_(options), metrics_(metrics) {
  if (options_.start_worker) worker_ = std::thread([this] { Work(); });
}

ShadowScorer::~ShadowScorer() {
  stop_.store(true);
  {
    std::lock_guard<std::mutex> lock(mutex_);
  }
  wake_.notify_all();
  if (worker_.joinable()) worker_.join();
  std::deque<Job> discarded;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    discarded.swap(queue_);
  }
  // `discarded` releases its versions here, outside the lock.
}

void ShadowScorer::Offer(const ModelSnapshot& model,
                         const std::shared_ptr<const ServableVersion>& served,
                         const v1::RankRequest& request,
                         const v1::RankResponse& response) {
  if (!model.has_shadow || served == nullptr) return;
  // A request that went to the shadow itself has nothing to compare with.
  if (model.shadow != nullptr && model.shadow->version() == served->version()) {
    return;
  }
  if (!Sampled(model.shadow_fraction)) return;
  if (model.shadow == nullptr) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      Summary& summary = SummaryFor(served->model(), served->version(), 0);
      ++summary.failed;
      summary.last_error = model.shadow_error;
    }
    if (metrics_ != nullptr) {
      metrics_->RecordShadowRequest(served->model(), served->version_string(),
                                    kUnresolved, "failed");
    }
    return;
  }
  bool full = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    full = queue_.size() + reserved_ >= options_.queue_capacity;
    if (full) {
      ++SummaryFor(served->model(), served->version(), model.shadow->version())
            .dropped;
    } else {
      ++reserved_;  // the slot is ours while the copy is made unlocked
    }
  }
  if (full) {
    if (metrics_ != nullptr) {
      metrics_->RecordShadowRequest(served->model(), served->version_string(),
                                    model.shadow->version_string(), "dropped");
    }
    return;
  }
  Job job;
  job.served = served;
  job.shadow = model.shadow;
  job.request = request;
  if (response.documents_size() == request.documents_size()) {
    job.served_scores.resize(static_cast<size_t>(request.documents_size()));
    for (const v1::ScoredDocument& document : response.documents()) {
      job.served_scores[document.request_index()] = document.score();
    }
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    --reserved_;
    queue_.push_back(std::move(job));
  }
  wake_.notify_one();
}

size_t ShadowScorer::RunQueued() {
  size_t done = 0;
  while (true) {
    Job job;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (queue_.empty()) return done;
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    Process(job);
    ++done;
  }
}

void ShadowScorer::Work() {
  LogEvent("info", "shadow_worker_started",
           {{"priority", LowerPriority()},
            {"queue_capacity", absl::StrCat(options_.queue_capacity)}});
  while (true) {
    Job job;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [this] { return stop_.load() || !queue_.empty(); });
      if (stop_.load()) return;
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    Process(job);
  }
}

void ShadowScorer::Process(Job& job) {
  const auto interrupted = [this] {
    return stop_.load() ? absl::CancelledError("the server is stopping")
                        : absl::OkStatus();
  };
  std::vector<double> served = std::move(job.served_scores);
  absl::Status status = absl::OkStatus();
  if (served.empty()) {
    auto scores = DocumentScorer::Score(
        job.served->scorer(), job.request.documents(), "", interrupted);
    if (scores.ok()) {
      served.assign(scores->begin(), scores->end());
    } else {
      status = scores.status();
    }
  }
  RankingComparison comparison;
  if (status.ok()) {
    // The documents passed the serving version's checks; the shadow may
    // still refuse them (e.g. another feature count).
    auto shadow = DocumentScorer::Score(job.shadow->scorer(),
                                        job.request.documents(),
                                        "shadow scoring", interrupted);
    if (shadow.ok()) {
      comparison = CompareRankings(served, *shadow);
    } else {
      status = shadow.status();
    }
  }
  if (stop_.load()) return;  // abandoned, not failed
  const std::string& model = job.served->model();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    Summary& summary =
        SummaryFor(model, job.served->version(), job.shadow->version());
    if (status.ok()) {
      ++summary.scored;
      if (comparison.kendall_tau.has_value()) {
        ++summary.tau_count;
        summary.tau_sum += *comparison.kendall_tau;
      }
      summary.top1_agreements += comparison.top1_agree ? 1 : 0;
      summary.top10_overlap_sum += comparison.top10_overlap;
    } else {
      ++summary.failed;
      summary.last_error = std::string(status.message());
    }
  }
  if (metrics_ == nullptr) return;
  metrics_->RecordShadowRequest(model, job.served->version_string(),
                                job.shadow->version_string(),
                                status.ok() ? "scored" : "failed");
  if (status.ok()) {
    metrics_->RecordShadowComparison(model, job.served->version_string(),
                                     job.shadow->version_string(),
                                     comparison.kendall_tau,
                                     comparison.top1_agree,
                                     comparison.top10_overlap);
  }
}

ShadowScorer::Summary& ShadowScorer::SummaryFor(const std::string& model,
                                                int64_t serving,
                                                int64_t shadow) {
  const PairKey key(model, serving, shadow);
  auto it = summaries_.find(key);
  if (it == summaries_.end()) {
    const auto first = summaries_.lower_bound(
        PairKey(model, std::numeric_limits<int64_t>::min(),
                std::numeric_limits<int64_t>::min()));
    size_t pairs = 0;
    auto oldest = summaries_.end();
    for (auto p = first; p != summaries_.end() && std::get<0>(p->first) == model;
         ++p) {
      ++pairs;
      if (oldest == summaries_.end() ||
          p->second.last_active < oldest->second.last_active) {
        oldest = p;
      }
    }
    if (pairs >= kShadowPairsPerModel) summaries_.erase(oldest);
    it = summaries_.emplace(key, Summary()).first;
  }
  it->second.last_active = ++activity_;
  return it->second;
}

v1::ShadowStatus ShadowScorer::Status(const ModelSnapshot& model) const {
  v1::ShadowStatus out;
  out.set_configured_version(model.shadow_version);
  out.set_configured_label(model.shadow_label);
  out.set_fraction(model.shadow_fraction);
  if (model.shadow != nullptr) {
    out.set_shadow_version(model.shadow->version());
  } else {
    out.set_error(model.shadow_error);
  }
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto it = summaries_.lower_bound(
           PairKey(model.name, std::numeric_limits<int64_t>::min(),
                   std::numeric_limits<int64_t>::min()));
       it != summaries_.end() && std::get<0>(it->first) == model.name; ++it) {
    const Summary& s = it->second;
    v1::ShadowComparison* pair = out.add_comparisons();
    pair->set_serving_version(std::get<1>(it->first));
    pair->set_shadow_version(std::get<2>(it->first));
    pair->set_scored(s.scored);
    pair->set_dropped(s.dropped);
    pair->set_failed(s.failed);
    pair->set_tau_count(s.tau_count);
    if (s.tau_count > 0) {
      pair->set_mean_kendall_tau(s.tau_sum / static_cast<double>(s.tau_count));
    }
    if (s.scored > 0) {
      pair->set_top1_agreement(static_cast<double>(s.top1_agreements) /
                               static_cast<double>(s.scored));
      pair->set_mean_top10_overlap(s.top10_overlap_sum /
                                   static_cast<double>(s.scored));
    }
    pair->set_last_error(s.last_error);
  }
  return out;
}

}  // namespace plrank::server
