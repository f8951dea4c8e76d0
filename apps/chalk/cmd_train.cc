// `chalk train`: the training step, memory per chip and the best layout (issue 13;
// library: src/training, docs/training.md). This file holds the group, the shared plan
// options, and `train step`.
#include <iostream>

#include <fmt/format.h>

#include "envelope.h"
#include "deployment_options.h"
#include "chalk/base/error.h"
#include "chalk/io/io.h"
#include "chalk/training/default_batch.h"
#include "chalk/training/explain.h"
#include "chalk/training/memory.h"
#include "commands.h"
#include "explain_cli.h"
#include "table.h"
#include "train_cli.h"
#include "train_run_cli.h"

namespace chalk::cli {

void add_train_options(CLI::App& cmd, TrainArgs& a, bool degrees) {
  const auto deg = CLI::Range(int64_t{1}, int64_t{1} << 20);
  cmd.add_option("-m,--model", a.model,
                 "Model: a catalog name (chalk models) or a config file (the default is dense, as the published Megatron "
                 "plans it is checked against; serving commands and train run default to deepseek-v3, whose report "
                 "states its serving and run figures)")
      ->capture_default_str();
  cmd.add_option("-H,--hardware", a.hardware, "System: a catalog name (chalk hardware) or a hardware file")->capture_default_str();
  if (degrees) {
    cmd.add_option("-n,--chips", a.chips, "Chips in the cluster (default: dp x tp x pp x cp; without --dp, DP = chips / (tp x pp x cp); with no degree given, the smallest cluster whose fastest plan fits)")->check(deg);
    cmd.add_option("--dp", a.dp, "Data-parallel degree")->capture_default_str()->check(deg);
    cmd.add_option("--tp", a.tp, "Tensor-parallel degree")->capture_default_str()->check(deg);
    cmd.add_option("--pp", a.pp, "Pipeline stages")->capture_default_str()->check(deg);
    cmd.add_option("--cp", a.cp, "Context-parallel degree")->capture_default_str()->check(deg);
    cmd.add_option("--ep", a.ep, "Expert-parallel degree (MoE)")->capture_default_str()->check(deg);
    cmd.add_option("--etp", a.etp, "Expert tensor-parallel degree (MoE)")->capture_default_str()->check(deg);
    cmd.add_option("--virtual-stages", a.virtual_stages, "Chunks per pipeline rank (interleaved schedule)")->capture_default_str()->check(deg);
    cmd.add_option("--schedule", a.schedule, "Pipeline schedule: gpipe, 1f1b, interleaved, zb-h1, zb-v, dualpipe")->capture_default_str();
    cmd.add_option("--zero", a.zero, "ZeRO stage over data parallelism: 0, 1, 2, 3 (= FSDP full shard)")->capture_default_str();
    cmd.add_option("--microbatch", a.microbatch, "Sequences per microbatch")->capture_default_str()->check(deg);
    cmd.add_option("--recompute", a.recompute, "Activation recomputation: none, selective, full")->capture_default_str();
    cmd.add_option("--recompute-modules", a.recompute_modules,
                   "Also recompute these modules' outputs (Megatron-Core names, comma-separated): layernorm, mla_up_proj, moe_act "
                   "(DeepSeek-V3 recomputes all three)");
    cmd.add_flag("--no-sp", a.no_sp, "Tensor parallelism without sequence parallelism");
    cmd.add_flag("--reversible", a.reversible, "Reversible layers: no stored activations, the forward rerun in backward");
  }
  // One rule in every train command (default_global_batch, review 11 M3); layouts searches dp.
  cmd.add_option("-B,--global-batch", a.global_batch,
                 degrees ? "Sequences per step (default: one per chip, at most 16.78M tokens (2^24, Llama 3 405B's batch), rounded "
                           "down to a multiple of dp x microbatch)"
                         : "Sequences per step (default: one per chip, at most 16.78M tokens (2^24, Llama 3 405B's batch))")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 30));
  cmd.add_option("-s,--seq-len,--seq", a.seq_len, "Tokens per sequence")->capture_default_str()->check(CLI::Range(int64_t{1}, int64_t{1} << 30));
  cmd.add_option("--compute", a.compute, "GEMM precision: bf16 (fp16), fp8 (mxfp8), fp4 (nvfp4, mxfp4); where the chip has the rate")->capture_default_str();
  cmd.add_option("--fp8-recipe", a.fp8_recipe,
                 "How FP8 GEMMs are scaled (--compute fp8; Megatron-LM's names): delayed (amax history), tensorwise (current "
                 "scaling: an amax pass before each cast), mxfp8 (a scale per 32), blockwise (DeepSeek-V3's 1x128 and 128x128)")
      ->capture_default_str();
  cmd.add_option("--optimizer", a.optimizer, "Model-state bytes per parameter: adam16 (2+2+12), adam18 (2+4+12), adam-bf16-moments (2+4+8)")
      ->capture_default_str();
  cmd.add_flag("--no-flash-attention", a.no_flash, "Store the attention scores (no FlashAttention; Korthikanti's 5as/h term)");
  cmd.add_flag("--no-gemm-shapes", a.no_gemm_shapes,
               "Price every GEMM at the chip's best-shape (MAMF) rate, without wave and tile quantization over its SMs");
  cmd.add_flag("--dropout", a.dropout,
               "Train with dropout (Megatron-LM's default 0.1): its masks are stored and moved (default: none, as Llama 3 and "
               "DeepSeek-V3 train)");
  cmd.add_option("--dispatch-dtype", a.dispatch, "Expert-parallel dispatch format (bf16, fp8)")->capture_default_str();
  cmd.add_option("--combine-dtype", a.combine, "Expert-parallel combine format")->capture_default_str();
  cmd.add_option("--route-domains", a.route_domains, "Node-limited routing: scale-up domains a token's experts may span (0 = no limit)")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 20));
  cmd.add_option("--ep-dispatcher", a.ep_dispatcher,
                 "How expert-parallel tokens cross scale-up domains: deepep (DeepEP/HybridEP, Megatron-Core's flex: once per "
                 "remote domain, then scale-up fan-out), alltoall (NCCL all-to-all: every token copy on its own)")
      ->capture_default_str();
  cmd.add_flag("--ep-overlap", a.ep_overlap,
               "Megatron-Core's EP overlap: a forward beside an earlier microbatch's backward, each one's expert all-to-alls hidden "
               "behind the other's compute (pp 1 or --schedule interleaved)");
  add_output_options(cmd, a.output);
}

