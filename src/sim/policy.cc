// Engine policies (policy.h).
#include "chalk/sim/policy.h"

#include "chalk/base/error.h"

namespace chalk::sim {

std::vector<std::string> engine_policy_names() { return {"vllm", "sglang", "trtllm"}; }

namespace {
EnginePolicy preset(std::string_view name) {
  if (name == "vllm") {
    return {"vllm", 8192, 16, true, 1024,
            "vLLM V1 engine arguments (arg_utils.py): max_num_batched_tokens 8192 and max_num_seqs 1024 for the OpenAI "
            "server on >= 70 GiB GPUs; block_size 16 on CUDA; chunked prefill on"};
  }
  if (name == "sglang") {
    return {"sglang", 8192, 1, true, 4096,
            "SGLang server_args.py: chunked_prefill_size 8192 on 80-96 GB GPUs; page_size 1; max_running_requests from the "
            "KV pool (capped here at 4096)"};
  }
  if (name == "trtllm") {
    return {"trtllm", 8192, 32, false, 2048,
            "TensorRT-LLM LLM API / trtllm-serve: max_num_tokens 8192, max_batch_size 2048, tokens_per_block 32, "
            "enable_chunked_prefill false; capacity_scheduler_policy GUARANTEED_NO_EVICT (KV reserved to completion)",
            true};
  }
  throw InputError("engine", "unknown engine policy '" + std::string(name) + "'; expected vllm, sglang or trtllm");
}
}  // namespace

EnginePolicy engine_policy(std::string_view name) {
  EnginePolicy p = preset(name);
  p.request_overhead_s = kEngineRequestOverheadS;
  p.source += "; 6.9 ms per request outside the GPU steps (API server, tokenization, first-token streaming: SGLang over a mocked forward, "
              "tt-inference-server #3560)";
  return p;
}

void validate(const EnginePolicy& p) {
  if (p.max_batched_tokens < 1 || p.max_batched_tokens > (1 << 20)) {
    throw InputError("max_batched_tokens", "must be 1..1048576 tokens per step, got " + std::to_string(p.max_batched_tokens));
  }
  if (p.block_size < 1 || p.block_size > 1024) {
    throw InputError("block_size", "must be 1..1024 tokens per KV block, got " + std::to_string(p.block_size));
  }
  if (p.max_sequences < 1 || p.max_sequences > (1 << 20)) {
    throw InputError("max_sequences", "must be 1..1048576 running requests, got " + std::to_string(p.max_sequences));
  }
  if (!(p.request_overhead_s >= 0 && p.request_overhead_s <= 60)) {
    throw InputError("request_overhead_s", "must be 0..60 seconds of fixed work per request, got " + std::to_string(p.request_overhead_s));
  }
}

}  // namespace chalk::sim
