// CUDA graphs of the serving engines (cuda_graphs.h) and their share of the engine step
// (graph_step.h).
#include "chalk/engine/cuda_graphs.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "chalk/base/error.h"
#include "chalk/engine/collective.h"
#include "chalk/engine/engine_name.h"
#include "chalk/engine/roofline.h"
#include "graph_step.h"

namespace chalk {
namespace {

void need_positive(int64_t v, const char* field) {
  if (v < 1) throw InputError(field, "must be >= 1, got " + std::to_string(v));
}

void add_range(std::vector<int64_t>& out, int64_t from, int64_t below, int64_t step) {
  for (int64_t s = from; s < below; s += step) out.push_back(s);
}

/// The release after "family-", {major, minor}, or {-1, -1} for none or one that does not
/// read as digits (sim::engine_policy refuses those where it matters).
std::pair<int, int> release_of(std::string_view engine) {
  const std::size_t dash = engine.find('-');
  if (dash == std::string_view::npos) return {-1, -1};
  int part[2] = {0, 0};
  int k = 0;
  for (const char c : engine.substr(dash + 1)) {
    if (c >= '0' && c <= '9' && k < 2) {
      part[k] = std::min(part[k] * 10 + (c - '0'), 99999);
    } else if (c == '.') {
      ++k;
    } else if (k < 2) {
      return {-1, -1};
    }
  }
  return {part[0], part[1]};
}

}  // namespace

std::vector<int64_t> vllm_capture_sizes(int64_t max_num_seqs, int64_t max_num_batched_tokens, int64_t decode_query_len) {
  need_positive(max_num_seqs, "max_sequences");
  need_positive(max_num_batched_tokens, "max_batched_tokens");
  need_positive(decode_query_len, "decode_query_len");
  const int64_t m = std::min({max_num_seqs * decode_query_len * 2, int64_t{512}, max_num_batched_tokens});
  std::vector<int64_t> s;
  for (const int64_t x : {1, 2, 4}) {
    if (x <= m) s.push_back(x);
  }
  if (m >= 8) add_range(s, 8, std::min<int64_t>(m + 1, 256), 8);
  if (m >= 256) add_range(s, 256, m + 1, 16);
  return s;
}

std::vector<int64_t> vllm_v0_capture_sizes(int64_t max_num_seqs) {
  need_positive(max_num_seqs, "max_sequences");
  std::vector<int64_t> all = {1, 2, 4};
  add_range(all, 8, 257, 8);
  std::vector<int64_t> s;
  for (const int64_t x : all) {
    s.push_back(x);
    if (x >= max_num_seqs) break;  // the graph batch size: max_num_seqs rounded up to a captured size
  }
  return s;
}

std::vector<int64_t> sglang_capture_sizes(int64_t cuda_graph_max_bs) {
  need_positive(cuda_graph_max_bs, "cuda_graph_max_bs");
  std::vector<int64_t> all = {1, 2, 4, 8, 12};
  add_range(all, 16, 257, 8);
  add_range(all, 272, 512, 16);
  add_range(all, 512, cuda_graph_max_bs + 1, 32);
  std::vector<int64_t> s;
  for (const int64_t x : all) {
    if (x <= cuda_graph_max_bs) s.push_back(x);
  }
  return s;
}

std::vector<int64_t> trtllm_capture_sizes(int64_t max_batch_size, bool enable_padding) {
  need_positive(max_batch_size, "cuda_graph_max_batch_size");
  std::vector<int64_t> all;
  if (enable_padding) {
    all = {1, 2, 4};
    add_range(all, 8, 129, 8);
  } else {
    add_range(all, 1, 33, 1);
    all.push_back(64);
    all.push_back(128);
  }
  for (int64_t p = 256; p < max_batch_size; p *= 2) all.push_back(p);
  std::vector<int64_t> s;
  for (const int64_t x : all) {
    if (x <= max_batch_size) s.push_back(x);
  }
  if (s.empty() || s.back() != max_batch_size) s.push_back(max_batch_size);
  return s;
}

CudaGraphs engine_cuda_graphs(std::string_view engine, int64_t max_sequences, int64_t max_batched_tokens) {
  if (max_sequences < 0) throw InputError("max_sequences", "must be >= 1 (0 = the engine's default), got " + std::to_string(max_sequences));
  if (max_batched_tokens < 0) {
    throw InputError("max_batched_tokens", "must be >= 1 (0 = the engine's default), got " + std::to_string(max_batched_tokens));
  }
  const std::string_view family = engine_family(engine);
  const auto [major, minor] = release_of(engine);
  CudaGraphs g;
  if (family == "vllm") {
    if (major == 0 && minor < 6) {
      g.sizes = vllm_v0_capture_sizes(max_sequences > 0 ? max_sequences : 256);
      g.per_token = false;  // V0 runs prefill and decode steps apart: a prefill alone is eager
      g.source = fmt::format("vLLM V0 CUDA graphs of decode steps at 1, 2, 4, 8..{} sequences (model_runner.py _BATCH_SIZES_TO_CAPTURE)", g.sizes.back());
    } else {
      g.sizes = vllm_capture_sizes(max_sequences > 0 ? max_sequences : 1024, max_batched_tokens > 0 ? max_batched_tokens : 8192);
      g.source = fmt::format("vLLM CUDA graphs at 1, 2, 4, 8..{} tokens per rank, padded up (vllm/config/vllm.py _set_cudagraph_sizes)", g.sizes.back());
    }
  } else if (family == "sglang") {
    g.sizes = sglang_capture_sizes(512);
    g.per_token = false;  // prefill and decode batches run apart: a prefill alone is eager
    g.max_below_tp4 = 256;
    g.source = "SGLang CUDA graphs of decode steps at 1, 2, 4, 8, 12, 16..512 sequences per rank (256 on fewer than 4 chips), padded up (server_args.py cuda_graph_max_bs)";
  } else if (family == "trtllm" && !(major >= 0 && major < 1)) {
    g.sizes = trtllm_capture_sizes(128, false);
    g.per_token = false;
    g.decode_only = true;
    g.padding = false;
    g.source = "TensorRT-LLM CUDA graphs of decode steps at 1..32, 64, 128 sequences, unpadded (llm_args.py CudaGraphConfig defaults)";
  } else {
    g.source = "CUDA graphs not modelled for this engine (every step at the graph floor)";
  }
  return g;
}

int64_t graph_batch(const CudaGraphs& g, double units, int64_t tp_size, bool has_prefill) {
  if (!(units > 0)) return 0;
  const int64_t need = static_cast<int64_t>(std::ceil(units - 1e-9));
  if (g.eager || (g.decode_only && has_prefill && !g.sizes.empty())) return 0;
  if (g.sizes.empty()) return need;
  const int64_t cap = (g.max_below_tp4 > 0 && tp_size < 4) ? g.max_below_tp4 : g.sizes.back();
  const auto it = std::lower_bound(g.sizes.begin(), g.sizes.end(), need);
  if (it == g.sizes.end() || *it > cap || (!g.padding && *it != need)) return 0;
  return *it;
}

namespace detail {

GraphChoice choose_graph(const Deployment& dep, double n_decode, double n_prefill, double q, double rank_tokens, double rank_decodes) {
  GraphChoice c;
  const CudaGraphs& g = dep.mechanisms.graphs;
  if (is_tpu(dep.system)) return c;  // one compiled program: no host launches, no padding
  const double units = g.per_token ? rank_tokens : rank_decodes;
  const bool has_prefill = n_prefill > 0;
  c.batch = graph_batch(g, units, dep.n_chips, has_prefill);  // SGLang's tp_size: every chip of the replica
  c.eager = c.batch == 0 && (units > 0 || has_prefill) && (g.eager || !g.sizes.empty());
  if (c.batch > 0 && !g.sizes.empty() && units > 0 && n_decode > 0) {
    // The padded sequences (or tokens) are decode work: the matmuls see them, attention does not.
    const double pad_units = static_cast<double>(c.batch) - units;
    const double per_unit = g.per_token ? 1.0 : q;
    c.extra_tokens_per_rank = std::max(0.0, pad_units * per_unit);
  }
  return c;
}

void add_eager_launch(const Deployment& dep, StepBreakdown& r) {
  const CudaGraphs& g = dep.mechanisms.graphs;
  if (!r.eager || !(g.launch_s_per_kernel > 0)) return;
  r.t_launch = Seconds(g.launch_s_per_kernel * r.kernels);
  if (r.t_launch > r.t_step) {
    r.t_step = r.t_launch;
    r.governs = "launch";
  }
}

}  // namespace detail
}  // namespace chalk
