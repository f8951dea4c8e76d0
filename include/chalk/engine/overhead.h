// What a serving engine pays beyond the plain roofline (docs/formulas.md, fidelity
// section; docs/accuracy.md): the parallel layout's replication and collectives, a
// per-kernel latency floor, attention and decode-GEMM kernels below the streaming
// rate, expert load imbalance on the compute side, and overlap of expert-parallel
// communication with compute under two micro-batches. Every constant comes from a
// published microbenchmark (Calibration); none is fitted to a validation row.
#pragma once

#include <cstdint>
#include <string>

#include "chalk/engine/collective.h"
#include "chalk/engine/cuda_graphs.h"
#include "chalk/engine/host_time.h"
#include "chalk/model/expert_skew.h"
#include "chalk/model/model.h"
#include "chalk/base/units.h"

namespace chalk {

struct Deployment;  // chalk/roofline.h

/// Where one replica's work lives on its n chips. A degree of 0 is derived by
/// resolve_layout: attention tensor parallel over the largest number of chips within the
/// scale-up domain that divides n and that the heads allow (attention_split_problem; 72
/// chips of DeepSeek-V3's 128 heads: TP8 x 9 data-parallel groups), dense FFNs as
/// attention, routed experts spread over all n chips (expert parallel), each expert
/// split over n / ep chips.
struct ParallelLayout {
  int64_t tp_attention = 0;  ///< chips splitting each attention layer (heads); n / tp = data-parallel groups
  int64_t tp_ffn = 0;        ///< chips splitting each dense FFN and shared expert
  int64_t ep = 0;            ///< expert-parallel degree of routed experts
  int64_t tp_expert = 0;     ///< chips splitting each routed expert (ep x tp_expert = n)
  bool kv_sharded_by_batch = false;  ///< KV split by sequence over all n chips (Pope et al. 2022 section 3.3)
  bool weight_gathered = false;      ///< weights all-gathered per layer, activations stay sharded (Pope 3.2.3)
  /// Two micro-batches hide expert-parallel traffic behind compute (a decode step only when
  /// every data-parallel rank holds at least two sequences; engine_step).
  bool overlap_micro_batches = false;
  double dispatch_bytes_per_element = 2;  ///< EP dispatch format (FP8 dispatch = 1)
  double combine_bytes_per_element = 2;   ///< EP combine format
  std::string description;  ///< how the layout was obtained ("stated: ...", "derived: ...")
};

/// Calibrated constants of the mechanisms, each from a published microbenchmark row of
/// data/measurements/measurements.csv (which are never scored).
struct Calibration {
  /// Fixed time of one dependent GPU kernel (launch, ramp, tail): AZURE-GEMM-FP8-H100,
  /// cuBLASLt FP8 on H100, time = t0 + flops / 1382 TF: 1024^3 runs at 274 TF = 7.84 us,
  /// of which 2.147e9 / 1382e12 = 1.55 us is work, so t0 = 6.3 us (4096^3 then predicts
  /// 105.7 us against 112.9 measured).
  Seconds kernel_floor = microseconds(6.3);
  /// A decode GEMM's whole time over its weight bytes, its fixed time included: 2668 of
  /// 3350 GB/s (DEEPGEMM-2, FP8 M=64 N=7168 K=16384 on H800, a 44.7 us kernel). Every
  /// format's rate but one (detail::weight_stream_fraction).
  double weight_stream_fraction = 2668.0 / 3350.0;
  /// 16-bit weights in an engine that runs them through torch's cuBLAS GEMM (vLLM's F.linear)
  /// on a GPU, which pays each kernel's fixed time as kernel_floor: the GEMM streams at its
  /// marginal rate, the slope of time over bytes between two shapes, so the fixed time is
  /// not paid twice (docs/formulas.md, "Weight streaming"). cuBLAS bf16 on H100 SXM (vLLM
  /// PR #49363, benchmark_fp8_gemm.py on gemma-4-31B-it, K=5376, N=12288 against N=43008):
  /// slopes 3.161, 3.077, 3.008, 2.958 TB/s at M = 1, 16, 64, 128, mean 3.051 TB/s = 0.911
  /// of 3.35 (sd 0.026; fixed parts 1.6-4.2 us; whole kernels 0.850-0.917).
  double weight_stream_fraction_16bit = 0.911;
  // The KV cache streams at the deployment's hbm_efficiency (the chip's own figure); the
  // H800 kernel's 3000 of 3350 GB/s (FLASHMLA-1) was applied to every chip before.
  /// Attention runs at 660 of 989.4 bf16 TFLOP/s when compute-bound (FLASHMLA-1, H800),
  /// never above the chip's own bf16 matmul fraction (engine_step).
  double attention_compute_fraction = 660.0 / 989.4;
  /// SMs lent to communication kernels while they overlap compute: 20 of 132
  /// (DeepSeek-V3 report section 3.2.2; training-and-systems.md 6.1).
  double communication_sm_fraction = 20.0 / 132.0;
  /// Kernels per step outside the layers: embedding, final norm, LM head, sampling.
  int64_t kernels_per_step = 4;
  /// Latency of one barrier stage of the engine's custom tensor-parallel all-reduce (one-shot
  /// pays it once, two-shot twice; tp_all_reduce): kCustomAllReduceStageLatencyUs = 6.45 us,
  /// the intercept of vLLM's one-shot times on 4 x H100 (vllm PR #24532). An engine profile's
  /// allreduce_latency_s (`chalk calibrate` fits it from runs at TP > 1) replaces it. NCCL's
  /// ring keeps its own protocol latencies (scale_up_link).
  Seconds allreduce_latency = microseconds(kCustomAllReduceStageLatencyUs);
};

/// Fixed time of one dependent operation of a step on `sys`: the chip's own op_floor where
/// its hardware file states one (a TPU's XLA fused op), else the GPU kernel floor
/// cal.kernel_floor (docs/formulas.md, "Fixed time per operation").
Seconds op_floor(const SystemSpec& sys, const Calibration& cal);

/// The mechanisms switch and their inputs. Disabled (the default) leaves the plain
/// roofline of roofline.h unchanged.
struct Mechanisms {
  /// The defaults below, built out of line (overhead.cc): the engine defaults call
  /// functions that may throw, and GCC 12 inlined them at every `Mechanisms{}` and
  /// `DeploymentOptions{}` with a cleanup path it took for a read of an uninitialized
  /// string (-Wmaybe-uninitialized, a false positive).
  Mechanisms();

