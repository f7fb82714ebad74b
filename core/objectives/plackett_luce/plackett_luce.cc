#include "core/objectives/plackett_luce/plackett_luce.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/objectives/plackett_luce/exp_range.h"
#include "core/objectives/plackett_luce/leaf_step.h"

namespace plrank {
namespace {

// Per-thread scratch, sized once by the largest query and group count.
struct TiedWorkspace {
  std::vector<double> exp_score;  // e_d = exp(s_d - max_s), local index
  // Per group (highest label first):
  std::vector<double> mass;         // E_G
  std::vector<double> mass_but_top;  // E_G minus its largest member, summed
  std::vector<uint32_t> top;        // local index of the largest member
  std::vector<double> below;        // R_G
  std::vector<double> alpha, beta, gamma, delta, epsilon, eta, omega;
  std::vector<double> member_weight;  // kIndependent: each member's weight
  // Per leaf (leaf step only):
  std::vector<double> leaf_below, leaf_group;
  std::vector<double> leaf_share;  // members' summed shares (weights only)
  std::vector<uint32_t> leaf_members;
  std::vector<uint8_t> touched;
  std::vector<int32_t> touched_list;

  void Reserve(uint32_t max_size, uint32_t max_groups) {
    exp_score.resize(max_size);
    for (auto* v : {&mass, &mass_but_top, &below, &alpha, &beta, &gamma,
                    &delta, &epsilon, &eta, &omega, &member_weight}) {
      v->resize(max_groups);
    }
    top.resize(max_groups);
  }
};

// c of pick k of a group of `size`: the group's share in its denominator.
double GroupShare(bool efron, uint32_t k, double inv_size) {
  return efron ? 1.0 - k * inv_size : 1.0;
}

// Fills ws for one query: e_d, each group's E, R and the sums over its terms
// (term t has denominator D_t = R + g_t, g_t its group part: c_k E for
// Efron/Breslow, e_d for pick d under kIndependent)
//   alpha = sum w/D, beta = sum w c/D, gamma = sum w/D^2,
//   delta = sum w c/D^2, epsilon = sum w c^2/D^2, eta = sum w g/D^2,
//   omega = sum w.
// Returns the shift of the exponentials (PlExpShift).
double PrepareQuery(const double* scores, const PlTieQuery& query,
                    const PlTieGroups& groups, PlTies ties, TiedWorkspace& ws) {
  const double max_score = pl_internal::PlExpShift(scores, query.size);
  for (uint32_t d = 0; d < query.size; ++d) {
    ws.exp_score[d] =
        std::exp(pl_internal::PlExpArgument(scores[d], max_score));
  }
  const PlTieGroup* group = groups.groups(query);
  const double* share = groups.shares(query);
  double below = 0.0;
  for (uint32_t i = query.num_groups; i-- > 0;) {
    const uint32_t* members = groups.members(group[i]);
    const uint32_t size = group[i].size;
    uint32_t top = members[0];
    for (uint32_t k = 1; k < size; ++k) {
      if (ws.exp_score[members[k]] > ws.exp_score[top]) top = members[k];
    }
    double mass = 0.0, but_top = 0.0;
    for (uint32_t k = 0; k < size; ++k) {
      mass += ws.exp_score[members[k]];
      if (members[k] != top) but_top += ws.exp_score[members[k]];
    }
    ws.mass[i] = mass;
    ws.mass_but_top[i] = but_top;
    ws.top[i] = top;
    ws.below[i] = below;
    double alpha = 0, beta = 0, gamma = 0, delta = 0, epsilon = 0, eta = 0;
    double omega = 0;
    const double* w = groups.weights(group[i]);
    for (uint32_t k = 0; k < group[i].terms; ++k) omega += w[k];
    ws.member_weight[i] = omega / size;
    if (ties == PlTies::kIndependent) {
      // Every member is picked from itself and R, with the mean weight of
      // the group's picks (its expected weight over the orders of G).
      if (group[i].terms > 0 && share != nullptr) {
        for (uint32_t k = 0; k < size; ++k) {
          const double e = ws.exp_score[members[k]];
          const double inv = 1.0 / std::max(below + e, DBL_MIN);
          const double t = share[members[k]];
          alpha += t * inv;
          gamma += t * inv * inv;
          eta += t * e * inv * inv;
        }
        alpha *= ws.member_weight[i];
        gamma *= ws.member_weight[i];
        eta *= ws.member_weight[i];
      } else if (group[i].terms > 0) {
        for (uint32_t k = 0; k < size; ++k) {
          const double e = ws.exp_score[members[k]];
          const double inv = 1.0 / std::max(below + e, DBL_MIN);
          alpha += inv;
          gamma += inv * inv;
          eta += e * inv * inv;
        }
        alpha *= ws.member_weight[i];
        gamma *= ws.member_weight[i];
        eta *= ws.member_weight[i];
      }
    } else {
      const bool efron = ties == PlTies::kEfron;
      const double inv_size = 1.0 / size;
      for (uint32_t k = 0; k < group[i].terms; ++k) {
        const double c = GroupShare(efron, k, inv_size);
        const double inv = 1.0 / std::max(below + c * mass, DBL_MIN);
        alpha += w[k] * inv;
        beta += w[k] * c * inv;
        gamma += w[k] * inv * inv;
        delta += w[k] * c * inv * inv;
        epsilon += w[k] * c * c * inv * inv;
      }
      eta = mass * delta;
    }
    ws.alpha[i] = alpha;
    ws.beta[i] = beta;
    ws.gamma[i] = gamma;
    ws.delta[i] = delta;
    ws.epsilon[i] = epsilon;
    ws.eta[i] = eta;
    ws.omega[i] = omega;
    below += mass;
  }
  return max_score;
}

// L'(d) and the hessian diagonal (as a positive number) of every document.
template <typename Store>
void TiedQueryDerivatives(const double* scores, const PlTieQuery& query,
                          const PlTieGroups& groups, PlTies ties,
                          TiedWorkspace& ws, Store store) {
  if (query.num_terms == 0) {
    for (uint32_t d = 0; d < query.size; ++d) store(d, 0.0, 0.0);
    return;
  }
  PrepareQuery(scores, query, groups, ties, ws);
  const bool independent = ties == PlTies::kIndependent;
  const PlTieGroup* group = groups.groups(query);
  const double* share = groups.shares(query);
  double alpha_above = 0.0;  // sum of alpha over the groups above i
  for (uint32_t i = 0; i < query.num_groups; ++i) {
    const uint32_t* members = groups.members(group[i]);
    for (uint32_t k = 0; k < group[i].size; ++k) {
      const uint32_t d = members[k];
      const double e = ws.exp_score[d];
      // E_G - e_d without cancellation for the group's largest member.
      const double others = d == ws.top[i] ? ws.mass_but_top[i]
                                           : std::max(ws.mass[i] - e, 0.0);
      double first, second;
      if (independent) {
        // Own pick: w (1 - e/(R + e)) = w R/(R + e), w e R/(R + e)^2.
        const double own =
            group[i].terms > 0
                ? (share != nullptr ? ws.member_weight[i] * share[d]
                                    : ws.member_weight[i]) /
                      std::max(ws.below[i] + e, DBL_MIN)
                : 0.0;
        first = own * ws.below[i];
        second = own * ws.below[i] * e / std::max(ws.below[i] + e, DBL_MIN);
      } else {
        // Own group: W/|G| - e beta; exactly R alpha for a singleton.
        first = group[i].size == 1 ? ws.below[i] * ws.alpha[i]
                : share != nullptr
                    ? ws.omega[i] / group[i].size * share[d] - e * ws.beta[i]
                    : ws.omega[i] / group[i].size - e * ws.beta[i];
        second = e * (ws.below[i] * ws.delta[i] + others * ws.epsilon[i]);
      }
      first -= e * alpha_above;
      // Groups above: their contexts minus d hold R_i, G's others and the
      // groups in between, all positive.
      double in_between = 0.0;
      for (uint32_t j = i; j-- > 0;) {
        second += e * ((ws.below[i] + others + in_between) * ws.gamma[j] +
                       ws.eta[j]);
        in_between += ws.mass[j];
      }
      store(d, first, second);
    }
    alpha_above += ws.alpha[i];
  }
}

double TiedQueryLoss(const double* scores, const PlTieQuery& query,
                     const PlTieGroups& groups, PlTies ties,
                     TiedWorkspace& ws) {
  if (query.num_terms == 0) return 0.0;
  const double max_score = PrepareQuery(scores, query, groups, ties, ws);
  const PlTieGroup* group = groups.groups(query);
  const double* share = groups.shares(query);
  double loss = 0.0;
  for (uint32_t i = 0; i < query.num_groups; ++i) {
    if (group[i].terms == 0) continue;
    const uint32_t* members = groups.members(group[i]);
    if (ties == PlTies::kIndependent) {
      for (uint32_t k = 0; k < group[i].size; ++k) {
        const uint32_t d = members[k];
        loss += (share != nullptr ? ws.member_weight[i] * share[d]
                                  : ws.member_weight[i]) *
                (std::log(std::max(ws.below[i] + ws.exp_score[d], DBL_MIN)) -
                 pl_internal::PlExpArgument(scores[d], max_score));
      }
      continue;
    }
    double mean = 0.0;
    for (uint32_t k = 0; k < group[i].size; ++k) {
      const double argument =
          pl_internal::PlExpArgument(scores[members[k]], max_score);
      mean += share != nullptr ? share[members[k]] * argument : argument;
    }
    mean /= group[i].size;
    const double* w = groups.weights(group[i]);
    const double inv_size = 1.0 / group[i].size;
    for (uint32_t k = 0; k < group[i].terms; ++k) {
      const double c = GroupShare(ties == PlTies::kEfron, k, inv_size);
      loss += w[k] * (std::log(std::max(ws.below[i] + c * ws.mass[i], DBL_MIN)) -
                      mean);
    }
  }
  return loss;
}

// Adds one in-bag query's leaf sums. Groups are swept from the lowest label
// up, so each leaf's mass below the current group only grows.
void AccumulateQuery(const double* scores, const int32_t* leaf,
                     const PlTieQuery& query, const PlTieGroups& groups,
                     PlTies ties, TiedWorkspace& ws, double* first,
                     double* second, double* count) {
  PrepareQuery(scores, query, groups, ties, ws);
  const bool independent = ties == PlTies::kIndependent;
  const PlTieGroup* group = groups.groups(query);
  const double* share = groups.shares(query);
  ws.touched_list.clear();
  for (uint32_t i = query.num_groups; i-- > 0;) {
    const uint32_t* members = groups.members(group[i]);
    for (uint32_t k = 0; k < group[i].size; ++k) {
      const int32_t u = leaf[members[k]];
      if (u < 0) continue;
      if (!ws.touched[u]) {
        ws.touched[u] = 1;
        ws.touched_list.push_back(u);  // capacity reserved: no allocation
        ws.leaf_below[u] = 0.0;
        ws.leaf_group[u] = 0.0;
        ws.leaf_members[u] = 0;
        ws.leaf_share[u] = 0.0;
      }
      ws.leaf_group[u] += ws.exp_score[members[k]];
      ++ws.leaf_members[u];
      if (share != nullptr) ws.leaf_share[u] += share[members[k]];
    }
    if (group[i].terms > 0 && independent) {
      // Leaves see P = r/D for picks outside them; each member's own leaf
      // adds its share e/D (and the cross terms) on top.
      for (int32_t u : ws.touched_list) {
        const double r = ws.leaf_below[u];
        const double p1 = r * ws.alpha[i];
        first[u] -= p1;
        second[u] += r * r * ws.gamma[i] - p1;
        count[u] += ws.omega[i];
      }
      const double w = ws.member_weight[i];
      for (uint32_t k = 0; k < group[i].size; ++k) {
        const int32_t u = leaf[members[k]];
        if (u < 0) continue;
        const double e = ws.exp_score[members[k]];
        const double inv = 1.0 / std::max(ws.below[i] + e, DBL_MIN);
        const double r = ws.leaf_below[u];
        const double wd = share != nullptr ? w * share[members[k]] : w;
        first[u] += wd * (1.0 - e * inv);
        second[u] += wd * (e * inv * (2.0 * r + e) * inv - e * inv);
      }
    } else if (group[i].terms > 0) {
      const double inv_size = 1.0 / group[i].size;
      for (int32_t u : ws.touched_list) {
        const double r = ws.leaf_below[u], a = ws.leaf_group[u];
        const double p1 = r * ws.alpha[i] + a * ws.beta[i];
        const double p2 = r * r * ws.gamma[i] + 2.0 * r * a * ws.delta[i] +
                          a * a * ws.epsilon[i];
        first[u] += (share != nullptr
                         ? ws.omega[i] * ws.leaf_share[u] * inv_size
                         : ws.omega[i] * ws.leaf_members[u] * inv_size) -
                    p1;
        second[u] += p2 - p1;
        count[u] += ws.omega[i];
      }
    }
    for (int32_t u : ws.touched_list) {
      ws.leaf_below[u] += ws.leaf_group[u];
      ws.leaf_group[u] = 0.0;
      ws.leaf_members[u] = 0;
      ws.leaf_share[u] = 0.0;
    }
  }
  for (int32_t u : ws.touched_list) ws.touched[u] = 0;
}

// The base's per-thread scratch plus the tie-group workspace.
struct TiedScratch : QueryScratch {
  TiedWorkspace ws;
};

}  // namespace

absl::Status PlackettLuceObjective::InitQueries(const Dataset& train,
                                                    uint64_t /*seed*/) {
  absl::StatusOr<PlTieGroups> groups =
      PlTieGroups::Build(train, options_, &training_weights());
  if (!groups.ok()) return groups.status();
  groups_ = *std::move(groups);
  return absl::OkStatus();
}

std::unique_ptr<QueryScratch> PlackettLuceObjective::NewScratch() const {
  auto scratch = std::make_unique<TiedScratch>();
  scratch->ws.Reserve(groups_.max_query_size(), groups_.max_groups());
  return scratch;
}

void PlackettLuceObjective::QueryDerivatives(size_t q, const double* scores,
                                                 double* gradients,
                                                 double* hessians,
                                                 QueryScratch& scratch) const {
  // The booster minimizes: gradient = -L'(d).
  TiedQueryDerivatives(scores, groups_.queries()[q], groups_, options_.ties,
                       static_cast<TiedScratch&>(scratch).ws,
                       [&](uint32_t d, double l1, double curvature) {
                         gradients[d] = -l1;
                         hessians[d] = curvature;
                       });
}

double PlackettLuceObjective::QueryLoss(size_t q, const double* scores,
                                            QueryScratch& scratch) const {
  return TiedQueryLoss(scores, groups_.queries()[q], groups_, options_.ties,
                       static_cast<TiedScratch&>(scratch).ws);
}

void PlackettLuceObjective::ComputeDerivatives(
    absl::Span<const double> scores, absl::Span<const uint8_t> query_in_bag,
    absl::Span<double> first, absl::Span<double> diagonal_second) const {
  ComputeDerivativesDouble(scores, query_in_bag, first, diagonal_second);
  // L' = -gradient and LL'' = -hessian: negation is exact.
  for (double& value : first) value = -value;
  for (double& value : diagonal_second) value = -value;
}

PlackettLuceObjective::LeafDerivatives
PlackettLuceObjective::ComputeLeafDerivatives(
    absl::Span<const double> scores,
    absl::Span<const int32_t> leaf_of_document, int32_t num_leaves) const {
  const absl::Span<const PlTieQuery> queries = groups_.queries();
  const PlTies ties = options_.ties;
  LeafDerivatives result;
  pl_internal::ReduceLeafSumsByChunks<TiedWorkspace>(
      static_cast<int64_t>(queries.size()), num_leaves,
      [&](TiedWorkspace& ws) {
        ws.Reserve(groups_.max_query_size(), groups_.max_groups());
        ws.leaf_below.assign(num_leaves, 0.0);
        ws.leaf_group.assign(num_leaves, 0.0);
        ws.leaf_members.assign(num_leaves, 0);
        ws.leaf_share.assign(num_leaves, 0.0);
        ws.touched.assign(num_leaves, 0);
        ws.touched_list.reserve(num_leaves);
      },
      [&](TiedWorkspace& ws, int64_t q, double* first, double* second,
          double* count) {
        const PlTieQuery& query = queries[q];
        if (query.num_terms == 0) return;
        const int32_t* leaf = leaf_of_document.data() + query.begin;
        if (leaf[0] < 0) return;  // out of this iteration's bag
        AccumulateQuery(scores.data() + query.begin, leaf, query, groups_,
                        ties, ws, first, second, count);
      },
      &result.first, &result.second, &result.contexts);
  return result;
}

std::vector<double> PlackettLuceObjective::LeafStatistics(
    absl::Span<const double> scores, const LeafAssignment& assignment) const {
  return pl_internal::PlLeafStatistics(*this, options_, scores, assignment);
}

void PlackettLuceObjective::LeafValuesFromStatistics(
    absl::Span<const double> statistics, const LeafAssignment& assignment,
    absl::Span<double> leaf_values) const {
  pl_internal::PlLeafValues(*this, options_, statistics, assignment,
                            leaf_values);
}

std::vector<std::string> PlackettLuceObjective::Describe() const {
  const std::string topk =
      options_.topk == 0 ? "all" : absl::StrCat(options_.topk);
  return {absl::StrFormat(
      "plrank: tie groups (%s), weighting %s, top-k %s, stop at lowest label "
      "%s, leaf step damping %g clip %g; %d of %d queries have terms, %d "
      "terms",
      PlTiesName(options_.ties),
      PlWeightingName(options_.weighting), topk,
      options_.stop_at_lowest_label ? "yes" : "no", options_.newton_damping,
      options_.max_leaf_step, groups_.queries_with_terms(),
      groups_.queries().size(), groups_.total_terms())};
}

}  // namespace plrank
