// Engine policies (policy.h).
#include "chalk/sim/policy.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <utility>

#include "chalk/base/error.h"

namespace chalk::sim {

std::vector<std::string> engine_policy_names() { return {"vllm", "sglang", "trtllm"}; }

namespace {
/// A preset built field by field: a braced list would leave version, host and
/// request_overhead_s to -Wmissing-field-initializers (they are set by engine_policy).
EnginePolicy make(std::string name, int64_t max_batched_tokens, int64_t block_size, bool chunked_prefill, int64_t max_sequences,
                  std::string source, bool reserve_to_completion = false) {
  EnginePolicy p;
  p.name = std::move(name);
  p.max_batched_tokens = max_batched_tokens;
  p.block_size = block_size;
  p.chunked_prefill = chunked_prefill;
  p.max_sequences = max_sequences;
  p.source = std::move(source);
  p.reserve_to_completion = reserve_to_completion;
  return p;
}

EnginePolicy preset(std::string_view name) {
  if (name == "vllm") {
    return make("vllm", 8192, 16, true, 1024,
                "vLLM V1 engine arguments (arg_utils.py): max_num_batched_tokens 8192 and max_num_seqs 1024 for the OpenAI "
                "server on >= 70 GiB GPUs; block_size 16 on CUDA; chunked prefill on");
  }
  if (name == "sglang") {
    return make("sglang", 8192, 1, true, 4096,
                "SGLang server_args.py: chunked_prefill_size 8192 on 80-96 GB GPUs; page_size 1; max_running_requests from the "
                "KV pool (capped here at 4096)");
  }
  if (name == "trtllm") {
    return make("trtllm", 8192, 32, false, 2048,
                "TensorRT-LLM LLM API / trtllm-serve: max_num_tokens 8192, max_batch_size 2048, tokens_per_block 32, "
                "enable_chunked_prefill false; capacity_scheduler_policy GUARANTEED_NO_EVICT (KV reserved to completion)",
                true);
  }
  throw InputError("engine", "unknown engine policy '" + std::string(name) + "'; expected vllm, sglang or trtllm");
}
}  // namespace

namespace {
/// "0.10.2" -> {0, 10}; throws InputError("engine") unless digits and dots.
std::pair<int, int> major_minor(std::string_view full, std::string_view v) {
  int part[2] = {0, 0};
  int k = 0;
  bool digit = false;
  for (const char c : v) {
    if (c >= '0' && c <= '9') {
      if (k < 2) part[k] = part[k] * 10 + (c - '0');
      digit = true;
      if (part[0] > 9999 || part[1] > 9999) {  // no release numbers past 9999
        k = -1;
        break;
      }
    } else if (c == '.' && digit) {
      ++k;
      digit = false;
    } else {
      k = -1;
      break;
    }
  }
  if (k < 0 || !digit) {
    throw InputError("engine", "'" + std::string(full) + "': expected NAME or NAME-X.Y[.Z] (a release, e.g. vllm-0.10)");
  }
  return {part[0], part[1]};
}
}  // namespace

EnginePolicy engine_policy(std::string_view typed) {
  // Any case ("VLLM", "SGLang-0.4"): the policy carries the canonical lower-case name.
  std::string lower(typed);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const std::string_view name = lower;
  const std::size_t dash = name.find('-');
  const std::string_view family = dash == std::string_view::npos ? name : name.substr(0, dash);
  if (family != "vllm" && family != "sglang" && family != "trtllm") {
    throw InputError("engine", "unknown engine policy '" + std::string(typed) + "'; expected vllm, sglang or trtllm, optionally with a release (vllm-0.10)");
  }
  EnginePolicy p = preset(family);
  p.request_overhead_s = kEngineRequestOverheadS;
  p.source += "; 6.9 ms per request outside the GPU steps (API server, tokenization, first-token streaming: SGLang over a mocked forward, "
              "tt-inference-server #3560)";
  p.host = engine_host_time(family);
  if (dash != std::string_view::npos) {
    const std::string_view v = name.substr(dash + 1);
    const auto [major, minor] = major_minor(name, v);
    p.version = std::string(v);
    if (family == "vllm" && major == 0 && minor < 14) p.host.overlap = false;    // async scheduling default from v0.14.0
    if (family == "sglang" && major == 0 && minor < 4) p.host.overlap = false;   // overlap scheduler from v0.4
    if (!p.host.overlap) {
      const std::string over = ", overlapped with the GPU step";
      p.host.source.replace(p.host.source.find(over), over.size(), ", after the GPU step (release " + p.version + " does not overlap them)");
    }
  }
  p.schedule_ahead = p.host.overlap;  // the overlap schedules one step ahead (EnginePolicy::schedule_ahead)
  p.source += "; " + p.host.source;
  if (p.schedule_ahead) p.source += "; each step scheduled while the previous one runs (a request joins the step after next)";
  return p;
}

void validate(const EnginePolicy& p) {
  if (p.max_batched_tokens < 1 || p.max_batched_tokens > (1 << 20)) {
    throw InputError("max_batched_tokens", "must be 1..1048576 tokens per step, got " + std::to_string(p.max_batched_tokens));
  }
  if (p.block_size < 1 || p.block_size > 1024) {
    throw InputError("block_size", "must be 1..1024 tokens per KV block, got " + std::to_string(p.block_size));
  }
  if (p.max_batched_tokens < p.block_size) {
    throw InputError("max_batched_tokens", "is " + std::to_string(p.max_batched_tokens) + ", below the " + std::to_string(p.block_size) +
                                               "-token KV block (block_size); expected at least one block of tokens per step");
  }
  if (p.max_sequences < 1 || p.max_sequences > (1 << 20)) {
    throw InputError("max_sequences", "must be 1..1048576 running requests, got " + std::to_string(p.max_sequences));
  }
  if (!(p.request_overhead_s >= 0 && p.request_overhead_s <= 60)) {
    throw InputError("request_overhead_s", "must be 0..60 seconds of fixed work per request, got " + fmt::format("{:.6g}", p.request_overhead_s));
  }
  if (!(p.host.s_per_sequence >= 0 && p.host.s_per_sequence <= 1)) {
    throw InputError("host_s_per_sequence", "must be 0..1 seconds of host time per sequence per step, got " + fmt::format("{:.6g}", p.host.s_per_sequence));
  }
}

void apply(const EngineConstants& c, EnginePolicy& p) {
  if (c.request_overhead_s) p.request_overhead_s = *c.request_overhead_s;
  if (c.host_s_per_sequence) p.host.s_per_sequence = *c.host_s_per_sequence;
}

void apply(const EngineConstants& c, Deployment& d) {
  if (c.kernel_floor_s) d.mechanisms.calibration.kernel_floor = seconds(*c.kernel_floor_s);
  if (c.allreduce_latency_s) d.mechanisms.calibration.allreduce_latency = seconds(*c.allreduce_latency_s);
  if (c.host_s_per_sequence) d.mechanisms.host.s_per_sequence = *c.host_s_per_sequence;
}

std::string known_engine_family(std::string_view engine) {
  try {
    return engine_policy(engine).name;
  } catch (const InputError&) {
    return "";
  }
}

}  // namespace chalk::sim
