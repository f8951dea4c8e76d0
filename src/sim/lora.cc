// LoRA adapters: the --lora spec, an adapter's bytes, the multi-adapter GEMM's cost per step,
// a load's time and the traffic's adapter draws (lora.h; docs/simulator.md 1.9).
#include "chalk/sim/lora.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <random>

#include "chalk/base/error.h"

namespace chalk::sim {
namespace {

constexpr const char* kLoraForm = "N:RANK[,zipf:S][,max-loras:M][,targets:q+k+v+o+gate+up+down]";
constexpr std::array<int64_t, 9> kRanks = {1, 8, 16, 32, 64, 128, 256, 320, 512};  // vLLM MaxLoRARanks
constexpr std::array<std::string_view, 7> kTargetNames = {"q", "k", "v", "o", "gate", "up", "down"};

std::vector<std::string_view> lora_split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  for (std::size_t start = 0;;) {
    const std::size_t at = std::min(s.find(sep, start), s.size());
    out.push_back(s.substr(start, at - start));
    if (at == s.size()) return out;
    start = at + 1;
  }
}

template <typename T>
bool number(std::string_view t, T& v) {
  const auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  return ec == std::errc() && p == t.data() + t.size() && !t.empty();
}

/// One adapted matrix of a layer: d_in, d_out, whether it is row-parallel (o, down), and the
/// packed projection that holds it in vLLM and SGLang (0 qkv_proj, 1 o_proj, 2 gate_up_proj,
/// 3 down_proj).
struct Matrix {
  double d_in, d_out;
  bool row_parallel;
  int packed;
};

/// The targeted matrices of one layer group. Throws InputError("--lora") where unsupported.
std::vector<Matrix> matrices(const LayerGroup& g, int64_t d_model, uint8_t targets) {
  std::vector<Matrix> out;
  const auto& a = g.attention;
  const double d = static_cast<double>(d_model);
  if (targets & (lora_q | lora_k | lora_v | lora_o)) {
    if (a.kind != AttentionKind::gqa) {
      throw InputError("--lora", "targets q, k, v, o on MLA or linear-attention layers are not modelled; expected targets:gate+up+down on this model");
    }
    const double q = static_cast<double>(a.n_heads * a.head_dim), kv = static_cast<double>(a.n_kv_heads * a.head_dim);
    const double v = static_cast<double>(a.n_kv_heads * (a.v_head_dim > 0 ? a.v_head_dim : a.head_dim));
    const double o = static_cast<double>(a.n_heads * (a.v_head_dim > 0 ? a.v_head_dim : a.head_dim));
    if (targets & lora_q) out.push_back({d, q, false, 0});
    if (!a.shares_kv_with_previous) {
      if (targets & lora_k) out.push_back({d, kv, false, 0});
      if (targets & lora_v) out.push_back({d, v, false, 0});
    }
    if (targets & lora_o) out.push_back({o, d, true, 1});
  }
  if (targets & (lora_gate | lora_up | lora_down)) {
    if (g.ffn.kind != FfnKind::dense) {
      throw InputError("--lora", "targets gate, up, down on MoE layers (fused-MoE LoRA) are not modelled; expected targets:q+k+v+o on this model");
    }
    const double f = static_cast<double>(g.ffn.d_ff);
    if (targets & lora_gate) {
      if (!g.ffn.gated) throw InputError("--lora", "target gate: this model's MLP has no gate projection; expected targets without gate");
      out.push_back({d, f, false, 2});
    }
    if (targets & lora_up) out.push_back({d, f, false, 2});
    if (targets & lora_down) out.push_back({f, d, true, 3});
  }
  return out;
}

/// The chip's share of a matrix under TP n (lora.h, lora_adapter_bytes): (d_in, d_out) per chip.
std::pair<double, double> chip_dims(const Matrix& m, double n) {
  return m.row_parallel ? std::pair{m.d_in / n, m.d_out} : std::pair{m.d_in, m.d_out / n};
}

constexpr double kLoraBytesPerParam = 2;  // bf16 (lora.h)

}  // namespace