void add_train_infeasible_option(CLI::App& cmd, TrainArgs& a) {
  cmd.add_flag("--allow-infeasible", a.allow_infeasible,
               "Print the figures even when no plan fits in HBM (default: exit 2 naming the smallest cluster with a plan that fits)");
}

bool plan_stated(const CLI::App& cmd) {
  for (const char* name : {"--chips", "--dp", "--tp", "--pp", "--cp", "--ep", "--etp", "--virtual-stages", "--schedule", "--zero", "--microbatch",
                           "--recompute", "--recompute-modules", "--no-sp", "--reversible"}) {
    if (cmd.count(name) > 0) return true;
  }
  return false;
}

TrainingPlan plan_from(const TrainArgs& a) {
  TrainingPlan p;
  p.dp = a.dp;
  p.tp = a.tp;
  p.pp = a.pp;
  p.cp = a.cp;
  p.ep = a.ep;
  p.etp = a.etp;
  p.virtual_stages = a.virtual_stages;
  p.sequence_parallel = !a.no_sp && a.tp > 1;
  p.zero_stage = a.zero;
  if (a.zero < 0 || a.zero > 3) throw InputError("--zero", "expected 0, 1, 2 or 3, got " + std::to_string(a.zero));
  p.schedule = parse_schedule(a.schedule, "--schedule");
  p.recompute = parse_recompute(a.recompute, "--recompute");
  p.recompute_modules = parse_recompute_modules(a.recompute_modules, "--recompute-modules");
  p.state = parse_state_bytes(a.optimizer, "--optimizer");
  p.compute = parse_matmul_precision(a.compute, "--compute");
  p.fp8_recipe = parse_fp8_recipe(a.fp8_recipe, "--fp8-recipe");
  p.microbatch = a.microbatch;
  p.seq_len = a.seq_len;
  p.reversible = a.reversible;
  p.flash_attention = !a.no_flash;
  p.dropout = a.dropout;
  p.dispatch_bytes = bytes_per_element(parse_dtype(a.dispatch, "--dispatch-dtype"));
  p.combine_bytes = bytes_per_element(parse_dtype(a.combine, "--combine-dtype"));
  p.route_domain_limit = a.route_domains;
  p.ep_dispatcher = parse_ep_dispatcher(a.ep_dispatcher, "--ep-dispatcher");
  p.ep_overlap = a.ep_overlap;
  // Without -B, the rule every train command uses (the flags' ranges keep its inputs >= 1).
  p.global_batch = a.global_batch > 0 ? a.global_batch : default_global_batch(p);
  return p;
}

