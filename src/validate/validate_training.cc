// Training and whole-run rows: read field by field into a training plan and predicted
// through src/training (docs/accuracy.md, "Training rows"). An input the row leaves empty
// takes the default of the table below, printed among the row's assumptions. The cluster
// of a run that states no chips is chosen in validate_run_cluster.cc.
#include <algorithm>
#include <cmath>
#include <optional>

#include "chalk/base/count_cast.h"
#include "chalk/base/error.h"
#include "chalk/io/io.h"
#include "validate_internal.h"

namespace chalk::detail {
namespace {

using counts::d;

double format_bytes(const std::string& f, const std::string& field) { return bytes_per_element(parse_dtype(f, field)); }

}  // namespace

TrainRowPlan plan_training_row_on_chips(const Measurement& r) {
  const std::string at = r.id + ": ";
  TrainRowPlan t;
  t.model_name = resolve_model(r);
  t.model = load_row_model(t.model_name);
  t.hardware = resolve_system(r);
  t.system = load_row_system(t.hardware);
  t.metric = r.metric;
  t.engine = r.engine;
  TrainingPlan& p = t.plan;
  if (!r.input_tokens) throw InputError(at + "input_tokens", "missing; a training row states its sequence length");
  p.seq_len = *r.input_tokens;
  const int64_t chips = *r.chips;
  auto per = [&](int64_t b) -> int64_t {
    if (r.batch_per == "chip") return b * chips;
    return b;  // run (a replica's batch is not a training notion: read as the run's)
  };
  std::vector<std::string> batch_assumed;
  if (r.batch.empty() && r.step_tokens) {
    // Tokens per step stated (a model card's "4M tokens per batch"): whole sequences.
    p.global_batch = std::max<int64_t>(1, std::llround(*r.step_tokens / d(p.seq_len)));
    batch_assumed.push_back("batch: empty, " + std::to_string(p.global_batch) + " sequences per step = step_tokens " + row_num(*r.step_tokens) +
                            " / input_tokens " + std::to_string(p.seq_len) + (d(p.global_batch * p.seq_len) == *r.step_tokens ? "" : ", rounded to whole sequences"));
  } else {
    if (r.batch.empty() || r.batch == "max") throw InputError(at + "batch", "expected the sequences per step (or step_tokens), got '" + r.batch + "'");
    p.global_batch = per(std::stoll(r.batch));
  }
  const int64_t stated_batch = p.global_batch;
  if (r.kind == "run") {
    if (!r.train_tokens) throw InputError(at + "train_tokens", "missing; a whole run states its total tokens");
    t.train_tokens = *r.train_tokens;
  }
  auto assume = [&](const std::string& s) { t.assumptions.push_back(s); };

  // Precision and the optimizer's bytes per parameter.
  if (r.compute.empty()) {
    assume("compute: empty, bf16 (mixed-precision training's matmul format)");
  } else {
    p.compute = parse_matmul_precision(r.compute == "fp16" ? "bf16" : r.compute, at + "compute");
  }
  // fp16 trains with a dynamic loss scale (Megatron-LM --fp16); the GEMMs run at bf16's rate.
  p.loss_scaling = r.compute == "fp16";
  if (r.engine == "deepseek") {
    p.state = parse_state_bytes("adam-bf16-moments", "state");
    t.notes.push_back("engine deepseek: 14 bytes per parameter of model states (bf16 Adam moments, fp32 master and gradients; DeepSeek-V3 report 3.3.3)");
    p.recompute_modules = kRecomputeLayernorm | kRecomputeMlaUpProj | kRecomputeMoeAct;
    t.notes.push_back("engine deepseek: RMSNorm, MLA up-projection and the MoE SwiGLU output recomputed in backward, GEMM and SwiGLU inputs stored in FP8 (DeepSeek-V3 report 3.3.2)");
  } else {
    p.state = parse_state_bytes("adam18", "state");
  }
  // The FP8 recipe: stated, or MXFP8 for compute mxfp8, DeepSeek's block scaling for its
  // engine, else Megatron-LM's and Transformer Engine's default, delayed scaling.
  if (!r.fp8_recipe.empty()) {
    if (p.compute != MatmulPrecision::fp8) {
      throw InputError(at + "fp8_recipe", "'" + r.fp8_recipe + "' scales FP8 GEMMs; the row's compute is '" + r.compute + "' (expected fp8 or mxfp8)");
    }
    p.fp8_recipe = parse_fp8_recipe(r.fp8_recipe, at + "fp8_recipe");
  } else if (p.compute == MatmulPrecision::fp8) {
    p.fp8_recipe = r.compute == "mxfp8" ? Fp8Recipe::mxfp8 : r.engine == "deepseek" ? Fp8Recipe::blockwise : Fp8Recipe::delayed;
    assume("fp8_recipe: empty, " + std::string(to_string(p.fp8_recipe)) +
           (r.compute == "mxfp8"         ? " (compute mxfp8)"
            : r.engine == "deepseek"     ? " (DeepSeek-V3 report 3.3.2: 1 x 128 and 128 x 128 block scales)"
                                         : " (Megatron-LM's and Transformer Engine's default)"));
  }
  if (!r.dispatch.empty()) p.dispatch_bytes = format_bytes(r.dispatch, at + "dispatch");
  if (!r.combine.empty()) p.combine_bytes = format_bytes(r.combine, at + "combine");
  if (!r.ep_dispatcher.empty()) p.ep_dispatcher = parse_ep_dispatcher(r.ep_dispatcher, at + "ep_dispatcher");
  p.ep_overlap = r.ep_overlap == "yes";
  // NeMo/Megatron-Bridge run the routed experts as Megatron-Core's TEGroupedMLP (one GEMM
  // per local expert; kernel_fixed_time.h); DeepSeek's engine runs DeepGEMM's grouped kernel.
  p.per_expert_gemms = r.engine == "nemo" || r.engine == "megatron";
  for (const auto& g : t.model.groups) {
    if (g.ffn.kind == FfnKind::moe && g.ffn.n_group > 1 && g.ffn.topk_group < g.ffn.n_group) {
      p.route_domain_limit = g.ffn.topk_group;  // node-limited routing as the config states (DeepSeek-V3 2.1.2)
    }
  }
  // Megatron-LM's own attention materialises the scores (fused softmax; Narayanan et al.
  // 2021, Korthikanti et al. 2022); the other engines run FlashAttention.
  p.flash_attention = r.engine != "megatron";
  if (!p.flash_attention) t.notes.push_back("engine megatron: attention scores materialised (Megatron-LM's fused softmax, no FlashAttention)");
  // The fused kernel by engine (attention_kernels.h): torchtitan calls PyTorch's SDPA, whose
  // flash backend is FlashAttention-2 (torch of 2024-12; PyTorch issue #142132), and
  // llm-foundry's MPT runs FlashAttention (its benchmarks README); Transformer Engine's
  // cuDNN kernel (NeMo, Megatron-Core) and the other engines keep the cuDNN-class rate.
  if (r.engine == "torchtitan" || r.engine == "llm-foundry") {
    p.attention_kernel = AttentionKernel::flash2;
    t.notes.push_back("engine " + r.engine + ": attention at FlashAttention-2's rates (" +
                      (r.engine == "torchtitan" ? "PyTorch SDPA's flash backend" : "llm-foundry's FlashAttention") +
                      "; FlashAttention-3 paper 4.1: 370 forward, 318 backward TFLOP/s at 8k on H100, cuDNN 600 and 518)");
  }
  // torchtitan's context parallelism is PyTorch's experimental context_parallel: eager fp32
  // merges around each block's SDPA call, K and V repeated to every head (ring_attention.h).
  if (r.engine == "torchtitan") p.cp_ring = CpRing::torch_eager;
  if (r.engine == "torchtitan" && r.cp.value_or(1) > 1) {
    t.notes.push_back("engine torchtitan: ring attention is PyTorch's context_parallel (_attention.py @1963fc8): partial outputs merged and "
                      "dQ, dK, dV accumulated in eager fp32 ops, K and V exchanged repeated to every query head, dK and dV in fp32");
  }
  // torchtitan's selective checkpointing is its op-level policy (selective_ac_option "op",
  // the default of its train_configs at 9dec370; attention_kernels.h).
  if (r.engine == "torchtitan") {
    p.selective_recompute = SelectiveRecompute::every_second_matmul;
    if (r.recompute == "selective") {
      t.notes.push_back("engine torchtitan: selective recomputation is its op policy (parallelize_llama.py @9dec370): norms, RoPE and SwiGLU rerun, "
                        "SDPA saved, every second mm (wk, wo, w3; Float8's too) rerun");
    }
  }
  // Its loss and optimizer run as PyTorch eager ops in every run (train.py @9dec370: the loss
  // is never compiled; AdamW and clip_grad_norm_ with foreach; eager_kernels.h).
  p.torch_loss_optimizer = r.engine == "torchtitan";
  // Its FSDP is FSDP2 (fully_shard), whose all-gather copy-out runs on the compute stream.
  p.fsdp2_copy_out = r.engine == "torchtitan";
  if (p.torch_loss_optimizer) {
    t.notes.push_back("engine torchtitan: eager fp32 cross-entropy (14 + 22 bytes per logit) and foreach AdamW with gradient clipping "
                      "(92 bytes per owned parameter; train.py @9dec370, eager_kernels.h)");
  }
  // Its blocks run eager unless training.compile (false in its train_configs @9dec370):
  // norms, SwiGLU and RoPE op by op (eager_kernels.h). The other engines fuse their own.
  if (r.engine == "torchtitan") {
    p.compile = r.compile == "yes";
    if (r.compile.empty()) assume("compile: empty, no (torchtitan's default, training.compile false @9dec370): eager RMSNorm, SwiGLU and RoPE");
    else if (!p.compile) t.notes.push_back("compile no: PyTorch eager, RMSNorm, SwiGLU and RoPE op by op with fp32 upcasts (eager_kernels.h)");
  } else if (!r.compile.empty()) {
    throw InputError(at + "compile", "'" + r.compile + "' says whether torchtitan runs its blocks under torch.compile; engine '" + r.engine +
                                         "' runs fused kernels of its own (expected empty, or engine torchtitan)");
  }
  // Megatron-LM's GPT runs train with its default hidden and attention dropout 0.1
  // (arguments.py --hidden-dropout, --attention-dropout); the other engines' recipes set 0.
  p.dropout = r.engine == "megatron";
  if (p.dropout) t.notes.push_back("engine megatron: dropout 0.1 on the hidden states and attention scores (Megatron-LM's default)");
  p.overlap_grad_reduce = r.engine != "megatron";
  if (!p.overlap_grad_reduce) {
    t.notes.push_back("engine megatron: the data-parallel gradient all-reduce runs after the backward, exposed (Megatron-LM 2021 train_step)");
  }
  // Megatron-LM's sequence parallelism gathers the column-parallel GEMM inputs again in
  // backward, at their whole time on A100 (plan.h sp_regather_exposed; Korthikanti Table 4).
  p.sp_regather_exposed = r.engine == "megatron";

  // Degrees.
  const int64_t domain = std::max<int64_t>(1, t.system.scale_up_domain);
  p.cp = r.cp.value_or(1);
  p.ep = r.ep.value_or(1);
  p.etp = r.expert_tp.value_or(1);
  if (!r.cp) assume("cp: empty, 1 (no context parallelism)");
  bool search_pp = false;
  if (r.dp) {
    // dp stated: an unstated pp is 1, an unstated tp takes the chips left.
    p.pp = r.pp.value_or(1);
    if (!r.pp) assume("pp: empty, 1 (no pipeline)");
    p.tp = r.tp.value_or(chips / std::max<int64_t>(1, *r.dp * p.pp * p.cp));
    if (!r.tp) assume("tp: empty, chips / (dp x pp x cp) = " + std::to_string(p.tp));
  } else {
    if (r.tp) {
      p.tp = *r.tp;
    } else {
      const auto& a = t.model.groups.front().attention;
      int64_t tp = std::min({domain, a.n_heads, int64_t{8}});
      while (tp > 1 && (a.n_heads % tp != 0 || chips % tp != 0)) --tp;
      p.tp = tp;
      assume("tp: empty, " + std::to_string(tp) + ": tensor parallel over one scale-up domain (Narayanan et al. 2021 section 3.3: TP up to the 8-GPU node, no further)");
    }
    if (r.pp) p.pp = *r.pp;
    else search_pp = true;
  }
  // Sequence parallelism (Korthikanti et al. 2022 section 4.2.2) follows tensor parallelism
  // unless the row says the run predates it: Megatron-LM's runs of 2021 (Narayanan et al.
  // 2021, MT-NLG) all-reduce the activations and run the norms, dropout and residual adds on
  // every TP rank's full hidden.
  p.sequence_parallel = p.tp > 1 && r.sequence_parallel != "no";
  if (r.sequence_parallel == "yes" && p.tp <= 1) {
    throw InputError(at + "sequence_parallel", "'yes' shards activations over the tensor-parallel ranks; the row's tp is " + std::to_string(p.tp) + " (expected tp > 1)");
  }
  if (r.sequence_parallel == "no" && p.tp > 1) {
    t.notes.push_back("sequence_parallel no: TP" + std::to_string(p.tp) + " all-reduces its activations; norms, dropout and residual adds run on every TP rank's full hidden");
  }
  if (p.sequence_parallel && p.sp_regather_exposed) {
    t.notes.push_back("engine megatron: sequence parallelism gathers the QKV and first-MLP inputs again in backward, exposed (Korthikanti et al. 2022 Table 4)");
  }
  if (!r.ep && t.model.groups.size() && std::any_of(t.model.groups.begin(), t.model.groups.end(), [](const LayerGroup& g) { return g.ffn.kind == FfnKind::moe; })) {
    assume("ep: empty, 1 (every expert on every rank)");
  }

  // Schedule.
  if (!r.schedule.empty()) {
    p.schedule = parse_schedule(r.schedule, at + "schedule");
  } else if (r.virtual_stages.value_or(1) > 1) {
    p.schedule = PipelineSchedule::interleaved;
  }
  if (p.schedule == PipelineSchedule::interleaved) {
    p.virtual_stages = r.virtual_stages.value_or(2);
    if (!r.virtual_stages && !r.schedule.empty()) assume("virtual_stages: empty, 2 (the least interleaving)");
  }

  // ZeRO.
  if (r.zero == "fsdp") {
    p.zero_stage = 3;
    t.zero_fsdp = true;
  } else if (!r.zero.empty()) {
    p.zero_stage = std::stoi(r.zero);
  } else {
    p.zero_stage = r.engine == "nemo" ? 1 : 0;
    assume(std::string("zero: empty, ") + (r.engine == "nemo" ? "1 (NeMo's distributed optimizer, its default)" : "0 (no sharding)"));
  }

  // Pipeline stages, microbatch and recomputation: the stated ones, else the fewest stages,
  // the largest microbatch (no pipeline) or 1 (a pipeline) and the least recomputation with
  // which the plan fits in HBM (Narayanan et al. 2021 section 3: pipeline only as far as
  // memory needs).
  const TrainingCosts costs = make_training_costs(t.model, p.seq_len);
  const TrainingSystem sys = make_training_system(t.system, p.compute);
  std::vector<int64_t> pps;
  if (search_pp) {
    for (int64_t x = 1; x <= chips / (p.tp * p.cp); ++x) {
      if ((chips / (p.tp * p.cp)) % x == 0 && (chips % (p.tp * p.cp)) == 0) pps.push_back(x);
    }
  } else {
    pps.push_back(p.pp);
  }
  std::optional<TrainingPlan> fitting, fallback;
  for (int64_t pp : pps) {
    TrainingPlan q = p;
    q.pp = pp;
    q.dp = r.dp.value_or(chips / std::max<int64_t>(1, q.tp * q.pp * q.cp));
    if (q.dp < 1 || q.dp * q.tp * q.pp * q.cp != chips) {
      if (!search_pp) {
        // Name the product, and dp when the row left it to be derived (chips / (tp x pp x cp)).
        throw InputError(at + "chips", "the stated degrees do not multiply to " + std::to_string(chips) + " chips: tp x pp x cp x dp = " +
                                           std::to_string(q.tp) + " x " + std::to_string(q.pp) + " x " + std::to_string(q.cp) + " x " +
                                           std::to_string(q.dp) + (r.dp ? "" : " (dp derived)") + " = " +
                                           std::to_string(q.dp * q.tp * q.pp * q.cp));
      }
      continue;
    }
    {
      // A global batch that does not divide by dp x microbatch (x pp for a stated
      // interleaved schedule) runs as the nearest one that does (an engine asserts the
      // division: Megatron-LM's num_microbatches calculator); fewer sequences than one
      // microbatch per data-parallel rank is a row that contradicts itself.
      const int64_t unit = q.dp * r.microbatch.value_or(1) * (r.schedule == "interleaved" ? q.pp : 1);
      if (p.global_batch < unit) {
        if (search_pp) continue;
        throw InputError(at + "batch", std::to_string(p.global_batch) + " sequences per step are fewer than one microbatch of " +
                                           std::to_string(r.microbatch.value_or(1)) + " on each of dp " + std::to_string(q.dp) +
                                           " ranks (= " + std::to_string(unit) + "): batch, chips, tp, pp, dp and microbatch contradict each other");
      }
      q.global_batch = std::max<int64_t>(unit, std::llround(d(p.global_batch) / d(unit)) * unit);
    }
    if (q.pp == 1) {
      q.schedule = PipelineSchedule::one_f_one_b;
      q.virtual_stages = 1;
    } else if (r.schedule.empty() && !r.virtual_stages && r.engine != "megatron") {
      // Megatron's PTD-P schedule (interleaved 1F1B, v = 2) where the layers and the
      // microbatches allow it (Narayanan et al. 2021 2.2.2; Llama 3 3.3.2), else 1F1B.
      // Megatron-LM itself interleaves only when told (--num-layers-per-virtual-pipeline-stage,
      // default None: arguments.py @aed2f75e20), so its rows keep 1F1B unless they state it.
      q.schedule = PipelineSchedule::interleaved;
      q.virtual_stages = 2;
      try {
        TrainingPlan probe = q;
        probe.microbatch = r.microbatch.value_or(1);
        check_plan(t.model, t.system, chips, probe);
      } catch (const InputError&) {
        q.schedule = PipelineSchedule::one_f_one_b;
        q.virtual_stages = 1;
      }
    }
    if (t.zero_fsdp && q.pp > 1) q.zero_stage = 2;  // parameters kept gathered across a pipeline's microbatches (Llama 3 3.3.2)
    std::vector<Recompute> recs;
    if (!r.recompute.empty()) recs.push_back(parse_recompute(r.recompute, at + "recompute"));
    else recs = {Recompute::none, Recompute::selective, Recompute::full};
    for (Recompute rc : recs) {
      q.recompute = rc;
      Placement pl;
      try {
        q.microbatch = 1;
        if (r.microbatch) q.microbatch = *r.microbatch;
        else if (q.pp == 1) q.microbatch = std::max<int64_t>(1, largest_microbatch(costs, sys, q));
        pl = check_plan(t.model, t.system, chips, q);
      } catch (const InputError&) {
        if (!search_pp) throw;  // a stated plan that does not divide: rejected with check_plan's reason
        break;
      }
      if (training_memory(costs, sys, q, pl).fits) {
        fitting = q;
        break;
      }
      if (!fallback || fallback->pp == q.pp) fallback = q;  // the first stages' most recomputation
    }
    if (fitting) break;
  }
  if (!fitting && !fallback) throw InputError(at + "pp", "no pipeline degree gives a valid plan on " + std::to_string(chips) + " chips");
  const bool fits = fitting.has_value();
  if (fits) t.plan = *fitting;
  else t.plan = *fallback;
  t.fits = fits;
  for (const auto& a : batch_assumed) assume(a);
  if (t.plan.global_batch != stated_batch) {
    assume("batch: " + std::to_string(stated_batch) + " sequences do not divide by dp " + std::to_string(t.plan.dp) + " x microbatch " +
           std::to_string(t.plan.microbatch) + (r.schedule == "interleaved" ? " x pp " + std::to_string(t.plan.pp) : std::string()) +
           ": predicted at the nearest global batch that does, " + std::to_string(t.plan.global_batch) + " (an engine runs whole microbatches)");
  }
  if (search_pp) {
    assume("pp, dp: empty, PP" + std::to_string(t.plan.pp) + " x DP" + std::to_string(t.plan.dp) +
           ": the fewest pipeline stages with which the plan fits (Narayanan et al. 2021 section 3)");
  } else if (!r.dp) {
    assume("dp: empty, chips / (tp x pp x cp) = " + std::to_string(t.plan.dp));
  }
  if (!r.microbatch) {
    assume("microbatch: empty, " + std::to_string(t.plan.microbatch) +
           (t.plan.pp > 1 ? " (pipelines run microbatch 1: the least bubble)" : " (the largest that fits)"));
  }
  if (r.recompute.empty()) assume("recompute: empty, " + std::string(to_string(t.plan.recompute)) + " (the least that fits)");
  if (r.schedule.empty() && t.plan.pp > 1) {
    assume("schedule: empty, " + std::string(to_string(t.plan.schedule)) +
           (t.plan.schedule == PipelineSchedule::interleaved ? " v2 (Megatron's PTD-P)"
            : r.engine == "megatron" ? " (Megatron-LM's default: no --num-layers-per-virtual-pipeline-stage, no interleaving)"
                                     : " (the layers or microbatches do not allow interleaving)"));
  }
  if (t.zero_fsdp && t.plan.pp > 1) t.notes.push_back("zero fsdp with a pipeline: read as ZeRO-2, the parameters stay gathered over a step's microbatches (Llama 3 section 3.3.2)");
  if (!fits) t.notes.push_back("the plan does not fit in HBM by chalk's memory model; predicted as stated");
  for (std::size_t i = 0; i < r.assumed.size(); ++i) {
    assume(r.assumed[i] + " " + r.assumed_values[i] + ": filled in by the row's author, not stated by the source (see its notes)");
  }
  return t;
}

}  // namespace chalk::detail