LoraSpec parse_lora(std::string_view text, const std::string& field) {
  const auto bad = [&](std::string_view what) { return InputError(field, fmt::format("got '{}'; {}; expected {}", excerpt(text), what, kLoraForm)); };
  LoraSpec s;
  const auto items = lora_split(text, ',');
  const auto head = lora_split(items[0], ':');
  if (head.size() != 2) throw bad("the first item must be N:RANK");
  if (!number(head[0], s.adapters) || s.adapters < 1 || s.adapters > 100'000) throw bad(fmt::format("N '{}' must be an integer 1..100000", excerpt(head[0], 24)));
  if (!number(head[1], s.rank) || std::find(kRanks.begin(), kRanks.end(), s.rank) == kRanks.end()) {
    throw bad(fmt::format("RANK '{}' must be one of vLLM's max_lora_rank values 1, 8, 16, 32, 64, 128, 256, 320, 512", excerpt(head[1], 24)));
  }
  bool seen[3] = {false, false, false};
  for (std::size_t k = 1; k < items.size(); ++k) {
    const std::size_t colon = items[k].find(':');
    if (colon == std::string_view::npos) throw bad(fmt::format("'{}' has no ':'", excerpt(items[k], 24)));
    const std::string_view name = items[k].substr(0, colon), val = items[k].substr(colon + 1);
    const int which = name == "zipf" ? 0 : name == "max-loras" ? 1 : name == "targets" ? 2 : -1;
    if (which < 0) throw bad(fmt::format("unknown option '{}' (zipf, max-loras, targets)", excerpt(name, 24)));
    if (seen[which]) throw bad(fmt::format("'{}' is given twice", name));
    seen[which] = true;
    if (which == 0 && !(number(val, s.zipf_s) && s.zipf_s >= 0 && s.zipf_s <= 10)) throw bad(fmt::format("zipf '{}' must be a number in [0, 10]", excerpt(val, 24)));
    if (which == 1 && !(number(val, s.max_loras) && s.max_loras >= 1)) throw bad(fmt::format("max-loras '{}' must be an integer >= 1", excerpt(val, 24)));
    if (which == 2) {
      s.targets = 0;
      for (const auto t : lora_split(val, '+')) {
        const auto at = std::find(kTargetNames.begin(), kTargetNames.end(), t);
        if (at == kTargetNames.end()) throw bad(fmt::format("target '{}' must be one of q, k, v, o, gate, up, down", excerpt(t, 24)));
        const auto bit = static_cast<uint8_t>(1u << (at - kTargetNames.begin()));
        if (s.targets & bit) throw bad(fmt::format("target '{}' is given twice", t));
        s.targets |= bit;
      }
    }
  }
  if (s.max_loras > s.adapters) throw bad(fmt::format("max-loras {} exceeds the {} adapters", s.max_loras, s.adapters));
  s.max_loras_stated = seen[1];
  return s;
}

std::string describe_lora(const LoraSpec& s) {
  std::string t;
  for (std::size_t k = 0; k < kTargetNames.size(); ++k) {
    if (!(s.targets & (1u << k))) continue;
    if (!t.empty()) t += '+';
    t += kTargetNames[k];
  }
  std::string out = fmt::format("{}:{}", s.adapters, s.rank);
  if (s.zipf_s > 0) out += fmt::format(",zipf:{:g}", s.zipf_s);
  return out + fmt::format(",max-loras:{},targets:{}", s.max_loras, t);
}

LoraBytes lora_adapter_bytes(const Deployment& d, const LoraSpec& s) {
  LoraBytes b;
  const double r = static_cast<double>(s.rank), n = static_cast<double>(std::max<int64_t>(1, d.n_chips));
  double chip_params = 0;
  for (const auto& g : d.model.groups) {
    for (const Matrix& m : matrices(g, d.model.d_model, s.targets)) {
      const auto [in, out] = chip_dims(m, n);
      b.params += static_cast<double>(g.count) * r * (m.d_in + m.d_out);
      chip_params += static_cast<double>(g.count) * r * (in + out);
    }
  }
  b.bytes = b.params * kLoraBytesPerParam;
  b.bytes_per_chip = chip_params * kLoraBytesPerParam;
  return b;
}

LoraStepWork lora_step_work(const Deployment& d, const LoraBytes& adapter, const LoraSpec& s, int64_t active_adapters, int64_t tokens,
                            int64_t kernels) {
  LoraStepWork w;
  if (active_adapters <= 0 || tokens <= 0) return w;
  const double r = static_cast<double>(s.rank), n = static_cast<double>(std::max<int64_t>(1, d.n_chips));
  double per_token_elems = 0, per_token_flops = 0;
  for (const auto& g : d.model.groups) {
    for (const Matrix& m : matrices(g, d.model.d_model, s.targets)) {
      const auto [in, out] = chip_dims(m, n);
      per_token_elems += static_cast<double>(g.count) * (in + 2 * r + 2 * out);
      per_token_flops += static_cast<double>(g.count) * 2 * r * (in + out);
    }
  }
  const double t = static_cast<double>(tokens);
  w.bytes = static_cast<double>(active_adapters) * adapter.bytes_per_chip + t * per_token_elems * kLoraBytesPerParam;
  w.flops = t * per_token_flops;
  const double bw = d.system.chip.hbm_bandwidth.value() * d.hbm_efficiency;
  const double peak = d.system.chip.peak_for(MatmulPrecision::bf16).value() * d.matmul_efficiency;
  if (d.mechanisms.enabled && kernels > 0) w.floor_s = static_cast<double>(kernels) * d.mechanisms.calibration.kernel_floor.value();
  w.seconds = std::max(w.bytes / bw, peak > 0 ? w.flops / peak : 0.0) + w.floor_s;
  return w;
}

LoraKernelPlan lora_kernel_plan(std::string_view engine, std::string_view version) {
  if (engine == "vllm") {
    // The release's major and minor ("0.6.5" -> 0, 6); engine_policy has checked its form.
    int major = 0, minor = 0;
    const auto parts = lora_split(version, '.');
    const bool v0 = !version.empty() && number(parts[0], major) && parts.size() > 1 && number(parts[1], minor) && major == 0 && minor < 8;
    if (v0) {
      return {3, 0,
              "vLLM V0 punica wrapper (vllm/lora/punica_wrapper/punica_gpu.py, v0.6.5: add_lora_packed_nslice runs add_lora per slice, "
              "a zeroed fp32 buffer, bgmv/sgmv shrink, expand_slice): 3 kernels per adapted matrix"};
    }
    return {0, 3,
            "vLLM lora_shrink/lora_expand over all slices of a packed layer (PunicaWrapperGPU.add_lora_linear; PR #13096, per-slice kernels "
            "retired in PR #14685): the shrink's output zeroing, shrink, expand: 3 kernels per adapted packed projection"};
  }
  if (engine == "sglang") {
    return {0, 2,
            "SGLang triton LoRA backend (python/sglang/srt/lora/backend/triton_backend.py: sgemm_lora_a_fwd over the stacked A, then "
            "qkv_lora_b_fwd, gate_up_lora_b_fwd or sgemm_lora_b_fwd): 2 kernels per adapted packed projection"};
  }
  return {0, 2, "a shrink then an expand per adapted packed projection, the least of any implementation (TensorRT-LLM's LoRA plugin not read)"};
}

int64_t lora_step_kernels(const Deployment& d, const LoraSpec& s, const LoraKernelPlan& p) {
  int64_t kernels = 0;
  for (const auto& g : d.model.groups) {
    bool packed[4] = {false, false, false, false};
    int64_t per_layer = 0;
    for (const Matrix& m : matrices(g, d.model.d_model, s.targets)) {
      per_layer += p.per_matrix;
      if (!packed[m.packed]) per_layer += p.per_packed;
      packed[m.packed] = true;
    }
    kernels += g.count * per_layer;
  }
  return kernels;
}

double lora_load_seconds(const LoraBytes& adapter, double host_bytes_per_s) { return adapter.bytes_per_chip / host_bytes_per_s; }

void lora_key_prefix(Request& q) {
  if (q.adapter < 0) return;
  // A multiplicative hash of the adapter (Knuth's 2^64 / golden ratio) mixed into each id.
  const uint64_t key = (static_cast<uint64_t>(q.adapter) + 1) * 0x9E37'79B9'7F4A'7C15ull;
  for (auto& seg : q.prefix) seg.id ^= key;
}

void apply_lora_traffic(std::vector<Request>& requests, const LoraSpec& s, uint64_t seed) {
  if (!s.enabled()) return;
  std::vector<double> cdf(static_cast<std::size_t>(s.adapters));
  double sum = 0;
  for (int64_t a = 0; a < s.adapters; ++a) cdf[static_cast<std::size_t>(a)] = sum += std::pow(static_cast<double>(a + 1), -s.zipf_s);
  for (auto& c : cdf) c /= sum;
  std::mt19937_64 rng(seed ^ 0xC2B2'AE3D'27D4'EB4Full);  // its own stream: arrivals and lengths are unchanged
  for (auto& q : requests) {
    const double u = (static_cast<double>(rng() >> 11) + 0.5) * 0x1.0p-53;
    q.adapter = static_cast<int32_t>(std::min<int64_t>(s.adapters - 1, std::lower_bound(cdf.begin(), cdf.end(), u) - cdf.begin()));
    lora_key_prefix(q);
  }
}

}  // namespace chalk::sim
