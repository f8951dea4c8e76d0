// chalk validate and the serving engine a row names: how many sequences a loaded engine
// admits (kv_admission) and which layouts it can launch (sim::engine_layout_problem).
#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "chalk/base/error.h"
#include "chalk/engine/roofline.h"
#include "chalk/io/io.h"
#include "chalk/validate/validate.h"

namespace chalk {
namespace {

ValidationReport engine_run(const std::string& csv) { return validate_measurements(parse_measurements(csv, "t.csv").rows, false); }

double validate_batch_in(const std::string& inputs) {
  const auto at = inputs.find(", batch ");
  if (at == std::string::npos) throw std::runtime_error("no batch in " + inputs);
  return std::stod(inputs.substr(at + 8));
}

TEST(Validate, KvAdmissionSetsTheBatchALoadedEngineRuns) {
  // TRTPERF-L8B-H100's inputs (Llama 3.1 8B, FP8, one H100, 128 in / 2048 out, offline).
  // Taken on demand, each running sequence holds its current tokens: the batch is the
  // KV capacity over the mean context, 128 + 2048 / 2 = 1,152 tokens. Reserved to
  // completion (TensorRT-LLM's GUARANTEED_NO_EVICT), each holds 128 + 2,048 = 2,176:
  // the batch is the same capacity over 2,176, i.e. 1,152 / 2,176 = 0.529 of it.
  const std::string h =
      "id,kind,model,hardware,chips,tp,weights,kv,batch,batch_per,requests,input_tokens,output_tokens,engine,kv_admission,metric,value\n";
  const std::string row = "X,serving,llama-3.1-8b,h100-sxm,1,1,fp8,fp8,max,run,3000,128,2048,";
  const auto lazy = engine_run(h + row + "trtllm,on_demand,output_tok_per_s,22714\n").rows.at(0);
  const auto held = engine_run(h + row + "trtllm,to_completion,output_tok_per_s,22714\n").rows.at(0);
  ASSERT_EQ(lazy.status, RowStatus::predicted) << lazy.reason;
  ASSERT_EQ(held.status, RowStatus::predicted) << held.reason;
  const double b_lazy = validate_batch_in(lazy.inputs), b_held = validate_batch_in(held.inputs);
  EXPECT_NEAR(b_held / b_lazy, 1152.0 / 2176.0, 0.005) << b_lazy << " " << b_held;
  EXPECT_LT(held.predicted, lazy.predicted);
  // Left empty: the engine's default, printed among the assumptions.
  auto assumption = [&](const std::string& engine) {
    const ValidationReport r = engine_run(h + row + engine + ",,output_tok_per_s,22714\n");
    for (const auto& a : r.rows.at(0).assumptions) {
      if (a.rfind("kv_admission", 0) == 0) return a;
    }
    return std::string();
  };
  EXPECT_EQ(assumption("trtllm").rfind("kv_admission: empty, to_completion", 0), 0u);
  EXPECT_EQ(assumption("vllm").rfind("kv_admission: empty, on_demand", 0), 0u);
  // A value outside the vocabulary names the row and the column.
  try {
    engine_run(h + row + "trtllm,no_evict,output_tok_per_s,22714\n");
    ADD_FAILURE() << "no error for kv_admission no_evict";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("X: kv_admission: 'no_evict' is not one of to_completion, on_demand"), std::string::npos) << e.what();
  }
}

TEST(Validate, AnUnstatedLayoutIsTheBestTheRowsEngineCanLaunch) {
  // Qwen3-235B-A22B offline on 8 H200, layout left empty: chalk's search ranks
  // DP-attention EP8 with two micro-batches first, which trtllm-serve has no flag for
  // (sim/launch.cc); a TensorRT-LLM row takes the best layout it can launch and says so,
  // an SGLang row keeps the overlapped one.
  const std::string h = "id,kind,model,hardware,chips,weights,kv,batch,batch_per,requests,input_tokens,output_tokens,engine,metric,value\n";
  const std::string row = "X,serving,qwen3-235b-a22b,h200,8,fp8,fp8,max,run,3000,1000,1000,";
  const auto trt = engine_run(h + row + "trtllm,output_tok_per_s,23789\n").rows.at(0);
  const auto sgl = engine_run(h + row + "sglang,output_tok_per_s,23789\n").rows.at(0);
  ASSERT_EQ(trt.status, RowStatus::predicted) << trt.reason;
  ASSERT_EQ(sgl.status, RowStatus::predicted) << sgl.reason;
  EXPECT_EQ(sgl.layout.find("two micro-batches") == std::string::npos, false) << sgl.layout;
  EXPECT_EQ(trt.layout.find("two micro-batches"), std::string::npos) << trt.layout;
  // Since the routed experts pay their grouped GEMMs' per-tile fixed cost, the search's own
  // first choice for this row (attention TP4, EP4 x 2 replicas) is one TensorRT-LLM can
  // launch, so the row no longer needs the note "is not the row's (TensorRT-LLM cannot run
  // this layout: two micro-batches"; the stated-overlap case below still checks the bound.
  EXPECT_LT(trt.predicted, sgl.predicted);
  // A stated two_batch_overlap bounds the search and the note names it as the reason.
  const std::string h2 = "id,kind,model,hardware,chips,weights,kv,batch,batch_per,requests,input_tokens,output_tokens,engine,two_batch_overlap,"
                         "metric,value\n";
  const auto no = engine_run(h2 + row + "sglang,no,output_tok_per_s,23789\n").rows.at(0);
  EXPECT_EQ(no.layout.find("two micro-batches"), std::string::npos) << no.layout;
  bool said = false;
  for (const auto& n : no.notes) said = said || n.find("is not the row's (the row states two_batch_overlap no)") != std::string::npos;
  EXPECT_TRUE(said);
  // A row stating what its engine cannot launch (two-batch overlap on TensorRT-LLM) is
  // predicted as stated, with a note, and no claim that the engine can launch it.
  const auto odd = engine_run(h2 + row + "trtllm,yes,output_tok_per_s,23789\n").rows.at(0);
  EXPECT_NE(odd.layout.find("two micro-batches"), std::string::npos) << odd.layout;
  said = false;
  for (const auto& n : odd.notes) said = said || n.find("no layout of the search both keeps to the row's columns and is one trtllm can launch") == 0;
  EXPECT_TRUE(said);
  for (const auto& a : odd.assumptions) EXPECT_EQ(a.find("can launch"), std::string::npos) << a;
}

TEST(Validate, EplbColumnPlacesTheExperts) {
  // DeepSeek-R1 decode on 8 B200, DP attention, EP8, 256 sequences a GPU at 2,048 tokens:
  // 2,048 sequences x 8 = 16,384 pairs a layer, 2,048 a rank. Empty: uniform routing (2,048
  // + about 86); yes: EPLB's residual (F = 1 + 0.041 x 1.4236 = 1.058); no: DeepSeek-R1's
  // measured skew (F about 1.37 at EP8): the busiest rank's grouped GEMMs and all-to-all
  // bytes grow, so the step does, in that order.
  const std::string h = "id,kind,model,hardware,chips,ep,attention,weights,batch,batch_per,context,eplb,metric,value\n";
  const std::string row = ",decode,deepseek-r1,b200,8,8,dp,experts=nvfp4,256,chip,2048,";
  const auto r = engine_run(h + "E" + row + ",tpot_ms,50\n" + "Y" + row + "yes,tpot_ms,50\n" + "N" + row + "no,tpot_ms,50\n").rows;
  ASSERT_EQ(r.size(), 3u);
  EXPECT_LT(r[0].predicted, r[1].predicted);
  EXPECT_LT(r[1].predicted, r[2].predicted);
  bool said = false;
  for (const auto& a : r[0].assumptions) said = said || a.rfind("eplb: empty, uniform routing", 0) == 0;
  EXPECT_TRUE(said);
  // A dense model has no experts to place.
  try {
    engine_run("id,kind,model,hardware,chips,batch,batch_per,context,eplb,metric,value\nD,decode,llama-3.1-8b,h100-sxm,1,8,run,2048,no,tpot_ms,20\n");
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("D: eplb: 'no' places routed experts; llama-3.1-8b has none"), std::string::npos) << e.what();
  }
}

