#include "core/pipeline/checkpoint.h"

#include <cstring>
#include <filesystem>
#include <string_view>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "core/data/content_hash.h"
#include "core/data/file_io.h"

namespace plrank {
namespace {

constexpr char kMagic[8] = {'P', 'L', 'R', 'K', 'C', 'K', 'P', '1'};

class Writer {
 public:
  template <typename T>
  void Put(T value) {
    static_assert(std::is_trivially_copyable_v<T>);
    bytes_.append(reinterpret_cast<const char*>(&value), sizeof(T));
  }
  template <typename T>
  void PutVector(const std::vector<T>& values) {
    Put<uint32_t>(static_cast<uint32_t>(values.size()));
    bytes_.append(reinterpret_cast<const char*>(values.data()),
                  values.size() * sizeof(T));
  }
  std::string& bytes() { return bytes_; }

 private:
  std::string bytes_;
};

class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}
  template <typename T>
  bool Get(T* value) {
    if (bytes_.size() - at_ < sizeof(T)) return false;
    std::memcpy(value, bytes_.data() + at_, sizeof(T));
    at_ += sizeof(T);
    return true;
  }
  template <typename T>
  bool GetVector(std::vector<T>* values) {
    uint32_t count = 0;
    if (!Get(&count) || (bytes_.size() - at_) / sizeof(T) < count) return false;
    values->resize(count);
    std::memcpy(values->data(), bytes_.data() + at_, count * sizeof(T));
    at_ += count * sizeof(T);
    return true;
  }
  bool done() const { return at_ == bytes_.size(); }

 private:
  std::string_view bytes_;
  size_t at_ = 0;
};

void PutMetrics(Writer& out, const std::map<int32_t, std::vector<double>>& m) {
  out.Put<uint32_t>(static_cast<uint32_t>(m.size()));
  for (const auto& [iteration, values] : m) {
    out.Put<int32_t>(iteration);
    out.PutVector(values);
  }
}

bool GetMetrics(Reader& in, std::map<int32_t, std::vector<double>>* m) {
  uint32_t count = 0;
  if (!in.Get(&count)) return false;
  for (uint32_t i = 0; i < count; ++i) {
    int32_t iteration = 0;
    std::vector<double> values;
    if (!in.Get(&iteration) || !in.GetVector(&values)) return false;
    (*m)[iteration] = std::move(values);
  }
  return true;
}

// Children in range and below their parent: routing ends at a leaf.
bool TreeIsSound(const Tree& tree) {
  const size_t internal = tree.split_feature.size();
  if (tree.threshold.size() != internal || tree.default_left.size() != internal ||
      tree.left_child.size() != internal || tree.right_child.size() != internal ||
      tree.split_gain.size() != internal || !tree.zero_as_missing.empty() ||
      tree.leaf_value.size() != internal + 1 ||
      tree.leaf_count.size() != internal + 1) {
    return false;
  }
  for (size_t node = 0; node < internal; ++node) {
    if (tree.split_feature[node] < 0) return false;
    for (int32_t child : {tree.left_child[node], tree.right_child[node]}) {
      if (child >= 0 ? (static_cast<size_t>(child) <= node ||
                        static_cast<size_t>(child) >= internal)
                     : static_cast<size_t>(~child) > internal) {
        return false;
      }
    }
  }
  return true;
}

}  // namespace

std::string CheckpointPath(const std::string& dir) {
  return (std::filesystem::path(dir) / "checkpoint.plrank").string();
}

std::string SerializeCheckpoint(const Checkpoint& checkpoint) {
  Writer out;
  out.bytes().append(kMagic, sizeof(kMagic));
  out.Put<uint64_t>(checkpoint.job_digest);
  const BoosterResult& state = checkpoint.state;
  out.Put<uint32_t>(static_cast<uint32_t>(state.trees.size()));
  for (const Tree& tree : state.trees) {
    out.PutVector(tree.split_feature);
    out.PutVector(tree.threshold);
    out.PutVector(tree.default_left);
    out.PutVector(tree.left_child);
    out.PutVector(tree.right_child);
    out.PutVector(tree.split_gain);
    out.PutVector(tree.leaf_value);
    out.PutVector(tree.leaf_count);
  }
  out.Put<uint32_t>(static_cast<uint32_t>(state.history.size()));
  for (const IterationReport& report : state.history) {
    out.Put<int32_t>(report.iteration);
    out.Put<int32_t>(report.num_trees);
    out.Put<double>(report.train_loss);
    out.Put<double>(report.train_metric);
    out.Put<double>(report.valid_metric);
    out.Put<double>(report.elapsed_seconds);
  }
  out.Put<int32_t>(state.best_iteration);
  out.Put<int32_t>(state.num_features);
  out.Put<double>(state.best_metric);
  PutMetrics(out, checkpoint.train_metrics);
  PutMetrics(out, checkpoint.valid_metrics);
  out.Put<uint32_t>(static_cast<uint32_t>(checkpoint.valid_losses.size()));
  for (const auto& [iteration, loss] : checkpoint.valid_losses) {
    out.Put<int32_t>(iteration);
    out.Put<double>(loss);
  }
  // gam's position bias, only when learned (checkpoints of other runs keep
  // their bytes).
  if (!state.position_bias.empty()) out.PutVector(state.position_bias);
  out.Put<uint64_t>(HashContent(out.bytes()));
  return std::move(out.bytes());
}

