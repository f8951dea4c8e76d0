// Launch files name an engine's DeepEP all-to-all only for a model the engine runs it for
// (review 11 H2: SGLang's serve.sh for gpt-oss-120b wrote --moe-a2a-backend deepep, and
// SGLang's gpt_oss.py raises "forward_deepep branch not implemented yet"). The support table is
// data/engines/deepep.json (io engine_deepep_problem); each engine's files are checked here.
#include "chalk/sim/launch.h"

#include <gtest/gtest.h>

#include "chalk/io/engine_deepep.h"
#include "chalk/sim/plan.h"
#include "launch_test_support.h"

namespace chalk::sim {
namespace {

using namespace launch_testing;

/// Whether `f` holds `text`, its comment lines read as one ("\n# " as a space: comments wrap
/// at 98 columns wherever their words fall).
bool deepep_file_says(const LaunchFile* f, const std::string& text) {
  if (f == nullptr) return false;
  std::string joined = f->text;
  for (std::size_t at = joined.find("\n# "); at != std::string::npos; at = joined.find("\n# ", at)) joined.replace(at, 3, " ");
  return joined.find(text) != std::string::npos;
}

const EngineLaunch* deepep_engine(const std::vector<EngineLaunch>& l, const std::string& engine) {
  for (const auto& e : l) {
    if (e.engine == engine) return &e;
  }
  return nullptr;
}

/// A target of HF model_type `type` and hidden size `hidden`, with the engines' DeepEP
/// support filled as `chalk plan` fills it (plan_outputs.cc launch_target).
LaunchTarget deepep_target(const std::string& type, int64_t hidden) {
  LaunchTarget t = launch_test_target();
  t.moe = true;
  t.model_type = type;
  for (const char* engine : {"vllm", "sglang"}) {
    if (std::string why = engine_deepep_problem(engine, type, hidden); !why.empty()) t.no_deepep[engine] = why;
  }
  return t;
}

TEST(LaunchDeepEp, TheTableFollowsTheEnginesModelFiles) {
  // SGLang @ 009c680 python/sglang/srt/models/gpt_oss.py, GptOssSparseMoeBlock.forward:
  //   if not get_moe_a2a_backend().is_deepep(): return self.forward_normal(...)
  //   else: raise Exception("forward_deepep branch not implemented yet")
  const std::string gpt_oss = engine_deepep_problem("sglang", "gpt_oss", 2880);
  EXPECT_NE(gpt_oss.find("SGLang runs no DeepEP for gpt_oss"), std::string::npos) << gpt_oss;
  EXPECT_NE(gpt_oss.find("forward_deepep branch not implemented yet"), std::string::npos) << gpt_oss;
  EXPECT_NE(gpt_oss.find("009c68085e684e0cf2829d129ad026180c1f8c32"), std::string::npos) << gpt_oss;
  // deepseek_v2.py's DeepseekV2MoE.forward_deepep (DeepseekV3ForCausalLM, Kimi K2), qwen3_moe.py's
  // and glm4_moe.py's forward_deepep; hidden sizes 7168, 4096, 2048 and 5120 are DeepEP's.
  EXPECT_EQ(engine_deepep_problem("sglang", "deepseek_v3", 7168), "");
  EXPECT_EQ(engine_deepep_problem("sglang", "kimi_k2", 7168), "");
  EXPECT_EQ(engine_deepep_problem("sglang", "qwen3_moe", 4096), "");
  EXPECT_EQ(engine_deepep_problem("sglang", "qwen3_moe", 2048), "");
  EXPECT_EQ(engine_deepep_problem("sglang", "glm4_moe", 5120), "");
  // A listed model at a hidden size DeepEP's low-latency kernels lack (DeepEP @ 2bd56ae
  // csrc/kernels/launch.cuh SWITCH_HIDDEN: 2048, 2560, 4096, 5120, 6144, 7168, 8192): SGLang
  // passes the hidden states unpadded, so no DeepEP.
  EXPECT_NE(engine_deepep_problem("sglang", "qwen3_moe", 3072).find("no hidden size 3072 and SGLang does not pad it"), std::string::npos);
  // A model file not read is not assumed to run it.
  EXPECT_NE(engine_deepep_problem("sglang", "mixtral", 4096).find("not in chalk's table"), std::string::npos);
  // vLLM's FusedMoE pads the hidden size (maybe_roundup_hidden_size: 2880 -> 3072 for the
  // high-throughput kernels, up to a listed size for the low-latency ones), for every model,
  // up to DeepEP's largest, 8192.
  EXPECT_EQ(engine_deepep_problem("vllm", "gpt_oss", 2880), "");
  EXPECT_EQ(engine_deepep_problem("vllm", "mixtral", 4096), "");
  EXPECT_NE(engine_deepep_problem("vllm", "some_moe", 12288).find("pads only up to the largest, 8192"), std::string::npos);
  EXPECT_NE(engine_deepep_problem("trtllm", "gpt_oss", 2880).find("no DeepEP entry for trtllm"), std::string::npos);
}

TEST(LaunchDeepEp, SglangServesGptOssOnItsPlainExpertParallelPath) {
  // Review 11 H2's file: gpt-oss-120b on 2 chips, attention TP2, experts EP2 (one DP rank).
  // It wrote --tp-size 2 --ep-size 2 --moe-a2a-backend deepep --deepep-mode auto; SGLang's
  // gpt_oss.py raises under DeepEP. With one DP rank chalk prices the experts' all-reduce path
  // (the engine step's ep_traffic needs dp > 1), which SGLang's forward_normal runs: no flag,
  // and nothing differs from the simulated.
  const LaunchTarget t = deepep_target("gpt_oss", 2880);
  PlanCandidate c = launch_dp_attention_moe();
  c.replica_chips = 2, c.chips = 2, c.replicas = 1;
  c.parallel.tp_attention = 2, c.parallel.tp_ffn = 2, c.parallel.ep = 2;
  c.layout = "attention TP2, experts EP2";
  const auto l = launch_files(c, t);
  EXPECT_GT(launch_check_against_engines(l), 0);
  const LaunchFile* sg = launch_file_at(l, "sglang/serve.sh");
  ASSERT_NE(sg, nullptr);
  EXPECT_TRUE(deepep_file_says(sg, "--ep-size 2")) << sg->text;
  EXPECT_FALSE(deepep_file_says(sg, "\n  --moe-a2a-backend")) << sg->text;  // the flag, not the comment naming it
  EXPECT_FALSE(deepep_file_says(sg, "\n  --deepep-mode")) << sg->text;
  EXPECT_TRUE(deepep_file_says(sg, "No --moe-a2a-backend deepep: SGLang runs no DeepEP for gpt_oss")) << sg->text;
  EXPECT_EQ(deepep_engine(l, "sglang")->differs, "");
  // DeepSeek-V3 on the same layout keeps DeepEP (deepseek_v2.py runs forward_deepep).
  const auto ds = launch_files(c, deepep_target("deepseek_v3", 7168));
  EXPECT_TRUE(deepep_file_says(launch_file_at(ds, "sglang/serve.sh"), "--moe-a2a-backend deepep \\\n  --deepep-mode auto"));
}

TEST(LaunchDeepEp, SglangSaysWhereItsDefaultPathIsNotTheAllToAllChalkPriced) {
  // Attention TP2 x DP4, experts EP8: chalk prices DeepEP's all-to-all between the 4 DP ranks
  // and the experts. SGLang runs no DeepEP for gpt_oss, so its file runs the default path and
  // says so in its header, and `chalk plan` in `differs_from_simulated`.
  const LaunchTarget t = deepep_target("gpt_oss", 2880);
  PlanCandidate c = launch_dp_attention_moe();
  auto l = launch_files(c, t);
  const LaunchFile* sg = launch_file_at(l, "sglang/serve.sh");
  ASSERT_NE(sg, nullptr);
  EXPECT_TRUE(deepep_file_says(sg, "--enable-dp-attention")) << sg->text;
  EXPECT_FALSE(deepep_file_says(sg, "\n  --moe-a2a-backend")) << sg->text;
  EXPECT_TRUE(deepep_file_says(sg, "Not as simulated: chalk priced DeepEP's all-to-all between the 4 attention-DP ranks")) << sg->text;
  const EngineLaunch* e = deepep_engine(l, "sglang");
  EXPECT_EQ(e->differs.find("chalk priced DeepEP's all-to-all between the 4 attention-DP ranks and the experts, but SGLang runs no DeepEP "
                            "for gpt_oss"),
            0u)
      << e->differs;
  // vLLM pads gpt-oss's hidden size and keeps its DeepEP backend: its files run what was priced.
  EXPECT_TRUE(deepep_file_says(launch_file_at(l, "vllm/serve.sh"), "--all2all-backend deepep_low_latency"));
  EXPECT_EQ(deepep_engine(l, "vllm")->differs, "");
  // Two micro-batches need SGLang's DeepEP backend (check_server_args): no SGLang files, the reason given.
  c.parallel.overlap_micro_batches = true;
  l = launch_files(c, t);
  EXPECT_EQ(launch_file_at(l, "sglang/serve.sh"), nullptr);
  EXPECT_NE(deepep_engine(l, "sglang")->problem.find("two micro-batches need its DeepEP all-to-all, and SGLang runs no DeepEP for gpt_oss"),
            std::string::npos)
      << deepep_engine(l, "sglang")->problem;
}

TEST(LaunchDeepEp, VllmNamesNoDeepEpBackendPastTheHiddenSizesItPads) {
  // vLLM runs DeepEP for every FusedMoE model, padding up to DeepEP's largest hidden size
  // (8192); a hidden size of 12288 has no low-latency kernel, so its file keeps vLLM's
  // default backend (allgather_reducescatter) and says it differs; --enable-dbo, which asserts
  // a DeepEP backend, gets a problem instead of files.
  const LaunchTarget t = deepep_target("some_moe", 12288);
  PlanCandidate c = launch_dp_attention_moe();
  auto l = launch_files(c, t);
  const LaunchFile* vl = launch_file_at(l, "vllm/serve.sh");
  ASSERT_NE(vl, nullptr);
  EXPECT_TRUE(deepep_file_says(vl, "--enable-expert-parallel")) << vl->text;
  EXPECT_FALSE(deepep_file_says(vl, "\n  --all2all-backend")) << vl->text;
  EXPECT_TRUE(deepep_file_says(vl, "Not as simulated: chalk priced DeepEP's all-to-all between the 4 data-parallel ranks")) << vl->text;
  EXPECT_NE(deepep_engine(l, "vllm")->differs.find("vLLM's default all-to-all (allgather_reducescatter)"), std::string::npos);
  c.parallel.overlap_micro_batches = true;
  l = launch_files(c, t);
  EXPECT_EQ(launch_file_at(l, "vllm/serve.sh"), nullptr);
  EXPECT_NE(deepep_engine(l, "vllm")->problem.find("--enable-dbo"), std::string::npos) << deepep_engine(l, "vllm")->problem;
}

TEST(LaunchDeepEp, TensorRtLlmWritesNoAllToAllOption) {
  // trtllm-serve picks its MoE communication at start-up (CommunicationFactory.create_strategy,
  // NVIDIA/TensorRT-LLM @ 03c36d6 tensorrt_llm/_torch/modules/fused_moe/communication/): chalk
  // writes no DeepEP key, for gpt-oss or any model, so nothing can name a path it lacks.
  const LaunchTarget t = deepep_target("gpt_oss", 2880);
  PlanCandidate c = launch_dp_attention_moe();
  c.parallel.tp_attention = 1, c.parallel.tp_ffn = 1;  // attention DP8 (TP1: enable_attention_dp), EP8
  const auto l = launch_files(c, t);
  const EngineLaunch* e = deepep_engine(l, "trtllm");
  ASSERT_FALSE(e->files.empty()) << e->problem;
  for (const auto& f : e->files) {
    EXPECT_EQ(f.text.find("deepep"), std::string::npos) << f.path;
    EXPECT_EQ(f.text.find("DeepEP"), std::string::npos) << f.path;
    EXPECT_EQ(f.text.find("alltoall"), std::string::npos) << f.path;
  }
  EXPECT_EQ(e->differs, "");
}

}  // namespace
}  // namespace chalk::sim
