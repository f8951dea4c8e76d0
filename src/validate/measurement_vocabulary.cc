// The closed vocabularies of the measurement format's columns and the metrics of each kind
// (docs/file-formats.md, "Measurements"), split from measurement_row.cc, which reads a row
// against them.
#include <map>

#include "measurement_row.h"

namespace chalk::detail {

const std::vector<std::string> kMeasurementFormats = {"bf16", "fp16", "fp8", "int8", "int4", "nvfp4", "mxfp4"};

namespace {
const std::vector<std::string>& kFormats = kMeasurementFormats;
/// A GEMM recipe may also be MXFP8 (block-scaled FP8 at the FP8 rate: Megatron-Bridge's
/// FP8-MX, Blackwell's mxf8f6f4 instructions); parse_matmul_precision reads it.
const std::vector<std::string> kComputeFormats = {"bf16", "fp16", "fp8", "mxfp8", "int8", "int4", "nvfp4", "mxfp4"};
}  // namespace

const std::vector<std::string>* vocabulary(const std::string& column) {
  static const std::map<std::string, std::vector<std::string>> v = {
      {"kind", {"decode", "prefill", "serving", "training", "run", "microbenchmark"}},
      {"attention", {"tp", "dp"}},
      {"ffn_layout", {"tp", "ws2d", "wg"}},
      {"prefill_ffn_layout", {"tp", "ws2d", "wg"}},
      {"kv_split", {"heads", "batch"}},
      {"kv", kFormats},
      {"dispatch", kFormats},
      {"combine", kFormats},
      {"compute", kComputeFormats},
      {"batch_per", {"run", "replica", "chip"}},
      {"two_batch_overlap", {"yes", "no"}},
      {"eplb", {"yes", "no"}},
      {"ep_dispatcher", {"deepep", "alltoall"}},
      {"ep_overlap", {"yes", "no"}},
      {"sequence_parallel", {"yes", "no"}},
      {"fp8_recipe", {"delayed", "tensorwise", "mxfp8", "blockwise"}},
      {"compile", {"yes", "no"}},
      {"engine", {"vllm", "sglang", "trtllm", "fastertransformer", "jetstream", "megatron", "nemo", "maxtext", "llm-foundry", "metaseq",
                  "deepseek", "torchtitan", "other"}},
      {"kv_admission", {"to_completion", "on_demand"}},
      {"chunked_prefill", {"yes", "no"}},
      {"arrivals", {"poisson", "constant"}},
      {"schedule", {"gpipe", "1f1b", "interleaved", "zb-h1", "zb-v", "dualpipe"}},
      {"recompute", {"none", "selective", "full"}},
      {"zero", {"0", "1", "2", "3", "fsdp"}},
      {"operation", {"gemm", "hbm_copy", "all_reduce", "ep_dispatch", "ep_combine", "attention_decode"}},
      {"metric",
       {"step_ms", "tpot_ms", "itl_ms", "ttft_ms", "e2e_s", "decode_s", "prefill_ms", "output_tok_per_s", "output_tok_per_s_per_chip",
        "total_tok_per_s_per_chip", "tok_per_s_per_user", "prefill_tok_per_s", "prefill_tok_per_s_per_chip", "mfu_pct",
        "tflop_per_s_per_chip", "train_tok_per_s", "train_tok_per_s_per_chip", "step_s", "gpu_hours", "wall_hours", "hbm_gb_per_s",
        "busbw_gb_per_s", "latency_us", "bandwidth_gb_per_s"}},
  };
  const auto it = v.find(column);
  return it == v.end() ? nullptr : &it->second;
}

const std::vector<std::string>& metrics_of_kind(const std::string& kind) {
  static const std::map<std::string, std::vector<std::string>> m = {
      {"decode", {"step_ms", "tpot_ms", "itl_ms", "decode_s", "output_tok_per_s", "output_tok_per_s_per_chip", "tok_per_s_per_user"}},
      {"prefill", {"prefill_ms", "ttft_ms", "prefill_tok_per_s", "prefill_tok_per_s_per_chip"}},
      {"serving",
       {"e2e_s", "ttft_ms", "tpot_ms", "itl_ms", "output_tok_per_s", "output_tok_per_s_per_chip", "total_tok_per_s_per_chip",
        "tok_per_s_per_user", "mfu_pct"}},
      {"training", {"step_s", "step_ms", "mfu_pct", "tflop_per_s_per_chip", "train_tok_per_s", "train_tok_per_s_per_chip"}},
      {"run", {"gpu_hours", "wall_hours"}},
      {"microbenchmark", {"tflop_per_s_per_chip", "hbm_gb_per_s", "busbw_gb_per_s", "latency_us", "bandwidth_gb_per_s"}},
  };
  static const std::vector<std::string> none;
  const auto it = m.find(kind);
  return it == m.end() ? none : it->second;
}

}  // namespace chalk::detail