TEST(Validate, ChunkedPrefillSetsHowPromptsShareTheSteps) {
  // TRTPERF-L70-H200-20000-2000's inputs: Llama 3.1 70B FP8 on one H200, 20,000 in / 2,000
  // out, the KV reserved to completion (15 sequences). Each step replaces 15 / 2,000 of a
  // request: with chunked prefill its 150 prompt tokens ride in the memory-bound decode
  // step; without (TensorRT-LLM's default) one step in 133 runs a whole 20,000-token
  // prompt, seconds of compute the decodes wait for.
  const std::string h =
      "id,kind,model,hardware,chips,tp,weights,kv,batch,batch_per,requests,input_tokens,output_tokens,engine,kv_admission,chunked_prefill,metric,value\n";
  const std::string row = "X,serving,llama-3.1-70b,h200,1,1,fp8,fp8,max,run,1000,20000,2000,trtllm,to_completion,";
  const auto chunked = engine_run(h + row + "yes,output_tok_per_s,283\n").rows.at(0);
  const auto whole = engine_run(h + row + "no,output_tok_per_s,283\n").rows.at(0);
  ASSERT_EQ(chunked.status, RowStatus::predicted) << chunked.reason;
  ASSERT_EQ(whole.status, RowStatus::predicted) << whole.reason;
  EXPECT_LT(whole.predicted, chunked.predicted * 0.8);
  // Left empty: trtllm runs whole prompts, vllm chunks; the assumption says which.
  auto assumption = [&](const std::string& engine) {
    const ValidationReport r = engine_run(h + "X,serving,llama-3.1-70b,h200,1,1,fp8,fp8,max,run,1000,20000,2000," + engine +
                                          ",to_completion,,output_tok_per_s,283\n");
    for (const auto& a : r.rows.at(0).assumptions) {
      if (a.rfind("chunked_prefill", 0) == 0) return a;
    }
    return std::string();
  };
  EXPECT_EQ(assumption("trtllm").rfind("chunked_prefill: empty, no", 0), 0u);
  EXPECT_EQ(assumption("vllm").rfind("chunked_prefill: empty, yes", 0), 0u);
  try {
    engine_run(h + row + "off,output_tok_per_s,283\n");
    ADD_FAILURE() << "no error for chunked_prefill off";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("X: chunked_prefill: 'off' is not one of yes, no"), std::string::npos) << e.what();
  }
}

