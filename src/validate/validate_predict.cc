// Predicting a mapped measurement row, plain roofline and with mechanisms
// (docs/accuracy.md, "What is predicted").
#include <algorithm>
#include <cmath>
#include <functional>
#include <utility>
#include <vector>

#include "chalk/base/count_cast.h"
#include "chalk/base/error.h"
#include "chalk/io/io.h"
#include "chalk/engine/layout_search.h"
#include "chalk/engine/roofline.h"
#include "chalk/engine/step_mix.h"
#include "chalk/sim/plan.h"
#include "validate_internal.h"

namespace chalk::detail {
namespace {

using counts::d;

std::string num(double v) { return row_num(v, 3); }

/// The steps of a generation to evaluate, and the weight of each: every step up to 2048,
/// else 1024 evenly spaced midpoints each standing for n / 1024 steps (the step time is
/// smooth in the context), so a long generation costs a bounded time and never hangs.
std::vector<std::pair<int64_t, double>> generation_steps(int64_t n) {
  std::vector<std::pair<int64_t, double>> out;
  constexpr int64_t kExact = 2048, kSamples = 1024;
  if (n <= kExact) {
    for (int64_t i = 0; i < n; ++i) out.emplace_back(i, 1.0);
    return out;
  }
  for (int64_t j = 0; j < kSamples; ++j) {
    out.emplace_back(static_cast<int64_t>((static_cast<double>(j) + 0.5) * static_cast<double>(n) / kSamples),
                     static_cast<double>(n) / kSamples);
  }
  return out;
}

}  // namespace

void predict(const RowPlan& plan, Prediction& out) {
  RowPlan p = plan;  // a decode or prefill row at `max` takes its batch here (engine_admitted_batch)
  ModelSpec m = load_row_model(p.model);
  const ModelSpec published = m;  // MFU counts the published model's FLOPs
  for (auto& g : m.groups) g.attention.n_heads = std::max(g.attention.n_heads, p.heads_padded_to);
  // A row's stated format replaces the checkpoint's (and its quantization's own bits).
  if (p.w_attention) m.weights.attention = *p.w_attention, m.weights.attention_bits = 0;
  if (p.w_ffn) m.weights.dense_ffn = *p.w_ffn, m.weights.dense_ffn_bits = 0;
  if (p.w_experts) m.weights.experts = *p.w_experts, m.weights.experts_bits = 0;
  if (p.w_embedding) m.weights.embedding = *p.w_embedding, m.weights.embedding_bits = 0;
  const SystemSpec sys = load_row_system(p.hardware);
  DeploymentOptions o;
  o.n_chips = p.chips;
  o.kv = p.kv;
  if (p.gpu_memory_utilization > 0) o.memory_reserve_fraction = 1 - p.gpu_memory_utilization;  // the row's HBM fraction
  Engines e{make_deployment(m, sys, o), {}, {}};
  o.mechanisms.enabled = true;
  o.mechanisms.layout = p.layout;
  if (!p.engine.empty()) o.mechanisms.tp_all_reduce = engine_tp_all_reduce(p.engine);  // the row's engine's all-reduce kernels
  o.mechanisms.host = row_engine_host(p.engine);  // and its host work per step
  o.mechanisms.graphs = row_engine_graphs(p);     // and its CUDA graphs
  o.mechanisms.expert_balance = p.expert_balance;  // and its expert placement (eplb)
  e.mech = make_deployment(m, sys, o);
  sim::apply(p.profile, e.mech);  // an engine profile's kernel floor and host time (chalk calibrate)
  // A single KV head (MQA) or latent (MLA) cannot be split over the tensor-parallel
  // chips: each holds all of its sequences' KV. Where that does not fit beside the
  // weights, the KV must be split by sequence instead (Pope et al. 2022 section 3.3).
  {
    const auto& g0 = m.groups.front().attention;
    const bool single_kv = g0.kind == AttentionKind::mla || g0.n_kv_heads == 1;
    const auto& L = e.mech.mechanisms.layout;
    const double dp = static_cast<double>(p.chips / L.tp_attention);
    const double batch = std::max(p.batch, p.decode_batch);
    if (single_kv && L.tp_attention > 1 && !L.kv_sharded_by_batch && !p.kv_split_heads && !p.batch_from_capacity) {
      const int64_t ctx = std::max<int64_t>(p.context, p.prompt + p.prefix + p.output);
      const Bytes kv_chip = sequence_bytes(m, ctx, p.kv) * (batch / dp);
      const Bytes room = sys.chip.hbm_capacity * (1 - o.memory_reserve_fraction) - e.plain.weight_bytes_total / static_cast<double>(p.chips);
      if (kv_chip > room) {
        o.mechanisms.layout.kv_sharded_by_batch = true;
        e.mech = make_deployment(m, sys, o);
        out.notes.push_back("the " + std::string(g0.kind == AttentionKind::mla ? "MLA latent" : "single KV head") + " replicated on each of the " +
                            std::to_string(L.tp_attention) + " tensor-parallel chips would need " + num(to_gb(kv_chip)) + " GB per chip, " +
                            num(to_gb(room)) + " GB free: KV split by sequence instead (Pope et al. 2022 section 3.3)");
      }
    }
  }
  o.mechanisms.layout = p.prefill_layout;
  e.mech_prefill = make_deployment(m, sys, o);
  const bool prefill_target = p.target == Target::prefill_s || p.target == Target::prefill_tokens_per_s;
  const bool decode_target = p.target == Target::decode_step_s || p.target == Target::decode_total_s ||
                             p.target == Target::per_user_tokens_per_s || p.target == Target::decode_tokens_per_s;
  if (p.batch_from_capacity && (prefill_target || decode_target)) {
    std::string why;
    p.batch = engine_admitted_batch(p, prefill_target ? e.mech_prefill : e.mech, why);
    const std::string what = num(p.batch) + (prefill_target ? (p.batch == 1 ? " prompt" : " prompts") : (p.batch == 1 ? " sequence" : " sequences"));
    if (p.batch_unstated) {
      out.assumptions.push_back("batch: empty, " + what + ": what the engine admits under its KV budget: " + why);
    } else {
      out.notes.push_back("batch max: " + what + ", " + why);
    }
  }
  const bool moe = !e.plain.moe.empty();
  questionable_row_notes(p, m, e, out);

  const double n = d(p.chips);
  const double per_chips = p.per_chips == 0 ? n : p.per_chips;
  const double decode_batch = p.decode_batch > 0 ? p.decode_batch : p.batch;
  DecodeLevers levers;
  levers.tokens_per_sequence = static_cast<int64_t>(p.mtp_tokens);
  levers.accepted_tokens_per_step = p.mtp_accepted;
  // Drafts come from the model's own MTP module where it ships one (DeepSeek's serving
  // system, report 5.4.3): its passes are part of each step (roofline.h, DecodeLevers::drafter).
  if (p.mtp_tokens > 1 && m.n_mtp_layers > 0) levers.drafter = Drafter::mtp;

  // Step times of each phase, plain and with mechanisms.
  auto plain_decode = [&](double b, int64_t s) {
    return decode_step(e.plain, static_cast<int64_t>(std::llround(std::max(1.0, b))), s, levers);
  };
  auto mech_decode = [&](double b, int64_t s, double prefill_seqs = 0, int64_t prompt = 0) {
    StepShape shape;
    shape.decode_sequences = b;
    shape.context = s;
    shape.tokens_per_sequence = p.mtp_tokens;
    shape.attention_tokens_per_sequence = p.attention_tokens;
    shape.prefill_sequences = prefill_seqs;
    shape.prompt = prompt;
    return engine_step(e.mech, shape);
  };
  // The drafter's passes in the engine step (0 without an MTP drafter).
  auto mech_draft_s = [&](double b, int64_t s) {
    if (levers.drafter == Drafter::none) return 0.0;
    return decode_step(e.mech, static_cast<int64_t>(std::llround(std::max(1.0, b))), s, levers).t_draft.value();
  };
  auto plain_prefill = [&](double b, int64_t prompt, int64_t prefix) {
    return prefill_step(e.plain, static_cast<int64_t>(std::llround(std::max(1.0, b))), prompt, prefix);
  };
  auto mech_prefill = [&](double b, int64_t prompt, int64_t prefix) {
    StepShape shape;
    shape.prefill_sequences = b;
    shape.prompt = prompt;
    shape.prefix = prefix;
    return engine_step(e.mech_prefill, shape);
  };

  std::string inputs = p.model + " on " + std::to_string(p.chips) + " x " + p.hardware + ", weights attention " +
                       std::string(to_string(e.plain.weights.attention)) + " / FFN " + std::string(to_string(e.plain.weights.dense_ffn)) +
                       (moe ? " / experts " + std::string(to_string(e.plain.weights.experts)) : "") + ", KV " +
                       std::string(to_string(p.kv));
  double plain_v = 0, mech_v = 0;
  double admitted = 0;  // serving throughput at `max`: the batch the engine step runs per replica
  std::string governs, bound, searched_layout;

  switch (p.target) {
    case Target::decode_step_s:
    case Target::per_user_tokens_per_s:
    case Target::decode_total_s:
    case Target::decode_tokens_per_s: {
      const int64_t steps = p.target == Target::decode_total_s ? p.output : 1;
      double b_plain = p.batch, b_mech = p.batch;
      double t_plain = 0, t_mech = 0;
      for (const auto& [i, weight] : generation_steps(steps)) {
        const auto a = plain_decode(b_plain, p.context + i);
        const auto b = mech_decode(b_mech, p.context + i);
        t_plain += weight * a.t_step.value();
        t_mech += weight * (b.t_step.value() + mech_draft_s(b_mech, p.context + i));
        bound = std::string(to_string(a.bound));
        governs = b.governs;
      }
      if (p.target == Target::decode_step_s || p.target == Target::decode_total_s) {
        const double per = p.per_kept_token ? p.mtp_accepted : 1;
        plain_v = t_plain / per;
        mech_v = t_mech / per;
      } else if (p.target == Target::per_user_tokens_per_s) {
        plain_v = p.mtp_accepted / t_plain;
        mech_v = p.mtp_accepted / t_mech;
      } else {
        plain_v = b_plain * p.mtp_accepted / t_plain * per_chips / n;
        mech_v = b_mech * p.mtp_accepted / t_mech * per_chips / n;
      }
      inputs += ", batch " + num(p.batch) + ", context " + std::to_string(p.context);
      if (steps > 1) inputs += ", " + std::to_string(steps) + " steps";
      if (p.mtp_tokens > 1) {
        inputs += ", " + num(p.mtp_tokens) + " tokens per step (" + num(p.mtp_accepted) + " kept" +
                  (levers.drafter == Drafter::mtp ? ", MTP passes priced)" : ", drafts free)");
      }
      break;
    }
    case Target::prefill_s:
    case Target::prefill_tokens_per_s: {
      const auto a = plain_prefill(p.batch, p.prompt, p.prefix);
      const auto b = mech_prefill(p.batch, p.prompt, p.prefix);
      bound = std::string(to_string(a.bound));
      governs = b.governs;
      if (p.target == Target::prefill_s) {
        plain_v = a.t_step.value();
        mech_v = b.t_step.value();
      } else {
        const double input_tokens = p.batch * d(p.prompt + p.prefix);
        plain_v = input_tokens / a.t_step.value() * per_chips / n;
        mech_v = input_tokens / b.t_step.value() * per_chips / n;
      }
      inputs += ", batch " + num(p.batch) + ", prompt " + std::to_string(p.prompt) + (p.prefix > 0 ? " after " + std::to_string(p.prefix) + " cached" : "");
      break;
    }
    case Target::serving_latency_s:
    case Target::serving_mfu: {
      const auto a = plain_prefill(p.batch, p.prompt, p.prefix);
      const auto b = mech_prefill(p.batch, p.prompt, p.prefix);
      double t_plain = a.t_step.value(), t_mech = b.t_step.value(), dec_plain = 0, dec_mech = 0;
      std::string decode_governs, decode_bound;
      for (const auto& [i, weight] : generation_steps(p.output)) {
        const auto x = plain_decode(decode_batch, p.prompt + p.prefix + i);
        const auto y = mech_decode(decode_batch, p.prompt + p.prefix + i);
        dec_plain += weight * x.t_step.value();
        dec_mech += weight * (y.t_step.value() + mech_draft_s(decode_batch, p.prompt + p.prefix + i));
        decode_bound = std::string(to_string(x.bound));
        decode_governs = y.governs;
      }
      governs = dec_mech >= t_mech ? "decode: " + decode_governs : "prefill: " + b.governs;
      bound = dec_plain >= t_plain ? "decode: " + decode_bound : "prefill: " + std::string(to_string(a.bound));
      t_plain += dec_plain;
      t_mech += dec_mech;
      if (p.target == Target::serving_latency_s) {
        plain_v = t_plain;
        mech_v = t_mech;
      } else {
        const double model_flops = 2 * count_params(published).active_matmul() * p.batch * d(p.prompt + p.output);
        const double peak = sys.chip.peak_for(MatmulPrecision::bf16).value() * n;
        plain_v = model_flops / (t_plain * peak);
        mech_v = model_flops / (t_mech * peak);
        out.notes.push_back("MFU = 2 N_active_matmul x batch x (input + output) / (time x chips x bf16 peak)");
      }
      inputs += ", prefill batch " + num(p.batch) + " x " + std::to_string(p.prompt) +
                (p.prefix > 0 ? " after " + std::to_string(p.prefix) + " cached" : "") + ", then " + std::to_string(p.output) +
                " decode steps at batch " + num(decode_batch);
      break;
    }
    case Target::serving_simulated: {
      simulated_values(p, e.plain, e.mech, per_chips, plain_v, mech_v, inputs, out.notes);
      governs = "simulated";
      bound = "simulated";
      break;
    }
    case Target::serving_tokens_per_s: {
      // The running sequences' mean context: length-biased where the dataset's shape is known
      // (RowPlan::running_context), else the mean lengths'.
      const int64_t mean_context = p.running_context > 0 ? std::llround(p.running_context) : p.prompt + p.output / 2;
      // The KV each admitted sequence holds: its current tokens (mean context), or all its
      // tokens when the engine reserves them at admission (kv_admission to_completion), which
      // the same bias weighs: E[(P + L) L] / E[L] (RowPlan::running_reserved).
      const int64_t held = p.kv_reserved ? (p.running_reserved > 0 ? std::llround(p.running_reserved) : p.prompt + p.output) : mean_context;
      if (p.running_context > 0) {
        out.notes.push_back("running context " + std::to_string(mean_context) + " tokens, not " + std::to_string(p.prompt) + " + " + std::to_string(p.output) +
                            " / 2: the batch holds long requests longer (the dataset's spread of lengths; docs/formulas.md, \"Running sequences are "
                            "length-biased\")");
      }
      double cap = static_cast<double>(memory_plan(e.plain, 1, held).max_batch);
      if (cap < 1) throw InputError("memory", "the weights do not fit in HBM");
      if (p.requests_cap > 0) cap = std::min(cap, p.requests_cap);
      if (!p.batch_from_capacity) cap = p.batch;  // a stated batch
      cap = std::min(cap, 1e6);
      const auto a = plain_decode(cap, mean_context);
      plain_v = cap / a.t_step.value() * per_chips / n;
      bound = std::string(to_string(a.bound));
      if (!p.layout_stated) {
        // An offline-throughput submission tunes its layout: take the best that chalk's
        // layout search finds (each replica at the batch its KV cache holds).
        LayoutQuery q;
        q.n_chips = p.chips;
        q.context = mean_context;
        q.prompt = p.prompt;
        q.output = p.output;
        if (p.kv_reserved) q.admitted_context = held;
        q.whole_prompts = p.whole_prompts;
        if (p.requests_cap > 0) q.max_batch = p.requests_cap;
        if (!p.batch_from_capacity) q.max_batch = p.batch;
        DeploymentOptions base;
        base.kv = p.kv;
        if (p.gpu_memory_utilization > 0) base.memory_reserve_fraction = 1 - p.gpu_memory_utilization;
        if (!p.engine.empty()) base.mechanisms.tp_all_reduce = engine_tp_all_reduce(p.engine);  // the row's engine's kernels
        base.mechanisms.host = row_engine_host(p.engine);                                         // and host work
        base.mechanisms.graphs = row_engine_graphs(p);                                            // and CUDA graphs
        base.mechanisms.expert_balance = p.expert_balance;                                        // and expert placement
        if (p.profile.kernel_floor_s) base.mechanisms.calibration.kernel_floor = seconds(*p.profile.kernel_floor_s);  // a profile's
        if (p.profile.allreduce_latency_s) base.mechanisms.calibration.allreduce_latency = seconds(*p.profile.allreduce_latency_s);
        if (p.profile.host_s_per_sequence) base.mechanisms.host.s_per_sequence = *p.profile.host_s_per_sequence;
        const auto ranked = search_layouts(m, sys, base, q);
        if (ranked.empty() || !ranked.front().fits) throw InputError("memory", "no layout fits the model on " + std::to_string(p.chips) + " chips");
        // The row's engine runs only the layouts its flags can state (sim/launch.cc): the
        // best of those, not a layout it cannot launch.
        bool moe = false;
        for (const auto& g : m.groups) moe = moe || g.ffn.kind == FfnKind::moe;
        // A stated two_batch_overlap bounds the search too.
        auto keeps = [&](const LayoutCandidate& c) {
          return c.fits && (!p.two_batch_overlap_stated || c.layout.overlap_micro_batches == p.layout.overlap_micro_batches);
        };
        auto problem = [&](const LayoutCandidate& c) { return sim::engine_layout_problem(p.engine, c.replica_chips, c.layout, moe); };
        auto pick = std::find_if(ranked.begin(), ranked.end(), [&](const LayoutCandidate& c) { return keeps(c) && problem(c).empty(); });
        const bool launchable = pick != ranked.end();
        if (!launchable) pick = std::find_if(ranked.begin(), ranked.end(), keeps);
        const auto& best = pick != ranked.end() ? *pick : ranked.front();
        const auto& top = ranked.front();
        if (&best != &top) {
          const std::string why = !keeps(top) ? "the row states two_batch_overlap " + std::string(p.layout.overlap_micro_batches ? "yes" : "no")
                                              : problem(top);
          out.notes.push_back("the search's best layout, " + top.name + ", is not the row's (" + why + "): the best that is, " + best.name);
        }
        if (!launchable && !problem(best).empty()) {
          out.notes.push_back("no layout of the search both keeps to the row's columns and is one " + p.engine + " can launch (" + problem(best) +
                              "): predicted as stated");
        }
        mech_v = best.tokens_per_s_per_chip * per_chips;
        admitted = best.batch;
        out.notes.push_back("steady state at the mean context " + std::to_string(mean_context) + ": plain roofline " + num(cap) +
                            " sequences on all chips; mechanisms " + num(best.batch) + " per replica of " + std::to_string(best.replica_chips) +
                            ", each step also prefilling " + num(best.batch / d(p.output)) + " prompts");
        governs = best.step.governs;
        searched_layout = best.name + " (layout search, by throughput)";
        std::string others;
        for (std::size_t i = 1; i < ranked.size() && i < 4; ++i) {
          if (!ranked[i].fits) continue;
          others += (others.empty() ? "" : ", ") + ranked[i].name + " " + num(std::round(ranked[i].tokens_per_s_per_chip)) + " tok/s/chip";
        }
        // The layout columns left empty are the search's choice: one assumption says which,
        // in place of the defaults a stated-layout row would take.
        std::vector<std::string> kept;
        for (auto& text : out.assumptions) {
          if (text.rfind("layout:", 0) == 0) {
            kept.push_back("layout: tp, ep, expert_tp and attention empty: the highest-throughput layout of chalk's search" +
                           (launchable && is_serving_engine(p.engine) ? " that " + p.engine + " can launch"
                                                                                                  : std::string()) +
                           ", " + best.name + " at " + num(std::round(best.tokens_per_s_per_chip)) + " tok/s/chip, batch " + num(best.batch) +
                           " per replica" + (others.empty() ? "" : " (next: " + others + ")"));
          } else if (text.rfind("attention and kv_split empty", 0) == 0) {
            continue;  // the search's layout places the KV
          } else if (text.rfind("two_batch_overlap: empty", 0) == 0) {
            kept.push_back(std::string("two_batch_overlap: empty, ") + (best.layout.overlap_micro_batches ? "yes" : "no") + " (the layout search's choice)");
          } else {
            kept.push_back(text);
          }
        }
        out.assumptions = std::move(kept);
      } else {
        // Continuous batching in steady state: each step also prefills the prompts of the
        // requests that replace finished ones, B / output of them per step.
        StepShape shape;
        shape.decode_sequences = cap;
        shape.context = mean_context;
        shape.tokens_per_sequence = p.mtp_tokens;
        shape.attention_tokens_per_sequence = p.attention_tokens;
        shape.prefill_sequences = cap / d(p.output);
        shape.prompt = p.prompt;
        const auto b = steady_state_step(e.mech, shape, p.whole_prompts);
        admitted = cap;
        mech_v = cap / (b.t_step.value() + mech_draft_s(cap, mean_context)) * per_chips / n;
        governs = b.governs;
        out.notes.push_back("steady state: " + num(cap) + " sequences at the mean context " + std::to_string(mean_context) +
                            "; each step also prefills " + num(cap / d(p.output)) + " prompts" +
                            (p.whole_prompts ? ", each whole in one step" : " in chunks") + " (mechanisms only)");
      }
      inputs += ", batch " + num(cap) + " at context " + std::to_string(mean_context) + ", prompt " + std::to_string(p.prompt) +
                ", output " + std::to_string(p.output);
      break;
    }
  }
  // A serving row whose batch was left empty names the batch `max` came to.
  for (auto& text : out.assumptions) {
    constexpr std::string_view kMax = "batch: empty, max:";
    if (p.batch_from_capacity && admitted > 0 && text.rfind(kMax, 0) == 0) {
      text = "batch: empty, max (" + num(admitted) + " sequences per replica here):" + text.substr(kMax.size());
    }
  }
  out.inputs = inputs;
  out.layout = (p.target == Target::prefill_s || p.target == Target::prefill_tokens_per_s)
                   ? describe_layout(e.mech_prefill.mechanisms.layout, moe)
                   : describe_layout(e.mech.mechanisms.layout, moe);
  if ((p.target == Target::serving_latency_s || p.target == Target::serving_mfu) &&
      describe_layout(e.mech_prefill.mechanisms.layout, moe) != out.layout) {
    out.layout = "prefill " + describe_layout(e.mech_prefill.mechanisms.layout, moe) + "; decode " + out.layout;
  }
  if (!searched_layout.empty()) out.layout = searched_layout;
  if (p.count_input_tokens) {  // input plus output tokens per output token
    const double f = d(p.prompt + p.prefix + p.output) / d(p.output);
    plain_v *= f;
    mech_v *= f;
  }
  out.predicted_plain = plain_v * p.to_unit;
  out.predicted = mech_v * p.to_unit;
  out.governs = governs;
  out.bound_plain = bound;
}

}  // namespace chalk::detail