std::string option_for(const std::string& plan_field) {
  static const std::pair<const char*, const char*> names[] = {
      {"dp", "--dp"},           {"tp", "--tp"},         {"pp", "--pp"},           {"cp", "--cp"},
      {"ep", "--ep"},           {"etp", "--etp"},       {"virtual_stages", "--virtual-stages"},
      {"zero_stage", "--zero"}, {"microbatch", "--microbatch"}, {"global_batch", "--global-batch"},
      {"seq_len", "--seq-len"}, {"chips", "--chips"}, {"compute", "--compute"}, {"ep_overlap", "--ep-overlap"},
      {"fp8_recipe", "--fp8-recipe"}};
  for (const auto& [field, option] : names) {
    if (plan_field == field) return option;
  }
  return plan_field;
}

TrainSetup train_setup(const TrainArgs& stated) {
  TrainArgs a = stated;
  // -n N with degrees but no --dp: DP takes the chips the other degrees leave, as decode and
  // train layouts infer it (review 6 L8: -n 16384 --tp 8 --pp 16 was refused as 128 chips).
  if (const int64_t model_parallel = a.tp * a.pp * a.cp; a.chips > 0 && !a.dp_stated && a.dp == 1 && a.chips % model_parallel == 0) {
    a.dp = a.chips / model_parallel;
  }
  TrainSetup s{load_model(a.model), load_system(a.hardware), plan_from(a), {}, {}, {}, {}};
  if (a.chips > 0 && a.chips != plan_chips(s.plan)) {
    throw InputError("--chips", fmt::format("{} chips, but --dp x --tp x --pp x --cp = {} x {} x {} x {} = {}", a.chips, a.dp, a.tp, a.pp,
                                            a.cp, plan_chips(s.plan)));
  }
  try {
    s.costs = make_training_costs(s.model, s.plan.seq_len);
    s.rates = make_training_system(s.system, s.plan.compute);
    s.rates.gemm_shapes = !a.no_gemm_shapes;
    s.placement = check_plan(s.model, s.system, plan_chips(s.plan), s.plan);
  } catch (const InputError& e) {
    throw InputError(option_for(e.field()), std::string(e.what()).substr(e.field().size() + 2));
  }
  train_run::warn_context(s.warnings, s.model, s.plan.seq_len, "sequence length");
  if (s.plan.pp == 1 && s.plan.schedule != PipelineSchedule::one_f_one_b) {
    s.warnings.push_back(fmt::format("schedule {} with pp 1: one pipeline stage has no bubble to schedule, so it changes nothing",
                                     to_string(s.plan.schedule)));
  }
  if (s.plan.ep_dispatcher != EpDispatcher::deepep && (s.plan.ep <= 1 || s.placement.ep_in_domain)) {
    s.warnings.push_back(fmt::format("--ep-dispatcher {}: the expert group {}, so how tokens cross domains changes nothing",
                                     to_string(s.plan.ep_dispatcher), s.plan.ep <= 1 ? "is one rank (ep 1)" : "sits inside one scale-up domain"));
  }
  return s;
}

