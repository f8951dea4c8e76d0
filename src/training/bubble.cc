// The pipeline bubble of each schedule, and the few-microbatch floor (docs/training.md,
// "Step"; formulas and sources in step.h).
#include <algorithm>

#include "chalk/base/count_cast.h"
#include "chalk/training/step.h"

namespace chalk {
namespace {

using counts::d;

}  // namespace

Seconds few_microbatch_bubble(bool v_shape, int64_t p, int64_t m, Seconds t_f, Seconds t_b, Seconds t_w) {
  if (p <= 1 || m < 1) return Seconds(0);
  const double P = d(p), M = d(m);
  const Seconds t_bi = max(Seconds(0), t_b - t_w);  // input-gradient part of the backward
  if (!v_shape) return max(Seconds(0), (t_f + t_bi) * (P - 1) - t_w * (M - 1));
  const Seconds first = max(Seconds(0), t_f * ((2 * P - 1 - M) / 2));
  // Of the m weight gradients, the last microbatch's last chunk (t_w/2) can only run after
  // its own input gradient, the last event of the step: it cannot fill the wait.
  const Seconds back = max(Seconds(0), t_bi * (P - 1) - t_bi * ((M - 1) / 2) - t_w * (M - 0.5));
  return first + back;
}

Seconds pipeline_bubble(PipelineSchedule s, int64_t p, int64_t m, int64_t v, Seconds t_f, Seconds t_b, Seconds t_w) {
  if (p <= 1) return Seconds(0);
  const double P = d(p);
  switch (s) {
    case PipelineSchedule::gpipe:
    case PipelineSchedule::one_f_one_b: return (t_f + t_b) * (P - 1);
    case PipelineSchedule::interleaved: return (t_f + t_b) * ((P - 1) / d(std::max<int64_t>(1, v)));
    case PipelineSchedule::zb_h1:
      return max(max(Seconds(0), t_f + t_b - t_w * 2.0) * (P - 1), few_microbatch_bubble(false, p, m, t_f, t_b, t_w));
    case PipelineSchedule::zb_v: return few_microbatch_bubble(true, p, m, t_f, t_b, t_w);
    case PipelineSchedule::dualpipe: return dualpipe_bubble(p, t_f + t_b, t_b, t_w);
  }
  return Seconds(0);
}

Seconds dualpipe_bubble(int64_t p, Seconds t_fb, Seconds t_b, Seconds t_w) {
  if (p <= 1) return Seconds(0);
  return max(Seconds(0), t_fb + t_b - t_w * 3.0) * (d(p) / 2 - 1);
}

int64_t dualpipe_unpaired_chunks(int64_t p, int64_t m) {
  if (p <= 1) return 0;
  return std::min<int64_t>(m, 3 * p / 2 - 1);
}

}  // namespace chalk
