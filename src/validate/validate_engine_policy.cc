// The engine's scheduling policy as a measurement row states it (docs/accuracy.md, "How a
// row is read"): KV admission, chunked prefill, the running-sequence cap, the token budget,
// the HBM fraction (gpu_memory_utilization), prefix caching and KV offload, read from their
// own columns into the row's plan. One of plan_row's steps (validate_plan.cc), in its own
// file by concept.

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "chalk/base/error.h"
#include "chalk/engine/roofline.h"
#include "measurement_row.h"
#include "validate_internal.h"

namespace chalk::detail {

/// The engine's scheduling policy where it decides the prediction. KV admission decides how
/// many sequences a loaded engine runs: it matters where the engine fills its KV cache (a
/// `max` batch, or the simulator). Chunked prefill decides how the prompts that replace
/// finished requests share the steps: it matters in the steady state of a throughput row
/// (any batch) and in the simulator.
void plan_engine_policy(const Measurement& r, RowPlan& p) {
  // The engine family decides the defaults; a release after it ("trtllm-1.0") does not.
  const std::string_view family = engine_family(r.engine);
  const bool admits = r.kind == "serving" && (p.batch_from_capacity || p.target == Target::serving_simulated);
  const bool steady = r.kind == "serving" && (p.target == Target::serving_tokens_per_s || p.target == Target::serving_simulated);
  if (!admits && !r.kv_admission.empty()) {
    p.notes.push_back("kv_admission " + r.kv_admission + ": not read (it sets the batch of serving rows at a max batch or through the simulator)");
  }
  if (!steady && !r.chunked_prefill.empty()) {
    p.notes.push_back("chunked_prefill " + r.chunked_prefill + ": not read (it sets the steps of serving throughput rows and simulated rows)");
  }
  if (steady) {
    p.whole_prompts = r.chunked_prefill.empty() ? family == "trtllm" : r.chunked_prefill == "no";
    if (r.chunked_prefill.empty()) {
      p.assumptions.push_back(p.whole_prompts ? "chunked_prefill: empty, no (TensorRT-LLM's default, enable_chunked_prefill false: each prompt runs whole in one step)"
                                              : "chunked_prefill: empty, yes (prompts split into chunks that ride in decode steps, as vLLM and SGLang do)");
    }
  }
  if (admits) {
    p.kv_reserved = r.kv_admission.empty() ? family == "trtllm" : r.kv_admission == "to_completion";
    if (r.kv_admission.empty()) {
      p.assumptions.push_back(p.kv_reserved ? "kv_admission: empty, to_completion (TensorRT-LLM's default capacity scheduler, "
                                              "GUARANTEED_NO_EVICT: each admitted request holds the KV of all its tokens)"
                                            : "kv_admission: empty, on_demand (KV blocks taken as tokens arrive, as vLLM and SGLang do)");
    }
  }
  // The scheduler's knobs as the run set them. The HBM fraction sizes every serving row's
  // KV cache; the running-sequence cap bounds what an engine admits; the token budget
  // shapes the simulator's steps.
  const bool serving = r.kind == "serving" || r.kind == "decode" || r.kind == "prefill";
  if (r.gpu_memory_utilization) {
    if (serving) p.gpu_memory_utilization = *r.gpu_memory_utilization;
    else p.notes.push_back("gpu_memory_utilization: not read (it sizes a serving engine's KV cache)");
  }
  if (r.max_sequences) {
    if (admits || p.target == Target::serving_simulated || p.batch_unstated) {
      p.max_sequences = *r.max_sequences;
      if (p.batch_from_capacity) p.requests_cap = p.requests_cap > 0 ? std::min(p.requests_cap, static_cast<double>(p.max_sequences))
                                                                     : static_cast<double>(p.max_sequences);
    } else {
      p.notes.push_back("max_sequences: not read (it caps the batch an engine admits: serving rows at a max batch or through the simulator, "
                        "decode and prefill rows with an empty batch)");
    }
  }
  if (r.max_batched_tokens) {
    const bool prefill = p.target == Target::prefill_s || p.target == Target::prefill_tokens_per_s;
    // An offline run's steady batch under the step's token budget (docs/formulas.md, "The token
    // budget of an offline run"): where a step's decodes and prompts share the budget T
    // (TensorRT-LLM's in-flight batching always; vLLM and SGLang with chunked prefill), B
    // sequences finishing every `output` steps are replaced by B / output prompts of `prompt`
    // tokens a step, so B + B x prompt / output <= T, B <= T x output / (prompt + output).
    const bool shared = family == "trtllm" || !p.whole_prompts;
    if (p.target == Target::serving_simulated || (p.batch_unstated && prefill)) {
      p.max_batched_tokens = *r.max_batched_tokens;
    } else if (p.target == Target::serving_tokens_per_s && p.batch_from_capacity && shared && p.output > 0) {
      const double fed = std::floor(static_cast<double>(*r.max_batched_tokens) * static_cast<double>(p.output) /
                                    static_cast<double>(p.prompt + p.output));
      const double cap = std::max(1.0, fed);
      p.requests_cap = p.requests_cap > 0 ? std::min(p.requests_cap, cap) : cap;
      p.notes.push_back("max_batched_tokens " + std::to_string(*r.max_batched_tokens) + ": a step's decodes and prompts share it, so the engine sustains at most " +
                        std::to_string(*r.max_batched_tokens) + " x " + std::to_string(p.output) + " / (" + std::to_string(p.prompt) + " + " +
                        std::to_string(p.output) + ") = " + row_num(cap) + " running sequences");
    } else {
      p.notes.push_back("max_batched_tokens: not read (it sets the steps of rows through the simulator, the steady batch of an offline run whose decodes "
                        "and prompts share it, and the prompts of a prefill row with an empty batch)");
    }
  }
  // Host memory for the KV blocks HBM evicts (vLLM's OffloadingConnector, LMCache): a
  // returning prefix evicted from HBM is fetched from it. A row states its prefix reuse as
  // cached_tokens, a share of every prompt the simulator's cache serves from HBM (the simple
  // mode, docs/simulator.md 1.6): no block of it is evicted, so the tier changes no figure.
  // Recorded, so runs that differ only here read as different inputs (calibrate's runs).
  if (r.kv_offload_gb) {
    const std::string gb = fmt::format("{:.4g} GB", *r.kv_offload_gb);
    if (p.target != Target::serving_simulated) {
      p.notes.push_back("kv_offload_gb: not read (host memory for evicted KV blocks serves a prefix cache under load: serving rows through the simulator)");
    } else if (*r.kv_offload_gb == 0) {
      p.notes.push_back("kv_offload_gb: 0, no host tier (as empty)");
    } else if (r.cached_tokens.value_or(0) > 0) {
      p.notes.push_back("kv_offload_gb: " + gb + " of host memory per replica for evicted KV blocks; changes no figure of this row: its prefix hits are "
                        "stated as cached_tokens, served from HBM; the tier serves prefixes HBM evicted, which traffic with prefix structure "
                        "models (simulate --kv-offload with --shared-prefix, --sessions or --trace; docs/simulator.md 1.8)");
    } else {
      p.notes.push_back("kv_offload_gb: " + gb + " of host memory per replica for evicted KV blocks; changes no figure of this row: it states no "
                        "prefix reuse (cached_tokens empty), so no block returns from host memory");
    }
  }
}

}  // namespace chalk::detail
