// Every number explains itself (issue 18), for the serving analyses: how a sweep row's
// speed and cost and a deployment's balance points are computed, in the vocabulary of
// chalk/engine/explain.h (formula in symbols, inputs with units and sources, the algebra,
// the result as the command reports it). `chalk serving sweep --explain` and `chalk
// serving balance --explain` print them; with --json (and in `chalk web`'s API) they are
// the "explanations" array the page shows when a number is clicked.
#pragma once

#include <vector>

#include "chalk/engine/explain.h"
#include "chalk/serving/serving.h"

namespace chalk {

/// One sweep row (serving_sweep): tok_per_s_per_user = kept / T_step, tok_per_s_per_chip
/// = B kept / (n T_step), and with a price cost_usd_per_mtok = chip-hour price x chips /
/// tokens per hour (lecture 7:46; DESIGN.md 1) and each term's share of it,
/// cost_<term>_usd_per_mtok = n price T_term / (B kept) (docs/formulas.md). Results equal
/// the row `chalk serving sweep --json` prints for the same point.
std::vector<Explanation> explain_serving_point(const Deployment& d, const ServingPoint& p);

/// The balance points (balance_points): the lecture's closed form B* = N_read b_w F /
/// (2 N_active W) at peak and achievable rates (lecture 15:53), and the batch solved on
/// the step where T_compute first reaches T_weights + T_kv, shown with the step's terms
/// at that batch and the one below (why it is the first). Results equal `chalk serving
/// balance --json`'s "balance". Throws as decode_step.
std::vector<Explanation> explain_balance(const Deployment& d, const BalancePoints& b, const ServingLevers& levers = {});

}  // namespace chalk
