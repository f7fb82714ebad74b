#ifndef PLRANK_SERVER_SHADOW_SCORING_H_
#define PLRANK_SERVER_SHADOW_SCORING_H_

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "plrank/v1/ranker.pb.h"
#include "server/lifecycle/servable_version.h"
#include "server/lifecycle/serving_snapshot.h"
#include "server/server_metrics.h"

namespace plrank::server {

struct ShadowOptions {
  // Copies waiting for the worker; a copy sampled while this many wait is
  // dropped (and counted), so shadowing never delays an answer.
  size_t queue_capacity = 16;
  // false: no worker thread; copies wait until RunQueued() (tests).
  bool start_worker = true;
};

// A model keeps the summaries of at most this many (serving, shadow)
// version pairs, the most recently active ones.
inline constexpr size_t kShadowPairsPerModel = 16;

// Shadow scoring (ModelConfig.shadow_*). On the request path, Offer()
// samples an answered Rank query by the model's shadow fraction and puts a
// copy of it (and of the served scores, when the answer holds every
// document) in a bounded queue; a single low-priority worker (SCHED_IDLE)
// scores the copy with the shadow version and compares the two rankings
// (ranking_comparison.h). Results go to the plrank_shadow_* metrics and to
// the per-pair summaries that Status() reports. Thread-safe.
class ShadowScorer {
 public:
  // `metrics` (optional) must outlive this object.
  ShadowScorer(ShadowOptions options, ServerMetrics* metrics);
  // Stops the worker (a copy being scored is abandoned) and discards the
  // queued copies, releasing the versions they hold.
  ~ShadowScorer();
  ShadowScorer(const ShadowScorer&) = delete;
  ShadowScorer& operator=(const ShadowScorer&) = delete;

  // `served` answered `request` with `response` (OK). Does nothing unless
  // `model` has a shadow, the request is sampled, and `served` is not the
  // shadow itself. A sampled request whose shadow is unresolved counts as
  // failed; with the queue full it counts as dropped; otherwise it is
  // copied and queued. Costs the copy and a short lock, never a wait.
  void Offer(const ModelSnapshot& model,
             const std::shared_ptr<const ServableVersion>& served,
             const v1::RankRequest& request, const v1::RankResponse& response);

  // Scores the queued copies on the calling thread until none is left;
  // returns how many it scored. For tests built with start_worker = false.
  size_t RunQueued();

  // The model's shadow configuration, its resolution in `model`, and the
  // summaries of its version pairs (serving version, then shadow version).
  v1::ShadowStatus Status(const ModelSnapshot& model) const;

 private:
  struct Job {
    std::shared_ptr<const ServableVersion> served;
    std::shared_ptr<const ServableVersion> shadow;
    v1::RankRequest request;
    // Served score per request document; empty when the answer was cut to
    // top_k (the worker then scores with `served` again: scoring is
    // deterministic).
    std::vector<double> served_scores;
  };
  using PairKey = std::tuple<std::string, int64_t, int64_t>;
  struct Summary {
    uint64_t scored = 0;
    uint64_t dropped = 0;
    uint64_t failed = 0;
    uint64_t tau_count = 0;
    double tau_sum = 0.0;
    uint64_t top1_agreements = 0;
    double top10_overlap_sum = 0.0;
    std::string last_error;
    uint64_t last_active = 0;  // for eviction
  };

  void Work();
  // Scores one copy and records the outcome.
  void Process(Job& job);
  // The summary of a pair, created (evicting the model's least recently
  // active pair beyond kShadowPairsPerModel) if needed. Needs mutex_.
  Summary& SummaryFor(const std::string& model, int64_t serving,
                      int64_t shadow);

  const ShadowOptions options_;
  ServerMetrics* const metrics_;
  std::atomic<bool> stop_{false};

  mutable std::mutex mutex_;  // guards everything below
  std::condition_variable wake_;
  std::deque<Job> queue_;
  size_t reserved_ = 0;  // slots taken by copies being made
  std::map<PairKey, Summary> summaries_;
  uint64_t activity_ = 0;

  std::thread worker_;  // last: started once everything above exists
};

}  // namespace plrank::server

#endif  // PLRANK_SERVER_SHADOW_SCORING_H_