namespace {

thread_local TrainArgs step_args;

// What hides behind compute and what is exposed, for this plan's parallelism, schedule and
// ZeRO stage (the overlap rules of training_step, src/training/step.cc).
std::string step_overlap(const TrainingPlan& p, const Placement& pl, const TrainingStep& st) {
  const bool dual = p.schedule == PipelineSchedule::dualpipe && p.pp > 1;
  std::vector<std::string> parts;
  if (p.cp > 1) parts.push_back(fmt::format("CP ring behind attention ({:.4g} ms/mb exposed)", to_ms(st.t_cp_exposed)));
  if (p.ep > 1) {
    parts.push_back(dual         ? fmt::format("DualPipe hides EP behind the paired chunk's compute ({:.4g} ms/mb exposed)", to_ms(st.t_ep_exposed))
                    : p.ep_overlap ? fmt::format("EP overlap hides EP behind the paired microbatch's compute ({:.4g} ms/mb exposed)",
                                                 to_ms(st.t_ep_exposed))
                                   : fmt::format("EP exposed ({:.4g} ms/mb; --ep-overlap or --schedule dualpipe overlaps it)",
                                                 to_ms(st.t_ep_exposed)));
  }
  if (p.pp > 1)
    parts.push_back(dual ? std::string("DualPipe hides the PP sends")
                         : fmt::format("PP sends exposed ({:.4g} ms/mb)", to_ms(st.t_pp_exposed)));
  if (p.dp * p.cp > 1 || p.zero_stage > 0) {
    if (p.zero_stage == 0)
      parts.push_back(p.overlap_grad_reduce ? "DP all-reduce behind the last backward" : "DP all-reduce exposed");
    else if (p.zero_stage < 3)
      parts.push_back(fmt::format("ZeRO-{} reduce-scatter behind the last backward, parameter gather behind the next step's first "
                                  "forward",
                                  p.zero_stage));
    else
      parts.push_back("ZeRO-3 gathers behind each microbatch");
    parts.back() += fmt::format(" ({:.4g} s exposed)", st.t_dp_exposed.value());
  }
  if (p.tp > 1) parts.push_back(fmt::format("TP exposed ({:.4g} ms/mb)", to_ms(st.t_tp)));
  // How expert tokens cross domains matters only when the expert group spans them.
  if (p.ep > 1 && !pl.ep_in_domain) {
    parts.push_back(p.ep_dispatcher == EpDispatcher::all_to_all
                        ? std::string("EP by NCCL all-to-all (--ep-dispatcher): every token copy bound for another domain crosses the NIC")
                        : std::string("EP by DeepEP (--ep-dispatcher): one copy per remote domain, then scale-up fan-out"));
  }
  if (parts.empty()) return "no communication to hide (one chip)";
  std::string out;
  for (const auto& part : parts) out += (out.empty() ? "" : "; ") + part;
  return out;
}

/// The search `train layouts` would run for `a`'s model, sequence and base plan.
TrainingQuery fit_query(const TrainArgs& a, bool keep_batch) {
  TrainingQuery q;
  q.seq_len = a.seq_len;
  q.global_batch = keep_batch ? a.global_batch : 0;
  q.base = plan_from(a);
  q.schedules = searched_schedules(a);
  return q;
}

/// GB for the fit messages: 4 significant digits as "{:.4g}" writes them (80, 76.97), and
/// 12190 rather than 1.219e+04 from 10,000 up (review 2 L2).
std::string gb_figure(double gb) { return gb < 1e4 ? fmt::format("{:.4g}", gb) : readable(gb, 4); }
}  // namespace