  bool enabled = false;
  ParallelLayout layout;
  Calibration calibration;
  /// The engine's tensor-parallel all-reduce (engine_tp_all_reduce): vLLM's custom one-shot
  /// / two-shot kernels by default, the engine the simulator and `plan` assume.
  TpAllReduce tp_all_reduce = engine_tp_all_reduce("vllm");
  /// The engine's host work per step (engine_host_time): vLLM's by default, overlapped.
  HostTime host = engine_host_time("vllm");
  /// The engine's CUDA graphs (engine_cuda_graphs): vLLM's capture sizes by default;
  /// eager = --enforce-eager.
  CudaGraphs graphs = engine_cuda_graphs("vllm");
  /// How the routed experts sit against the router's skew (`--eplb`, measurement column
  /// `eplb`): the busiest EP rank's grouped GEMMs and its all-to-all bytes scale with its
  /// load (busiest_rank_assignments). Uniform routing, the lower bound, by default.
  ExpertBalance expert_balance = ExpertBalance::uniform;
};

/// Why serving engines cannot split a model's attention over `tp` chips, or "" when they
/// can: every rank needs whole query heads (vLLM and SGLang assert heads % tp == 0) and
/// whole KV heads, split or replicated (kv % tp == 0 or tp % kv == 0); an MLA latent is one
/// KV head, replicated on every rank. (Pope et al. 2022 pad PaLM's 48 heads to 64 instead.)
std::string attention_split_problem(const ModelSpec& m, int64_t tp);

/// Why serving engines cannot run one replica laid out as `l` (its degrees resolved), or ""
/// when they can: whole heads over tp_attention (attention_split_problem) and whole columns
/// of every dense FFN and of the shared experts over tp_ffn (vLLM's column-parallel layers
/// assert width % tp == 0). Routed experts may spread unevenly over EP (vLLM's expert map
/// gives the first E mod ep ranks one more). The one rule of which layouts, and so which
/// replica sizes, a replica can use: the layout search refuses a candidate that breaks it,
/// and the default chip count is the smallest size with a candidate that fits
/// (default_layout.h). Phi-4 (40 heads, 10 KV heads, FFN 17920) as attention TP2 x 2, FFN
/// TP4: ""; as TP4: "TP4 neither divides nor is a multiple of the 10 KV heads".
std::string layout_split_problem(const ModelSpec& m, const ParallelLayout& l);

/// The expert-parallel degree for `n` chips: the largest divisor of n that is at most the
/// routed experts per layer (fewest over the MoE groups), the rest of the chips splitting
/// each expert (tp_expert = n / ep): Mixtral's 8 experts on 16 chips are EP8 x TP2. 1 for a
/// dense model.
int64_t expert_parallel_degree(const ModelSpec& m, int64_t n);

/// The layout for people: "attention TP8, FFN TP8, experts EP72 x TP1, dispatch 1 B/element,
/// two micro-batches overlap EP traffic" (experts and dispatch format only for MoE models;
/// the format only when not bf16).
std::string describe_layout(const ParallelLayout& l, bool moe);

/// Fills the zero degrees of `requested` for a model on `n_chips` of a system with a
/// scale-up domain of `domain` chips (see ParallelLayout); a derived EP is
/// expert_parallel_degree. Throws InputError when a degree is negative or does not divide
/// n_chips, ep x tp_expert != n_chips, ep exceeds the routed experts, or ep > 1 on a dense
/// model.
ParallelLayout resolve_layout(const ParallelLayout& requested, const ModelSpec& m, int64_t n_chips, int64_t domain);

/// Dependent kernels one layer launches in a CUDA-graph engine with the customary
/// fusions (one kernel per dependent stage; collectives are counted in t_comm):
/// GQA/MHA/MQA attention 5 (norm, QKV GEMM, RoPE + KV write, attention, output GEMM);
/// MLA 9 (norm, fused q_a/kv_a GEMM, latent norms, q_b GEMM, k_b BMM, RoPE + KV write,
/// attention, v_b BMM, output GEMM: TensorRT-LLM tech blog 1, "Everything in One
/// Diagram"); dense FFN 4 (norm, up GEMM, activation, down GEMM); MoE 8 (norm, router
/// GEMM, top-k, permute, grouped GEMM, activation, grouped GEMM, finalize) plus 3 per
/// shared expert group.
int64_t kernels_per_layer(const LayerGroup& g);

/// Copies of one token that an expert-parallel dispatch (or combine) sends over the
/// scale-out network when its EP ranks span `domains` scale-up domains (nodes or racks),
/// under uniform routing of `top_k` experts. Only copies bound for another domain cross
/// it (lecture 36:27: EP144 over two NVL72 racks sends half its traffic between them).
/// Low-latency (decode) kernels send each token-expert copy on its own: top_k (D - 1)/D,
/// the rest over NVLink (DeepEP Buffer's default allow_nvlink_for_low_latency_mode).
/// Normal (prefill) kernels send one copy per remote domain and forward it over NVLink:
/// the expected number of other domains hit, (D - 1)(1 - (1 - 1/D)^top_k) (DeepEP README;
/// DeepSeek-V3 report 4.2, node-limited routing). 0 for one domain; domains >= 1.
double ep_scale_out_copies(double domains, double top_k, bool low_latency_kernels);

/// One engine step of a replica: decode sequences that each push tokens through the
/// model, and prefill chunks.
struct StepShape {
  double decode_sequences = 0;
  int64_t context = 0;              ///< KV tokens each decode sequence reads
  double tokens_per_sequence = 1;   ///< query tokens each decode sequence pushes (MTP, drafts)
  /// Query tokens each decode sequence pushes through attention only; 0 = tokens_per_sequence.
  double attention_tokens_per_sequence = 0;
  double prefill_sequences = 0;
  int64_t prompt = 0;  ///< new tokens per prefill sequence
  int64_t prefix = 0;  ///< cached tokens before them
};

/// The busiest chip's time for one step, by mechanism.
struct StepBreakdown {
  Flops flops_per_chip;
  Bytes weight_bytes_per_chip, kv_bytes_per_chip;
  Seconds t_compute;     ///< sum of the operations' compute times
  Seconds t_weights;     ///< sum of their weight-read times, and the MoE token copies' (expert_activations.h; no weight bytes)
  Seconds t_kv;          ///< KV-cache read and write time
  Seconds t_operations;  ///< sum over operations of max(compute, memory) (per-kernel roofline)
  Seconds t_overhead;    ///< each kernel at max(op_floor, its HBM traffic) for the norm, rotary and activation kernels (memory_kernels.h), op_floor for the rest (the GPU kernel floor, or the chip's own per-op time)
  /// The captured CUDA-graph size the step replays (cuda_graphs.h, graph_batch: tokens or
  /// decode sequences of the busiest data-parallel rank, the step padded up to it); 0 when
  /// it runs eagerly or the engine's graphs are not modelled.
  int64_t graph_batch = 0;
  bool eager = false;  ///< the host launches each kernel (above the largest graph, --enforce-eager)
  /// Eager steps: the host's launches, kernels x CudaGraphs::launch_s_per_kernel; the GPU
  /// step is at least this long. 0 when the step replays a graph.
  Seconds t_launch;
  Seconds t_comm_total;  ///< every collective of the step
  Seconds t_dispatch, t_combine;  ///< expert-parallel traffic within t_comm_total (both micro-batches)
  /// Decode under two micro-batches: the compute behind which the dispatch and the
  /// combine travel (see engine_step); 0 otherwise.
  Seconds t_dispatch_window, t_combine_window;
  Seconds t_comm;        ///< the part not hidden behind compute
  /// The host's work for the step (HostTime: per sequence on the busiest data-parallel
  /// rank). t_step is step_with_host(GPU step, t_host): the GPU step alone when overlapped
  /// host work is shorter.
  Seconds t_host;
  Seconds t_step;        ///< max(t_operations + t_overhead + t_comm, t_launch), with the host's time (t_host)
  double kernels = 0;
  bool overlapped = false;  ///< two micro-batches ran (asked for, EP traffic to hide, and faster)
  /// The largest share of t_step: "compute", "weights", "kv-cache", "communication",
  /// "overhead", "launch" when an eager step's host launches outlast its GPU work, or "host" when the host's work is at least the GPU step's; under prefill overlap "communication" whenever the traffic outlasts the
  /// compute path (the step is then the traffic, though only its excess shows in t_comm).
  std::string governs;
};

/// The step time with every mechanism, on the busiest chip (docs/formulas.md,
/// fidelity): per operation (attention projections, attention core, dense FFN, routed
/// experts, LM head) max(FLOPs / (peak x matmul efficiency), bytes / (HBM x streaming
/// fraction)), summed (operations run one after another: the roofline of Williams et
/// al. 2009 applies per kernel); plus kernels x kernel floor; plus the collectives of the
/// layout (ring all-reduce after tensor-parallel attention and FFN blocks, EP
/// dispatch/combine all-to-all when attention is data parallel, per-layer weight
/// all-gather when weight-gathered). With overlap_micro_batches each micro-batch runs
/// every layer, so the step pays twice the kernels, streams every weight twice and pays
/// each exchange's fixed latency twice; then
/// - prefill (normal all-to-all kernels, which hold SMs): max(compute path, traffic),
///   the compute slowed by the SMs lent to communication (DeepSeek-V3 report 3.2.2);
/// - decode (low-latency kernels, which free the SMs once the RDMA writes are issued:
///   deepseek-ai/profile-data README): DeepSeek's five-stage pipeline, compute path +
///   max(0, dispatch - its window) + max(0, combine - its window), the dispatch window
///   being the shared expert and the attention before its core, the combine window the
///   core, the output projection and the router; routed experts hide nothing.
/// The two micro-batches run only where they beat one batch (engines gate them by batch
/// size) and, in decode, where every data-parallel rank holds two sequences.
/// Routed-expert compute is that of the
/// busiest EP rank under uniform top-k routing (expected_max_load). Throws InputError for
/// negative shapes.
StepBreakdown engine_step(const Deployment& d, const StepShape& s);

}  // namespace chalk
