#include "core/objectives/plackett_luce/contexts.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "core/data/random.h"

namespace plrank {
namespace {

// Seed of the PRNG of (query, permutation): a hash chain, so every query
// draws independently of the others and of the thread that builds it.
uint64_t PermutationSeed(uint64_t seed, uint64_t salt, uint64_t query,
                         uint64_t permutation) {
  uint64_t h = Mix64(seed + 0x632BE59BD9B4E019ULL);
  h = Mix64(h ^ (salt + 0x8CB92BA72F3D8DD7ULL));
  h = Mix64(h ^ (query + 0x9E3779B97F4A7C15ULL));
  return Mix64(h ^ (permutation + 0xD6E8FEB86659FD93ULL));
}

// Two independent commutative hashes of a set of local documents (summed
// per-element mixes): equal sets give equal hashes whatever the order, and
// 128 bits make a collision between different sets negligible.
uint64_t ElementHashA(uint32_t document) {
  return Mix64(document + 0x2545F4914F6CDD1DULL);
}
uint64_t ElementHashB(uint32_t document) {
  return Mix64((uint64_t{document} << 32) ^ 0xA0761D6478BD642FULL);
}

}  // namespace

uint32_t PlContextDepth(absl::Span<const int32_t> labels,
                        const PlackettLuceOptions& options) {
  const size_t n = labels.size();
  if (n <= 1) return 0;
  const auto [min_it, max_it] = std::minmax_element(labels.begin(), labels.end());
  if (options.skip_tied_queries && *min_it == *max_it) return 0;
  // n - 1: the last context is a singleton and contributes exactly nothing.
  size_t depth = options.topk == 0
                     ? n - 1
                     : std::min<size_t>(static_cast<size_t>(options.topk), n - 1);
  if (options.stop_at_lowest_label) {
    const int32_t lowest = *min_it;
    const size_t above = static_cast<size_t>(std::count_if(
        labels.begin(), labels.end(), [&](int32_t l) { return l > lowest; }));
    depth = std::min(depth, above);
  }
  return static_cast<uint32_t>(depth);
}

void PlContexts::Allocate(const Dataset& data,
                          absl::Span<const uint32_t> depths,
                          int32_t num_permutations) {
  num_permutations_ = num_permutations;
  num_documents_ = data.num_documents();
  const size_t num_queries = data.num_queries();
  queries_.assign(num_queries, PlQuery{});
  distinct_.assign(num_queries, 0);
  uint64_t offset = 0;
  for (size_t q = 0; q < num_queries; ++q) {
    PlQuery& query = queries_[q];
    query.begin = data.query_begin(q);
    query.size = data.query_end(q) - data.query_begin(q);
    query.depth = depths[q];
    query.choice_begin = offset;
    offset += uint64_t{query.depth} * num_permutations;
  }
  chosen_.assign(offset, 0);
  weights_.assign(offset, 0.0);
  union_.assign(offset, 0);
}

void PlContexts::FinishQuery(size_t q, std::vector<uint64_t>& hashes,
                             std::vector<uint8_t>& seen) {
  PlQuery& query = queries_[q];
  const int32_t m = num_permutations_;
  const uint32_t depth = query.depth;
  if (depth == 0) return;
  // Multiplicities first (as counts in the weight slots), then count / m.
  hashes.assign(2 * static_cast<size_t>(m), 0);
  uint32_t distinct = 0;
  for (uint32_t j = 0; j < depth; ++j) {
    for (int32_t p = 0; p < m; ++p) {
      if (j > 0) {
        const uint32_t removed = chosen(query, p)[j - 1];
        hashes[2 * p] += ElementHashA(removed);
        hashes[2 * p + 1] += ElementHashB(removed);
      }
      int32_t first = p;
      for (int32_t earlier = 0; earlier < p; ++earlier) {
        if (hashes[2 * earlier] == hashes[2 * p] &&
            hashes[2 * earlier + 1] == hashes[2 * p + 1]) {
          first = earlier;
          break;
        }
      }
      const uint64_t slot = query.choice_begin + uint64_t{depth} * first + j;
      if (first == p) ++distinct;
      weights_[slot] += 1.0;
    }
  }
  for (int32_t p = 0; p < m; ++p) {
    double* w = weights_.data() + query.choice_begin + uint64_t{depth} * p;
    for (uint32_t j = 0; j < depth; ++j) w[j] /= m;
  }
  distinct_[q] = distinct;

  uint32_t* documents = union_.data() + query.choice_begin;
  uint32_t count = 0;
  for (int32_t p = 0; p < m; ++p) {
    const uint32_t* order = chosen(query, p);
    for (uint32_t j = 0; j < depth; ++j) {
      if (!seen[order[j]]) {
        seen[order[j]] = 1;
        documents[count++] = order[j];
      }
    }
  }
  for (uint32_t i = 0; i < count; ++i) seen[documents[i]] = 0;
  query.union_size = count;
}

void PlContexts::Summarize() {
  total_contexts_ = 0;
  distinct_contexts_ = 0;
  queries_with_contexts_ = 0;
  max_query_size_ = 0;
  max_depth_ = 0;
  for (size_t q = 0; q < queries_.size(); ++q) {
    const PlQuery& query = queries_[q];
    total_contexts_ += int64_t{query.depth} * num_permutations_;
    distinct_contexts_ += distinct_[q];
    if (query.depth > 0) ++queries_with_contexts_;
    max_query_size_ = std::max(max_query_size_, query.size);
    max_depth_ = std::max(max_depth_, query.depth);
  }
}

absl::StatusOr<PlContexts> PlContexts::Build(const Dataset& data,
                                             const PlackettLuceOptions& options,
                                             uint64_t seed) {
  if (absl::Status s = ValidatePlackettLuceOptions(options); !s.ok()) return s;
  const size_t num_queries = data.num_queries();
  std::vector<uint32_t> depths(num_queries);
  for (size_t q = 0; q < num_queries; ++q) {
    const uint32_t b = data.query_begin(q), e = data.query_end(q);
    depths[q] = PlContextDepth(
        absl::MakeConstSpan(data.labels.data() + b, e - b), options);
  }
  PlContexts contexts;
  contexts.Allocate(data, depths, options.permutations);
  const uint32_t max_size =
      contexts.queries_.empty()
          ? 0
          : std::max_element(contexts.queries_.begin(), contexts.queries_.end(),
                             [](const PlQuery& a, const PlQuery& b) {
                               return a.size < b.size;
                             })->size;
  const int64_t nq = static_cast<int64_t>(num_queries);
#pragma omp parallel
  {
    std::vector<uint32_t> order(max_size);
    std::vector<uint64_t> keys(max_size);
    std::vector<uint64_t> hashes;
    std::vector<uint8_t> seen(max_size, 0);
#pragma omp for schedule(dynamic, 64)
    for (int64_t q = 0; q < nq; ++q) {
      const PlQuery& query = contexts.queries_[q];
      if (query.depth == 0) continue;
      const int32_t* labels = data.labels.data() + query.begin;
      for (int32_t p = 0; p < options.permutations; ++p) {
        for (uint32_t i = 0; i < query.size; ++i) order[i] = i;
        // The query's place in the whole set (a shard's queries draw as
        // they would single-process).
        SplitMix64 rng(PermutationSeed(seed, options.seed,
                                       data.query_index_base + q, p));
        for (uint32_t i = query.size - 1; i > 0; --i) {
          std::swap(order[i], order[rng.BelowUnbiased(uint64_t{i} + 1)]);
        }
        // (-label, shuffled position) is unique, so sorting it is the stable
        // sort of the shuffle by label; only the top `depth` are needed.
        for (uint32_t i = 0; i < query.size; ++i) {
          keys[i] = (uint64_t{0x7FFFFFFFu - static_cast<uint32_t>(
                                                labels[order[i]])}
                     << 32) |
                    i;
        }
        std::partial_sort(keys.begin(), keys.begin() + query.depth,
                          keys.begin() + query.size);
        uint32_t* out = contexts.chosen_.data() + query.choice_begin +
                        uint64_t{query.depth} * p;
        for (uint32_t j = 0; j < query.depth; ++j) {
          out[j] = order[keys[j] & 0xFFFFFFFFu];
        }
      }
      contexts.FinishQuery(q, hashes, seen);
    }
  }
  contexts.Summarize();
  return contexts;
}

absl::StatusOr<PlContexts> PlContexts::FromPermutations(
    const Dataset& data, const PlackettLuceOptions& options,
    const std::vector<std::vector<std::vector<uint32_t>>>& permutations) {
  if (absl::Status s = ValidatePlackettLuceOptions(options); !s.ok()) return s;
  const size_t num_queries = data.num_queries();
  if (permutations.size() != num_queries) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%d permutation lists for %d queries",
                        permutations.size(), num_queries));
  }
  std::vector<uint32_t> depths(num_queries);
  for (size_t q = 0; q < num_queries; ++q) {
    const uint32_t b = data.query_begin(q), e = data.query_end(q);
    const int32_t* labels = data.labels.data() + b;
    depths[q] = PlContextDepth(absl::MakeConstSpan(labels, e - b), options);
    if (permutations[q].size() != static_cast<size_t>(options.permutations)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "query %d: %d permutations, expected %d", q, permutations[q].size(),
          options.permutations));
    }
    for (const std::vector<uint32_t>& order : permutations[q]) {
      std::vector<uint8_t> seen(e - b, 0);
      bool valid = order.size() == e - b;
      for (size_t i = 0; valid && i < order.size(); ++i) {
        valid = order[i] < e - b && !seen[order[i]] &&
                (i == 0 || labels[order[i - 1]] >= labels[order[i]]);
        if (valid) seen[order[i]] = 1;
      }
      if (!valid) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "query %d: not a permutation sorted by label descending", q));
      }
    }
  }
  PlContexts contexts;
  contexts.Allocate(data, depths, options.permutations);
  std::vector<uint64_t> hashes;
  std::vector<uint8_t> seen(data.num_documents() + 1, 0);
  for (size_t q = 0; q < num_queries; ++q) {
    const PlQuery& query = contexts.queries_[q];
    for (int32_t p = 0; p < options.permutations; ++p) {
      std::copy_n(permutations[q][p].begin(), query.depth,
                  contexts.chosen_.begin() + query.choice_begin +
                      uint64_t{query.depth} * p);
    }
    contexts.FinishQuery(q, hashes, seen);
  }
  contexts.Summarize();
  return contexts;
}

}  // namespace plrank
