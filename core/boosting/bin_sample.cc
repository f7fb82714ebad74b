#include "core/boosting/bin_sample.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "core/data/random.h"

namespace plrank {
namespace {

// Floats of the sample per gathered block: 64 MB.
constexpr size_t kBlockValues = size_t{16} << 20;

uint64_t SampleHash(std::string_view query_id, uint32_t index_in_query) {
  uint64_t hash = 14695981039346656037ull;  // FNV-1a of the id
  for (char c : query_id) {
    hash = (hash ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  }
  return Mix64(Mix64(hash) ^ (index_in_query + 0x9E3779B97F4A7C15ULL));
}

template <typename T>
void Append(std::string* bytes, const T* values, size_t count) {
  bytes->append(reinterpret_cast<const char*>(values), count * sizeof(T));
}

}  // namespace

bool InBinningSample(std::string_view query_id, uint32_t index_in_query,
                     uint64_t total_documents, size_t max_sample) {
  if (total_documents <= max_sample) return true;
  // P(in) = max_sample / total_documents.
  const double share =
      static_cast<double>(max_sample) / static_cast<double>(total_documents);
  const uint64_t threshold = static_cast<uint64_t>(std::ldexp(share, 64));
  return SampleHash(query_id, index_in_query) < threshold;
}

std::vector<BinMapper> FitBinMappers(const Dataset& shard, int32_t max_bin,
                                     size_t max_sample, Reducer& reducer,
                                     int32_t num_threads) {
  max_sample = std::max<size_t>(max_sample, 1);
  double total = static_cast<double>(shard.num_documents());
  reducer.Sum(absl::MakeSpan(&total, 1));
  const uint64_t total_documents = static_cast<uint64_t>(total);
  // This rank's documents in the sample.
  std::vector<uint32_t> sampled;
  for (size_t q = 0; q < shard.num_queries(); ++q) {
    const std::string_view id =
        q < shard.query_ids.size() ? std::string_view(shard.query_ids[q])
                                   : std::string_view();
    for (uint32_t i = shard.query_begin(q); i < shard.query_end(q); ++i) {
      if (InBinningSample(id, i - shard.query_begin(q), total_documents,
                          max_sample)) {
        sampled.push_back(i);
      }
    }
  }
  const int32_t num_features = shard.num_features;
  const bool root = reducer.rank() == 0;
  std::vector<BinMapper> mappers(num_features);
  const size_t expected =
      std::max<size_t>(1, std::min<uint64_t>(total_documents, max_sample * 2));
  const int32_t block =
      static_cast<int32_t>(std::max<size_t>(1, kBlockValues / expected));
  for (int32_t first = 0; first < num_features; first += block) {
    const int32_t last = std::min(num_features, first + block);
    // This rank's sampled values of features [first, last), feature-major.
    std::string mine;
    mine.reserve(sampled.size() * (last - first) * sizeof(float));
    std::vector<float> values(sampled.size());
    for (int32_t f = first; f < last; ++f) {
      const float* column = shard.column(f);
      for (size_t k = 0; k < sampled.size(); ++k) values[k] = column[sampled[k]];
      Append(&mine, values.data(), values.size());
    }
    const std::vector<std::string> gathered = reducer.Gather(mine);
    mine.clear();
    mine.shrink_to_fit();
    if (!root) continue;
#pragma omp parallel for schedule(dynamic, 1) num_threads(num_threads)
    for (int32_t f = first; f < last; ++f) {
      std::vector<float> sample;
      for (const std::string& part : gathered) {
        const size_t count = part.size() / sizeof(float) / (last - first);
        const size_t at = sample.size();
        sample.resize(at + count);
        std::memcpy(sample.data() + at,
                    part.data() + (f - first) * count * sizeof(float),
                    count * sizeof(float));
      }
      mappers[f] = BinMapper::Fit(std::move(sample), max_bin);
    }
  }
  // Rank 0's mappers to every rank: per feature, useful, bound count, bounds.
  std::string bytes;
  if (root) {
    for (const BinMapper& mapper : mappers) {
      const uint8_t useful = mapper.is_useful() ? 1 : 0;
      const uint32_t count = static_cast<uint32_t>(mapper.num_bins());
      Append(&bytes, &useful, 1);
      Append(&bytes, &count, 1);
      Append(&bytes, mapper.upper_bounds().data(), count);
    }
  }
  reducer.Broadcast(&bytes);
  if (root) return mappers;
  size_t at = 0;
  for (int32_t f = 0; f < num_features; ++f) {
    uint8_t useful = 0;
    uint32_t count = 0;
    std::memcpy(&useful, bytes.data() + at, 1);
    std::memcpy(&count, bytes.data() + at + 1, sizeof(count));
    at += 1 + sizeof(count);
    std::vector<float> bounds(count);
    std::memcpy(bounds.data(), bytes.data() + at, count * sizeof(float));
    at += count * sizeof(float);
    mappers[f] = BinMapper::FromBounds(std::move(bounds), useful != 0);
  }
  return mappers;
}

}  // namespace plrank
