// The launch files' comments say what their flags mean in the right number (review 11 L3:
// "the 1 ports after it") and per what (review 11a item 4: a DeepSeek vLLM header said "at
// most 1024 running requests and 8192 tokens a step" beside --max-num-seqs 128
// --max-num-batched-tokens 1024 under --data-parallel-size 8, without saying those are per rank).
#include "chalk/sim/launch.h"

#include <gtest/gtest.h>

#include "chalk/sim/plan.h"
#include "launch_test_support.h"

namespace chalk::sim {
namespace {

using namespace launch_testing;

/// Whether `f` holds `text`, its comment lines read as one (a comment wraps at 98 columns
/// wherever its words fall: "\n# " reads as a space).
bool comment_file_says(const LaunchFile* f, const std::string& text) {
  if (f == nullptr) return false;
  std::string joined = f->text;
  for (std::size_t at = joined.find("\n# "); at != std::string::npos; at = joined.find("\n# ", at)) joined.replace(at, 3, " ");
  return joined.find(text) != std::string::npos;
}

TEST(LaunchComments, CapsPerDataParallelRankAreSaidBesideThePerReplicaOnes) {
  LaunchTarget t = launch_test_target();
  t.moe = true;
  PlanCandidate c = launch_dp_attention_moe();  // attention TP2 x DP4 on 8 chips, 256 requests and 8192 tokens a replica
  auto l = launch_files(c, t);
  const LaunchFile* vl = launch_file_at(l, "vllm/serve.sh");
  ASSERT_NE(vl, nullptr);
  // vLLM: one scheduler per DP rank, each with the flags' caps: 256 / 4 = 64, 8192 / 4 = 2048.
  EXPECT_TRUE(comment_file_says(vl, "--max-num-seqs 64 \\\n  --max-num-batched-tokens 2048")) << vl->text;
  EXPECT_TRUE(comment_file_says(vl, "Per replica at most 256 running requests and 8192 tokens a step, 64 and 2048 per data-parallel rank "
                                    "(vLLM's caps below are per rank, 4 ranks); weights"))
      << vl->text;
  // SGLang's --max-running-requests is the replica's total (it divides by dp_size): no per-rank figures.
  const LaunchFile* sg = launch_file_at(l, "sglang/serve.sh");
  EXPECT_TRUE(comment_file_says(sg, "Per replica at most 256 running requests and 8192 tokens a step; weights")) << sg->text;
  EXPECT_TRUE(comment_file_says(sg, "--max-running-requests 256")) << sg->text;
  // TensorRT-LLM under enable_attention_dp (attention TP1 x DP8): 256 / 8 = 32, 8192 / 8 = 1024.
  c.parallel.tp_attention = 1, c.parallel.tp_ffn = 1;
  l = launch_files(c, t);
  const LaunchFile* tr = launch_file_at(l, "trtllm/serve.sh");
  ASSERT_NE(tr, nullptr);
  EXPECT_TRUE(comment_file_says(tr, "--max_batch_size 32 \\\n  --max_num_tokens 1024")) << tr->text;
  EXPECT_TRUE(comment_file_says(tr, "32 and 1024 per data-parallel rank (TensorRT-LLM's caps below are per rank, 8 ranks)")) << tr->text;
  // One DP rank: the replica's caps are the flags', and the line says nothing more.
  c.parallel.tp_attention = 8, c.parallel.tp_ffn = 8;
  l = launch_files(c, t);
  EXPECT_TRUE(comment_file_says(launch_file_at(l, "vllm/serve.sh"), "Per replica at most 256 running requests and 8192 tokens a step; weights"));
}

TEST(LaunchComments, CountsAgreeWithTheirNouns) {
  // Disaggregated 70B-like plan: prefill pools of 2 chips, decode pools of 4 and of 1.
  LaunchTarget t = launch_test_target();
  PlanCandidate c;
  c.disaggregated = true;
  c.replica_chips = 2, c.replicas = 1, c.layout = "TP2";
  c.parallel.tp_attention = 2, c.parallel.tp_ffn = 2;
  c.decode_replica_chips = 4, c.decode_replicas = 1, c.decode_layout = "TP4";
  c.decode_parallel.tp_attention = 4, c.decode_parallel.tp_ffn = 4;
  c.chips = 6, c.max_sequences = 64, c.max_batched_tokens = 8192;
  c.weight_bytes_per_chip = 30e9, c.decode_weight_bytes_per_chip = 15e9;
  auto l = launch_files(c, t);
  const LaunchFile* pre = launch_file_at(l, "vllm/prefill.sh");
  ASSERT_NE(pre, nullptr);
  EXPECT_TRUE(comment_file_says(pre, "VLLM_NIXL_SIDE_CHANNEL_PORT and the 1 port after it,")) << pre->text;
  EXPECT_FALSE(comment_file_says(pre, "1 ports")) << pre->text;
  EXPECT_TRUE(comment_file_says(launch_file_at(l, "vllm/decode.sh"), "VLLM_NIXL_SIDE_CHANNEL_PORT and the 3 ports after it,"));
  c.decode_replica_chips = 1, c.decode_parallel.tp_attention = 1, c.decode_parallel.tp_ffn = 1, c.decode_layout = "TP1", c.chips = 3;
  l = launch_files(c, t);
  const LaunchFile* dec = launch_file_at(l, "vllm/decode.sh");
  EXPECT_TRUE(comment_file_says(dec, "listens on VLLM_NIXL_SIDE_CHANNEL_PORT, on VLLM_NIXL_SIDE_CHANNEL_HOST")) << dec->text;
  EXPECT_FALSE(comment_file_says(dec, "0 ports")) << dec->text;
  // One LoRA adapter: "the 1 adapter", in vLLM's and SGLang's required variable.
  PlanCandidate agg;
  agg.replica_chips = 1, agg.replicas = 1, agg.chips = 1, agg.layout = "TP1", agg.max_sequences = 64, agg.max_batched_tokens = 8192;
  agg.parallel.tp_attention = 1, agg.parallel.tp_ffn = 1;
  t.lora_adapters = 1, t.lora_rank = 16;
  l = launch_files(agg, t);
  EXPECT_TRUE(comment_file_says(launch_file_at(l, "vllm/serve.sh"), "set LORA_MODULES: the 1 adapter as name=path"));
  EXPECT_TRUE(comment_file_says(launch_file_at(l, "sglang/serve.sh"), "set LORA_PATHS: the 1 adapter as name=path"));
}

}  // namespace
}  // namespace chalk::sim
