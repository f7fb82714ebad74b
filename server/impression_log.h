#ifndef PLRANK_SERVER_IMPRESSION_LOG_H_
#define PLRANK_SERVER_IMPRESSION_LOG_H_

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "plrank/v1/ranker.pb.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/registry.h"

namespace plrank::server {

struct ImpressionLogOptions {
  // Existing directory the files are published in (--impression_log_dir).
  std::string directory;
  // Share of sampled Rank queries logged, in [0, 1]
  // (--impression_log_fraction); chosen by a hash of the request id, so a
  // replayed id gets the same decision.
  double fraction = 1.0;
  // Queries waiting for the writer; one offered while this many wait is
  // dropped and counted (result="queue_full"), so answers never wait.
  size_t queue_capacity = 1024;
  // A file is published (atomically renamed into place) once it holds this
  // many bytes or its first entry is this old, and at shutdown.
  size_t max_file_bytes = size_t{16} << 20;
  absl::Duration max_file_age = absl::Minutes(5);
  // false: no writer thread; entries wait until RunQueued() (tests).
  bool start_worker = true;
  // The clock of file ages and names (tests pass a fake one).
  std::function<absl::Time()> clock = [] { return absl::Now(); };
};

// The impression log of sampled rankings (docs/clicks-serving.md, "Log
// format"): on the request path Offer() copies an answered query into a
// bounded queue; one writer thread formats the entries, one line per
// request document in LETOR form with the impression in the comment, into
// an in-memory file that is published with WriteFileAtomically as
// <directory>/impressions-<UTC time>-<sequence>.log, so a reader only ever
// sees complete files. A queue that is full, or a file that cannot be
// written (disk full, directory gone or read-only), drops its entries and
// counts them in plrank_impression_log_entries_total{result=...}; nothing
// fails the request or stops the server. Thread-safe.
class ImpressionLogger {
 public:
  // INVALID_ARGUMENT when the directory does not exist or the options are
  // out of range. Metrics go to `registry` (optional: a private one).
  static absl::StatusOr<std::unique_ptr<ImpressionLogger>> Create(
      ImpressionLogOptions options,
      std::shared_ptr<prometheus::Registry> registry);
  // Publishes what was accepted (the queue and the open file), then stops.
  ~ImpressionLogger();
  ImpressionLogger(const ImpressionLogger&) = delete;
  ImpressionLogger& operator=(const ImpressionLogger&) = delete;

  // A new random request id (32 hex digits).
  static std::string NewRequestId();

  // Whether a query of this request id is logged under the fraction.
  bool Selected(absl::string_view request_id) const;

  // `response` (with its request_id set) answered `request`; `scores` are
  // the scores of every request document in request order. Logs it when
  // Selected(); returns whether it was queued.
  bool Offer(const v1::RankRequest& request, const v1::RankResponse& response,
             absl::Span<const double> scores);

  // Writes every queued entry and publishes the open file, on the calling
  // thread; waits for a writer thread's batch in progress. For tests and
  // shutdown.
  void Flush();
  // Without a writer thread: writes the queued entries and publishes the
  // file if it is due (size or age), as the writer would. Returns the
  // entries written.
  size_t RunQueued();

  uint64_t written() const;
  uint64_t dropped_queue_full() const;
  uint64_t dropped_write_failed() const;
  uint64_t files_published() const;

 private:
  struct Entry {
    v1::RankRequest request;
    std::string request_id;
    std::string model;
    int64_t version = 0;
    std::vector<uint32_t> position;  // per request document, 0 = not shown
    std::vector<double> pick;        // per request document
    std::vector<double> scores;
    uint64_t seed = 0;
    int64_t unix_micros = 0;
  };

  ImpressionLogger(ImpressionLogOptions options,
                   std::shared_ptr<prometheus::Registry> registry);
  void Work();
  // Formats `entries` into the open file, publishing it when full. Needs
  // write_mutex_.
  void Write(std::deque<Entry>& entries);
  void PublishIfDue();
  void Publish();
  void Append(const Entry& entry);

  const ImpressionLogOptions options_;
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Counter>& entries_family_;
  prometheus::Counter& written_;
  prometheus::Counter& queue_full_;
  prometheus::Counter& write_failed_;
  prometheus::Counter& files_;
  prometheus::Gauge& queue_length_;

  std::mutex mutex_;  // guards queue_ and stop_
  std::condition_variable wake_;
  std::deque<Entry> queue_;
  bool stop_ = false;

  std::mutex write_mutex_;  // guards the open file below
  std::string file_;
  uint64_t file_entries_ = 0;
  absl::Time file_started_;
  uint64_t sequence_ = 0;

  std::thread worker_;  // last: started once everything above exists
};

}  // namespace plrank::server

#endif  // PLRANK_SERVER_IMPRESSION_LOG_H_
