#include "server/impression_log.h"

#include <charconv>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <limits>
#include <string_view>
#include <system_error>
#include <utility>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/data/file_io.h"
#include "core/data/random.h"
#include "server/lifecycle/structured_log.h"

namespace plrank::server {
namespace {

// Percent-encodes what would break a LETOR token or a key=value comment
// field: bytes up to space, DEL and above, '%', '=' and '#'.
void AppendEscaped(std::string& out, absl::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  for (unsigned char c : text) {
    if (c <= 0x20 || c >= 0x7f || c == '%' || c == '=' || c == '#') {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
}

template <typename T>
void AppendNumber(std::string& out, T value) {
  if (std::isnan(value)) {
    out += "nan";
    return;
  }
  char buffer[32];
  const auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  out.append(buffer, result.ptr);
}

uint64_t HashId(absl::string_view id) {
  uint64_t hash = 0xcbf29ce484222325ULL;  // FNV-1a
  for (unsigned char c : id) hash = (hash ^ c) * 0x100000001b3ULL;
  return Mix64(hash);
}

}  // namespace

absl::StatusOr<std::unique_ptr<ImpressionLogger>> ImpressionLogger::Create(
    ImpressionLogOptions options,
    std::shared_ptr<prometheus::Registry> registry) {
  std::error_code error;
  if (options.directory.empty() ||
      !std::filesystem::is_directory(options.directory, error)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--impression_log_dir '", options.directory,
                     "' is not a directory"));
  }
  if (!(options.fraction >= 0 && options.fraction <= 1)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--impression_log_fraction must be in [0, 1], got ",
        options.fraction));
  }
  if (options.queue_capacity == 0 || options.max_file_bytes == 0 ||
      options.max_file_age <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        "the impression log's queue capacity, file size and file age must "
        "be > 0");
  }
  if (registry == nullptr) registry = std::make_shared<prometheus::Registry>();
  return std::unique_ptr<ImpressionLogger>(
      new ImpressionLogger(std::move(options), std::move(registry)));
}

ImpressionLogger::ImpressionLogger(
    ImpressionLogOptions options,
    std::shared_ptr<prometheus::Registry> registry)
    : options_(std::move(options)),
      registry_(std::move(registry)),
      entries_family_(
          prometheus::BuildCounter()
              .Name("plrank_impression_log_entries_total")
              .Help("Sampled Rank queries offered to the impression log, by "
                    "result: written (in a published file), queue_full or "
                    "write_failed (dropped)")
              .Register(*registry_)),
      written_(entries_family_.Add({{"result", "written"}})),
      queue_full_(entries_family_.Add({{"result", "queue_full"}})),
      write_failed_(entries_family_.Add({{"result", "write_failed"}})),
      files_(prometheus::BuildCounter()
                 .Name("plrank_impression_log_files_total")
                 .Help("Impression log files published")
                 .Register(*registry_)
                 .Add({})),
      queue_length_(prometheus::BuildGauge()
                        .Name("plrank_impression_log_queue_length")
                        .Help("Queries waiting for the impression log writer")
                        .Register(*registry_)
                        .Add({})) {
  if (options_.start_worker) worker_ = std::thread([this] { Work(); });
}

ImpressionLogger::~ImpressionLogger() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  if (worker_.joinable()) worker_.join();
  Flush();
}

std::string ImpressionLogger::NewRequestId() {
  thread_local absl::BitGen bits;
  return absl::StrFormat("%016x%016x", absl::Uniform<uint64_t>(bits),
                         absl::Uniform<uint64_t>(bits));
}

bool ImpressionLogger::Selected(absl::string_view request_id) const {
  if (options_.fraction >= 1) return true;
  if (options_.fraction <= 0) return false;
  return static_cast<double>(HashId(request_id) >> 11) * 0x1.0p-53 <
         options_.fraction;
}

bool ImpressionLogger::Offer(const v1::RankRequest& request,
                             const v1::RankResponse& response,
                             absl::Span<const double> scores) {
  if (!Selected(response.request_id())) return false;
  if (scores.size() != static_cast<size_t>(request.documents_size())) {
    return false;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (queue_.size() >= options_.queue_capacity) {
      queue_full_.Increment();
      return false;
    }
  }
  Entry entry;
  entry.request = request;
  entry.request_id = response.request_id();
  entry.model = response.model_name();
  entry.version = response.model_version();
  entry.position.assign(scores.size(), 0);
  entry.pick.assign(scores.size(), 0.0);
  for (const v1::ScoredDocument& scored : response.documents()) {
    if (scored.request_index() >= scores.size()) continue;
    entry.position[scored.request_index()] = scored.rank();
    entry.pick[scored.request_index()] = scored.pick_probability();
  }
  entry.scores.assign(scores.begin(), scores.end());
  entry.seed = response.sampling_seed();
  entry.unix_micros = absl::ToUnixMicros(options_.clock());
  {
    std::lock_guard<std::mutex> lock(mutex_);
    // Checked again: the copy was made outside the lock.
    if (queue_.size() >= options_.queue_capacity) {
      queue_full_.Increment();
      return false;
    }
    queue_.push_back(std::move(entry));
    queue_length_.Set(static_cast<double>(queue_.size()));
  }
  wake_.notify_one();
  return true;
}

