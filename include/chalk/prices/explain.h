// Price inferences that explain themselves (issue 18: every number explains itself), in the
// vocabulary of chalk/engine/explain.h: the page's click and `chalk prices infer --explain`.
#pragma once

#include <vector>

#include "chalk/engine/explain.h"
#include "chalk/prices/prices.h"

namespace chalk {

/// The central figures of `p` (infer_prices with assumptions `a`), each at the central
/// values of the assumptions, so that `result` equals the figure's value in
/// inference_figures(p):
/// - `kv_bytes_per_token`: from the long-context price step when the sheet has one,
///   kv = 2 N_active / (S* (F/W - a)) (lecture 1:33:25-1:38:18), else the assumption;
/// - `output_to_input_price_ratio`: r = output price / input price (lecture 1:41:26);
/// - `decode_bytes_per_output_token`: r f_p / (F/W), f_p = 2 N_active + a kv S/2, the HBM
///   bytes a decoded token may fetch at the markup prefill earns (lecture 1:41:26-1:48:20);
/// - `decode_fraction_of_compute_roofline`: f_d / (r f_p), f_d = 2 N_active + a kv S.
std::vector<Explanation> explain_price_inference(const PriceInference& p, const InferenceAssumptions& a);

}  // namespace chalk