std::string fit_or_refuse(TrainArgs& a, TrainSetup& s, TrainingMemory& mem) {
  if (mem.fits || a.allow_infeasible) return "";
  const int64_t first = a.plan_stated ? plan_chips(s.plan) : 0;
  const auto fit = smallest_fitting_cluster(s.model, s.system, fit_query(a, a.global_batch > 0), first);
  if (a.plan_stated || !fit) {
    // readable(): 12190 GB, never 1.219e+04 GB (review 2 L2).
    throw InputError("--chips", fmt::format("{} on {} x {} needs {} GB per chip, more than its {} GB of HBM; {}; --allow-infeasible "
                                            "prints the figures anyway",
                                            describe_plan(s.plan), plan_chips(s.plan), s.system.chip.name, gb_figure(to_gb(mem.total)),
                                            gb_figure(to_gb(mem.capacity)), fitting_cluster_text(fit, s.system, first)));
  }
  std::string chosen = fmt::format("the fastest plan of the smallest cluster that holds {} ({} chips; train layouts -n {} ranks the others); "
                                   "the default one-chip plan would need {} GB of {} GB",
                                   s.model.name, fit->chips, fit->chips, gb_figure(to_gb(mem.total)), gb_figure(to_gb(mem.capacity))) +
                       "; " + schedules_assumed_text(searched_schedules(a));
  set_plan(a, fit->plan);
  s = train_setup(a);
  mem = training_memory(s.costs, s.rates, s.plan, s.placement);
  return chosen;
}

