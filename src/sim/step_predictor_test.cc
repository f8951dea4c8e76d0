// chalk as a step-time predictor (engine/step_batch.h): the step of a batch composition is
// exactly the simulator's own step for the same batch, and a pure decode batch is decode's
// steady step.
#include <vector>

#include <gtest/gtest.h>

#include "chalk/base/error.h"
#include "chalk/engine/step_batch.h"
#include "chalk/io/io.h"
#include "chalk/sim/simulator.h"

namespace chalk::sim {
namespace {

Deployment predictor_deployment(const char* model, int64_t chips, bool mechanisms) {
  DeploymentOptions o;
  o.n_chips = chips;
  o.mechanisms.enabled = mechanisms;
  return make_deployment(load_model(model), load_system("h100-sxm"), o);
}

TEST(StepPredictor, EqualsTheSimulatorsOwnStepsExactly) {
  // Two requests at t = 0 under a 2,048-token budget (vLLM's scheduler: running first,
  // then waiting FCFS; chunked prefill on). A: 100-token prompt, 4 tokens out; B: 3,000
  // tokens in, 2 out. The steps the simulator forms, by its rules (simulator.h):
  //   1. A's whole prompt {100 new, 0 cached}, B's first chunk {2048 - 100 = 1948, 0}
  //   2. A decodes at 100 (its prompt in the KV), B's last chunk {3000 - 1948 = 1052, 1948}
  //   3. A decodes at 101, B at 3000 (its first token came with step 2)
  //   4. A decodes at 102 (B finished with its 2nd token at step 3)
  // Each step's duration must be batch_step_work on the simulator's deployment for the
  // same batch, to the last bit: the predictor is the simulator's step, not a second model.
  const std::vector<StepBatch> expected = {
      {{{100, 0}, {1948, 0}}, {}},
      {{{1052, 1948}}, {100}},
      {{}, {101, 3000}},
      {{}, {102}},
  };
  for (const bool mechanisms : {true, false}) {
    for (const auto& [model, chips] : {std::pair{"llama-3.1-8b", 1}, std::pair{"llama-3.1-70b", 4}}) {
      const Deployment d = predictor_deployment(model, chips, mechanisms);
      SimOptions o;
      o.policy = engine_policy("vllm");
      o.policy.max_batched_tokens = 2048;
      const std::vector<Request> reqs = {{0.0, 100, 4, {}}, {0.0, 3000, 2, {}}};
      const SimRun run = simulate(d, reqs, o);
      ASSERT_EQ(run.steps.size(), expected.size()) << model;
      const Deployment as_run = engine_deployment(d, o.policy);
      for (std::size_t k = 0; k < expected.size(); ++k) {
        int64_t prefill = 0;
        for (const auto& c : expected[k].prefill) prefill += c.tokens;
        EXPECT_EQ(run.steps[k].decodes, static_cast<int32_t>(expected[k].decode.size())) << model << " step " << k;
        EXPECT_EQ(run.steps[k].prefill_tokens, prefill) << model << " step " << k;
        const MixedStepWork w = batch_step_work(as_run, expected[k]);
        EXPECT_EQ(run.steps[k].duration_s, w.t_step.value()) << model << " mechanisms " << mechanisms << " step " << k;
        EXPECT_EQ(run.steps[k].compute_s, w.t_compute.value()) << model << " step " << k;
        EXPECT_EQ(run.steps[k].memory_s, w.t_memory.value()) << model << " step " << k;
      }
      // A context one token off is another step (the check above can fail).
      EXPECT_NE(batch_step_work(as_run, StepBatch{{}, {101, 3001}}).t_step.value(), run.steps[2].duration_s) << model;
    }
  }
}

TEST(StepPredictor, PureDecodeBatchIsDecodesSteadyStep) {
  // 32 decodes at context 1,024 are decode_step(d, 32, 1024) (`chalk decode -b 32 -c 1024`):
  // a mix of equal sequences is engine_step's uniform shape (step_mix.h). Under the roofline
  // (mechanisms off) by hand: Llama 3.1 8B on one H100 SXM in bf16, T = max(T_compute,
  // T_weights + T_kv) with T_weights = weights bytes / effective HBM bandwidth and T_kv =
  // 32 x 1,024 tokens x 131,072 B (32 layers x 8 KV heads x 128 x 2 (K, V) x 2 B) / the same;
  // memory-bound at batch 32 (compute: 32 x ~16 GFLOP over ~700 TFLOP/s is ~0.7 ms).
  for (const bool mechanisms : {true, false}) {
    const Deployment d = predictor_deployment("llama-3.1-8b", 1, mechanisms);
    const StepBatch b{{}, std::vector<int64_t>(32, 1024)};
    const double t = batch_step_work(d, b).t_step.value();
    EXPECT_NEAR(t, decode_step(d, 32, 1024).t_step.value(), 1e-12 * t) << mechanisms;
    if (!mechanisms) {
      const double bw = d.hbm_effective.value();
      const double by_hand = (d.weight_bytes_always.value() + 32.0 * 1024 * 131072) / bw;
      EXPECT_NEAR(t, by_hand, 1e-9 * t);
    }
  }
}

TEST(StepPredictor, BadBatchesNameTheItem) {
  const Deployment d = predictor_deployment("llama-3.1-8b", 1, true);  // max_position_embeddings 131,072
  auto message = [&](const StepBatch& b) {
    try {
      batch_step_work(d, b);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message({{{0, 5}}, {}}), "batch.prefill[0].tokens: must be >= 1 new prompt tokens, got 0");
  EXPECT_EQ(message({{{8, -1}}, {}}), "batch.prefill[0].cached: must be >= 0 cached tokens, got -1");
  EXPECT_EQ(message({{{8, 0}, {1000, 131000}}, {}}), "batch.prefill[1]: 131000 cached + 1000 new tokens exceed the model's max_position_embeddings 131072");
  EXPECT_EQ(message({{}, {1, -3}}), "batch.decode[1]: must be a context of >= 1 tokens, got -3");
  EXPECT_EQ(message({{}, {131072}}),
            "batch.decode[0]: context 131072 leaves no position for the new token within the model's max_position_embeddings 131072; expected <= 131071");
  EXPECT_EQ(batch_step_work(d, StepBatch{}).t_step.value(), 0.0);
}

}  // namespace
}  // namespace chalk::sim
