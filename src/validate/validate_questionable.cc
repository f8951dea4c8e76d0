// The notes of a row that chalk predicts as stated though its setup is doubtful
// (docs/accuracy.md, "Questionable rows"): what `chalk decode` warns about. Split from
// validate_predict.cc.
#include <algorithm>
#include <cmath>

#include "chalk/engine/roofline.h"
#include "chalk/io/io.h"
#include "validate_internal.h"

namespace chalk::detail {
namespace {

std::string questionable_num(double v) { return row_num(v, 3); }

}  // namespace

/// What `chalk decode` warns about, carried into the row (docs/accuracy.md, "Questionable
/// rows"): the row is predicted as stated, the note saying why its measurement is doubtful.
/// A valid but infeasible setup is a value with its reason, not an error (docs/formulas.md
/// 5, memory fit): the weights and KV not fitting in HBM, a tensor-parallel degree the heads do
/// not divide, a context beyond the model's max_position_embeddings.
void questionable_row_notes(const RowPlan& p, const ModelSpec& m, const Engines& e, Prediction& out) {
  const bool prefill = p.target == Target::prefill_s || p.target == Target::prefill_tokens_per_s;
  const Deployment& d = prefill ? e.mech_prefill : e.mech;
  int64_t context = 0;
  double batch = p.batch;
  switch (p.target) {
    case Target::decode_total_s: context = p.context + p.output; break;
    case Target::prefill_s:
    case Target::prefill_tokens_per_s: context = p.prompt + p.prefix; break;
    case Target::serving_latency_s:
    case Target::serving_mfu:
      context = p.prompt + p.prefix + p.output;
      batch = std::max(p.batch, p.decode_batch);
      break;
    case Target::serving_tokens_per_s: context = p.prompt + p.output / 2; break;
    case Target::serving_simulated: context = p.prompt + p.prefix + p.output; break;  // the simulator admits what fits
    default: context = p.context;
  }
  // A stated batch only: `max` is what fits, and the simulator admits what fits.
  if (!p.batch_from_capacity && p.target != Target::serving_simulated) {
    const auto b = static_cast<int64_t>(std::ceil(std::max(1.0, batch)));
    const MemoryPlan mem = memory_plan(d, b, context);
    if (!mem.fits) {
      const std::string used = questionable_num(to_gb(mem.weights)) + " GB of weights" + (mem.weights_fit ? " + " + questionable_num(to_gb(mem.kv_cache)) + " GB of KV cache" : "");
      out.notes.push_back("does not fit: " + used + " at batch " + questionable_num(batch) + ", context " + std::to_string(context) + " exceed the " +
                          questionable_num(to_gb(mem.hbm_total - mem.reserve)) + " GB of HBM the " + std::to_string(p.chips) +
                          " chips hold for them (largest batch at this context: " + std::to_string(std::max<int64_t>(0, mem.max_batch)) +
                          "); predicted as stated: the run must have used formats, chips or a batch the row does not state");
    }
  }
  const std::string split = attention_split_problem(m, d.mechanisms.layout.tp_attention);
  if (!split.empty()) out.notes.push_back(split + ": serving engines refuse this split; predicted as stated (a run that padded the heads states padded_heads)");
  if (m.max_context > 0 && context > m.max_context) {
    out.notes.push_back("context " + std::to_string(context) + " exceeds " + m.name + "'s max_position_embeddings " + std::to_string(m.max_context) +
                        " (chalk decode warns the same); predicted as stated");
  }
}

}  // namespace chalk::detail
