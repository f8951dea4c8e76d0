// Hosts' prices beside chalk's cost (compare.h, hosts.h): the break-even batch and
// utilization derived by hand, a speed no layout reaches, the blend, the sheets' checks.
#include <gtest/gtest.h>

#include "chalk/base/error.h"
#include "chalk/io/io.h"
#include "chalk/prices/compare.h"
#include "chalk/prices/hosts.h"

namespace chalk {
namespace {

double in_mtok(UsdPerToken p) { return to_usd_per_mtok(p); }

Deployment roofline_8b_on_h100(int64_t chips) {
  DeploymentOptions o;
  o.n_chips = chips;
  return make_deployment(load_model("llama-3.1-8b"), load_system("h100-sxm"), o);
}

TEST(HostCompare, BreakEvenBatchByHand) {
  // Groq's Llama 3.1 8B output price, $0.08/Mtok (data/prices/hosts/llama-3.1-8b.json), on
  // one H100 SXM under the roofline, bf16, context S = 1024:
  //   price p = $2.35/h = 6.5278e-4 $/s; HBM 3.35 TB/s x 0.87 = 2.9145e12 B/s
  //   weights read per step: 8.030e9 params x 2 B less the untied input embedding
  //     (128,256 x 4,096 x 2 B = 1.0508e9): 15.011e9 B -> t_w = 5.1505 ms
  //   KV per sequence: 1024 tokens x 131,072 B (2 x 32 layers x 8 heads x 128 x 2 B)
  //     = 134.2e6 B -> t_kv = 46.05 us per sequence
  //   memory-bound: cost per token = p (t_w + B t_kv) / B = p t_w / B + p t_kv
  //   p t_kv = 3.006e-8 $ (= $0.0301/Mtok, the floor), p t_w = 3.3621e-6 $
  //   B* = p t_w / (price - p t_kv) = 3.3621e-6 / (8e-8 - 3.006e-8) = 67.3 -> 68
  //   (compute at B = 68: 2 x 8e9 x 68 / (989.4e12 x 0.803) = 1.4 ms < 8.3 ms: memory-bound)
  const Deployment d = roofline_8b_on_h100(1);
  EXPECT_EQ(break_even_batch(d, 1024, usd_per_million_tokens(0.08), 1000), 68);
  // DeepInfra's $0.04/Mtok against the $0.0301 floor: B* = 3.3621e-6 / (4e-8 - 3.006e-8) = 338.2 -> 339.
  EXPECT_EQ(break_even_batch(d, 1024, usd_per_million_tokens(0.04), 1000), 339);
  // Below the floor no batch breaks even; within it, at most max_batch.
  EXPECT_FALSE(break_even_batch(d, 1024, usd_per_million_tokens(0.03), 1000).has_value());
  EXPECT_FALSE(break_even_batch(d, 1024, usd_per_million_tokens(0.04), 300).has_value());
}

TEST(HostCompare, BreakEvenUtilizationByHand) {
  // The same chip and model priced at a host's speed of 100 tok/s per user, roofline:
  // each replica size n may run the largest B with (W + B S kv) / (n BW) <= 10 ms, and
  // tokens/s per chip at that speed, B x 100 / n, grows with n: 8 chips win.
  //   B = (8 x 2.9145e12 x 0.010 - 15.011e9) / 134.2e6 = (233.16e9 - 15.011e9) / 134.22e6 = 1625.3 -> 1625
  //   t_step = (15.011e9 + 1625 x 134.22e6) / (8 x 2.9145e12) = 9.9989 ms
  //   output cost = 8 x 6.5278e-4 x 9.9989e-3 / 1625 = 3.2133e-8 $ = $0.03213/Mtok
  //   against Groq's $0.08: output break-even utilization 0.03213 / 0.08 = 0.4017
  HostOffer o;
  o.provider = "test";
  o.input = o.output = usd_per_million_tokens(0.08);
  o.tok_per_s_per_user = TokensPerSecond(100);
  HostSheet sheet;
  sheet.offers = {o};
  CompareWorkload w;
  w.input_tokens = 1000;
  w.output_tokens = 48;  // steady-state context 1000 + 48 / 2 = 1024
  const HostComparison h = compare_hosts(load_model("llama-3.1-8b"), sheet, {load_system("h100-sxm")}, DeploymentOptions{}, w);
  ASSERT_EQ(h.context, 1024);
  const SystemCost& r = h.offers.at(0).systems.at(0);
  ASSERT_TRUE(r.unreachable.empty()) << r.unreachable;
  EXPECT_EQ(r.n_chips, 8);
  EXPECT_EQ(r.batch, 1625);
  EXPECT_NEAR(in_mtok(r.output_cost), 0.03213, 0.03213 * 2e-3);
  EXPECT_NEAR(r.output_break_even_utilization, 0.4017, 0.4017 * 2e-3);
  // Blended: (1000 x input cost + 48 x output cost) / 1048 against $0.08; margin its complement.
  const double blended_cost = (1000 * in_mtok(r.input_cost) + 48 * in_mtok(r.output_cost)) / 1048;
  EXPECT_NEAR(in_mtok(r.blended_cost), blended_cost, blended_cost * 1e-9);
  EXPECT_NEAR(r.break_even_utilization, blended_cost / 0.08, 1e-9);
  EXPECT_NEAR(r.margin_at_full_utilization, 1 - blended_cost / 0.08, 1e-9);
  EXPECT_GE(r.tok_per_s_per_user.value(), 100.0);
}

TEST(HostCompare, WaferScaleSpeedIsNoLayoutsNumber) {
  // Cerebras serves gpt-oss-120b at 1,844 tok/s per user (Artificial Analysis); no GPU
  // layout of the catalog streams that fast: a reason, not a figure.
  const auto sheet = builtin_host_sheet("gpt-oss-120b");
  ASSERT_TRUE(sheet.has_value());
  HostSheet cerebras;
  for (const auto& o : sheet->offers) {
    if (o.provider == "Cerebras") cerebras.offers.push_back(o);
  }
  ASSERT_EQ(cerebras.offers.size(), 1u);
  ASSERT_NEAR(cerebras.offers[0].tok_per_s_per_user->value(), 1844.1, 1e-9);
  DeploymentOptions base;
  base.mechanisms.enabled = true;
  const HostComparison h = compare_hosts(load_model("gpt-oss-120b"), cerebras,
                                         {load_system("h100-sxm"), load_system("b200"), load_system("gb200-nvl72")}, base, {});
  const OfferComparison& oc = h.offers.at(0);
  EXPECT_FALSE(oc.cheapest.has_value());
  for (const SystemCost& r : oc.systems) {
    EXPECT_TRUE(r.speed_out_of_reach) << r.system;
    EXPECT_NE(r.unreachable.find("no layout reaches 1844 tok/s per user"), std::string::npos) << r.unreachable;
    ASSERT_TRUE(r.fastest_tok_per_s_per_user.has_value());
    EXPECT_LT(*r.fastest_tok_per_s_per_user, 1844.1);
    EXPECT_EQ(r.batch, 0);
  }
}

TEST(HostCompare, ModelBeyondOneScaleUpDomainIsPricedOnTheSmallestReplicaThatHoldsIt) {
  // DeepSeek-V3's weights on H100 SXM (673 GB with its bf16 parts) exceed one 8-chip
  // domain's 8 x 80 GB x 0.9 = 576 GB usable; 16 chips (1,152 GB usable) hold them, the
  // replica `chalk layouts` and every other command's default take. So each offer is priced
  // on 16 chips, or is beyond the fastest speed they reach, never "not searched" (review 2
  // L7: the page's hosts view said so while its other views priced 16 chips).
  const auto sheet = builtin_host_sheet("deepseek-v3");
  ASSERT_TRUE(sheet.has_value());
  DeploymentOptions base;
  base.mechanisms.enabled = true;
  const HostComparison h = compare_hosts(load_model("deepseek-v3"), *sheet, {load_system("h100-sxm")}, base, {});
  int priced = 0;
  for (const OfferComparison& oc : h.offers) {
    const SystemCost& r = oc.systems.at(0);
    EXPECT_EQ(r.unreachable.find("do not fit"), std::string::npos) << r.unreachable;
    if (r.speed_out_of_reach) continue;
    EXPECT_EQ(r.n_chips, 16) << oc.offer.provider;
    ++priced;
  }
  EXPECT_GT(priced, 0);
}

TEST(HostCompare, UnstatedSpeedIsAssumedNotTheCostFloor) {
  // An offer whose sheet states no speed is compared at the workload's assumed speed, and
  // says so; never at the batch that fills HBM (a few tok/s per user), which made every
  // such host look hugely profitable. Same chip, model and roofline as above.
  HostOffer o;
  o.provider = "test";
  o.input = o.output = usd_per_million_tokens(0.08);
  HostSheet sheet;
  sheet.offers = {o};
  CompareWorkload w;
  w.input_tokens = 1000;
  w.output_tokens = 48;  // context 1024
  w.assumed_speed = TokensPerSecond(100);
  const ModelSpec m = load_model("llama-3.1-8b");
  const std::vector<SystemSpec> h100 = {load_system("h100-sxm")};
  HostComparison h = compare_hosts(m, sheet, h100, DeploymentOptions{}, w);
  // Assumed 100 tok/s: exactly the stated-100 case above (8 chips, batch 1625).
  EXPECT_TRUE(h.offers.at(0).speed_assumed);
  EXPECT_EQ(h.offers.at(0).speed.value(), 100.0);
  EXPECT_EQ(h.offers.at(0).systems.at(0).n_chips, 8);
  EXPECT_EQ(h.offers.at(0).systems.at(0).batch, 1625);
  // The default, 50 tok/s: T_step <= 20 ms on 8 chips,
  //   B = (8 x 2.9145e12 x 0.020 - 15.011e9) / 134.22e6 = (466.32e9 - 15.011e9) / 134.22e6 = 3362.5 -> 3362,
  // below the memory-full batch (576 GB usable - 15 GB weights) / 134.2 MB = 4180.
  w.assumed_speed = TokensPerSecond(kAssumedTokPerSPerUser);
  h = compare_hosts(m, sheet, h100, DeploymentOptions{}, w);
  const SystemCost& r = h.offers.at(0).systems.at(0);
  ASSERT_TRUE(r.unreachable.empty()) << r.unreachable;
  EXPECT_EQ(r.n_chips, 8);
  EXPECT_NEAR(static_cast<double>(r.batch), 3362, 1);
  EXPECT_LT(r.batch, r.max_batch);
  EXPECT_GE(r.tok_per_s_per_user.value(), 50.0);
  // A stated speed is never replaced by the assumption.
  sheet.offers[0].tok_per_s_per_user = TokensPerSecond(100);
  h = compare_hosts(m, sheet, h100, DeploymentOptions{}, w);
  EXPECT_FALSE(h.offers.at(0).speed_assumed);
  EXPECT_EQ(h.offers.at(0).systems.at(0).batch, 1625);
}

TEST(HostCompare, BlendedPrice) {
  // DeepSeek's V3 sheet, 3:1 with half the input cached: (3 (0.5 x 0.27 + 0.5 x 0.07) + 1.10) / 4 = 0.4025.
  CompareWorkload w;
  w.prefix_hit_rate = 0.5;
  EXPECT_NEAR(in_mtok(blended_price(usd_per_million_tokens(0.27), usd_per_million_tokens(0.07), usd_per_million_tokens(1.1), w)),
              0.4025, 1e-12);
  // No cache price: a hit is billed as input.
  EXPECT_NEAR(in_mtok(blended_price(usd_per_million_tokens(0.27), std::nullopt, usd_per_million_tokens(1.1), w)),
              (3 * 0.27 + 1.1) / 4, 1e-12);
}

TEST(HostCompare, BadWorkloadsAreErrors) {
  const UsdPerToken p = usd_per_million_tokens(1);
  CompareWorkload w;
  w.input_tokens = 0;
  EXPECT_THROW(blended_price(p, std::nullopt, p, w), InputError);
  w = {};
  w.output_tokens = 0;
  EXPECT_THROW(blended_price(p, std::nullopt, p, w), InputError);
  w = {};
  w.prefix_hit_rate = 1.5;
  EXPECT_THROW(blended_price(p, std::nullopt, p, w), InputError);
  w = {};
  w.assumed_speed = TokensPerSecond(0);
  EXPECT_THROW(validate(w), InputError);
  const Deployment d = roofline_8b_on_h100(1);
  EXPECT_THROW(break_even_batch(d, 1024, usd_per_million_tokens(0), 10), InputError);
  EXPECT_THROW(break_even_batch(d, 1024, p, 0), InputError);
}

TEST(HostSheets, EveryBuiltInSheetReadsAndNamesACatalogModel) {
  const auto models = builtin_host_sheet_models();
  // 31 sheets: the 12 of the first session; Qwen3-32B, Qwen3-30B-A3B, Llama 4 Scout and
  // Maverick, GLM-4.5, Mixtral 8x7B and 8x22B; Qwen3-Next, DeepSeek-V3.2, MiniMax-M2.5,
  // Gemma 3 27B and 12B, Qwen2.5-72B, Mistral Small 24B, Phi-4, Llama 3 70B and 8B, the R1
  // distill of Qwen 32B, Mistral 7B; Qwen3-4B, Qwen2.5-7B and 32B, Gemma 3 4B, Phi-3 mini and
  // medium, Phi-3.5-MoE, MiniMax-M1, DeepSeek-V3.2-Exp, Llama 2 7B.
  EXPECT_GE(models.size(), 41u);
  for (const auto& m : models) {
    const auto s = builtin_host_sheet(m);
    ASSERT_TRUE(s.has_value()) << m;
    EXPECT_EQ(s->model, m);
    EXPECT_EQ(load_model(m).name, m);
    for (const auto& o : s->offers) {
      EXPECT_FALSE(o.price_source.empty()) << m << " " << o.provider;
      EXPECT_FALSE(o.price_date.empty()) << m << " " << o.provider;
      EXPECT_GT(o.output.value(), 0) << m << " " << o.provider;
      if (o.tok_per_s_per_user) {
        EXPECT_FALSE(o.speed_source.empty()) << m << " " << o.provider;
      }
      // Cerebras serves on its wafer-scale engine: each of its offers says so, with a source.
      if (o.provider == "Cerebras") {
        EXPECT_FALSE(o.hardware_source.empty()) << m;
      }
    }
  }
  for (const char* m : {"qwen3-32b", "qwen3-30b-a3b", "llama-4-scout-17b-16e", "llama-4-maverick-17b-128e", "glm-4.5",
                        "mixtral-8x7b", "mixtral-8x22b"}) {
    EXPECT_TRUE(builtin_host_sheet(m).has_value()) << m;
  }
  EXPECT_FALSE(builtin_host_sheet("llama-2-70b").has_value());
}

TEST(HostSheets, ChecksNameTheField) {
  const std::string ok = R"({"provider": "X", "served_model": "x", "price_date": "2026-01-01", "price_source": "u",
                             "input_usd_per_mtok": 1, "output_usd_per_mtok": 2)";
  auto sheet = [](const std::string& offer) { return R"({"format": "chalk-hosts/1", "model": "m", "offers": [)" + offer + "]}"; };
  EXPECT_EQ(host_sheet_from_json(sheet(ok + "}"), "t").offers.size(), 1u);
  auto field_of = [&](const std::string& text) {
    try {
      host_sheet_from_json(text, "t");
    } catch (const InputError& e) {
      return e.field();
    }
    return std::string("no error");
  };
  EXPECT_EQ(field_of(sheet(ok + R"(, "output_tok_per_s_per_user": 100})")), "t: offers[0].speed_date");
  EXPECT_EQ(field_of(sheet(ok + R"(, "quantization": "fp8"})")), "t: offers[0].quantization_source");
  EXPECT_EQ(field_of(sheet(ok + R"(, "quantization": "fp7", "quantization_source": "u"})")), "t: offers[0].quantization");
  EXPECT_EQ(field_of(sheet(ok + R"(, "colour": "red"})")), "t: offers[0].colour");
  EXPECT_EQ(field_of(sheet(R"({"provider": "X", "served_model": "x", "price_date": "d", "price_source": "u",
                              "input_usd_per_mtok": 1, "output_usd_per_mtok": 0})")),
            "t: offers[0].output_usd_per_mtok");
  EXPECT_EQ(field_of(R"({"format": "chalk-hosts/1", "model": "m", "offers": []})"), "t: offers");
}

}  // namespace
}  // namespace chalk