TEST(Validate, ReplicasShareTheArrivals) {
  // MLPerf-style: 8 H200 as 8 TP1 replicas (dp 8) at 100 requests/s. Each replica is
  // simulated alone at 100 / 8 = 12.5 requests/s, so the row's TTFT is that of one H200 at
  // 12.5/s (it was one replica taking all 100/s, a queue without end).
  const std::string h = "id,kind,model,hardware,chips,tp,dp,weights,kv,batch,batch_per,requests,request_rate_per_s,input_tokens,"
                        "output_tokens,engine,metric,value\n";
  const auto eight = engine_run(h + "X,serving,llama-2-70b,h200,8,1,8,fp8,fp8,max,run,800,100,512,291,vllm,ttft_ms,198\n").rows.at(0);
  const auto one = engine_run(h + "X,serving,llama-2-70b,h200,1,1,1,fp8,fp8,max,run,100,12.5,512,291,vllm,ttft_ms,198\n").rows.at(0);
  ASSERT_EQ(eight.status, RowStatus::predicted) << eight.reason;
  EXPECT_DOUBLE_EQ(eight.predicted, one.predicted);
  EXPECT_LT(eight.predicted, 1000);  // ms (157 ms): a loaded but stable replica
  bool said = false;
  for (const auto& n : eight.notes) said = said || n == "request rate 100/s over 8 replicas: 12.5/s each";
  EXPECT_TRUE(said);
}

