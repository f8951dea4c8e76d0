// Launch files for a planned deployment (docs/simulator.md, "Launch files"): per engine
// (vLLM `vllm serve`, SGLang `python3 -m sglang.launch_server`, TensorRT-LLM `trtllm-serve`)
// the shell scripts and YAML an operator runs to serve what `chalk plan` simulated, with every
// setting that changes the simulated numbers. Flag names are the engines' own, checked by
// src/sim/launch_test.cc against tests/data/engine-args/ (each engine's argument definitions
// at a named commit).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "chalk/base/dtype.h"
#include "chalk/engine/overhead.h"
#include "chalk/sim/policy.h"

namespace chalk::sim {

struct PlanCandidate;  // plan.h

/// What the launch files need beyond the simulated deployment itself.
struct LaunchTarget {
  std::string model_name;  ///< chalk's name of the model (the files' comments)
  /// The HuggingFace repository id or local directory to serve (io served_model); nullopt
  /// when none is known: the files then refuse to start until MODEL names one.
  std::optional<std::string> model;
  /// An fp8 checkpoint of `model` (io served_fp8_checkpoint: nvidia/Llama-3.1-70B-Instruct-FP8):
  /// MODEL's default where fp8 weights were simulated and the engine reads the quantization
  /// from the checkpoint (TensorRT-LLM); nullopt: none known, MODEL must name one.
  std::optional<std::string> fp8_checkpoint;
  std::string system_name;  ///< the system simulated (comments)
  /// What runs the engines' GPU builds: "nvidia" (CUDA), "amd" (ROCm: vLLM and SGLang only),
  /// "" for anything else (TPU, Trainium, Gaudi: plugins whose flags chalk does not check,
  /// so no files). launch_accelerator() derives it from a system.
  std::string accelerator = "nvidia";
  bool chip_has_fp8 = true;  ///< the chip has FP8 tensor cores (TensorRT-LLM's fp8 needs them: sm89+)
  bool moe = false;         ///< the model has routed experts
  /// The checkpoint's own format of the weights that dominate the matmuls (routed experts of
  /// an MoE, else the dense FFN), ModelSpec::weights.
  DType checkpoint_weights = DType::bf16;
  /// The weight format simulated when it overrides the checkpoint's (DeploymentOptions::weights).
  std::optional<DType> weights;
  DType kv = DType::bf16;               ///< the KV-cache format simulated
  double memory_reserve_fraction = 0.10;  ///< HBM held back (DeploymentOptions), fraction of each chip
  double hbm_bytes_per_chip = 0;        ///< one chip's HBM capacity, bytes (TensorRT-LLM's KV fraction)
  EnginePolicy policy;                  ///< the scheduler simulated; its name is the engine the numbers are for
  int64_t max_model_len = 0;            ///< the longest request of the traffic, prompt + output tokens (0: the engine's default)
  /// Simulated without CUDA graphs (--enforce-eager): vLLM --enforce-eager, SGLang
  /// --disable-prefill-cuda-graph --disable-decode-cuda-graph, TensorRT-LLM cuda_graph_config: null.
  bool enforce_eager = false;
  /// GPUs under one host OS (chips_per_host, hardware.h: 4 on a GB200 NVL72 compute tray, 8 on
  /// an HGX board): a replica on more spans hosts, and its files launch it across them.
  int64_t chips_per_host = 8;
  /// The repository's config names its own code (io needs_remote_code: an `auto_map`, as
  /// Kimi K2's and DeepSeek-V3's do): every engine's command carries its trust-remote-code flag.
  bool trust_remote_code = false;
  /// EPLB's placement simulated (--eplb yes, model/expert_skew.h): vLLM --enable-eplb
  /// --num-redundant-experts EP, SGLang --enable-eplb --ep-num-redundant-experts EP (one
  /// redundant slot a rank, as the measured rows: DeepSeek-R1's 256 experts in 288 slots at
  /// EP32); TensorRT-LLM's load balancer takes an expert-statistics file chalk does not write,
  /// so its options say so.
  bool eplb = false;
  /// LoRA adapters the plan simulated (PlanOptions::lora): N adapters of rank r (0: none).
  /// The HBM slots are the candidate's own (PlanCandidate::lora, max_loras). vLLM gets
  /// --enable-lora --max-loras M --max-lora-rank r --max-cpu-loras N --lora-modules; SGLang
  /// --enable-lora --max-loras-per-batch M --max-lora-rank r --max-loaded-loras N --lora-paths;
  /// TensorRT-LLM none (its lora_config keys are not in tests/data/engine-args: a problem).
  int64_t lora_adapters = 0, lora_rank = 0;
  /// Speculative decoding the plan simulated (PlanOptions::speculation): `draft_tokens` K
  /// drafted a step (0: none) by `drafter`: "mtp" (the checkpoint's MTP module), "eagle" or
  /// "eagle3" (an EAGLE head: its checkpoint is the operator's, the scripts' DRAFT_MODEL),
  /// "draft_model" (a separate model, `draft_model` its repository when known) or "none" (free
  /// drafts: an upper bound no engine runs; the files say so and write no drafting). Each
  /// engine writes it with its own options (launch_speculation.cc): vLLM --speculative-config,
  /// SGLang --speculative-algorithm and its steps, TensorRT-LLM's speculative_config.
  int64_t draft_tokens = 0;
  std::string drafter;
  std::optional<std::string> draft_model;
  std::string draft_model_name;  ///< chalk's name of the draft model (comments)
  std::string model_type;        ///< the target's HF model_type (ModelSpec::architecture): vLLM's EAGLE-3 targets
  /// Why an engine ("vllm", "sglang") runs no DeepEP all-to-all for this model, one line with
  /// its source (io engine_deepep_problem, data/engines/deepep.json; review 11 H2: SGLang's
  /// gpt_oss.py raises "forward_deepep branch not implemented yet"); an engine not in the map
  /// runs it. Its files then name no DeepEP backend: the engine's default MoE path runs, a
  /// layout that needs DeepEP (two micro-batches) gets a problem, and where chalk priced the
  /// all-to-all the files and EngineLaunch::differs say so.
  std::map<std::string, std::string> no_deepep;
};

/// One file of a launch: a path relative to the launch directory and its text.
struct LaunchFile {
  std::string path;         ///< "vllm/serve.sh", "trtllm/extra_llm_api_options.yaml"
  std::string text;
  bool executable = false;  ///< a shell script (#!/bin/sh)
};

/// The launch files of one engine.
struct EngineLaunch {
  std::string engine;      ///< "vllm", "sglang" or "trtllm"
  std::string checked_at;  ///< the engine source its flag names were checked against (repository @ commit)
  bool simulated = false;  ///< the engine whose scheduler chalk simulated (LaunchTarget::policy)
  /// Why this engine cannot run what was simulated, one line ("" when it can); `files` is then
  /// empty: a layout its flags cannot state (engine_layout_problem), a KV-cache format it
  /// lacks, or a chip its GPU builds do not run on (LaunchTarget::accelerator: TensorRT-LLM
  /// on NVIDIA only, and its fp8 only with FP8 tensor cores; none on TPU, Trainium, Gaudi).
  std::string problem;
  /// Where the files run another path than the one chalk priced, one line ("" when they run
  /// what was simulated): a DeepEP all-to-all priced for an expert-parallel layout that this
  /// engine does not run for the model (data/engines/deepep.json), so its default MoE path runs
  /// instead. The scripts' headers say the same.
  std::string differs;
  std::vector<LaunchFile> files;
};

/// The launch files of the deployment `c` for vLLM, SGLang and TensorRT-LLM, the simulated
/// engine first. Each engine's files: aggregated, `serve.sh` (run once per replica; SGLang
/// adds `router.sh`, its router over the replicas, when there are several); disaggregated,
/// `prefill.sh` and `decode.sh` (each run once per replica of its pool) and the front end the
/// engine documents: vLLM's NIXL proxy (`proxy.sh`: tests/v1/kv_connector/nixl_integration/
/// toy_proxy_server.py of a vLLM checkout), SGLang's router (`router.sh`:
/// `python3 -m sglang_router.launch_router --pd-disaggregation`), TensorRT-LLM's
/// `trtllm-serve disaggregated -c disagg.yaml` (`router.sh`). TensorRT-LLM's settings that have
/// no flag are in `extra_llm_api_options.yaml` (disaggregated: `prefill.yaml`, `decode.yaml`),
/// passed with --extra_llm_api_options. vLLM's also hold `dynamo.yaml`, the deployment as a
/// Dynamo DynamoGraphDeployment for Kubernetes (ai-dynamo/dynamo's
/// components/backends/vllm/deploy/agg.yaml, disagg.yaml), when each replica fits one 8-GPU
/// pod and the model is a HF repo id.
///
/// Every script states: the model (`MODEL`, default the target's repository), tensor / data /
/// expert parallel degrees and DP attention or two micro-batches as the layout simulated
/// (engine_layout_problem's rules), the weight quantization when the simulated format is not
/// the checkpoint's (vLLM and SGLang `--quantization fp8` quantize a 16-bit checkpoint online;
/// any other change, and any change for TensorRT-LLM, which reads the quantization from the
/// checkpoint, makes MODEL a required setting naming such a checkpoint), the KV-cache dtype,
/// the memory fraction (vLLM --gpu-memory-utilization and SGLang --mem-fraction-static =
/// 1 - reserve; TensorRT-LLM free_gpu_memory_fraction = KV / (HBM - weights) per chip =
/// ((1 - reserve) HBM - W) / (HBM - W)), the running-request cap, the token budget per step
/// and chunked prefill, the longest request, and for the simulated engine its KV block size;
/// KV reserved to completion is TensorRT-LLM's GUARANTEED_NO_EVICT (MAX_UTILIZATION when taken
/// on demand) and has no vLLM or SGLang flag (the scripts say so), and the speculative decoding
/// simulated (LaunchTarget::draft_tokens; an engine that cannot run that drafter has a problem
/// instead of files). Lines continue with " \" (POSIX sh).
std::vector<EngineLaunch> launch_files(const PlanCandidate& c, const LaunchTarget& t);

/// Mixed chips (plan_pools with two systems; `c` disaggregated): launch_files with each
/// pool on its own chip. The prefill pool's files (prefill.sh, TensorRT-LLM's prefill.yaml)
/// are launch_files(c, prefill)'s: its system's name, memory fraction (TensorRT-LLM's from
/// its HBM), hosts and GPU build; the decode pool's and the front end between the pools (vLLM's
/// proxy.sh, SGLang's router.sh, TensorRT-LLM's disagg.yaml and router.sh) launch_files(c,
/// decode)'s. No Dynamo manifest (one graph over two chip types needs a node selector per
/// worker, which chalk does not write). An engine has no files when either side gives it a
/// problem (launch_files), or when the two chips run different GPU builds (CUDA and ROCm:
/// no engine documents a KV transfer between them).
std::vector<EngineLaunch> mixed_launch_files(const PlanCandidate& c, const LaunchTarget& prefill, const LaunchTarget& decode);

/// "nvidia", "amd" or "" (LaunchTarget::accelerator) for a system name: mi* is AMD; tpu*,
/// trn* and gaudi* are neither; every other built-in system is an NVIDIA GPU.
std::string launch_accelerator(std::string_view system_name);

/// Why `engine` ("vllm", "sglang" or "trtllm") has no flags for `layout` on a replica of
/// `chips` chips, or "" when it has them (or for any other engine name): a dense model's
/// attention groups under one FFN split (every engine's data parallelism of a dense model is
/// independent replicas); vLLM's experts over fewer chips than the replica
/// (--enable-expert-parallel spreads them over all TP x DP ranks); TensorRT-LLM's two
/// micro-batches (trtllm-serve has no such option), and its attention TP t x r/t with
/// 1 < t < r for an MoE (enable_attention_dp runs attention TP1 on every rank). One line.
std::string engine_layout_problem(std::string_view engine, int64_t chips, const ParallelLayout& layout, bool moe);

}  // namespace chalk::sim
