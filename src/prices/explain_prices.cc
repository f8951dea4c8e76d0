// Price inferences explained (chalk/prices/explain.h).
#include "chalk/prices/explain.h"

#include <cstdio>
#include <string>

namespace chalk {
namespace {

std::string g4(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

}  // namespace

std::vector<Explanation> explain_price_inference(const PriceInference& p, const InferenceAssumptions& a) {
  const double n = a.active_params.value, fw = a.flops_per_byte.value.value(), att = a.attention_flops_per_kv_byte.value.value();
  const double s = a.decode_context_tokens.value;
  const ExplainInput in_n{"N_active", "active parameters of the provider's model (assumed)", n, "parameters", "--active-params"};
  const ExplainInput in_fw{"F/W", "the chip's FLOP/s per byte/s of HBM (assumed)", fw, "FLOPs per byte", "--flops-per-byte"};
  const ExplainInput in_a{"a", "attention FLOPs per KV byte attended (assumed)", att, "FLOPs per byte", "--attention-flops-per-kv-byte"};
  std::vector<Explanation> out;

  Explanation kv;
  kv.key = "kv_bytes_per_token";
  kv.quantity = "KV cache bytes per token of the provider's model";
  kv.unit = "bytes per token";
  double kv_value = a.kv_bytes_per_token.value.value();
  if (p.kv_from_step && p.step) {
    const double step = static_cast<double>(p.step->threshold_tokens);
    kv_value = 2 * n / (step * (fw - att));
    kv.formula = "kv = 2 N_active / (S* (F/W - a))";
    kv.inputs = {in_n, in_fw, in_a, {"S*", "context where the price steps up", step, "tokens", "the price sheet's long-context tier"}};
    kv.substituted = "2 x " + g4(n) + " / (" + g4(step) + " x (" + g4(fw) + " - " + g4(att) + ")) = " + g4(kv_value);
    kv.source = "lecture 1:33:25-1:38:18: the price steps where the KV fetch S kv / W catches compute (2 N + a S kv) / F";
  } else {
    kv.formula = "kv (assumed: the sheet has no long-context price step)";
    kv.inputs = {{"kv", "KV bytes per token (assumed)", kv_value, "bytes per token", "--kv-bytes-per-token (lecture 1:38:18: about 1,667)"}};
    kv.substituted = "kv = " + g4(kv_value);
    kv.source = "lecture 1:38:18";
  }
  kv.result = kv_value;
  out.push_back(kv);

  const double r = p.phases.output_to_input_ratio;
  Explanation ratio;
  ratio.key = "output_to_input_price_ratio";
  ratio.quantity = "output price over input price";
  ratio.formula = "r = P_output / P_input";
  ratio.inputs = {{"r", "the sheet's output / input price", r, "ratio", "the price sheet"}};
  ratio.substituted = "r = " + g4(r);
  ratio.result = r;
  ratio.unit = "ratio";
  ratio.source = "lecture 1:41:26: output dearer than input, decode is the memory-bound phase";
  out.push_back(ratio);

  const double f_p = 2 * n + att * kv_value * s / 2, f_d = 2 * n + att * kv_value * s;
  const ExplainInput in_s{"S", "mean context of a decode step; the prompt prefilled", s, "tokens", "--decode-context"};
  const ExplainInput in_kv{"kv", "KV bytes per token (above)", kv_value, "bytes per token", "kv_bytes_per_token"};
  Explanation bytes;
  bytes.key = "decode_bytes_per_output_token";
  bytes.quantity = "HBM bytes a decoded token may fetch at the markup prefill earns";
  bytes.formula = "r f_p / (F/W), f_p = 2 N_active + a kv S/2";
  bytes.inputs = {ratio.inputs.front(), in_n, in_a, in_kv, in_s, in_fw};
  bytes.result = r * f_p / fw;
  bytes.substituted = g4(r) + " x (2 x " + g4(n) + " + " + g4(att) + " x " + g4(kv_value) + " x " + g4(s) + " / 2) / " + g4(fw) + " = " +
                      g4(bytes.result);
  bytes.unit = "bytes per token";
  bytes.source = "lecture 1:41:26-1:48:20: an input token costs f_p / F of chip time, an output token its bytes / W, at the same markup";
  out.push_back(bytes);

  Explanation frac;
  frac.key = "decode_fraction_of_compute_roofline";
  frac.quantity = "share of the compute roofline decode reaches";
  frac.formula = "f_d / (r f_p), f_d = 2 N_active + a kv S";
  frac.inputs = bytes.inputs;
  frac.result = f_d / (r * f_p);
  frac.substituted = g4(f_d) + " / (" + g4(r) + " x " + g4(f_p) + ") = " + g4(frac.result);
  frac.unit = "fraction";
  frac.source = "lecture 1:41:26-1:48:20 (1 / r when a = 0)";
  out.push_back(frac);
  return out;
}

}  // namespace chalk
