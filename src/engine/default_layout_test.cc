// Default chips and layout: the smallest replica that holds the model, the best layout on it.
#include "chalk/engine/default_layout.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "chalk/base/error.h"
#include "chalk/engine/overhead.h"
#include "chalk/io/io.h"

namespace chalk {
namespace {

DeploymentOptions engine() {
  DeploymentOptions o;
  o.mechanisms.enabled = true;
  return o;
}

// Usable HBM = chips x capacity x (1 - 0.10 reserve); one sequence of 4096 tokens must fit too.
TEST(DefaultLayout, SmallestReplicaHoldsTheWeightsAndOneSequence) {
  // Llama 3.1 8B bf16: 16.1 GB of weights in 72 GB of one H100.
  EXPECT_EQ(smallest_replica_chips(load_model("llama-3.1-8b"), load_system("h100-sxm"), engine(), 4096), 1);
  // Llama 3.1 70B bf16: 141.1 GB of weights; 1 H100 holds 72 GB, 2 hold 144 GB, room for one
  // sequence's 4096 x 327,680 B = 1.34 GB of KV (80 layers x 8 KV heads x 128 x 2 x 2 B).
  EXPECT_EQ(smallest_replica_chips(load_model("llama-3.1-70b"), load_system("h100-sxm"), engine(), 4096), 2);
  // DeepSeek-V3 (673 GB): 8 H200 (5 x 126.9 GB would do, but replicas divide the 8-GPU node);
  // GB200 NVL72 at 167.4 GB usable each: 4 chips hold 669.6 GB, too few. 6 (a divisor of 72)
  // would hold it with data-parallel attention and EP6 (43 or 42 experts a chip), and the
  // layout search lays 6 out, but sizes are tried as powers of two first (the groups engines
  // deploy on), so 8: EP8, 32 experts a chip.
  // H100 (72 GB usable): one 8-GPU node holds 576 GB, so two nodes.
  const ModelSpec ds = load_model("deepseek-v3");
  EXPECT_EQ(smallest_replica_chips(ds, load_system("h200"), engine(), 4096), 8);
  EXPECT_EQ(smallest_replica_chips(ds, load_system("gb200-nvl72"), engine(), 4096), 8);
  EXPECT_EQ(replica_size_problem(ds, 6), "");
  EXPECT_EQ(smallest_replica_chips(ds, load_system("h100-sxm"), engine(), 4096), 16);
}

TEST(DefaultLayout, NoReplicaFitsASequenceBeyondTheModelsContext) {
  // 10,000,128 tokens of Llama 3.1 8B's KV (131,072 B a token: 1.31 TB) fit on no replica of
  // up to 64 H100 nodes: one sequence's KV splits over at most its 8 KV heads, 164 GB a chip
  // of 80. The sequence is also 76x the model's 131,072-token context, the likelier fault,
  // which the error says.
  try {
    (void)smallest_replica_chips(load_model("llama-3.1-8b"), load_system("h100-sxm"), engine(), 10000128);
    ADD_FAILURE() << "a 10M-token sequence fit";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "chips");
    EXPECT_NE(std::string(e.what()).find("beyond llama-3.1-8b's maximum context of 131072 tokens"), std::string::npos) << e.what();
  }
}

TEST(DefaultLayout, OneReplicaLayoutIsNeverAPipeline) {
  // Llama 3.1 405B bf16 (811.8 GB) on H100 SXM: 16 chips (two nodes) are the smallest
  // replica. The search ranks PP2 x (TP8) first there, but the default deployment runs one
  // step of a layout on all 16 chips: before, it took the pipeline's TP8 and priced 16
  // chips as if each held 1/8 of the model ("weights do not fit"). Now the best layout
  // without a pipeline, and the pipeline beside it for the hint (--pp 2).
  const ModelSpec m = load_model("llama-3.1-405b");
  const SystemSpec s = load_system("h100-sxm");
  EXPECT_EQ(smallest_replica_chips(m, s, engine(), 4096), 16);
  const ReplicaLayouts r = replica_layouts(m, s, engine(), 16, 4096);
  ASSERT_TRUE(r.single.has_value());
  EXPECT_EQ(r.single->pp, 1);
  EXPECT_EQ(r.single->layout.tp_attention * (16 / r.single->layout.tp_attention), 16);
  ASSERT_TRUE(r.pipeline.has_value());
  EXPECT_EQ(r.pipeline->pp, 2);
  EXPECT_GT(r.pipeline->tokens_per_s_per_chip, r.single->tokens_per_s_per_chip);
  DeploymentOptions o = engine();
  o.n_chips = 16;
  o.mechanisms.layout = r.single->layout;
  EXPECT_TRUE(memory_plan(make_deployment(m, s, o), 1, 4096).weights_fit);
}

// The default takes a size exactly when the layout search lays out one replica of it, and
// deploys the search's best layout there. Before, the default had a rule of its own (TP
// over all n chips, or experts spread evenly) and refused what `chalk layouts -n N` laid
// out: phi-4, mixtral-8x22b, glm-4.5, llama-4-scout and palm-540b on TPU v5e.
void expect_default_is_the_search(const ModelSpec& m, const SystemSpec& s, int64_t n, const ParallelLayout& want) {
  EXPECT_EQ(smallest_replica_chips(m, s, engine(), 4096), n) << m.name;
  LayoutQuery q;
  q.n_chips = n;
  q.context = 4096;
  std::optional<LayoutCandidate> first;  // the search's best single replica of n, read off directly
  for (const auto& c : search_layouts(m, s, engine(), q)) {
    if (c.fits && c.replica_chips == n && c.pp == 1) {
      first = c;
      break;
    }
  }
  ASSERT_TRUE(first.has_value()) << m.name;
  const auto deployed = best_single_replica_layout(m, s, engine(), n, 4096);
  ASSERT_TRUE(deployed.has_value());
  EXPECT_EQ(deployed->name, first->name);
  for (const ParallelLayout* l : {&deployed->layout, &want}) {
    EXPECT_EQ(l->tp_attention, first->layout.tp_attention) << m.name;
    EXPECT_EQ(l->tp_ffn, first->layout.tp_ffn) << m.name;
    EXPECT_EQ(l->ep, first->layout.ep) << m.name;
    EXPECT_EQ(l->tp_expert, first->layout.tp_expert) << m.name;
  }
}

TEST(DefaultLayout, Phi4OnTpuV5eTakesTheSearchsMixedLayout) {
  // phi-4: 40 heads, 10 KV heads, FFN 17920, 14.66B params in bf16 = 29.3 GB. A TPU v5e holds
  // 16 x 0.9 = 14.4 GB usable: 1 and 2 chips (28.8 GB) are too few, 4 hold it. TP4 splits
  // the 40 heads but neither divides nor is a multiple of the 10 KV heads (engines refuse
  // it); TP3 does not divide 4; TP2 splits both (20 heads, 5 KV heads a chip), so attention
  // TP2 x 2 data-parallel groups under FFN TP4 (17920 / 4 = 4480 columns a chip): Pope et
  // al. 2022's layout. The default was an error naming 4 chips.
  ParallelLayout want;
  want.tp_attention = 2;
  want.tp_ffn = 4;
  want.ep = 1;
  want.tp_expert = 4;
  const ModelSpec m = load_model("phi-4");
  EXPECT_EQ(replica_size_problem(m, 4), "");
  expect_default_is_the_search(m, load_system("tpu-v5e"), 4, want);
  ParallelLayout tp4;
  tp4.tp_attention = 4;
  tp4.tp_ffn = 4;
  EXPECT_EQ(layout_split_problem(m, tp4), "TP4 neither divides nor is a multiple of the 10 KV heads");
}

TEST(DefaultLayout, Mixtral8x22bOnTpuV5eTakesTheSearchsLayout) {
  // mixtral-8x22b: 48 heads, 8 KV heads, 8 experts of width 16384, 140.6B params in bf16 =
  // 281 GB: 16 v5e chips hold 230 GB, 32 hold 461 GB. TP32 does not divide 48 heads and 8
  // experts do not spread over 32 chips, the rule the default had. The search's candidates
  // on 32: experts EP8 (the most that divide 32 and are at most 8) x TP4 (16384 / 4 columns),
  // under attention TP16 (48 / 16 = 3 heads, 16 a multiple of 8 KV heads: each KV head on two
  // chips) x 2 groups with FFN TP16, or data-parallel attention; the search ranks the
  // first best.
  ParallelLayout want;
  want.tp_attention = 16;
  want.tp_ffn = 16;
  want.ep = 8;
  want.tp_expert = 4;
  expect_default_is_the_search(load_model("mixtral-8x22b"), load_system("tpu-v5e"), 32, want);
}

// The one rule over the catalog: on each system, the default size is one the layout search
// lays out, and no smaller size the default considers (the divisors of the scale-up domain,
// then whole domains) is.
TEST(DefaultLayout, DefaultSizeIsTheFirstTheSearchLaysOut) {
  for (const std::string system : {"h100-sxm", "tpu-v5e", "mi300x", "gb200-nvl72"}) {
    const SystemSpec s = load_system(system);
    const int64_t domain = s.scale_up_domain;
    for (const std::string& name : builtin_model_names()) {
      const ModelSpec m = load_model(name);
      auto laid_out = [&](int64_t n) {
        LayoutQuery q;
        q.n_chips = n;
        q.context = 4096;
        for (const auto& c : search_layouts(m, s, engine(), q)) {
          if (c.fits && c.replica_chips == n && c.pp == 1) return true;
        }
        return false;
      };
      int64_t n = 0;
      try {
        n = smallest_replica_chips(m, s, engine(), 4096);
      } catch (const InputError& e) {
        EXPECT_EQ(e.field(), "chips");
        EXPECT_FALSE(laid_out(64 * domain)) << name << " on " << system;
        continue;
      }
      EXPECT_TRUE(laid_out(n)) << name << " on " << system << ": " << n;
      EXPECT_EQ(replica_size_problem(m, n), "") << name << " on " << system;
      // Every size tried before n is not laid out: within a domain, powers of two below n
      // (and, when n is not a power of two, every divisor below it: powers of two, the
      // domain and its other divisors were tried first); beyond it, whole domains below n.
      const bool n_power = (n & (n - 1)) == 0;
      for (int64_t k = 1; k < n; ++k) {
        const bool power = (k & (k - 1)) == 0;
        const bool considered = k <= domain ? (power || (!n_power && domain % k == 0)) : k % domain == 0;
        if (considered) {
          EXPECT_FALSE(laid_out(k)) << name << " on " << system << ": " << k << " < " << n;
        }
      }
    }
  }
}

TEST(DefaultLayout, StatedLayoutOnlyOnSizesItsDegreesDivide) {
  DeploymentOptions o = engine();
  o.mechanisms.layout.tp_attention = 8;
  // TP8 needs a multiple of 8 chips: 8 H100 hold Llama 3.1 70B though 2 would.
  EXPECT_EQ(smallest_replica_chips(load_model("llama-3.1-70b"), load_system("h100-sxm"), o, 4096), 8);
  // TP7 splits neither 64 heads nor any replica of whole domains: an error naming the chips.
  o.mechanisms.layout.tp_attention = 7;
  EXPECT_THROW(smallest_replica_chips(load_model("llama-3.1-70b"), load_system("h100-sxm"), o, 4096), InputError);
}

TEST(DefaultLayout, BestSingleReplicaLayoutSpansAllChips) {
  const auto best = best_single_replica_layout(load_model("llama-3.1-70b"), load_system("h100-sxm"), engine(), 8, 4096);
  ASSERT_TRUE(best.has_value());
  EXPECT_EQ(best->replica_chips, 8);
  EXPECT_EQ(best->replicas, 1);
  EXPECT_TRUE(best->fits);
  // One H100 cannot hold 70B: nothing fits.
  EXPECT_FALSE(best_single_replica_layout(load_model("llama-3.1-70b"), load_system("h100-sxm"), engine(), 1, 4096).has_value());
}

}  // namespace
}  // namespace chalk
