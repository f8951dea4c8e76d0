// Pipeline stages in the simulator's replica and the run of a replica without KV cache
// (pipeline_step.h; docs/simulator.md 1.10).
#include "pipeline_step.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "chalk/base/error.h"
#include "chalk/engine/pipeline.h"

namespace chalk::sim::detail {
namespace {

/// A stage-to-stage send of `pp` stages as pipeline.cc prices it (pipeline_hop_time): the
/// engine's NCCL send, or the wire time with mechanisms off (the roofline), over NVLink when
/// the stages share one scale-up domain, else over the scale-out network.
double pipeline_sim_send_s(const Deployment& stage, int64_t pp, double bytes) {
  return pipeline_hop_time(stage, pp, chalk::bytes(bytes)).value();
}

}  // namespace

int64_t check_pipeline(int64_t stages, int64_t dp_ranks, const Deployment& stage) {
  if (stages < 1) throw InputError("pp", "must be >= 1 pipeline stage, got " + std::to_string(stages));
  if (stages > 1 && dp_ranks > 1) {
    throw InputError("pp", std::to_string(stages) + " stages with data-parallel attention (" + std::to_string(dp_ranks) +
                               " ranks a stage) are not simulated; expected --pp 1 or a tensor-parallel stage layout");
  }
  if (stages > 1) pipeline_sim_send_s(stage, stages, 1.0);  // throws for stages across domains without a scale-out network
  return stages;
}

MixedStepWork pipeline_step_work(const Deployment& stage, const StepMix& mix, int64_t pp) {
  struct Micro {
    std::vector<int64_t> contexts;
    std::vector<PrefillChunk> chunks;
    int64_t context_sum = 0;
    double tokens = 0;
  };
  if (!mix.contexts_listed()) throw std::logic_error("pipeline_step_work: micro-batches split each decode's context (StepMix::decode_count)");
  std::vector<Micro> mb(static_cast<std::size_t>(pp));
  auto lightest = [&]() -> Micro& { return *std::min_element(mb.begin(), mb.end(), [](const Micro& a, const Micro& b) { return a.tokens < b.tokens; }); };
  for (const int64_t c : mix.decode_contexts) {
    Micro& m = lightest();
    m.contexts.push_back(c);
    m.context_sum += c;
    m.tokens += mix.tokens_per_sequence;
  }
  for (const PrefillChunk& c : mix.chunks) {
    Micro& m = lightest();
    m.chunks.push_back(c);
    m.tokens += static_cast<double>(c.tokens);
  }
  MixedStepWork out;
  double sum = 0, pass = 0, compute = 0, memory = 0;
  const double row_bytes = static_cast<double>(stage.model.d_model) * 2.0;  // bf16 activations, as PipelineShape
  for (const Micro& m : mb) {
    if (m.contexts.empty() && m.chunks.empty()) continue;
    StepMix part;
    part.decode_contexts = m.contexts;
    part.decode_context_sum = m.context_sum;
    part.chunks = m.chunks;
    part.tokens_per_sequence = mix.tokens_per_sequence;
    part.drafting = mix.drafting;
    part.memo = mix.memo;  // the same deployment for every micro-batch
    const MixedStepWork w = mixed_step_work(stage, part);
    const double t = w.t_step.value();
    const double hop = pipeline_sim_send_s(stage, pp, m.tokens * row_bytes);
    const double ids = m.contexts.empty() ? 0.0 : pipeline_sim_send_s(stage, pp, static_cast<double>(m.contexts.size()) * 4.0);
    sum += t;
    pass = std::max(pass, static_cast<double>(pp) * t + static_cast<double>(pp - 1) * hop + ids);
    compute += w.t_compute.value();
    memory += w.t_memory.value();
  }
  out.t_step = seconds(std::max(sum, pass));
  out.t_compute = seconds(compute);
  out.t_memory = seconds(memory);
  return out;
}

SimRun unfit_run(SimRun run, const Deployment& d, std::span<const Request> requests, int64_t pipeline_stages) {
  run.fits = false;
  run.reason = "the weights and the memory reserve leave no HBM for the KV cache on " + std::to_string(d.n_chips) + " chips" +
               (pipeline_stages > 1 ? " of each of " + std::to_string(pipeline_stages) + " pipeline stages" : "");
  for (std::size_t i = 0; i < requests.size() && i < run.requests.size(); ++i) {
    auto& rec = run.requests[i];
    rec.arrival_s = requests[i].arrival_s;
    rec.input_tokens = requests[i].input_tokens;
    rec.output_tokens = requests[i].output_tokens;
    rec.rejected = true;
  }
  run.rejected = static_cast<int64_t>(run.requests.size());
  return run;
}

}  // namespace chalk::sim::detail
