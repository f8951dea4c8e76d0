// The accuracy guard over every built-in row (split from validate_test.cc): the medians and
// 90th percentiles per kind chalk validate prints may not get worse than the figures below,
// each with the history of what moved it.
#include <algorithm>
#include <cmath>

#include <gtest/gtest.h>

#include "chalk/validate/validate.h"
#include "validate_test_util.h"

namespace chalk {
namespace {

using testing_util::summary;

// Every built-in row, the 19 added from sources outside the shared reference included:
// TensorRT-LLM at high batch per GPU (DeepSeek-R1 on B200 and H200, Qwen3-235B), NVFP4 and
// long-context dense rows, MTP 1-3, vLLM on MI300X, MLPerf offline on H200, B200 and
// MI300X. Their misses are named in docs/accuracy.md; a change that improves them should
// lower these figures.
TEST(Validate, MedianErrorOfAllRowsDoesNotGetWorse) {
  const ValidationReport r = validate_measurements(builtin_measurements());
  // 10 rows: 7.0% (8.2% before the routed experts' grouped GEMMs paid their per-tile fixed
  // cost in serving steps: docs/formulas.md "Grouped GEMM"; 9.9% before the engines' own
  // all-reduce kernels).
  // Then 6.6% with the eplb column (expert_skew.h: DS-SERVE-DECODE +32% -> +27%,
  // SGL-H100-DECODE +7.2% -> +2.7%).
  // Then 4.3% (p90 27% -> 11%) with the TPU's fixed time per XLA op (tpu-v4.json op_floor,
  // docs/formulas.md "Fixed time per operation": POPE-2 -29.8% -> -1.0%, POPE-5 -21.4% ->
  // +0.8%, POPE-4 -4.2% -> +4.6%).
  EXPECT_LE(summary(r, "decode").median_abs, 0.043);
  // 22 rows: 17.7%, p90 39.0% (53.3% before B200 and GB200 stated their measured fp4 matmul
  // fraction, 63.4%, instead of falling back to bf16's 77.6%: docs/formulas.md section 2;
  // 66.4% before vLLM 0.10's host work followed each GPU step: docs/formulas.md, host time
  // per step; 23.7% and 103% before TensorRT-LLM rows ran their prompts whole, without
  // chunked prefill: steady_state_step).
  // Then 29.7%, p90 48.0%: the four llama2-70b MLPerf offline rows state their dataset, and
  // take its mean prompt (OpenOrca, 222 tokens, data/datasets/datasets.csv) instead of the
  // guessed 512 (issue 32: a default that predicts worse shows, not hidden): -11/-6/-14/-9%
  // -> +41/+44/+37/+48%. The miss is chalk's, at short prompts and large batches offline,
  // not yet explained (docs/accuracy.md).
  // Then 28.3%, p90 46.3%: dense GEMMs at their per-rank shape (engine/dense_gemm.h): MLPERF41
  // -L70B-H100x8 +41% -> +38%, -H200x8 +37% -> +30%, TRTPERF-L70-H200-1000-1000 +18% -> +8%.
  // And 23.7%, p90 48.0%, alone, with the eplb column: a learned router's skew on the TensorRT-LLM
  // rows that run without a load balancer (expert_skew.h: TRTPERF-Q235-H200 +28% -> +16%,
  // TRTBP-R1-B200-MAXTPT-FP8KV +73% -> +64%, TRTPERF-R1-B200-FP4 +32% -> +26%). Both: 23.6%, p90 46.3%.
  // Then 22.0%, p90 46.3%: TensorRT-LLM's MoE copies each token's top-k rows into expert order
  // and sums them back (engine/expert_activations.h: TRTPERF-Q235-H200 +14.5% -> +10.7%,
  // TRTBP-R1-B200-MAXTPT-FP8KV +63.5% -> +58.8%, TRTPERF-R1-B200-FP4 +26.3% -> +23.0%).
  // Then 19.7%, p90 37.4% (alone): the B200 states its measured sustained clock, 0.853 (b200.json,
  // flashinfer PR #2899; docs/formulas.md "Sustained clock"): every B200 serving row was too
  // fast and moves toward its measurement (TRTBP-R1-B200-MAXTPT-FP8KV +63% -> +48%,
  // MLPERF50-L70B-B200x8-OFFLINE +47% -> +29%, TRTPERF-L405-B200-FP4 +38% -> +24%).
  // Then (alone) 16.8%, p90 37.3%: B200's and GB200's fp4 fraction is the median of the six published
  // FP4 GEMMs on B200 over the tile model, 43.6%, not DeepGEMM's best shape alone, 63.4%
  // (docs/formulas.md section 2): TRTPERF-L70-B200-FP4 +49% -> +17%, TRTPERF-L405-B200-FP4
  // +38% -> +9%, MLPERF50-L70B-B200x8 +47% -> +7%, TRTPERF-R1-B200-FP4 +26% -> +17%,
  // TRTBP-R1-B200-MAXTPT-FP8KV +63% -> +50%, -FP16KV +32% -> +24%.
  // All three (MoE token copies, sustained clock, FP4 median): 11.3%, p90 32.7%; the sustained
  // clock and the token copies without the FP4 median: 18.4%, p90 37.4%.
  // Then 10.4%, p90 30.7%: the norm, rotary and SwiGLU kernels cost their HBM traffic where
  // it outlasts the kernel floor (engine/memory_kernels.h): every large-batch dense row slower,
  // MLPERF41-L70B-H100x8 +38% -> +29%, -H200x8 +30% -> +25%, -MI300X8 +44% -> +38%,
  // ROCM-VLLM-L70-MI300X-128-2048 +32% -> +26%; MLPERF50-L70B-B200x8 -6% -> -11%.
  // With the TPU's fixed time per op and POPE-6 at POPE-2's stated layout (+17.8% -> -3.4%): 8.75%, p90 30.7%.
  // Then 29 rows, 7.92%, p90 31.32%: seven rows from sources no row had used (issue 29), MLPerf
  // v5.0 and v5.1 (docs/accuracy.md). Five land within 9% and lower the median: the H100
  // llama2-70b Offline one round after MLPERF41-L70B-H100x8 (+2%: that row's +29% is mostly
  // the v4.1 software), llama3.1-405b on B200 Offline at NVIDIA's stated TP2 x PP2 (+1%) and
  // its Server TTFT (+3%), MI325X llama2-70b and mixtral in vLLM (-5%, -9%). Two land above
  // the old p90 and raise it: mixtral in NVFP4 on B200 (+33%) and the 405B Server TPOT at an
  // unstated layout (+30%).
  EXPECT_LE(summary(r, "serving").median_abs, 0.073);  // 0.07248 with the AMD chips' GEMM rate on representative inputs and the routed experts' activation pass (issue 29; 0.080 before); 0.088 before MLPerf v5.0/v5.1's rows; 0.104 before the TPU's fixed time per op; 0.114 before the memory-bound kernels' traffic; 0.168 with the FP4 median alone, 0.197 with the B200's sustained clock alone, 0.220 with the MoE token copies alone, 0.236 before both
  // 0.29382 since the MLPerf rows state their submissions' configurations (issue 29, MLPerf config pass): NVIDIA's v4.1
  // harness runs whole prompts (no chunked context), which takes MLPERF41-L70B-H200x8 from +25.0% to +27.0% (its 806 cap
  // alone +23.4%); not a code change: the row's truer input (the token budget's bound moves no row past the p90).
  EXPECT_LE(summary(r, "serving").p90_abs, 0.258);  // 0.25719 with NCCL's small-message all-reduce floor per system (issue 29: FT-GPT175B-B1 -32.5% -> -24.4%, B16 -16.1% -> -14.7%; scale_up.small_all_reduce_s, docs/formulas.md "Small-message all-reduce floor"); 0.28228 with the running sequences' length bias (issue 29: the MLPerf offline rows' contexts from their datasets' per-sample lengths, docs/formulas.md "Running sequences are length-biased"); 0.29382 before it; 0.29298 with the AMD chips' GEMM rate on representative inputs and the routed experts' activation pass (issue 29; 0.314 before); 0.308 before MLPerf v5.0/v5.1's rows (above); 0.3074 with and before the TPU's fixed time per op; 0.328 before the memory-bound kernels' traffic, 0.374 with the B200's sustained clock alone, 0.463 before it
  // Issue 29's goal is stated per metric (median at most 10%, p90 at most 25% for TTFT, TPOT and
  // end-to-end latency): the serving summary per metric key when chalk validate came to print
  // it, guarded as the kind's. Throughput (output_tok_per_s, 17 rows) 0.0634 / 0.2510 holds the
  // kind's p90 (the MLPerf v4.1 offline rows); E2E (5 rows: FasterTransformer, Pope et al., vLLM on MI300X)
  // 0.0341 / 0.2053; the one TTFT row 0.0256 and the one TPOT row 0.3007
  // (MLPERF50-L405B-B200x8-SERVER-*, docs/accuracy.md).
  EXPECT_EQ(summary(r, "serving", "all rows", "output_tok_per_s").count, 17);
  EXPECT_LE(summary(r, "serving", "all rows", "output_tok_per_s").median_abs, 0.064);
  EXPECT_LE(summary(r, "serving", "all rows", "output_tok_per_s").p90_abs, 0.252);
  EXPECT_LE(summary(r, "serving", "all rows", "e2e_s").median_abs, 0.035);
  EXPECT_LE(summary(r, "serving", "all rows", "e2e_s").p90_abs, 0.206);
  EXPECT_LE(summary(r, "serving", "all rows", "ttft_ms").p90_abs, 0.026);
  EXPECT_LE(summary(r, "serving", "all rows", "tpot_ms").p90_abs, 0.301);
  // Training, 27 rows with Korthikanti et al. 2022's Table 5 and Megatron-Bridge's table
  // (issue 33): 14.9%, p90 41.1%. The p90 is Megatron-Bridge's small MoE rows (Qwen3-30B-A3B
  // +179%, gpt-oss-120b +46%: grouped GEMMs of narrow experts, not modelled) and its 8B rows
  // on B200 (+38%) and GB200 (+22%). 14.4% and 25.8% on the 17 rows before them.
  // Then 14.6%, p90 38.3% once a fused attention kernel's backward ran at its own, lower rate
  // (kernels.h, attention_backward_rate_ratio: every Llama 8B row 2.4-3.4 points closer).
  // Then 28 rows: Megatron-Bridge's Qwen3-30B-A3B on 16 H100 over NCCL's all-to-all
  // (MBR-H100-Q30B-EP16-A2A, -16.4%; -57% before EpDispatcher::all_to_all sent every token
  // copy across the NIC) adds a row above the median: 14.7%, p90 37.3%; then 29 rows with
  // the same run under Megatron-Core's EP overlap (-26.4%: chalk hides 179 ms of EP per
  // microbatch, the run 155 ms): 14.8%, p90 36.4%. Then 13.9%, p90 35.2% with GEMM
  // efficiency by shape (engine/gemm_shape.h: wave and tile quantization over the SMs; the
  // A100 rows' TP8 GEMMs of 2048 tokens run in 6 waves on 108 SMs, 89% full: MEG21-3 +23% ->
  // +17%, KORTH22-175B -11% -> -7%). Then 13.2%, p90 33.8% with a grouped GEMM's per-tile
  // fixed cost on the routed experts (engine/gemm_shape.h grouped_gemm_reduction_efficiency)
  // and the router's fp32 kernels: every MoE row slower, all of them too fast before
  // (MBR2511-H100-Q30B +172% -> +157%, -OSS120B +42% -> +35%, MBR2511-B200-DSV3 +29% -> +23%,
  // DSV3-TRAIN-2 +17% -> +15%; MBR2509-H100-DSV3 -0.0% -> -2.4%). Then 13.1%, p90 30.2%
  // with the FP8 recipes' quantization kernels (current scaling's amax pass on
  // Megatron-Bridge's FP8-CS rows) and the rotary kernels (kernels.h): alone they moved
  // MBR2511-H100-L8B +13.2% -> +9.7%, B200-L8B +33.6% -> +29.3%, GB200-L8B +19.1% -> +15.7%.
  // Then 33 rows, 9.7%, p90 29.1%: the Megatron-LM runs of 2021 read without sequence
  // parallelism (measurement column sequence_parallel no: MEG21-1 +18% -> +15%, MEG21-3 +17%
  // -> +12%, MEG21-4 +14% -> +9%), MT-NLG's 530B run on 2,240 A100 with full recomputation,
  // the only kind its Megatron-LM had (PALM-TRAIN-2 +80% -> +36%), and Korthikanti et al.'s
  // four full-recomputation step times as rows (KORTH22-*-FULL, -4% to -7.5%). The 29 rows
  // before them: 11.7%, p90 30.2%.
  // Then 9.5%: materialised attention scores multiply the whole s x s square (kernels.h,
  // attention_core_flops_per_token), which moves every Megatron-LM row, none past zero:
  // KORTH22-22B -13.1% -> -10.9%, -175B -6.8% -> -5.3%, MEG21-2 +10.7% -> +6.0%. Then 9.3%:
  // MBR2511-B200-L405B reads its recipe's recomputation, none (it had taken full, the least
  // that fit chalk's memory model, 0.2 GB over the 180 GB): -16.0% -> +6.5%. Then p90 28.0%:
  // the B200's sustained clock (above): MBR2511-B200-L8B +29.3% -> +13.9%, -L405B +6.5% ->
  // -3.1%, -DSV3 +22.8% -> +11.4%. Then 8.6%: the mixed-precision optimizer's housekeeping
  // passes (step.h optimizer_housekeeping_bytes: the working weights' copy, the gradient
  // buffer's zeroing, fp16's unscale) and the alltoall dispatcher's sort by local expert
  // (kernels.h): KORTH22-22B -10.9% -> -8.6%, KORTH22-22B-FULL -5.6% -> -4.0%,
  // MBR-H100-Q30B-EP16-A2A -13% -> -10.4%; rows chalk finds too slow (Llama 3, MBR2511
  // L70B/L405B) gain a sharded optimizer's few milliseconds, under half a point.
  // Then 44 rows, 10.02%, p90 78.4%: torchtitan's published table (9 rows, +28% to +215%: SDPA's
  // FlashAttention-2 kernel at about half the attention rate chalk prices, torchtitan's per-op
  // checkpointing that reruns every second GEMM, a 500 W H100; docs/accuracy.md) and MaxText's
  // TPU v5p table (2 rows, -0.7% and +1.1%). Every torchtitan row lands above the old median and
  // eight of the nine above the old p90 (all but the 70B's +27.8%), so they now set it: honest
  // figures for an engine whose kernels chalk does not yet price, not a regression of the
  // mechanisms.
  // Then p90 45.5%: the eager run's unfused RMSNorm, SwiGLU and RoPE (eager_kernels.h) price
  // the one eager row's op-by-op kernels.
  // Then 9.43%, p90 27.9%: the Grand Teton H100's 500 W sustained clock, 0.809 (Meta's bf16
  // peak for the part, 800 of 989 TFLOP/s: arXiv 2411.01783 appendix A; the hardware file),
  // moves the nine torchtitan rows and no other: +36/+48/+39/+40/+50/+106/+21/+26/+48% ->
  // +18/+23/+20/+20/+25/+68/+8/+9/+29%. Then p90 26.2%: the interleaved row reads torchtitan's
  // default 8 microbatches (build_pipeline_schedule @9dec370: the PP degree), +29% -> +11%.
  // Then two of Megatron-Bridge's rows read the table's VP 1
  // as a pipeline without interleaving (issue 33; they had taken interleaved v = 2):
  // MBR2511-H100-OSS120B +33% -> +17%, MBR2511-B200-DSV3 +11% -> +26% (interleaving had forced
  // full recomputation in chalk's memory model); both stay above the median and below the p90.
  // Then 15.5%, p90 65.9%: the 19 MoE rows of Megatron-Bridge's table (25.09 and 25.11, every
  // chip) that were not rows (issue 33), measured as they are, no mechanism added. All of
  // them are too fast (+18% .. +255%): MBR2511-B200-Q30B +255%, MBR2511-GB200-OSS120B +115%,
  // MBR2511-GB300-OSS120B +94%, MBR2511-B200-Q235B +85%, MBR2509-B200-Q30B +77%,
  // MBR2509-H100-Q235B +59%, MBR2509-GB200-Q30B +58%, MBR2511-GB200-Q30B +56%,
  // MBR2511-GB200-Q235B +55%, MBR2509-GB200-Q235B +49%, MBR2509-B200-Q235B +45%,
  // MBR2511-GB300-Q30B +39%, MBR2511-GB300-Q235B +36%, MBR2511-B200-OSS120B +33%, ...
  // (docs/accuracy.md, "Where chalk is far off").
  // Then median all 9.7%, training p90 59.2%: FlashAttention-2 priced at its own measured rate
  // over chalk's Hopper attention rate (370 of 660 TFLOP/s, not of the FA3 paper's cuDNN 595:
  // attention_kernels.h) and PyTorch's ring attention's eager fp32 merges and repeated-K/V
  // exchange (ring_attention.h): the ten torchtitan and llm-foundry rows all move toward their
  // measurements, TT-L8B-H100x8-CP8-256K +67.5% -> +42.5%, TT-L8B-H100x8-FSDP-FP8-32K +25.2% ->
  // +17.3%, the 8B rows at 8K +2 to +3 points, MPT-1 +26.1% -> +25.7%.
  EXPECT_LE(summary(r, "training").median_abs, 0.127);  // 0.12697 with FSDP2's all-gather copy-out on the compute stream (issue 33, eager_kernels.h: the torchtitan ZeRO-3 rows 0.2-1.8 points closer); 0.12849 with torchtitan's eager fp32 loss and foreach AdamW with clipping (issue 33, eager_kernels.h: its five 8B rows at 8K-32K 1.2-3.5 points closer); 0.14066 with each kernel's fixed time (issue 33, kernel_fixed_time.h); 0.15548 with the 19 MoE rows of Megatron-Bridge 25.09/25.11 (issue 33, above); 0.095 before them; 0.0943 with the 500 W sustained clock (the torchtitan rows); 0.10022 with the attention kernel by engine and torchtitan's op-level selective recomputation; 0.087 before torchtitan's and MaxText's rows; 0.094 before the optimizer's housekeeping and the local-expert sort; 0.096 before the recipe's recomputation; 0.097 before the whole square; 0.131 before sequence_parallel and the full-recomputation rows; 0.133 before the FP8 recipes and rotary kernels
  EXPECT_LE(summary(r, "training").p90_abs, 0.490);  // 0.48958 with each kernel's fixed time and FlashAttention-2 at its own rate with PyTorch's ring-attention merges together (issue 33); 0.54404 with each kernel's fixed time (issue 33, kernel_fixed_time.h); 0.65900 with the 19 MoE rows of Megatron-Bridge 25.09/25.11 (issue 33, above); 0.261 before them; 0.26029 with two MBR rows at VP 1 (1F1B); 0.26206 with torchtitan's default microbatches on the interleaved row; 0.27889 with the 500 W sustained clock alone; 0.45472 with torchtitan's eager kernels (eager_kernels.h, the compile column: TT-L8B-H100x8-FSDP +71.0% -> +36.0%, no other row moves); 0.47792 with the attention kernel by engine (torchtitan and llm-foundry at FlashAttention-2's rates) and torchtitan's op-level selective recomputation; 0.784 with torchtitan's and MaxText's rows before them; 0.280 before torchtitan's and MaxText's rows (above); 0.291 before the B200's sustained clock, 0.302 before sequence_parallel and the full-recomputation rows, 0.339 before the FP8 recipes and rotary kernels, 0.352 before the grouped GEMM's fixed cost, 0.428 before the MoE permute and unpermute kernels, 0.405 before the attention backward's rate
  EXPECT_LE(summary(r, "run").median_abs, 0.229);  // 0.22796 with the interruption model's goodput (issue 33, training/goodput.h: PALM-TRAIN-3 -38% -> -35%, DSV3-TRAIN-1 -12% -> -11%); 0.25107 with each kernel's fixed time (issue 33, kernel_fixed_time.h); 0.263 before the grouped GEMM's fixed cost (DSV3-TRAIN-1 -14.6% -> -12.8%)
  EXPECT_LE(summary(r, "all").median_abs, 0.095);  // 0.09444 with Megatron-LM's rows at the schedules and microbatches their sources ran (1F1B unless told; the SC21 scripts) and the pipeline receiver's gather without sequence parallelism (issue 33); 0.09594 with each kernel's fixed time, FlashAttention-2 at its own rate, the ring-attention merges, the running sequences' length bias and the small-message all-reduce floor together; 0.09790 with each kernel's fixed time (issue 33, kernel_fixed_time.h); 0.10417 with the 19 MoE rows of Megatron-Bridge 25.09/25.11 (issue 33: training 9.4% -> 15.5%); 0.083 before them; 0.08273 with the 500 W sustained clock (the torchtitan rows); 0.08645 with the 18 rows of MLPerf v5.0/v5.1, torchtitan and MaxText (the torchtitan rows lift it; 0.077 before); 0.0761 with the TPU's fixed time per op (POPE rows); 0.090 before it; 0.094 before the optimizer's housekeeping and the local-expert sort (training 9.3% -> 8.6%); 0.0939 with the B200 sustained clock, its FP4 median and the MoE token copies together; 0.1056 with TensorRT-LLM's MoE token copies (engine/expert_activations.h); 0.107 with all of them (training, dense GEMM shapes, eplb); 0.128 with the recipe's recomputation and the whole square, 0.129 with serving's dense GEMMs at their shape or with the eplb column, 0.132 before them; 0.122 before the MLPerf rows took OpenOrca's mean prompt (above); 0.133 before sequence_parallel and the full-recomputation rows; about 0.14 before the grouped GEMM's fixed cost; 0.173 before issue 33's training mechanisms and rows; 0.151 before the attention backward's rate; 0.152 before GEMM shapes
  // Megatron-LM on A100, the rows issue 33 closed in on (Korthikanti et al. 2022 Table 5,
  // Narayanan et al. 2021): the largest |error| of each family may not get worse. KORTH22:
  // 0.02615 (KORTH22-1T +2.6%) and MEG21 0.08947 (MEG21-2 +8.9%) with each row at the schedule
  // and microbatch its source ran (Megatron-LM interleaves only when told; the SC21 paper's
  // examples/sc21/run_table_1.sh runs 1T without interleaving and 1.7B at microbatch 16 with
  // full recomputation; Calculon's 1T files: no interleaving) and the pipeline receiver's
  // all-gather without sequence parallelism (issue 33: MEG21-1 +12.4% -> +6.6%, MEG21-3 +6.8%
  // -> +5.4%, MEG21-4 +7.4% -> +2.2%, MEG21-2 +4.0% -> +8.9%, KORTH22-1T-FULL -4.1% -> +1.1%).
  // Before: 0.04135 (KORTH22-1T-FULL -4.1%) and MEG21 0.12422 (MEG21-1 +12.4%) with each kernel's fixed time (issue 33, kernel_fixed_time.h); 0.0434 (KORTH22-1T-FULL -4.3%) with the A100's NCCL rate (0.66 of 300 GB/s) and sequence
  // parallelism's second gather in backward (docs/training.md, "One 22B layer against
  // Korthikanti Table 4"); 0.0864 before (KORTH22-22B -8.6%). MEG21: 0.1266 (MEG21-1 +12.7%);
  // 0.140 before.
  double korth = 0, meg = 0;
  int korth_rows = 0, meg_rows = 0;
  for (const Prediction& p : r.rows) {
    if (p.id.rfind("KORTH22-", 0) == 0) korth = std::max(korth, std::fabs(p.error)), ++korth_rows;
    if (p.id.rfind("MEG21-", 0) == 0) meg = std::max(meg, std::fabs(p.error)), ++meg_rows;
  }
  EXPECT_EQ(korth_rows, 8);
  EXPECT_EQ(meg_rows, 4);
  EXPECT_LE(korth, 0.027);
  EXPECT_LE(meg, 0.090);
}

}  // namespace
}  // namespace chalk
