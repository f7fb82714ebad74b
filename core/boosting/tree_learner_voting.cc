// TreeLearner's voting-parallel split finding (ParallelSplits::kVoting,
// core/boosting/feature_voting.h). Histograms stay local: each rank keeps
// its own histogram of every leaf (the subtraction trick works on local
// histograms as single-process), and only the elected features' slots of
// the two children are summed over the ranks, into global_built_ and
// global_derived_, which live for one BuildAndScan.
#include <algorithm>
#include <cstring>

#include <omp.h>

#include "core/boosting/feature_voting.h"
#include "core/boosting/tree_learner.h"

namespace plrank {

NodeSums TreeLearner::LocalSums(const Leaf& leaf,
                                absl::Span<const float> gradients,
                                absl::Span<const float> hessians) const {
  NodeSums sums;
  const uint32_t* documents = indices_.data() + leaf.begin;
  for (uint32_t j = 0; j < leaf.count; ++j) sums.gradient += gradients[documents[j]];
  if (config_.rules.newton) {
    for (uint32_t j = 0; j < leaf.count; ++j) sums.hessian += hessians[documents[j]];
  } else {
    sums.hessian = leaf.count;
  }
  sums.count = leaf.count;
  return sums;
}

void TreeLearner::LocalGains(const Leaf& leaf, const double* local_histogram,
                             absl::Span<const int32_t> group, size_t offset) {
  for (int32_t f : group) {
    SplitCandidate candidate;
    ScanFeatureForSplit(layout_, data_, local_histogram, leaf.local_sums, f,
                        local_rules_, &candidate);
    local_gain_[offset + f] = candidate.valid() ? candidate.gain : 0.0;
  }
}

void TreeLearner::VoteReduceAndScan(Leaf* built, Leaf* derived,
                                    bool scan_built, bool scan_derived,
                                    int threads,
                                    absl::Span<const int32_t> features) {
  const uint32_t* documents = indices_.data() + built->begin;
  const float* pairs = ordered_pairs_.data();
  double* built_histogram = histogram(built->histogram);
  double* derived_histogram = scan_derived ? histogram(derived->histogram) : nullptr;
  const size_t num_features = static_cast<size_t>(data_.num_features());
  const int32_t seats = 2 * config_.top_k;
  // With seats for every feature the vote is moot: all are elected.
  const bool vote = static_cast<size_t>(seats) < features.size();
  const int32_t num_groups = builder_.GroupCount(features.size(), threads);
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
  for (int32_t g = 0; g < num_groups; ++g) {
    const absl::Span<const int32_t> group = FeatureGroup(features, num_groups, g);
    builder_.BuildGroup(group, absl::MakeConstSpan(documents, built->count),
                        pairs, built_histogram);
    if (scan_derived) {
      for (int32_t f : group) {
        SubtractFeature(layout_, f, built_histogram, derived_histogram);
      }
    }
    if (vote && scan_built) LocalGains(*built, built_histogram, group, 0);
    if (vote && scan_derived) {
      LocalGains(*derived, derived_histogram, group, num_features);
    }
  }

  // The two children: which are scanned, where their halves of the
  // ballot and local gains start, their local and global histograms.
  struct Child {
    Leaf* leaf;
    bool scan;
    size_t offset;
    const double* local;
    double* global;
    std::vector<int32_t> elected;
  };
  Child children[2] = {
      {built, scan_built, 0, built_histogram, global_built_.data(), {}},
      {derived, scan_derived, num_features, derived_histogram,
       global_derived_.data(), {}}};
  if (vote) {
    // Every rank makes this Sum (the scan flags come from global counts);
    // a child that is not scanned casts an empty ballot.
    const absl::Span<double> ballot = absl::MakeSpan(ballot_);
    const absl::Span<const double> gains = absl::MakeConstSpan(local_gain_);
    for (const Child& child : children) {
      const absl::Span<double> half = ballot.subspan(child.offset, num_features);
      if (child.scan) {
        CastBallot(gains.subspan(child.offset, num_features), features,
                   config_.top_k, half);
      } else {
        std::fill(half.begin(), half.end(), 0.0);
      }
    }
    config_.reducer->Sum(ballot);
    for (Child& child : children) {
      if (child.scan) {
        child.elected = ElectFeatures(ballot.subspan(child.offset, num_features),
                                      features, seats);
      }
    }
  } else {
    for (Child& child : children) {
      if (child.scan) child.elected.assign(features.begin(), features.end());
    }
  }

  // The elected slots of both children, packed, summed in one call.
  const size_t stride = static_cast<size_t>(layout_.stride());
  auto slots = [&](int32_t f) { return layout_.num_slots(f) * stride; };
  packed_.clear();
  for (const Child& child : children) {
    for (int32_t f : child.elected) {
      const double* from = child.local + layout_.offset(f);
      packed_.insert(packed_.end(), from, from + slots(f));
    }
  }
  config_.reducer->Sum(absl::MakeSpan(packed_));
  size_t at = 0;
  for (const Child& child : children) {
    for (int32_t f : child.elected) {
      std::memcpy(child.global + layout_.offset(f), packed_.data() + at,
                  sizeof(double) * slots(f));
      at += slots(f);
    }
  }

  // Serial: at most 2 top_k features per child (BetterSplit is a total
  // order, so the answer is the same as any parallel merge's).
  for (Child& child : children) {
    for (int32_t f : child.elected) {
      ScanFeatureForSplit(layout_, data_, child.global, child.leaf->sums, f,
                          config_.rules, &child.leaf->best);
    }
  }
}

}  // namespace plrank