absl::StatusOr<Checkpoint> ParseCheckpoint(std::string_view bytes,
                                           const std::string& name) {
  auto damaged = [&name](const std::string& why) {
    return absl::DataLossError(absl::StrCat(
        name, ": not a usable checkpoint (", why,
        "); delete it to train from the start"));
  };
  if (bytes.size() < sizeof(kMagic) + sizeof(uint64_t) ||
      std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0) {
    return damaged("no PLRank checkpoint header");
  }
  const std::string_view body = bytes.substr(0, bytes.size() - sizeof(uint64_t));
  uint64_t trailer = 0;
  std::memcpy(&trailer, bytes.data() + body.size(), sizeof(trailer));
  if (HashContent(body) != trailer) return damaged("checksum mismatch");
  Reader in(body.substr(sizeof(kMagic)));
  Checkpoint checkpoint;
  BoosterResult& state = checkpoint.state;
  uint32_t trees = 0;
  if (!in.Get(&checkpoint.job_digest) || !in.Get(&trees)) {
    return damaged("truncated");
  }
  for (uint32_t t = 0; t < trees; ++t) {
    Tree tree;
    if (!in.GetVector(&tree.split_feature) || !in.GetVector(&tree.threshold) ||
        !in.GetVector(&tree.default_left) || !in.GetVector(&tree.left_child) ||
        !in.GetVector(&tree.right_child) || !in.GetVector(&tree.split_gain) ||
        !in.GetVector(&tree.leaf_value) || !in.GetVector(&tree.leaf_count)) {
      return damaged("truncated tree");
    }
    if (!TreeIsSound(tree)) return damaged(absl::StrCat("tree ", t, " is malformed"));
    state.trees.push_back(std::move(tree));
  }
  uint32_t reports = 0;
  if (!in.Get(&reports)) return damaged("truncated");
  for (uint32_t i = 0; i < reports; ++i) {
    IterationReport report;
    if (!in.Get(&report.iteration) || !in.Get(&report.num_trees) ||
        !in.Get(&report.train_loss) || !in.Get(&report.train_metric) ||
        !in.Get(&report.valid_metric) || !in.Get(&report.elapsed_seconds)) {
      return damaged("truncated history");
    }
    state.history.push_back(report);
  }
  uint32_t losses = 0;
  if (!in.Get(&state.best_iteration) || !in.Get(&state.num_features) ||
      !in.Get(&state.best_metric) ||
      !GetMetrics(in, &checkpoint.train_metrics) ||
      !GetMetrics(in, &checkpoint.valid_metrics) || !in.Get(&losses)) {
    return damaged("truncated");
  }
  for (uint32_t i = 0; i < losses; ++i) {
    int32_t iteration = 0;
    double loss = 0.0;
    if (!in.Get(&iteration) || !in.Get(&loss)) return damaged("truncated");
    checkpoint.valid_losses[iteration] = loss;
  }
  if (!in.done() && !in.GetVector(&state.position_bias)) {
    return damaged("truncated position bias");
  }
  if (!in.done()) return damaged("trailing bytes");
  if (state.best_iteration < 0 ||
      static_cast<size_t>(state.best_iteration) > state.history.size()) {
    return damaged("best iteration out of range");
  }
  return checkpoint;
}

absl::Status WriteCheckpoint(const std::string& dir,
                             const Checkpoint& checkpoint) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) {
    return absl::InternalError(
        absl::StrCat(dir, ": cannot create directory: ", error.message()));
  }
  return WriteFileAtomically(CheckpointPath(dir),
                             SerializeCheckpoint(checkpoint));
}

}  // namespace plrank
