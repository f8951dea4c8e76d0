// A mixed step's work per data-parallel attention rank (dp_ranks.h).
#include "dp_ranks.h"

#include <algorithm>
#include <stdexcept>

#include "chalk/model/model.h"
#include "attention_work.h"

namespace chalk::detail {

std::vector<RankLoad> rank_loads(const Deployment& dep, const StepMix& mix, int64_t units, bool use_given) {
  std::vector<RankLoad> load;
  rank_loads_into(dep, mix, units, use_given, load);
  return load;
}

void rank_loads_into(const Deployment& dep, const StepMix& mix, int64_t units, bool use_given, std::vector<RankLoad>& load) {
  const auto n_units = static_cast<std::size_t>(std::max<int64_t>(units, 1));
  const double q = mix.tokens_per_sequence;
  const bool given_decodes = use_given && !mix.decode_ranks.empty(), given_chunks = use_given && !mix.chunk_ranks.empty();
  if (!mix.contexts_listed()) throw std::logic_error("rank_loads: each decode's context is needed (StepMix::decode_count)");
  if ((given_decodes && mix.decode_ranks.size() != mix.decode_contexts.size()) ||
      (given_chunks && mix.chunk_ranks.size() != mix.chunks.size())) {
    throw std::logic_error("rank_loads: one rank per decode and per chunk");
  }
  load.assign(n_units, RankLoad{});
  // Each unit's decodes (their count and context sum; each context only where a group walks
  // them: a window or a reach) and chunks, in per-thread lists cleared and refilled: the
  // request simulator asks for the loads every step, and fresh lists per unit were most of
  // the allocations of a step (bench/bench_sim.cc plan_deepseek).
  bool walk = false;
  for (const auto& a : dep.attention) walk = walk || a.window > 0 || a.reach > 0;
  thread_local std::vector<std::vector<int64_t>> contexts;
  thread_local std::vector<std::vector<PrefillChunk>> chunks;
  thread_local std::vector<int64_t> decodes, context_sums;
  if (contexts.size() < n_units) contexts.resize(n_units);
  if (chunks.size() < n_units) chunks.resize(n_units);
  decodes.assign(n_units, 0);
  context_sums.assign(n_units, 0);
  for (std::size_t r = 0; r < n_units; ++r) {
    contexts[r].clear();
    chunks[r].clear();
  }
  auto place = [&](bool given, int32_t rank, double tokens) {
    std::size_t r = 0;
    if (given) {
      if (rank < 0 || static_cast<std::size_t>(rank) >= n_units) throw std::logic_error("rank_loads: rank outside the replica's ranks");
      r = static_cast<std::size_t>(rank);
    } else {
      for (std::size_t k = 1; k < n_units; ++k) {
        if (load[k].tokens < load[r].tokens) r = k;
      }
    }
    load[r].tokens += tokens;
    return r;
  };
  for (std::size_t i = 0; i < mix.decode_contexts.size(); ++i) {
    const std::size_t r = place(given_decodes, given_decodes ? mix.decode_ranks[i] : 0, q);
    load[r].head_tokens += q;
    ++decodes[r];
    context_sums[r] += mix.decode_contexts[i];
    if (walk) contexts[r].push_back(mix.decode_contexts[i]);
  }
  for (std::size_t i = 0; i < mix.chunks.size(); ++i) {
    const std::size_t r = place(given_chunks, given_chunks ? mix.chunk_ranks[i] : 0, static_cast<double>(mix.chunks[i].tokens));
    load[r].head_tokens += 1;
    chunks[r].push_back(mix.chunks[i]);
  }
  for (std::size_t r = 0; r < n_units; ++r) {
    for (std::size_t i = 0; i < dep.attention.size(); ++i) {
      const auto& a = dep.attention[i];
      const auto& spec = dep.model.groups[i].attention;
      const AttentionWork w = attention_work(a, spec, decodes[r], context_sums[r], contexts[r], chunks[r]);
      load[r].kv_bytes += a.layers * (a.kv_bytes_per_token * w.kv_tokens + a.index_bytes_per_token * w.index_tokens + w.sequences * 2 * a.state_bytes);
      load[r].core_flops += a.layers * (q * w.decode_flops + w.prefill_flops + recurrent_flops_per_token(spec) * load[r].tokens);
    }
  }
}

double busiest_over_mean(const std::vector<RankLoad>& loads, double RankLoad::*field) {
  double sum = 0, top = 0;
  for (const auto& l : loads) {
    sum += l.*field;
    top = std::max(top, l.*field);
  }
  if (loads.size() <= 1 || sum <= 0) return 1.0;
  return top / (sum / static_cast<double>(loads.size()));
}

double busiest_group_share(const std::vector<RankLoad>& loads, int64_t groups) {
  const auto ranks = static_cast<int64_t>(loads.size());
  if (groups <= 1) return 1.0;
  if (groups >= ranks || ranks % groups != 0) return busiest_over_mean(loads, &RankLoad::tokens);
  const int64_t per = ranks / groups;
  // busiest_over_mean over the groups' summed tokens, each group summed in rank order,
  // without a list of them (the simulator asks every step).
  double sum = 0, top = 0;
  for (int64_t g = 0; g < groups; ++g) {
    double tokens = 0;
    for (int64_t r = g * per; r < (g + 1) * per; ++r) tokens += loads[static_cast<std::size_t>(r)].tokens;
    sum += tokens;
    top = std::max(top, tokens);
  }
  if (sum <= 0) return 1.0;
  return top / (sum / static_cast<double>(groups));
}

}  // namespace chalk::detail