TEST(Validate, SchedulerKnobsAsTheRunSetThem) {
  // TRTPERF-L8B-H100's inputs under vLLM, offline: the engine admits what its KV cache
  // holds at the mean context, 128 + 2048 / 2 = 1,152 tokens.
  const std::string h = "id,kind,model,hardware,chips,tp,weights,kv,batch,batch_per,requests,input_tokens,output_tokens,engine,"
                        "max_sequences,gpu_memory_utilization,metric,value\n";
  const std::string row = "X,serving,llama-3.1-8b,h100-sxm,1,1,fp8,fp8,max,run,3000,128,2048,vllm,";
  const auto base = engine_run(h + row + ",,output_tok_per_s,22714\n").rows.at(0);
  ASSERT_EQ(base.status, RowStatus::predicted) << base.reason;
  const double b0 = validate_batch_in(base.inputs);
  EXPECT_GT(b0, 300);
  // max_num_seqs 100: no more run.
  const auto capped = engine_run(h + row + "100,,output_tok_per_s,22714\n").rows.at(0);
  EXPECT_EQ(validate_batch_in(capped.inputs), 100);
  EXPECT_LT(capped.predicted, base.predicted);
  // gpu_memory_utilization 0.8 against the default 0.9 (chalk's 10% reserve): the KV cache is
  // what 0.8 x HBM leaves beside the weights W, so the batch scales by (0.8 H - W) / (0.9 H - W).
  const auto tight = engine_run(h + row + ",0.8,output_tok_per_s,22714\n").rows.at(0);
  const auto stated = engine_run(h + row + ",0.9,output_tok_per_s,22714\n").rows.at(0);
  EXPECT_EQ(validate_batch_in(stated.inputs), b0);  // 0.9 is the default
  ModelSpec fp8 = load_model("llama-3.1-8b");
  fp8.weights.attention = fp8.weights.dense_ffn = DType::fp8;
  fp8.weights.attention_bits = fp8.weights.dense_ffn_bits = 0;
  DeploymentOptions o;
  o.kv = DType::fp8;
  const Deployment d = make_deployment(fp8, load_system("h100-sxm"), o);
  const MemoryPlan m = memory_plan(d, 1, 1152);
  const double H = m.hbm_total.value(), W = m.weights.value();
  EXPECT_NEAR(validate_batch_in(tight.inputs) / b0, (0.8 * H - W) / (0.9 * H - W), 0.01);
  // Out of range: the row and the column named.
  for (const auto& [cells, what] : {std::pair<std::string, std::string>{"0,,", "X: max_sequences: expected at least 1, got 0"},
                                    {",1.2,", "X: gpu_memory_utilization: expected a fraction of HBM in (0, 1], got 1.2"}}) {
    try {
      engine_run(h + row + cells + "output_tok_per_s,22714\n");
      ADD_FAILURE() << "no error for " << cells;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  }
  // The token budget shapes the simulator's steps: 4,096-token prompts at a low rate prefill in
  // 512-token chunks, eight steps that each read the weights again, so TTFT is longer.
  const std::string hs = "id,kind,model,hardware,chips,tp,weights,kv,requests,request_rate_per_s,input_tokens,output_tokens,engine,"
                         "max_batched_tokens,metric,value\n";
  const std::string sim = "X,serving,llama-3.1-8b,h100-sxm,1,1,fp8,fp8,50,0.5,4096,64,vllm,";
  const auto whole = engine_run(hs + sim + ",ttft_ms,100\n").rows.at(0);
  const auto chunked = engine_run(hs + sim + "512,ttft_ms,100\n").rows.at(0);
  ASSERT_EQ(chunked.status, RowStatus::predicted) << chunked.reason;
  EXPECT_GT(chunked.predicted, whole.predicted);
  bool said = false;
  for (const auto& n : chunked.notes) said = said || n.find("512-token steps") != std::string::npos;
  EXPECT_TRUE(said);
}

TEST(Validate, KvOffloadColumnIsReadAndSaysWhatItChanges) {
  // The vLLM load suite's 8 GiB of CPU KV offloading (8 x 2^30 / 1e9 = 8.58993 GB): with the
  // prefix reuse stated as cached_tokens (served from HBM) the tier changes no figure, and
  // the row says so; a negative size is refused, the row and the column named.
  const std::string h = "id,kind,model,hardware,chips,tp,requests,request_rate_per_s,input_tokens,cached_tokens,output_tokens,engine,"
                        "kv_offload_gb,metric,value\n";
  const std::string row = "X,serving,llama-3.1-8b,h100-sxm,1,1,50,2,592,576,64,vllm,";
  const auto none = engine_run(h + row + ",ttft_ms,25\n").rows.at(0);
  const auto host = engine_run(h + row + "8.58993,ttft_ms,25\n").rows.at(0);
  ASSERT_EQ(host.status, RowStatus::predicted) << host.reason;
  EXPECT_DOUBLE_EQ(host.predicted, none.predicted);
  bool said = false;
  for (const auto& n : host.notes) said = said || n.find("kv_offload_gb: 8.59 GB of host memory per replica") != std::string::npos;
  EXPECT_TRUE(said);
  try {
    engine_run(h + row + "-1,ttft_ms,25\n");
    ADD_FAILURE() << "no error for kv_offload_gb -1";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("X: kv_offload_gb: expected a non-negative number, got -1"), std::string::npos) << e.what();
  }
}