void ImpressionLogger::Work() {
  while (true) {
    {
      // Wake for entries, for shutdown, or to publish an old file.
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait_for(lock, std::chrono::seconds(1),
                     [this] { return stop_ || !queue_.empty(); });
      if (stop_) return;  // the destructor's Flush writes what is left
    }
    // The file lock first, so Flush() finds no batch taken but unwritten.
    std::lock_guard<std::mutex> write(write_mutex_);
    std::deque<Entry> batch;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      batch.swap(queue_);
      queue_length_.Set(0);
    }
    Write(batch);
    PublishIfDue();
  }
}

void ImpressionLogger::Write(std::deque<Entry>& entries) {
  for (const Entry& entry : entries) {
    Append(entry);
    if (file_.size() >= options_.max_file_bytes) Publish();
  }
}

void ImpressionLogger::Append(const Entry& entry) {
  if (file_entries_ == 0) file_started_ = options_.clock();
  const v1::RankRequest& request = entry.request;
  std::string request_id;
  AppendEscaped(request_id, entry.request_id);
  std::string model;
  AppendEscaped(model, entry.model);
  size_t shown = 0;
  for (uint32_t p : entry.position) shown += p != 0 ? 1 : 0;
  const double temperature =
      request.has_sampling() ? request.sampling().temperature() : 0.0;
  for (int d = 0; d < request.documents_size(); ++d) {
    const v1::Document& document = request.documents(d);
    file_ += "0 qid:";
    file_ += request_id;
    if (document.has_dense()) {
      const auto& values = document.dense().values();
      for (int f = 0; f < values.size(); ++f) {
        absl::StrAppend(&file_, " ", f + 1, ":");
        AppendNumber(file_, values[f]);
      }
    } else if (document.has_sparse()) {
      const v1::SparseFeatures& sparse = document.sparse();
      for (int f = 0; f < sparse.indices_size(); ++f) {
        absl::StrAppend(&file_, " ", sparse.indices(f) + 1, ":");
        AppendNumber(file_, sparse.values(f));
      }
    }
    file_ += " # request_id=";
    file_ += request_id;
    file_ += " query=";
    AppendEscaped(file_, request.query_id());
    file_ += " doc=";
    AppendEscaped(file_, document.id());
    absl::StrAppend(&file_, " position=", entry.position[d], " score=");
    AppendNumber(file_, entry.scores[d]);
    file_ += " pick=";
    AppendNumber(file_, entry.pick[d]);
    file_ += " temperature=";
    AppendNumber(file_, temperature);
    absl::StrAppend(&file_, " top_k=", shown, " seed=", entry.seed,
                    " model=", model, " version=", entry.version,
                    " documents=", request.documents_size(),
                    " time_us=", entry.unix_micros, "\n");
  }
  ++file_entries_;
}

void ImpressionLogger::PublishIfDue() {
  if (file_entries_ == 0) return;
  if (file_.size() >= options_.max_file_bytes ||
      options_.clock() - file_started_ >= options_.max_file_age) {
    Publish();
  }
}

void ImpressionLogger::Publish() {
  if (file_entries_ == 0) return;
  const std::string name = absl::StrCat(
      options_.directory, "/impressions-",
      absl::FormatTime("%Y%m%dT%H%M%E6SZ", file_started_, absl::UTCTimeZone()),
      "-", absl::StrFormat("%06d", sequence_++), ".log");
  const absl::Status status = WriteFileAtomically(name, file_);
  if (status.ok()) {
    written_.Increment(static_cast<double>(file_entries_));
    files_.Increment();
  } else {
    write_failed_.Increment(static_cast<double>(file_entries_));
    LogEvent("warning", "impression_log_write_failed",
             {{"file", name},
              {"entries", absl::StrCat(file_entries_)},
              {"error", std::string(status.message())}});
  }
  file_.clear();
  file_.shrink_to_fit();
  file_entries_ = 0;
}

size_t ImpressionLogger::RunQueued() {
  std::lock_guard<std::mutex> write(write_mutex_);
  std::deque<Entry> batch;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    batch.swap(queue_);
    queue_length_.Set(0);
  }
  Write(batch);
  PublishIfDue();
  return batch.size();
}

void ImpressionLogger::Flush() {
  std::lock_guard<std::mutex> write(write_mutex_);
  std::deque<Entry> batch;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    batch.swap(queue_);
    queue_length_.Set(0);
  }
  Write(batch);
  Publish();
}

uint64_t ImpressionLogger::written() const {
  return static_cast<uint64_t>(written_.Value());
}
uint64_t ImpressionLogger::dropped_queue_full() const {
  return static_cast<uint64_t>(queue_full_.Value());
}
uint64_t ImpressionLogger::dropped_write_failed() const {
  return static_cast<uint64_t>(write_failed_.Value());
}
uint64_t ImpressionLogger::files_published() const {
  return static_cast<uint64_t>(files_.Value());
}

}  // namespace plrank::server
