// LoRA adapters against hand derivations (lora.h; docs/simulator.md 1.9): an adapter's bytes,
// the multi-adapter GEMM of a step, a miss's load, the KV blocks the slots take, the
// scheduler's max_loras, the trace column, and the --lora spec's errors.
#include <gtest/gtest.h>

#include "chalk/base/error.h"
#include "chalk/io/io.h"
#include "chalk/sim/lora.h"
#include "chalk/sim/simulator.h"

namespace chalk::sim {
namespace {

Deployment llama8b(int64_t chips) {
  DeploymentOptions o;
  o.n_chips = chips;
  return make_deployment(load_model("llama-3.1-8b"), load_system("h100-sxm"), o);
}

std::string lora_error(const std::string& spec) {
  try {
    parse_lora(spec, "--lora");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(Lora, AdapterBytesOfLlama31_8BRank16OnAllSevenProjections) {
  // d 4096, 32 heads and 8 KV heads of 128, d_ff 14336, 32 layers; r (d_in + d_out) each:
  // q 16 (4096 + 4096) = 131072, k and v 16 (4096 + 1024) = 81920, o 131072,
  // gate and up 16 (4096 + 14336) = 294912, down 294912: 1,310,720 a layer,
  // x 32 = 41,943,040 parameters, x 2 bytes (bf16) = 83,886,080 bytes.
  const LoraSpec s = parse_lora("8:16", "--lora");
  const LoraBytes one = lora_adapter_bytes(llama8b(1), s);
  EXPECT_EQ(one.params, 41'943'040);
  EXPECT_EQ(one.bytes, 83'886'080);
  EXPECT_EQ(one.bytes_per_chip, 83'886'080);
  // TP 2: column-parallel q, k, v, gate, up keep A whole, half of B; row-parallel o, down half
  // of A, B whole: q 16 (4096 + 2048) = 98304, k and v 16 (4096 + 512) = 73728, o 16 (2048 +
  // 4096) = 98304, gate and up 16 (4096 + 7168) = 180224, down 16 (7168 + 4096) = 180224:
  // 884,736 a layer x 32 x 2 bytes = 56,623,104 bytes per chip.
  const LoraBytes two = lora_adapter_bytes(llama8b(2), s);
  EXPECT_EQ(two.bytes, 83'886'080);
  EXPECT_EQ(two.bytes_per_chip, 56'623'104);
  // Attention only (q+v, PEFT's default for Llama): (131072 + 81920) x 32 x 2 = 13,631,488.
  EXPECT_EQ(lora_adapter_bytes(llama8b(1), parse_lora("8:16,targets:q+v", "--lora")).bytes, 13'631'488);
}

TEST(Lora, MultiAdapterGemmOfADecodeStep) {
  // 32 decode tokens of 4 distinct adapters, one H100: the 4 adapters' weights once,
  // 4 x 83,886,080 = 335,544,320 B, and per token and layer x + 2r + 2 y over the seven:
  // q 4096 + 32 + 8192 = 12320, k, v 4096 + 32 + 2048 = 6176, o 12320, gate, up 4096 + 32 +
  // 28672 = 32800, down 14336 + 32 + 8192 = 22560: 125,152 elements x 2 B x 32 layers x 32
  // tokens = 256,311,296 B; 591,855,616 B in all. FLOPs 2 x 1,310,720 x 32 layers x 32 tokens
  // = 2,684,354,560. At 3.35 TB/s x 0.87 (h100-sxm's HBM efficiency): 591,855,616 /
  // 2.9145e12 = 203.07 us; the FLOPs take 2.68e9 / (989.4e12 x eff) ~ 3-4 us: memory-bound.
  const Deployment d = llama8b(1);
  ASSERT_DOUBLE_EQ(d.hbm_efficiency, 0.87);
  ASSERT_DOUBLE_EQ(d.system.chip.hbm_bandwidth.value(), 3.35e12);
  const LoraSpec s = parse_lora("8:16,max-loras:4", "--lora");
  const LoraStepWork w = lora_step_work(d, lora_adapter_bytes(d, s), s, 4, 32);
  EXPECT_EQ(w.bytes, 591'855'616);
  EXPECT_EQ(w.flops, 2'684'354'560);
  EXPECT_NEAR(w.seconds, 591'855'616 / (3.35e12 * 0.87), 1e-12);
  EXPECT_NEAR(w.seconds * 1e6, 203.07, 0.01);
  // Nothing active: nothing added.
  EXPECT_EQ(lora_step_work(d, lora_adapter_bytes(d, s), s, 0, 0).seconds, 0);
}

TEST(Lora, EachEngineReleaseLaunchesItsKernelsAndEachPaysTheFloor) {
  // vLLM V0 (v0.6.5's punica wrapper) runs a zeroed buffer, a shrink and an expand per slice:
  // q, k, v, o, gate, up, down are 7 slices x 3 = 21 kernels a layer, x 32 layers = 672.
  // vLLM 0.8 on runs one zeroing, one shrink and one expand per packed projection (qkv_proj,
  // o_proj, gate_up_proj, down_proj): 4 x 3 = 12 a layer, 384. SGLang's triton backend a
  // shrink and an expand per packed projection: 4 x 2 = 8 a layer, 256.
  const Deployment plain = llama8b(1);
  const LoraSpec all = parse_lora("8:16", "--lora"), qv = parse_lora("8:16,targets:q+v", "--lora");
  EXPECT_EQ(lora_step_kernels(plain, all, lora_kernel_plan("vllm", "0.6.5")), 672);
  EXPECT_EQ(lora_step_kernels(plain, all, lora_kernel_plan("vllm", "0.7.3")), 672);
  EXPECT_EQ(lora_step_kernels(plain, all, lora_kernel_plan("vllm", "0.8")), 384);
  EXPECT_EQ(lora_step_kernels(plain, all, lora_kernel_plan("vllm", "")), 384);
  EXPECT_EQ(lora_step_kernels(plain, all, lora_kernel_plan("sglang", "")), 256);
  EXPECT_EQ(lora_step_kernels(plain, all, lora_kernel_plan("trtllm", "")), 256);
  // q and v only: V0 2 slices x 3 x 32 = 192; vLLM 0.8 on one packed qkv_proj, 3 x 32 = 96.
  EXPECT_EQ(lora_step_kernels(plain, qv, lora_kernel_plan("vllm", "0.6")), 192);
  EXPECT_EQ(lora_step_kernels(plain, qv, lora_kernel_plan("vllm", "")), 96);
  // The 32-token, 4-adapter step of MultiAdapterGemmOfADecodeStep (203.07 us of bytes) with
  // the engine's mechanisms on: V0's 672 kernels x 6.3 us floor = 4.2336 ms more, 4.4367 ms
  // in all; vLLM 0.8 on, 384 x 6.3 us = 2.4192 ms. Without mechanisms (the plain roofline)
  // no floor is charged.
  DeploymentOptions o;
  o.n_chips = 1;
  o.mechanisms.enabled = true;
  const Deployment d = make_deployment(load_model("llama-3.1-8b"), load_system("h100-sxm"), o);
  ASSERT_DOUBLE_EQ(d.mechanisms.calibration.kernel_floor.value(), 6.3e-6);
  const LoraSpec s = parse_lora("8:16,max-loras:4", "--lora");
  const LoraStepWork v0 = lora_step_work(d, lora_adapter_bytes(d, s), s, 4, 32, 672);
  EXPECT_NEAR(v0.floor_s, 4.2336e-3, 1e-12);
  EXPECT_NEAR(v0.seconds, 591'855'616 / (3.35e12 * 0.87) + 4.2336e-3, 1e-12);
  EXPECT_NEAR(lora_step_work(d, lora_adapter_bytes(d, s), s, 4, 32, 384).floor_s, 2.4192e-3, 1e-12);
  EXPECT_EQ(lora_step_work(plain, lora_adapter_bytes(plain, s), s, 4, 32, 672).floor_s, 0);
  // A step without adapter requests launches none.
  EXPECT_EQ(lora_step_work(d, lora_adapter_bytes(d, s), s, 0, 0, 672).seconds, 0);
}

TEST(Lora, AMissLoadsOverTheHostLinkAndTheStepWaits) {
  // One adapter (83,886,080 B) over HGX H100's PCIe Gen5 x16, 64 GB/s: 1.31072 ms.
  const Deployment d = llama8b(1);
  const LoraSpec s = parse_lora("2:16", "--lora");
  EXPECT_NEAR(lora_load_seconds(lora_adapter_bytes(d, s), 64e9), 1.31072e-3, 1e-12);
  // One request of adapter 0, prompt 512, one output token: its TTFT is the base run's plus
  // the load and the prefill step's multi-adapter GEMM: 83,886,080 + 512 x 125,152 x 2 x 32
  // = 4,184,866,816 B at 2.9145e12 B/s = 1.43588 ms.
  SimOptions o;
  const std::vector<Request> base{Request{0.0, 512, 1, {}}};
  std::vector<Request> adapted = base;
  adapted[0].adapter = 0;
  const SimRun a = simulate(d, base, o);
  o.lora = s;
  const SimRun b = simulate(d, adapted, o);
  const double ttft_a = a.requests[0].first_token_s, ttft_b = b.requests[0].first_token_s;
  EXPECT_NEAR(ttft_b - ttft_a, 1.31072e-3 + 4'184'866'816 / (3.35e12 * 0.87), 1e-9);
  EXPECT_EQ(b.lora_loads, 1);
  EXPECT_NEAR(b.lora_load_s, 1.31072e-3, 1e-12);
  // The slot's HBM comes out of the KV cache: one slot of 83,886,080 B is 40 blocks of 16 x
  // 131,072 B (32 layers x 8 KV heads x 128 x 2 (K, V) x 2 B a token).
  EXPECT_EQ(a.kv_blocks_total - b.kv_blocks_total, 40);
  // The base model's requests run as before: no adapter, no cost.
  EXPECT_EQ(simulate(d, base, o).requests[0].first_token_s, ttft_a);
}

TEST(Lora, MaxLorasBoundsTheAdaptersInABatch) {
  // Two requests of adapters 0 and 1 at t = 0 (prompt 512, 4 tokens out). With one slot the
  // second waits until the first finishes, then loads into the first's slot (one eviction);
  // with two slots both run from the first step.
  const Deployment d = llama8b(1);
  std::vector<Request> r{Request{0.0, 512, 4, {}}, Request{0.0, 512, 4, {}}};
  r[0].adapter = 0;
  r[1].adapter = 1;
  SimOptions o;
  o.lora = parse_lora("2:16", "--lora");
  const SimRun one = simulate(d, r, o);
  EXPECT_GE(one.requests[1].scheduled_s, one.requests[0].finish_s);
  EXPECT_EQ(one.lora_loads, 2);
  EXPECT_EQ(one.lora_evictions, 1);
  o.lora = parse_lora("2:16,max-loras:2", "--lora");
  const SimRun two = simulate(d, r, o);
  EXPECT_EQ(two.requests[1].scheduled_s, two.requests[0].scheduled_s);
  EXPECT_EQ(two.lora_loads, 2);
  EXPECT_EQ(two.lora_evictions, 0);
  // A request naming an adapter beyond N is an error naming it.
  r[1].adapter = 2;
  EXPECT_THROW(simulate(d, r, o), InputError);
}

TEST(Lora, TrafficDrawsAdaptersAndKeysPrefixesByThem) {
  TrafficSpec t;
  t.requests = 4000;
  std::vector<Request> r = generate_traffic(t);
  apply_lora_traffic(r, parse_lora("4:16,zipf:1", "--lora"), 7);
  // Zipf S = 1 over 4: P(0) = 1 / (1 + 1/2 + 1/3 + 1/4) = 0.48; P(3) = 0.12.
  int64_t n[4] = {0, 0, 0, 0};
  for (const auto& q : r) ++n[q.adapter];
  EXPECT_NEAR(static_cast<double>(n[0]) / 4000, 0.48, 0.03);
  EXPECT_NEAR(static_cast<double>(n[3]) / 4000, 0.12, 0.02);
  // The same system prompt under two adapters is two cache entries; under one, one.
  Request a{0.0, 100, 1, {PrefixSegment{5, 50}}}, b = a, c = a;
  a.adapter = 0;
  b.adapter = 1;
  c.adapter = 0;
  lora_key_prefix(a);
  lora_key_prefix(b);
  lora_key_prefix(c);
  EXPECT_NE(a.prefix[0].id, b.prefix[0].id);
  EXPECT_EQ(a.prefix[0].id, c.prefix[0].id);
}

TEST(Lora, TraceColumnAdapter) {
  const auto r = parse_trace_csv("arrival_s,input_tokens,output_tokens,adapter\n0,10,2,3\n1,10,2,\n", "t.csv");
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].adapter, 3);
  EXPECT_EQ(r[1].adapter, -1);
  try {
    parse_trace_csv("arrival_s,input_tokens,output_tokens,adapter\n0,10,2,x\n", "t.csv");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "t.csv: line 2: adapter: expected an integer 0..99999 or nothing, got 'x'");
  }
}

TEST(Lora, BadSpecsAreOneLineErrorsNamingTheFlag) {
  const std::string form = "; expected N:RANK[,zipf:S][,max-loras:M][,targets:q+k+v+o+gate+up+down]";
  EXPECT_EQ(lora_error("8"), "--lora: got '8'; the first item must be N:RANK" + form);
  EXPECT_EQ(lora_error("0:16"), "--lora: got '0:16'; N '0' must be an integer 1..100000" + form);
  EXPECT_EQ(lora_error("8:12"), "--lora: got '8:12'; RANK '12' must be one of vLLM's max_lora_rank values 1, 8, 16, 32, 64, 128, 256, 320, 512" + form);
  EXPECT_EQ(lora_error("8:16,zipf:-1"), "--lora: got '8:16,zipf:-1'; zipf '-1' must be a number in [0, 10]" + form);
  EXPECT_EQ(lora_error("8:16,max-loras:9"), "--lora: got '8:16,max-loras:9'; max-loras 9 exceeds the 8 adapters" + form);
  EXPECT_EQ(lora_error("8:16,targets:q+x"), "--lora: got '8:16,targets:q+x'; target 'x' must be one of q, k, v, o, gate, up, down" + form);
  EXPECT_EQ(lora_error("8:16,rank:4"), "--lora: got '8:16,rank:4'; unknown option 'rank' (zipf, max-loras, targets)" + form);
  EXPECT_EQ(lora_error("8:16,zipf:1,zipf:2"), "--lora: got '8:16,zipf:1,zipf:2'; 'zipf' is given twice" + form);
  EXPECT_EQ(describe_lora(parse_lora("8:16,max-loras:4,targets:v+q", "--lora")), "8:16,max-loras:4,targets:q+v");
  // MLP targets on a MoE model are refused, naming the flag.
  DeploymentOptions o;
  o.n_chips = 8;
  EXPECT_THROW(lora_adapter_bytes(make_deployment(load_model("mixtral-8x7b"), load_system("h100-sxm"), o), parse_lora("2:16", "--lora")), InputError);
}

}  // namespace
}  // namespace chalk::sim