namespace {

void run_step(const TrainArgs& stated) {
  TrainArgs a = stated;
  std::string chosen;
  // -n N alone (no degrees): the fastest plan of N chips that fits, as `train layouts -n N`
  // ranks it first (review 2 M6: it was refused for --dp x --tp x --pp x --cp = 1).
  if (a.chips > 1 && a.dp * a.tp * a.pp * a.cp == 1) {
    const auto fit = smallest_fitting_cluster(load_model(a.model), load_system(a.hardware), fit_query(a, a.global_batch > 0), a.chips);
    if (!fit || fit->chips != a.chips) {
      throw InputError("--chips", fmt::format("no plan of {} chips holds {}; {}", a.chips, a.model,
                                              fitting_cluster_text(fit, load_system(a.hardware), a.chips)));
    }
    chosen = fmt::format("the fastest plan of these {} chips that fits (train layouts -n {} ranks the others); {}", a.chips, a.chips,
                         schedules_assumed_text(searched_schedules(a)));
    set_plan(a, fit->plan);
  }
  TrainSetup s = train_setup(a);
  TrainingMemory mem = training_memory(s.costs, s.rates, s.plan, s.placement);
  // A plan that does not fit is never a headline (issue 30 item 1): the default plan (one
  // chip) gives way to the fastest plan of the smallest cluster that holds the model; a
  // stated plan is an error naming that cluster, unless --allow-infeasible.
  if (std::string c = fit_or_refuse(a, s, mem); !c.empty()) chosen = c;
  const TrainingStep st = training_step(s.costs, s.rates, s.plan, s.placement);
  // Review 11 M3: without -B the batch is default_global_batch's, and the output says so.
  const std::string batch_choice = stated.global_batch > 0 ? std::string() : default_batch_text(s.plan.global_batch, s.plan.seq_len);
  // Every duration of the row in seconds (review 7 M9), per microbatch where the key says so:
  // t_step_s = microbatches x (t_forward_s + t_backward_s) + t_unpaired_s + t_bubble_s +
  // t_dp_exposed_s + t_optimizer_s with no unit factors.
  Table t;
  t.columns = {{"plan", "plan"},
               {"chips", "chips"},
               {"microbatches", "microbatches"},
               {"t_step_s", "step s", 4},
               {"t_forward_s", "fwd s/mb", 4},
               {"t_backward_s", "bwd s/mb", 4},
               {"t_bubble_s", "bubble s", 4},
               {"bubble_fraction", "bubble", 3},
               {"t_unpaired_s", "unpaired s", 4},
               {"t_tp_s", "TP s/mb", 3},
               {"t_ep_s", "EP s/mb", 3},
               {"t_ep_exposed_s", "EP exposed s/mb", 3},
               {"t_cp_exposed_s", "CP exposed s/mb", 3},
               {"t_pp_exposed_s", "PP exposed s/mb", 3},
               {"t_dp_s", "DP s", 3},
               {"t_dp_exposed_s", "DP exposed s", 3},
               {"t_dp_sm_contention_s", "DP SM contention s", 3},
               {"t_optimizer_s", "optimizer s", 3},
               {"tok_per_s", "tok/s", 4},
               {"tok_per_s_per_chip", "tok/s/chip", 4},
               {"model_tflop_per_s_per_chip", "model TFLOP/s/chip", 4},
               {"mfu", "MFU", 3},
               {"hfu", "HFU", 3},
               {"memory_gb", "memory GB", 4},
               {"memory_fits", "fits"}};
  t.add({describe_plan(s.plan), plan_chips(s.plan), st.microbatches, st.t_step.value(), st.t_forward.value(), st.t_backward.value(),
         st.t_bubble.value(), st.bubble_fraction, st.t_unpaired.value(), st.t_tp.value(), st.t_ep.value(), st.t_ep_exposed.value(),
         st.t_cp_exposed.value(), st.t_pp_exposed.value(), st.t_dp.value(), st.t_dp_exposed.value(), st.t_dp_sm_contention.value(), st.t_optimizer.value(), st.tokens_per_s.value(),
         st.tokens_per_s_per_chip.value(), st.model_flops_per_s_per_chip.value() / 1e12, st.mfu, st.hfu, to_gb(mem.total),
         std::string(mem.fits ? "yes" : "no")});
  if (a.output.csv) {
    print_csv(std::cout, t, s.warnings);
    return;
  }
  if (a.output.json) {
    nlohmann::json row = to_json(t)[0];
    row["memory_fits"] = mem.fits;
    nlohmann::json j = {{"model", model_json(s.model, s.system)}, {"hardware", hardware_json(s.system)},
                        {"placement", s.placement.description}, {"context_tokens", s.plan.seq_len}, {"global_batch", s.plan.global_batch},
                        {"optimizer", s.plan.state.name}, {"state_bytes_per_param", s.plan.state.total()},
                        {"ep_dispatcher", std::string(to_string(s.plan.ep_dispatcher))}, {"ep_overlap", s.plan.ep_overlap},
                        {"fp8_recipe", std::string(to_string(s.plan.fp8_recipe))},
                        {"mfu_definition", train_run::mfu_definition(true, "bf16")},
                        {"plan_choice", chosen.empty() ? nlohmann::json() : nlohmann::json(chosen)},
                        {"batch_choice", batch_choice.empty() ? nlohmann::json() : nlohmann::json(batch_choice)},
                        {"rows", nlohmann::json::array({row})}, {"warnings", s.warnings}};  // the step: one row
    if (a.explain) j["explanations"] = explanations_json(explain_training_step(s.rates, s.plan, s.placement, st));
    print_json(std::cout, envelope("train step", std::move(j), column_keys(t)));
    return;
  }
  if (quiet_tables()) {  // --quiet: the step as the one-row table CSV gives (its prose below has no table)
    print_table(std::cout, t);
    return;
  }
  std::cout << fmt::format("chalk train step: {} on {} x {}, {} sequences of {} tokens per step\n", s.model.name, plan_chips(s.plan),
                           chip_and_system(s.system.chip.name, s.system.name), s.plan.global_batch, s.plan.seq_len);
  std::cout << fmt::format("plan        {}\n", describe_plan(s.plan));
  if (!chosen.empty()) std::cout << "chosen      " << chosen << '\n';
  if (!batch_choice.empty()) std::cout << "batch       " << batch_choice << '\n';
  std::cout << fmt::format("placement   {}\n", s.placement.description);
  const std::string unpaired =
      st.unpaired_chunks > 0 ? fmt::format("+ {} unpaired chunk pairs {:.4g} s ", st.unpaired_chunks, st.t_unpaired.value()) : std::string();
  std::cout << fmt::format("step        {:.4g} s = {} x ({:.4g} + {:.4g} ms fwd + bwd) {}+ bubble {:.4g} s ({:.1f}% of the microbatches' time) "
                           "+ DP exposed {:.4g} s + DP SM contention {:.4g} s + optimizer {:.4g} s\n",
                           st.t_step.value(), st.microbatches == 1 ? std::string("1 microbatch") : fmt::format("{} microbatches", st.microbatches), to_ms(st.t_forward), to_ms(st.t_backward), unpaired, st.t_bubble.value(),
                           100 * st.bubble_fraction, st.t_dp_exposed.value(), st.t_dp_sm_contention.value(), st.t_optimizer.value());
  std::cout << fmt::format("per mb      GEMMs {:.4g} ms, attention {:.4g} ms, recompute {:.4g} ms, memory-bound kernels {:.4g} ms; TP {:.4g} ms "
                           "(exposed); EP {:.4g} ms ({:.4g} exposed); CP exposed {:.4g} ms; PP sends exposed {:.4g} ms\n",
                           to_ms(st.t_matmul), to_ms(st.t_attention), to_ms(st.t_recompute), to_ms(st.t_elementwise), to_ms(st.t_tp),
                           to_ms(st.t_ep), to_ms(st.t_ep_exposed), to_ms(st.t_cp_exposed), to_ms(st.t_pp_exposed));
  std::cout << fmt::format("throughput  {} tok/s, {} tok/s per chip, {:.4g} model TFLOP/s per chip\n", readable(st.tokens_per_s.value(), 4),
                           readable(st.tokens_per_s_per_chip.value(), 4), st.model_flops_per_s_per_chip.value() / 1e12);
  // A fraction, as train layouts' MFU column and every JSON and CSV give it (issue 30), the percentage beside.
  std::cout << fmt::format("MFU         {:.3f} ({:.1f}%; model FLOPs: 6 N_matmul + causal attention fwd+bwd, over the bf16 dense peak); "
                           "HFU {:.3f} ({:.1f}%, with recomputation)\n",
                           st.mfu, 100 * st.mfu, st.hfu, 100 * st.hfu);
  std::cout << fmt::format("memory      {:.4g} GB of {:.4g} GB per chip: {}\n", to_gb(mem.total), to_gb(mem.capacity),
                           mem.fits ? "fits" : "DOES NOT FIT (chalk train memory shows the parts)");
  std::cout << "overlap     " << step_overlap(s.plan, s.placement, st) << "\n";
  std::cout << fmt::format("stage       the busiest runs {} + {} per microbatch; hidden collectives hold SMs "
                           "for {:.4g} s of compute per step\n",
                           counted(st.busy_layers, "layer"), counted(st.busy_output_layers, "output layer"), (st.t_dp_sm_contention + st.t_cp_sm_contention).value());
  for (const auto& w : s.warnings) std::cout << "warning     " << w << '\n';
  if (a.explain) std::cout << "\nHow the figures are computed:\n" << explanations_text(explain_training_step(s.rates, s.plan, s.placement, st));
}

}  // namespace

