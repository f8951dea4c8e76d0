// Serving rows at a request rate or concurrency go through the request simulator.
#include <gtest/gtest.h>

#include "chalk/engine/roofline.h"
#include "chalk/io/io.h"
#include "chalk/validate/measurement.h"
#include "chalk/validate/validate.h"

namespace chalk {
namespace {

const char* kSimulatedRowsHeader = "id,kind,model,hardware,chips,tp,batch,batch_per,requests,request_rate_per_s,input_tokens,output_tokens,engine,metric,value\n";

TEST(ValidateSimulated, ALowRateTtftIsTheLonePrefill) {
  // 50 requests 1,000 s apart on average, each done in well under a second: every TTFT is
  // vLLM's fixed work per request (6.908 ms: API server, tokenization, first-token
  // streaming, kEngineRequestOverheadS) + the engine step's prefill of 1,024 tokens on one
  // H100 (tp 1).
  const auto f = parse_measurements(std::string(kSimulatedRowsHeader) + "RATE-TTFT,serving,llama-3.1-8b,h100-sxm,1,1,,,50,0.001,1024,16,vllm,ttft_ms,50\n",
                                    "t.csv");
  const ValidationReport r = validate_measurements(f.rows);
  ASSERT_EQ(r.rows.size(), 1u);
  const Prediction& p = r.rows.front();
  ASSERT_EQ(p.status, RowStatus::predicted) << p.reason;
  DeploymentOptions o;
  o.n_chips = 1;
  o.mechanisms.enabled = true;
  o.mechanisms.layout.tp_attention = 1;
  const Deployment d = make_deployment(load_model("llama-3.1-8b"), load_system("h100-sxm"), o);
  EXPECT_NEAR(p.predicted, 6.908 + prefill_step(d, 1, 1024).t_step.value() * 1e3, 1e-6);
  EXPECT_NE(p.inputs.find("Poisson at"), std::string::npos) << p.inputs;
}

TEST(ValidateSimulated, ConstantArrivalsNeverQueueBelowCapacity) {
  // 200 requests 0.2 s apart (5/s), each served in about 0.14 s (a 1,024-token prefill and
  // 15 decode steps of Llama 3.1 8B on one H100, about 7 ms each): with `constant` arrivals
  // every request finds the engine idle, so each TTFT is the low-rate figure of
  // ALowRateTtftIsTheLonePrefill, 6.908 ms + the lone prefill step. Poisson arrivals at the
  // same rate bring gaps below 0.14 s (1 - e^(-5 x 0.14) = 50% of them), whose prefills share
  // steps with decodes: a larger mean TTFT.
  const std::string h = "id,kind,model,hardware,chips,tp,requests,request_rate_per_s,arrivals,input_tokens,output_tokens,engine,metric,value\n";
  const auto f = parse_measurements(h + "C,serving,llama-3.1-8b,h100-sxm,1,1,200,5,constant,1024,16,vllm,ttft_ms,50\n" +
                                        "P,serving,llama-3.1-8b,h100-sxm,1,1,200,5,poisson,1024,16,vllm,ttft_ms,50\n" +
                                        "E,serving,llama-3.1-8b,h100-sxm,1,1,200,5,,1024,16,vllm,ttft_ms,50\n",
                                    "t.csv");
  const ValidationReport r = validate_measurements(f.rows);
  ASSERT_EQ(r.rows.size(), 3u);
  for (const auto& p : r.rows) ASSERT_EQ(p.status, RowStatus::predicted) << p.reason;
  DeploymentOptions o;
  o.n_chips = 1;
  o.mechanisms.enabled = true;
  o.mechanisms.layout.tp_attention = 1;
  const Deployment d = make_deployment(load_model("llama-3.1-8b"), load_system("h100-sxm"), o);
  EXPECT_NEAR(r.rows[0].predicted, 6.908 + prefill_step(d, 1, 1024).t_step.value() * 1e3, 1e-6);
  EXPECT_NE(r.rows[0].inputs.find("constant at"), std::string::npos) << r.rows[0].inputs;
  EXPECT_GT(r.rows[1].predicted, r.rows[0].predicted * 1.05);
  // An empty `arrivals` is Poisson, printed as an assumption.
  EXPECT_DOUBLE_EQ(r.rows[2].predicted, r.rows[1].predicted);
  bool assumed = false;
  for (const auto& a : r.rows[2].assumptions) assumed = assumed || a.find("arrivals: empty, poisson") != std::string::npos;
  EXPECT_TRUE(assumed);
}

TEST(ValidateSimulated, ConcurrencyRunsTheStatedBatch) {
  // 64 requests, 8 running at a time: TPOT is at least the decode step of 8 sequences at
  // the prompt's context and at most that of all 64 at the longest context.
  const auto f = parse_measurements(std::string(kSimulatedRowsHeader) + "CONC-TPOT,serving,llama-3.1-8b,h100-sxm,1,1,8,run,64,,1024,128,vllm,tpot_ms,10\n",
                                    "t.csv");
  const ValidationReport r = validate_measurements(f.rows);
  const Prediction& p = r.rows.front();
  ASSERT_EQ(p.status, RowStatus::predicted) << p.reason;
  DeploymentOptions o;
  o.n_chips = 1;
  o.mechanisms.enabled = true;
  o.mechanisms.layout.tp_attention = 1;
  const Deployment d = make_deployment(load_model("llama-3.1-8b"), load_system("h100-sxm"), o);
  EXPECT_GT(p.predicted, decode_step(d, 8, 1024).t_step.value() * 1e3);
  EXPECT_LT(p.predicted, decode_step(d, 64, 1152).t_step.value() * 1e3 + prefill_step(d, 8, 1024).t_step.value() * 1e3);
}

}  // namespace
}  // namespace chalk