TEST(Validate, TokenBudgetBoundsAnOfflineEnginesBatch) {
  // MLPERF50-MIX-B200x8-OFFLINE's inputs on one B200 (Mixtral 8x7B in NVFP4, FP8 KV, 427 in,
  // 145 out), NVIDIA's caps: 6,144 sequences, 14,336 tokens a step. TensorRT-LLM counts
  // each running sequence's decode token against max_num_tokens beside the prompts it
  // admits; in steady state B / 145 prompts of 427 tokens join each step, so
  // B (1 + 427 / 145) <= 14,336: B <= 14,336 x 145 / 572 = 2,078,720 / 572 = 3,634.1 -> 3,634,
  // below the 4,138 the KV cache holds at the mean context 427 + 145 / 2 = 499.
  const std::string h = "id,kind,model,hardware,chips,tp,weights,kv,batch,input_tokens,output_tokens,engine,kv_admission,chunked_prefill,"
                        "max_batched_tokens,max_sequences,metric,value\n";
  const std::string row = "X,serving,mixtral-8x7b,b200,1,1,nvfp4,fp8,max,427,145,";
  const auto open = engine_run(h + row + "trtllm,on_demand,no,,6144,output_tok_per_s,16000\n").rows.at(0);
  const auto fed = engine_run(h + row + "trtllm,on_demand,no,14336,6144,output_tok_per_s,16000\n").rows.at(0);
  ASSERT_EQ(open.status, RowStatus::predicted) << open.reason;
  ASSERT_EQ(fed.status, RowStatus::predicted) << fed.reason;
  EXPECT_GT(validate_batch_in(open.inputs), 3634);  // the KV cache's limit, no budget stated
  EXPECT_EQ(validate_batch_in(fed.inputs), 3634);
  EXPECT_LT(fed.predicted, open.predicted);
  bool said = false;
  for (const auto& n : fed.notes) said = said || n.find("14336 x 145 / (427 + 145) = 3634 running sequences") != std::string::npos;
  EXPECT_TRUE(said);
  // vLLM with chunked prefill mixes decodes and chunks under the budget too: the same bound.
  const auto mixed = engine_run(h + row + "vllm,on_demand,yes,14336,6144,output_tok_per_s,16000\n").rows.at(0);
  EXPECT_EQ(validate_batch_in(mixed.inputs), 3634);
  // Without it vLLM runs whole prompts in prefill-only steps: the decode batch is not bounded.
  const auto apart = engine_run(h + row + "vllm,on_demand,no,14336,6144,output_tok_per_s,16000\n").rows.at(0);
  EXPECT_GT(validate_batch_in(apart.inputs), 3634);
}

TEST(Validate, ServingRowSaysItsPipelineIsNotRead) {
  // MLPERF50-L405B-B200x8-OFFLINE's layout: TP2 x PP2 engines, two on 8 B200. A serving
  // replica has no pipeline in validate: the row is priced as 8 / 2 = 4 chips at TP2 and says
  // that pp was not read; without pp the same row carries no such note.
  const std::string h = "id,kind,model,hardware,chips,tp,pp,dp,weights,kv,batch,input_tokens,output_tokens,engine,metric,value\n";
  const std::string row = "X,serving,llama-3.1-405b,b200,8,2,";
  const auto piped = engine_run(h + row + "2,2,nvfp4,fp8,max,9429,657,trtllm,output_tok_per_s,1526\n").rows.at(0);
  const auto flat = engine_run(h + row + ",2,nvfp4,fp8,max,9429,657,trtllm,output_tok_per_s,1526\n").rows.at(0);
  ASSERT_EQ(piped.status, RowStatus::predicted) << piped.reason;
  auto says = [](const Prediction& r) {
    for (const auto& n : r.notes) {
      if (n == "pp 2: not read (a serving replica has no pipeline here; its 4 chips are priced at the stated layout)") return true;
    }
    return false;
  };
  EXPECT_TRUE(says(piped));
  EXPECT_FALSE(says(flat));
  EXPECT_DOUBLE_EQ(piped.predicted, flat.predicted);
}
}  // namespace
}  // namespace chalk