void register_train_step(CLI::App& train, Action& run) {
  // Fresh defaults at each registration: `chalk web` and the Python module register a command once per request.
  step_args = TrainArgs{};
  auto* cmd = train.add_subcommand("step", "One training step of a plan: compute, communication, bubble, MFU and HFU");
  add_train_options(*cmd, step_args, true);
  cmd->add_flag("--explain", step_args.explain, "Show how each figure is computed: formula, inputs with units and sources, the algebra (under the output; \"explanations\" with --json)");
  add_train_infeasible_option(*cmd, step_args);
  cmd->callback([&run, cmd] {
    step_args.plan_stated = plan_stated(*cmd);
    step_args.schedule_stated = cmd->count("--schedule") > 0;
    step_args.dp_stated = cmd->count("--dp") > 0;
    run = [] { run_step(step_args); };
  });
}

void register_train(CLI::App& app, Action& run) {
  auto* train = app.add_subcommand("train", "Training: the step, memory per chip and the best layout (docs/training.md); whole runs, Chinchilla and the lecture's equilibrium (docs/training-runs.md)");
  train->require_subcommand(1);
  register_train_step(*train, run);
  register_train_memory(*train, run);
  register_train_layouts(*train, run);
  register_train_run(*train, run);
  register_train_moe(*train, run);
  register_train_plot(*train, run);
}

}  // namespace chalk::cli
