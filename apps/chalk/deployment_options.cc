// Resolving a deployment from the command line: the options a command was given, the
// replica and layout chosen where they were not (deployment_options.h). The flags
// themselves: deployment_flags.cc.
#include "deployment_options.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <utility>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "chalk/serving/cheapest_batch.h"
#include "chalk/base/error.h"
#include "chalk/engine/default_layout.h"
#include "chalk/io/io.h"
#include "pipeline_cli.h"
#include "table.h"

namespace chalk::cli {
namespace {
/// A pipeline candidate of the layout search (layout_search.h) as a replica point: its chips,
/// name, HBM-filling batch, cycle (the time between a user's tokens) and tok/s, and the cost
/// price / tok/s per chip.
ModePoint pipeline_mode_point(const LayoutCandidate& c, const std::optional<UsdPerSecond>& price) {
  ModePoint p;
  p.n_chips = c.replica_chips;
  p.batch = static_cast<int64_t>(c.batch);
  p.layout = c.name;
  p.step.t_step = c.step.t_step;
  p.tokens_per_s_per_user = TokensPerSecond(c.tokens_per_s_per_user);
  p.tokens_per_s_per_chip = TokensPerSecond(c.tokens_per_s_per_chip);
  if (price && c.tokens_per_s_per_chip > 0) p.cost_per_token = UsdPerToken(price->value() / c.tokens_per_s_per_chip);
  return p;
}

bool best_is_moe(const ModelSpec& m) {
  for (const auto& g : m.groups) {
    if (g.ffn.kind == FfnKind::moe) return true;
  }
  return false;
}
}  // namespace

DeploymentOptions options_from(const DeploymentArgs& a) {
  DeploymentOptions o;
  if (!a.weights.empty()) o.weights = parse_dtype(a.weights, "--weights");
  o.kv = parse_dtype(a.kv, "--kv-dtype");
  if (!a.compute.empty()) o.compute = parse_matmul_precision(a.compute, "--compute");
  o.matmul_efficiency = a.matmul_efficiency;
  o.hbm_efficiency = a.hbm_efficiency;
  if (a.price_usd_per_chip_hour) {
    if (!(*a.price_usd_per_chip_hour > 0) || !std::isfinite(*a.price_usd_per_chip_hour)) {
      throw InputError("--price-usd-per-chip-hour", "must be a positive number, got " + format_number(*a.price_usd_per_chip_hour, 4));
    }
    o.price_per_chip = usd_per_hour(*a.price_usd_per_chip_hour);
  }
  o.memory_reserve_fraction = a.memory_reserve;
  if ((a.tp || a.ep) && a.roofline) throw InputError(a.tp ? "--tp" : "--ep", "sets the engine step's layout; the roofline has none (drop --roofline)");
  if (a.two_batch_overlap && a.roofline) throw InputError("--two-batch-overlap", "sets the engine step's layout; the roofline has none (drop --roofline)");
  if (a.enforce_eager && a.roofline) throw InputError("--enforce-eager", "sets how the engine step launches its kernels; the roofline has none (drop --roofline)");
  if (a.eplb && a.roofline) throw InputError("--eplb", "sets where the engine step's experts sit; the roofline has none (drop --roofline)");
  if (a.eplb && a.eplb->empty()) throw InputError("--eplb", "expected yes or no, got ''");
  if (a.eplb) {
    o.mechanisms.expert_balance = parse_expert_balance(*a.eplb, "--eplb");
    // Before any replica search, which reads a refused deployment as one that does not fit.
    check_expert_balance(load_model(a.model), o.mechanisms.expert_balance, "--eplb");
  }
  if (a.dispatch_dtype && a.roofline) throw InputError("--dispatch-dtype", "sets the engine step's layout; the roofline has none (drop --roofline)");
  if (a.tp && *a.tp < 1) throw InputError("--tp", "must be >= 1, got " + std::to_string(*a.tp));
  if (a.ep && *a.ep < 1) throw InputError("--ep", "must be >= 1, got " + std::to_string(*a.ep));
  o.mechanisms.enabled = !a.roofline;
  o.mechanisms.layout.tp_attention = a.tp.value_or(0);
  o.mechanisms.layout.ep = a.ep.value_or(0);
  o.mechanisms.layout.overlap_micro_batches = a.two_batch_overlap;
  o.mechanisms.graphs.eager = a.enforce_eager;
  if (a.kernel_floor_s) o.mechanisms.calibration.kernel_floor = seconds(*a.kernel_floor_s);
  if (a.allreduce_latency_s) o.mechanisms.calibration.allreduce_latency = seconds(*a.allreduce_latency_s);
  if (a.host_s_per_sequence) o.mechanisms.host.s_per_sequence = *a.host_s_per_sequence;
  if (a.dispatch_dtype) o.mechanisms.layout.dispatch_bytes_per_element = bytes_per_element(parse_dtype(*a.dispatch_dtype, "--dispatch-dtype"));
  return o;
}

namespace {
/// Stated chips that cannot hold the weights and the reserve are an error (issue 30:
/// `decode -m llama-3.1-70b -H h100 -n 1` printed "WEIGHTS DO NOT FIT" over a full table with
/// exit 0, and -n 3 silently ran three one-chip copies of 141 GB each). Names the need, what
/// the chips hold, the layout that was possible, and the smallest replica that fits.
void refuse_if_weights_do_not_fit(const Deployment& d, const ModelSpec& model, const SystemSpec& system, const DeploymentOptions& engine,
                                  int64_t context, const DeploymentArgs& a) {
  const MemoryPlan mem = memory_plan(d, 1, context);
  if (mem.weights_fit) return;
  // Chips no engine splits the model over (review 2 L8: `-n 3` for a 64-head model explained
  // one chip's 141 GB of weights, the layout that was left, not the heads 3 does not divide):
  // the reason and the nearest sizes that split it.
  if (const std::string problem = replica_size_problem(model, d.n_chips); !problem.empty() && !(a.tp || a.ep)) {
    std::vector<std::string> near;
    int64_t smallest = 1;
    try {
      smallest = smallest_replica_chips(model, system, engine, context);
    } catch (const InputError&) {
      // nothing holds it: the advice below names the sizes that split it
    }
    for (int64_t k = d.n_chips - 1; k >= std::max<int64_t>(smallest, 1); --k) {
      if (replica_size_problem(model, k).empty()) {
        near.push_back(fmt::format("-n {}", k));
        break;
      }
    }
    for (int64_t k = std::max(d.n_chips + 1, smallest); k <= 4 * d.n_chips + smallest; ++k) {
      if (replica_size_problem(model, k).empty()) {
        near.push_back(fmt::format("-n {}", k));
        break;
      }
    }
    throw InputError("--chips", fmt::format("{} chips cannot split {}: {}{}; --allow-infeasible prints the figures anyway", d.n_chips, model.name,
                                            problem, near.empty() ? std::string() : fmt::format("; {}", fmt::join(near, " or "))));
  }
  std::string fix;
  try {
    const int64_t n = smallest_replica_chips(model, system, engine, context);
    fix = fmt::format("the smallest replica that holds them is {} chips (-n {})", n, n);
    // Beyond the scale-up domain tensor parallelism would cross hosts (review L9: TP64 over
    // L4 cards): say so, and the pipeline that keeps each stage within one domain.
    const int64_t domain = std::max<int64_t>(system.scale_up_domain, 1);
    if (n > domain) {
      fix += fmt::format(", beyond the {}-chip scale-up domain: a pipeline of {} stages keeps each within one (--pp {} of decode, "
                         "prefill, prices forward, serving sweep and simulate)",
                         domain, (n + domain - 1) / domain, (n + domain - 1) / domain);
    }
  } catch (const InputError&) {
    fix = "no replica of " + system.name + " holds them: use a smaller --weights format";
  }
  // FP8 weights on the stated chips, when they hold them (review L9: `decode -m llama-3.1-405b
  // -n 8` on H100 named -n 16 only), each resolved as the command would.
  if (a.weights != "fp8" && a.weights != "fp4" && system.chip.supports(MatmulPrecision::fp8)) {
    DeploymentArgs fp8 = a;
    fp8.weights = "fp8";
    fp8.allow_infeasible = true;
    try {
      if (memory_plan(resolve_model(model, fp8, context, nullptr), 1, context).weights_fit) {
        fix += fmt::format("; or --weights fp8 holds them on these {}", counted(static_cast<double>(d.n_chips), "chip"));
      }
    } catch (const InputError&) {
      // a stated layout or format the fp8 deployment cannot take: no such advice
    }
  }
  const std::string layout = d.mechanisms.enabled ? describe_layout(d.mechanisms.layout, !d.moe.empty()) : "the roofline's even split";
  const double n = static_cast<double>(std::max<int64_t>(d.n_chips, 1));
  throw InputError("--chips", fmt::format("{} x {} cannot hold {}'s weights: {} of weights per chip as laid out ({}) and {} held back, "
                                          "against {} of HBM per chip; {}; --allow-infeasible prints the figures anyway",
                                          d.n_chips, system.chip.name, model.name, human_bytes(mem.weights.value() / n), layout,
                                          human_bytes(mem.reserve.value() / n), human_bytes(mem.hbm_total.value() / n), fix));
}
}  // namespace

Deployment resolve(const DeploymentArgs& a, int64_t context, std::optional<ReplicaNote>* note) {
  return resolve_model(load_model(a.model), a, context, note);
}
// Documented in deployment_options.h.
ModePoint replica_memory_full_point(const Deployment& d, int64_t context) {
  return cheapest_decode_point(d, std::clamp<int64_t>(memory_plan(d, 0, context).max_batch, 1, int64_t{1} << 24), context);
}

namespace {
/// A latency question's layout (issue 29 / issue 30 item 1): the command's chooser over every
/// fitting single-replica layout of o.n_chips chips, replacing the decode-throughput best
/// that `o` holds. MoE prefill on 8 H200 under DP attention (one rank's attention per
/// prompt) took 5x the TTFT of TP8 with EP8.
void choose_for_question(const ModelSpec& model, const SystemSpec& system, DeploymentOptions& o, int64_t context, const DeploymentArgs& a) {
  const auto found = single_replica_layouts(model, system, o, o.n_chips, context);
  if (found.size() < 2) return;  // nothing to choose (a dense model's one TP layout): no runs spent
  std::vector<Deployment> candidates;
  for (const auto& c : found) {
    DeploymentOptions oc = o;
    oc.mechanisms.layout = c.layout;
    oc.mechanisms.layout.dispatch_bytes_per_element = o.mechanisms.layout.dispatch_bytes_per_element;
    candidates.push_back(make_deployment(model, system, oc));
  }
  LayoutNote note;
  const std::size_t best = choose_layout(candidates, *a.layout_chooser, &note);
  const double dispatch = o.mechanisms.layout.dispatch_bytes_per_element;
  o.mechanisms.layout = found[best].layout;
  o.mechanisms.layout.dispatch_bytes_per_element = dispatch;
  o.mechanisms.layout.description = fmt::format("searched: {} ({}, of {} fitting layouts; `chalk layouts` ranks them by decode tok/s per chip)",
                                                note.layout, a.layout_chooser->objective, note.candidates);
  if (a.layout_note) *a.layout_note = std::move(note);
}
}  // namespace

Deployment resolve_model(const ModelSpec& model, const DeploymentArgs& a, int64_t context, std::optional<ReplicaNote>* note_out) {
  const SystemSpec system = load_system(a.hardware);
  if (a.chips < 0) throw InputError("--chips", "must be >= 1, got " + std::to_string(a.chips));
  DeploymentOptions o = options_from(a);
  const int64_t search_context = std::max<int64_t>(context, 1);
  try {
    DeploymentOptions engine = o;
    engine.mechanisms.enabled = true;
    const bool stated = a.tp || a.ep || a.two_batch_overlap;
    std::optional<ReplicaNote> note;
    std::optional<Deployment> costed;
    std::optional<ModePoint> pipeline_point;  // the layout search's first-ranked pipeline, when it beats one replica
    bool prefill_chosen = false;              // ReplicaRule::cheapest_prefill found a replica within the domain
    if (a.chips != 0) {
      o.n_chips = a.chips;
    } else {
      note.emplace();
      note->rule = a.replica_rule;
      note->context = search_context;
      if (a.tp) note->stated_layout = fmt::format("--tp {}", *a.tp);
      if (a.ep) note->stated_layout += fmt::format("{}--ep {}", note->stated_layout.empty() ? "" : " ", *a.ep);
      // A prefill question: the cheapest replica per prompt token (review 5 M1).
      std::optional<PrefillReplicaChoice> prefill;
      if (a.replica_rule == ReplicaRule::cheapest_prefill) {
        try {
          prefill = cheapest_prefill_replica(model, system, engine, a.prefill_batch, search_context - a.prefill_prefix, a.prefill_prefix,
                                             a.prefill_hold_batch);
          note->replica_sizes = prefill->replica_sizes;
          note->prefill_runner_up = prefill->runner_up;
        } catch (const InputError&) {
          // no size within the domain holds the prompts: the decode rule's answer, below
        }
      }
      // The cheapest replica within the scale-up domain (the frontier's search), compared
      // under the engine step whatever view prints the figures.
      std::optional<ReplicaChoice> cheapest;
      std::string no_cheapest;
      if (!prefill) {
        try {
          cheapest = cheapest_replica(model, system, engine, search_context);
          note->replica_sizes = cheapest->replica_sizes;
        } catch (const InputError& e) {
          no_cheapest = e.what();
        }
      }
      const bool cost_rule = a.replica_rule != ReplicaRule::smallest;
      if (prefill) {
        o.n_chips = prefill->choice.n_chips;
        prefill_chosen = true;
      } else if (cost_rule && cheapest) {
        o.n_chips = cheapest->choice.n_chips;
        note->runner_up = cheapest->runner_up;
      } else {
        try {
          o.n_chips = smallest_replica_chips(model, system, engine, search_context);
        } catch (const InputError&) {
          if (!stated) throw;
          // A --tp that splits no attention evenly suits no replica size: say so, with the
          // replica the command picks without it (review 7 M7: "--tp 3" on Llama 3.1 70B was
          // blamed on "the 8 chips", though the 64 heads refuse it and the default is 2 chips).
          // --allow-infeasible computes it on the domain, with the split's warning.
          if (const std::string split = a.tp && !a.allow_infeasible ? attention_split_problem(model, *a.tp) : ""; !split.empty()) {
            DeploymentOptions searched = engine;
            searched.mechanisms.layout.tp_attention = 0, searched.mechanisms.layout.ep = 0;
            searched.mechanisms.layout.overlap_micro_batches = false;
            std::string without;
            try {
              const int64_t n = smallest_replica_chips(model, system, searched, search_context);
              without = fmt::format("; without --tp the replica is {} (`chalk layouts -n {}` lists the splits that run)", counted(static_cast<double>(n), "chip"), n);
            } catch (const InputError&) {
            }
            throw InputError("--tp", fmt::format("{}: vLLM and SGLang refuse this split on any number of chips{}", split, without));
          }
          // Another stated degree no replica size suits: the scale-up domain, where
          // make_deployment names what is wrong with it.
          o.n_chips = system.scale_up_domain;
        }
        if (cost_rule) {
          // Written once the weights are known, below: one sentence, not the search's error
          // inside a parenthesis (review 2 L4).
          note->fallback = no_cheapest.empty() ? std::string("?") : no_cheapest;
        } else if (cheapest && cheapest->choice.n_chips != o.n_chips) {
          note->runner_up = cheapest->choice;
        }
      }
    }
    if (o.mechanisms.enabled && !stated) {
      const ReplicaLayouts found = replica_layouts(model, system, o, o.n_chips, search_context);
      if (const auto& best = found.single) {
        const double dispatch = o.mechanisms.layout.dispatch_bytes_per_element;
        o.mechanisms.layout = best->layout;
        o.mechanisms.layout.dispatch_bytes_per_element = dispatch;
        o.mechanisms.layout.description =
            fmt::format("searched: {} (most decode tok/s per chip at context {} with the batch HBM holds; `chalk layouts` ranks them)",
                        describe_layout(best->layout, best_is_moe(model)), search_context);
        if (found.pipeline && note) {
          pipeline_point = pipeline_mode_point(*found.pipeline, o.price_per_chip ? o.price_per_chip : system.price_per_chip);
          // Named as flags of the commands that take --pp (review 4 M2, L6).
          note->pipeline = fmt::format("{} (above) ranks first on these chips in `chalk layouts`; this command runs one replica "
                                       "without stages{}: --pp {} -n {} of chalk decode, prefill, serving sweep, prices forward or simulate "
                                       "prices the pipeline",
                                       found.pipeline->name, a.prices_pipeline ? "" : " here", found.pipeline->pp, o.n_chips);
          // Where TP would cross a scale-up domain, under either rule (review 2 H1, review 4 H1/M2).
          if (a.prices_pipeline && (!note->fallback.empty() || o.n_chips > system.scale_up_domain)) {
            note->pp = found.pipeline->pp;
            note->pipeline.clear();
            if (note->fallback.empty()) note->fallback = "?";  // written below, once the weights are known
          }
        }
        if (found.pipeline) {
          // Named as commands that take --pp (review 2 H1: serving, layouts, prices forward and
          // simulate printed "--pp 2" and then refused it).
          o.mechanisms.layout.description += fmt::format("; a pipeline, {}, serves more tok/s per chip on these chips: --pp {} -n {} of "
                                                         "decode, prefill, serving sweep or prices forward prices it",
                                                         found.pipeline->name, found.pipeline->pp, o.n_chips);
        }
        // The replica was chosen on this (throughput) layout at its memory-full batch: its
        // figures are the note's, not those of the latency layout chosen next (review 2 M1:
        // prefill's "cheapest" 64 chips read $50.29/Mtok on the TTFT layout, 64x its runner-up).
        if (a.layout_chooser && note) costed = make_deployment(model, system, o);
        if (a.layout_chooser) choose_for_question(model, system, o, search_context, a);
      }
    }
    Deployment d = make_deployment(model, system, o);
    // A split no engine runs is an error, not a warning under a priced table (review 3 L15).
    const std::string split = a.tp && d.mechanisms.enabled ? attention_split_problem(model, d.mechanisms.layout.tp_attention) : "";
    if (!split.empty() && !a.allow_infeasible) {
      throw InputError("--tp", fmt::format("{}: vLLM and SGLang refuse this split; `chalk layouts -n {}` lists the ones that run; "
                                           "--allow-infeasible prints the figures anyway", split, d.n_chips));
    }
    if (a.chips != 0 && !a.allow_infeasible) refuse_if_weights_do_not_fit(d, model, system, engine, search_context, a);
    if (note) {
      note->choice = replica_memory_full_point(costed ? *costed : d, search_context);
      // The prefill the note compared, on the layout the command runs (its table's row).
      if (prefill_chosen) {
        note->prefill = prefill_replica_point(d, a.prefill_batch, search_context - a.prefill_prefix, a.prefill_prefix);
      }
      if (!note->fallback.empty()) {
        const int64_t domain = system.scale_up_domain;
        note->fallback = fmt::format("no replica within the {}-chip scale-up domain holds {} ({} of weights; one domain has {} of HBM), "
                                     "so the smallest replica that does",
                                     domain, model.name, human_bytes(d.weight_bytes_total.value()),
                                     human_bytes(system.chip.hbm_capacity.value() * static_cast<double>(domain)));
        if (note->pp > 1) {
          note->fallback += fmt::format(", as the layout `chalk layouts` ranks first: {} stages across domains with tensor parallelism "
                                        "within each; --pp 1 prices it without stages",
                                        note->pp);
        }
      }
      if (pipeline_point) {
        // Named beside the pipeline by its layout alone, not the search's whole description.
        const Deployment& single = costed ? *costed : d;
        note->choice.layout = describe_layout(single.mechanisms.layout, !single.moe.empty()) + " without stages";
        if (note->pp > 1) {
          note->runner_up = std::exchange(note->choice, *pipeline_point);
        } else {
          note->runner_up = *pipeline_point;
        }
      }
      if (note_out) *note_out = std::move(note);
    }
    return d;
  } catch (const InputError& e) {
    // Name the option the user typed, not the library's layout field.
    const std::string& f = e.field();
    const std::string message = std::string(e.what()).substr(f.size() + 2);
    if (f == "layout.tp_attention") throw InputError("--tp", message);
    if (f == "layout.ep") throw InputError("--ep", message);
    if (f == "chips") throw InputError("--chips", message);
    throw;
  }
}
Deployment roofline_of(const Deployment& d) {
  Deployment r = d;
  r.mechanisms.enabled = false;
  return r;
}
std::string_view view_name(const Deployment& d) { return d.mechanisms.enabled ? "engine step" : "roofline"; }

}  // namespace chalk::cli
