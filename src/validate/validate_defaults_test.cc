// Rows that leave a column empty (issue 32): each default predicts the row as the same row
// with the default's value written in, and names itself among the row's assumptions.
#include <gtest/gtest.h>

#include <algorithm>

#include "chalk/base/error.h"
#include "chalk/validate/validate.h"
#include "measurement_row.h"
#include "validate_test_util.h"

namespace chalk {
namespace {

using testing_util::assumption;
using testing_util::error_of;
using testing_util::find_row;
using testing_util::validate_csv;

// --- serving: replica chips, a max-throughput batch, a dataset's lengths --------------

constexpr const char* kServeHeader = "id,kind,model,hardware,chips,weights,kv,batch,batch_per,input_tokens,output_tokens,dataset,engine,metric,value\n";

TEST(ValidateDefaults, ServingChipsAreTheSmallestReplica) {
  // Llama 3.1 70B in bf16 (141 GB) on H100 SXM (80 GB each): one chip cannot hold it, two
  // can (smallest_replica_chips: 2), so the row is predicted as row B on 2 chips.
  const auto r = validate_csv(std::string(kServeHeader) +
                              "A,serving,llama-3.1-70b,h100-sxm,,bf16,bf16,max,,1024,256,,vllm,output_tok_per_s_per_chip,1\n"
                              "B,serving,llama-3.1-70b,h100-sxm,2,bf16,bf16,max,,1024,256,,vllm,output_tok_per_s_per_chip,1\n");
  const auto &a = find_row(r, "A"), &b = find_row(r, "B");
  ASSERT_EQ(a.status, RowStatus::predicted) << a.reason;
  EXPECT_DOUBLE_EQ(a.predicted, b.predicted);
  EXPECT_EQ(a.layout, b.layout);
  EXPECT_NE(assumption(a, "chips: ").find("chips: empty, 2: the smallest replica that holds the weights and one sequence of 1280 tokens"),
            std::string::npos)
      << assumption(a, "chips: ");
  // A throughput of the whole system with no system size is read as one replica's, and the
  // row says so: 1 output tok/s on one 2-chip replica is 0.5 per chip, row A's figure x 2.
  const auto s = validate_csv(std::string(kServeHeader) + "S,serving,llama-3.1-70b,h100-sxm,,bf16,bf16,max,,1024,256,,vllm,output_tok_per_s,1\n");
  const auto& sr = find_row(s, "S");
  ASSERT_EQ(sr.status, RowStatus::predicted) << sr.reason;
  EXPECT_NEAR(sr.predicted, 2 * a.predicted, 1e-9 * a.predicted);
  EXPECT_NE(assumption(sr, "chips: ").find("; the row's output_tok_per_s is read as one replica's (a system of more replicas states chips or dp)"),
            std::string::npos)
      << assumption(sr, "chips: ");
}

TEST(ValidateDefaults, ServingThroughputWithoutBatchIsWhatTheEngineAdmits) {
  // An empty batch on a throughput row is `max` (row B): the batch the KV cache holds.
  const auto r = validate_csv(std::string(kServeHeader) +
                              "A,serving,llama-3.1-8b,h100-sxm,1,bf16,bf16,,,1024,256,,vllm,output_tok_per_s,1\n"
                              "B,serving,llama-3.1-8b,h100-sxm,1,bf16,bf16,max,,1024,256,,vllm,output_tok_per_s,1\n");
  const auto &a = find_row(r, "A"), &b = find_row(r, "B");
  ASSERT_EQ(a.status, RowStatus::predicted) << a.reason;
  EXPECT_DOUBLE_EQ(a.predicted, b.predicted);
  // The value it came to: 80 - 8 (reserve) - 16.06 GB of weights = 55.94 GB of KV, at the
  // mean context 1024 + 256 / 2 = 1152 tokens x 131,072 bytes: 55.94e9 / 150,994,944 = 370.
  EXPECT_NE(assumption(a, "batch: ").find("batch: empty, max (370 sequences per replica here): a throughput run's batch is what the engine admits "
                                          "under its KV budget"),
            std::string::npos)
      << assumption(a, "batch: ");
  // A latency at no stated load is a single request's: the same as batch 1 stated (row M).
  const auto l = validate_csv(std::string(kServeHeader) + "L,serving,llama-3.1-8b,h100-sxm,1,bf16,bf16,,,1024,256,,vllm,e2e_s,1\n" +
                              "M,serving,llama-3.1-8b,h100-sxm,1,bf16,bf16,1,replica,1024,256,,vllm,e2e_s,1\n");
  ASSERT_EQ(find_row(l, "L").status, RowStatus::predicted) << find_row(l, "L").reason;
  EXPECT_DOUBLE_EQ(find_row(l, "L").predicted, find_row(l, "M").predicted);
  EXPECT_EQ(assumption(find_row(l, "L"), "batch: "),
            "batch: empty, 1 sequence per replica: a e2e_s quoted without a batch or a request rate is read as a single request's");
  // max is what an engine admits: a throughput's reading, never a latency's.
  const std::string e = error_of(std::string(kServeHeader) + "X,serving,llama-3.1-8b,h100-sxm,1,bf16,bf16,max,,1024,256,,vllm,e2e_s,1\n");
  EXPECT_NE(e.find("X: batch: max (what the engine admits) is for a throughput; e2e_s is predicted at a stated batch, one when empty"), std::string::npos) << e;
}

TEST(ValidateDefaults, ServingRunningContextIsLengthBiased) {
  // OpenOrca's per-sample lengths (data/datasets/datasets.csv): output cv 0.7873, prompts
  // weighted by output E[PL] / (E[P] E[L]) = 0.8973. A batch slot holds a request of L tokens
  // for L steps, so at 222 in and 294 out the running sequences hold
  // 0.8973 x 222 + 294 x (1 + 0.7873^2) / 2 = 199.2006 + 147 x 1.61984 = 199.2006 + 238.1167
  // = 437.317 tokens, where requests of the mean lengths hold 222 + 294 / 2 = 369.
  const detail::DatasetLengths* orca = detail::find_dataset("mlperf-llama2-70b");
  ASSERT_NE(orca, nullptr);
  EXPECT_NEAR(detail::running_context_mean(222, 294, orca), 437.317, 1e-3);
  EXPECT_DOUBLE_EQ(detail::running_context_mean(222, 294, nullptr), 369.0);
  // A set with no per-sample file read (Azure's conversation trace) keeps the mean lengths.
  EXPECT_DOUBLE_EQ(detail::running_context_mean(222, 294, detail::find_dataset("azure-llm-2023-conv")), 369.0);
  // The offline row reads 437 tokens of context a sequence and says so; the same row without
  // the set runs at 369, so with the longer context (more KV read a step, fewer sequences in
  // the cache) it is predicted slower.
  const auto r = validate_csv(std::string(kServeHeader) +
                              "D,serving,llama-2-70b,h100-sxm,8,fp8,fp8,max,,222,294,mlperf-llama2-70b,trtllm,output_tok_per_s,1\n"
                              "M,serving,llama-2-70b,h100-sxm,8,fp8,fp8,max,,222,294,,trtllm,output_tok_per_s,1\n");
  const auto &d = find_row(r, "D"), &m = find_row(r, "M");
  ASSERT_EQ(d.status, RowStatus::predicted) << d.reason;
  EXPECT_LT(d.predicted, 0.99 * m.predicted);
  const auto note = std::find_if(d.notes.begin(), d.notes.end(), [](const std::string& n) { return n.rfind("running context", 0) == 0; });
  ASSERT_NE(note, d.notes.end());
  EXPECT_EQ(note->rfind("running context 437 tokens, not 222 + 294 / 2: the batch holds long requests longer", 0), 0u) << *note;
  EXPECT_TRUE(std::none_of(m.notes.begin(), m.notes.end(), [](const std::string& n) { return n.rfind("running context", 0) == 0; }));
  // The batch the KV cache holds follows: Llama 3.1 8B on one H100 keeps 55.94 GB of KV at
  // 131,072 bytes a token (ServingThroughputWithoutBatchIsWhatTheEngineAdmits). On demand a
  // running sequence holds 437 tokens: 55.94e9 / (131,072 x 437) = 976.6 -> 976 sequences.
  // Reserved at admission it holds E[(P + L) L] / E[L] = 2 x 437.317 - 0.8973 x 222 = 675.4
  // -> 675 tokens: 55.94e9 / (131,072 x 675) = 632.3 -> 632 (not 222 + 294 = 516: 827).
  const std::string header = "id,kind,model,hardware,chips,weights,kv,batch,input_tokens,output_tokens,dataset,engine,kv_admission,metric,value\n";
  const auto k = validate_csv(header + "O,serving,llama-3.1-8b,h100-sxm,1,bf16,bf16,,222,294,mlperf-llama2-70b,vllm,on_demand,output_tok_per_s,1\n" +
                              "R,serving,llama-3.1-8b,h100-sxm,1,bf16,bf16,,222,294,mlperf-llama2-70b,vllm,to_completion,output_tok_per_s,1\n" +
                              "S,serving,llama-3.1-8b,h100-sxm,1,bf16,bf16,,222,294,,vllm,to_completion,output_tok_per_s,1\n");
  EXPECT_EQ(assumption(find_row(k, "O"), "batch: ").rfind("batch: empty, max (976 sequences per replica here)", 0), 0u) << assumption(find_row(k, "O"), "batch: ");
  EXPECT_EQ(assumption(find_row(k, "R"), "batch: ").rfind("batch: empty, max (632 sequences per replica here)", 0), 0u) << assumption(find_row(k, "R"), "batch: ");
  EXPECT_EQ(assumption(find_row(k, "S"), "batch: ").rfind("batch: empty, max (827 sequences per replica here)", 0), 0u) << assumption(find_row(k, "S"), "batch: ");
}

TEST(ValidateDefaults, DatasetShapeOutOfRangeIsAnError) {
  // The shape columns of datasets.csv: a coefficient of variation >= 0, a weighting > 0, each
  // below 100; empty means not read. One line per error, naming line, column and value.
  auto parse = [](const std::string& cv, const std::string& w) {
    detail::EmbeddedTable t;
    t.where = "data/datasets/datasets.csv";
    t.records = {{1, {"name", "input_tokens_mean", "output_tokens_mean", "output_tokens_cv", "input_output_weight", "source"}},
                 {2, {"set", "100", "50", cv, w, "src"}}};
    try {
      const auto sets = detail::parse_datasets(t);
      return "ok " + std::to_string(sets.at(0).output_tokens_cv.value_or(-1)) + " " + std::to_string(sets.at(0).input_output_weight.value_or(-1));
    } catch (const InputError& e) {
      return std::string(e.what());
    }
  };
  EXPECT_EQ(parse("0.5", "0.9"), "ok 0.500000 0.900000");
  EXPECT_EQ(parse("0", ""), "ok 0.000000 -1.000000");
  EXPECT_EQ(parse("-0.1", "1"), "data/datasets/datasets.csv: line 2: output_tokens_cv: expected a number of at least 0 and below 100, got '-0.1'");
  EXPECT_EQ(parse("0.5", "0"), "data/datasets/datasets.csv: line 2: input_output_weight: expected a number above 0 and below 100, got '0'");
  EXPECT_EQ(parse("1e3", "1"), "data/datasets/datasets.csv: line 2: output_tokens_cv: expected a number of at least 0 and below 100, got '1e3'");
  EXPECT_EQ(parse("0.5", "x"), "data/datasets/datasets.csv: line 2: input_output_weight: expected a number above 0 and below 100, got 'x'");
}

TEST(ValidateDefaults, ServingOutputFromTheDatasetsPublishedMean) {
  // MLPerf's llama2-70b set: the reference generates 294.45 tokens per sample
  // (data/datasets/datasets.csv), so output_tokens is 294, as row B states (B names the set
  // too, for the shape of its lengths: ServingRunningContextIsLengthBiased).
  const auto r = validate_csv(std::string(kServeHeader) +
                              "A,serving,llama-2-70b,h100-sxm,8,fp8,fp8,max,,512,,mlperf-llama2-70b,trtllm,output_tok_per_s,1\n"
                              "B,serving,llama-2-70b,h100-sxm,8,fp8,fp8,max,,512,294,mlperf-llama2-70b,trtllm,output_tok_per_s,1\n");
  const auto &a = find_row(r, "A"), &b = find_row(r, "B");
  ASSERT_EQ(a.status, RowStatus::predicted) << a.reason;
  EXPECT_DOUBLE_EQ(a.predicted, b.predicted);
  EXPECT_NE(assumption(a, "output_tokens: ").find("output_tokens: empty, 294: the mean generated tokens of dataset mlperf-llama2-70b (294.45; "
                                                  "mlcommons/inference language/llama2-70b/README.md"),
            std::string::npos)
      << assumption(a, "output_tokens: ");
  // Its mean prompt, 222.33 tokens (computed from the per-sample counts of MLCommons'
  // published set), rounded to 222: row I, leaving both lengths empty, is predicted as row J
  // that states 222 and 294.
  const auto in = validate_csv(std::string(kServeHeader) +
                               "I,serving,llama-2-70b,h100-sxm,8,fp8,fp8,max,,,,mlperf-llama2-70b,trtllm,output_tok_per_s,1\n"
                               "J,serving,llama-2-70b,h100-sxm,8,fp8,fp8,max,,222,294,mlperf-llama2-70b,trtllm,output_tok_per_s,1\n");
  const auto &i = find_row(in, "I"), &j = find_row(in, "J");
  ASSERT_EQ(i.status, RowStatus::predicted) << i.reason;
  EXPECT_DOUBLE_EQ(i.predicted, j.predicted);
  EXPECT_NE(assumption(i, "input_tokens: ").find("input_tokens: empty, 222: the mean prompt of dataset mlperf-llama2-70b ("), std::string::npos)
      << assumption(i, "input_tokens: ");
  // CNN-DailyMail for llama3.1-8b publishes its mean prompt (870.73) but no mean output in
  // tokens (its gen_len counts characters): output_tokens stays needed, and says why.
  const std::string e = error_of(std::string(kServeHeader) + "O,serving,llama-3.1-8b,h100-sxm,1,bf16,bf16,max,,,,mlperf-llama3.1-8b,vllm,output_tok_per_s,1\n");
  EXPECT_NE(e.find("O: output_tokens: missing; a serving row states the mean generated tokens (dataset mlperf-llama3.1-8b publishes no mean output)"),
            std::string::npos)
      << e;
  // A dataset the table does not hold names the ones it does.
  const std::string u = error_of(std::string(kServeHeader) + "U,serving,llama-2-70b,h100-sxm,8,fp8,fp8,max,,512,,sharegpt,trtllm,output_tok_per_s,1\n");
  EXPECT_NE(u.find("U: dataset: 'sharegpt' is not one of mlperf-llama2-70b, "), std::string::npos) << u;
}

TEST(ValidateDefaults, ServingLengthsFromATracesPublishedMeans) {
  // The Azure 2023 conversation trace: mean ContextTokens 1154.70, GeneratedTokens 211.13
  // over its 19,366 requests (data/datasets/datasets.csv), so 1155 in and 211 out, as row B
  // states.
  const auto r = validate_csv(std::string(kServeHeader) +
                              "A,serving,llama-3.1-8b,h100-sxm,1,bf16,bf16,max,,,,azure-llm-2023-conv,vllm,output_tok_per_s_per_chip,1\n"
                              "B,serving,llama-3.1-8b,h100-sxm,1,bf16,bf16,max,,1155,211,,vllm,output_tok_per_s_per_chip,1\n");
  const auto &a = find_row(r, "A"), &b = find_row(r, "B");
  ASSERT_EQ(a.status, RowStatus::predicted) << a.reason;
  EXPECT_DOUBLE_EQ(a.predicted, b.predicted);
  EXPECT_NE(assumption(a, "input_tokens: ").find("input_tokens: empty, 1155: the mean prompt of dataset azure-llm-2023-conv (Azure/AzurePublicDataset"),
            std::string::npos)
      << assumption(a, "input_tokens: ");
  EXPECT_NE(assumption(a, "output_tokens: ").find("output_tokens: empty, 211: the mean generated tokens of dataset azure-llm-2023-conv (211.13; "),
            std::string::npos)
      << assumption(a, "output_tokens: ");
}

// --- decode and prefill: the batch an engine admits under its KV budget -----------------

constexpr const char* kStepHeader = "id,kind,model,hardware,chips,weights,kv,batch,batch_per,input_tokens,context,dataset,engine,metric,value\n";

TEST(ValidateDefaults, DecodeThroughputWithoutBatchIsWhatTheEngineAdmits) {
  // Llama 3.1 8B in bf16 on one H100 (80 GB): 80 - 8 (the 10% reserve) - 16.06 GB of
  // weights leave 55.94 GB, at 32 layers x 8 KV heads x 128 x 2 x 2 bytes = 131,072 bytes a
  // token 55.94e9 / (16 x 131,072) = 26,674 vLLM blocks of 16 tokens. A sequence of 2048
  // tokens holds 128 of them: 26,674 / 128 = 208 sequences (below max_num_seqs 1024), as
  // row B states.
  const auto r = validate_csv(std::string(kStepHeader) +
                              "A,decode,llama-3.1-8b,h100-sxm,1,bf16,bf16,,,,2048,,vllm,output_tok_per_s_per_chip,1\n"
                              "B,decode,llama-3.1-8b,h100-sxm,1,bf16,bf16,208,replica,,2048,,vllm,output_tok_per_s_per_chip,1\n");
  const auto &a = find_row(r, "A"), &b = find_row(r, "B");
  ASSERT_EQ(a.status, RowStatus::predicted) << a.reason;
  EXPECT_DOUBLE_EQ(a.predicted, b.predicted);
  EXPECT_EQ(assumption(a, "batch: ").rfind("batch: empty, 208 sequences: what the engine admits under its KV budget: 26674 KV blocks of 16 tokens / "
                                           "128 per sequence of 2048 tokens = 208, max_sequences 1024",
                                           0),
            0u)
      << assumption(a, "batch: ");
  EXPECT_EQ(assumption(b, "batch: "), "");
  // Llama 3.1 70B in bf16 on 2 H100: 144 GB less 141.1 GB of weights leave 551 blocks of
  // 16 tokens at 327,680 bytes a token, short of the 6250 one 100,000-token sequence needs:
  // no batch fits, a value (rejected), not an error.
  const auto f = validate_csv(std::string("id,kind,model,hardware,chips,tp,weights,kv,batch,batch_per,context,engine,metric,value\n") +
                              "R,decode,llama-3.1-70b,h100-sxm,2,2,bf16,bf16,,,100000,vllm,output_tok_per_s_per_chip,1\n");
  EXPECT_EQ(find_row(f, "R").status, RowStatus::rejected);
  EXPECT_NE(find_row(f, "R").reason.find("memory: no sequence of 100000 tokens fits: 551 KV blocks of 16 tokens beside the weights"), std::string::npos)
      << find_row(f, "R").reason;
  // A step time quoted with no batch is one sequence's (row S), the same as batch 1 stated (T).
  const auto st = validate_csv(std::string(kStepHeader) + "S,decode,llama-3.1-8b,h100-sxm,1,bf16,bf16,,,,2048,,vllm,step_ms,10\n" +
                               "T,decode,llama-3.1-8b,h100-sxm,1,bf16,bf16,1,replica,,2048,,vllm,step_ms,10\n");
  ASSERT_EQ(find_row(st, "S").status, RowStatus::predicted) << find_row(st, "S").reason;
  EXPECT_DOUBLE_EQ(find_row(st, "S").predicted, find_row(st, "T").predicted);
  EXPECT_EQ(assumption(find_row(st, "S"), "batch: "),
            "batch: empty, 1 sequence per replica: a step_ms quoted without a batch or a request rate is read as a single request's");
}

TEST(ValidateDefaults, PrefillThroughputWithoutBatchIsWhatTheEngineAdmits) {
  // The same replica (26,674 blocks) holds 26,674 / 64 = 416 prompts of 1024 tokens, but
  // vLLM's step takes max_num_batched_tokens 8192 / 1024 = 8 of them: 8, as row B states.
  const auto r = validate_csv(std::string(kStepHeader) +
                              "A,prefill,llama-3.1-8b,h100-sxm,1,bf16,bf16,,,1024,,,vllm,prefill_tok_per_s_per_chip,1\n"
                              "B,prefill,llama-3.1-8b,h100-sxm,1,bf16,bf16,8,replica,1024,,,vllm,prefill_tok_per_s_per_chip,1\n"
                              "L,prefill,llama-3.1-8b,h100-sxm,1,bf16,bf16,,,,,mooncake-conversation,vllm,prefill_tok_per_s_per_chip,1\n"
                              "M,prefill,llama-3.1-8b,h100-sxm,1,bf16,bf16,1,replica,12035,,,vllm,prefill_tok_per_s_per_chip,1\n");
  const auto &a = find_row(r, "A"), &b = find_row(r, "B");
  ASSERT_EQ(a.status, RowStatus::predicted) << a.reason;
  EXPECT_DOUBLE_EQ(a.predicted, b.predicted);
  EXPECT_NE(assumption(a, "batch: ").find("batch: empty, 8 prompts: what the engine admits under its KV budget: 26674 KV blocks of 16 tokens / 64 "
                                          "per sequence of 1024 tokens = 416, max_sequences 1024, token budget max_batched_tokens 8192 / prompt 1024 = 8"),
            std::string::npos)
      << assumption(a, "batch: ");
  // Mooncake's conversation trace: a mean prompt of 12,035 tokens (its README's table),
  // longer than one step's budget: one prompt at a time, as row M states.
  const auto &l = find_row(r, "L"), &m = find_row(r, "M");
  ASSERT_EQ(l.status, RowStatus::predicted) << l.reason;
  EXPECT_DOUBLE_EQ(l.predicted, m.predicted);
  EXPECT_NE(assumption(l, "input_tokens: ").find("input_tokens: empty, 12035: the mean prompt of dataset mooncake-conversation"), std::string::npos);
  EXPECT_NE(assumption(l, "batch: ").find("batch: empty, 1 prompt: "), std::string::npos) << assumption(l, "batch: ");
  EXPECT_EQ(assumption(l, "output_tokens: "), "");  // a prefill row reads no output length
  // A prompt latency quoted with no batch is one prompt's (row T), as batch 1 stated (U).
  const auto t = validate_csv(std::string(kStepHeader) + "T,prefill,llama-3.1-8b,h100-sxm,1,bf16,bf16,,,1024,,,vllm,prefill_ms,10\n" +
                              "U,prefill,llama-3.1-8b,h100-sxm,1,bf16,bf16,1,replica,1024,,,vllm,prefill_ms,10\n");
  ASSERT_EQ(find_row(t, "T").status, RowStatus::predicted) << find_row(t, "T").reason;
  EXPECT_DOUBLE_EQ(find_row(t, "T").predicted, find_row(t, "U").predicted);
  EXPECT_EQ(assumption(find_row(t, "T"), "batch: "),
            "batch: empty, 1 prompt per replica: a prefill_ms quoted without a batch or a request rate is read as a single request's");
  const std::string e = error_of(std::string(kStepHeader) + "X,prefill,llama-3.1-8b,h100-sxm,1,bf16,bf16,max,,1024,,,vllm,prefill_ms,10\n");
  EXPECT_NE(e.find("X: batch: max (what the engine admits) is for a throughput; a prefill latency"), std::string::npos) << e;
}

TEST(ValidateDefaults, MtpAcceptanceFromTheDeepSeekV3Report) {
  // DeepSeek-V3 decode with one MTP draft and no measured acceptance: 85-90% (report
  // 5.4.3), midpoint 0.875, so 1 + 0.875 = 1.875 tokens kept per step, as row B states.
  const std::string head = "id,kind,model,hardware,chips,ep,attention,weights,kv,batch,batch_per,context,draft_tokens,accepted_tokens,metric,value\n";
  const auto r = validate_csv(head +
                              "A,decode,deepseek-v3,h200,8,8,dp,fp8,bf16,64,replica,2048,1,,output_tok_per_s_per_chip,1\n"
                              "B,decode,deepseek-v3,h200,8,8,dp,fp8,bf16,64,replica,2048,1,1.875,output_tok_per_s_per_chip,1\n"
                              "C,decode,deepseek-v3,h200,8,8,dp,fp8,bf16,64,replica,2048,2,,output_tok_per_s_per_chip,1\n");
  const auto &a = find_row(r, "A"), &b = find_row(r, "B"), &c = find_row(r, "C");
  ASSERT_EQ(a.status, RowStatus::predicted) << a.reason;
  EXPECT_DOUBLE_EQ(a.predicted, b.predicted);
  EXPECT_NE(assumption(a, "accepted_tokens: ").find("accepted_tokens: empty, 1.875 tokens kept per step"), std::string::npos);
  // Two drafts: (1 - 0.875^3) / (1 - 0.875) = 2.6406.
  EXPECT_NE(assumption(c, "accepted_tokens: ").find("accepted_tokens: empty, 2.641 tokens kept per step"), std::string::npos)
      << assumption(c, "accepted_tokens: ");
  // GLM-4.5 ships an MTP module too, but no published acceptance: still an error.
  const std::string g = error_of(head + "G,decode,glm-4.5,h200,8,8,,fp8,bf16,64,replica,2048,1,,output_tok_per_s_per_chip,1\n");
  EXPECT_NE(g.find("G: accepted_tokens: missing; draft_tokens 1 needs the measured tokens kept per step"), std::string::npos) << g;
  // A model without MTP modules has no published acceptance: still an error, saying why.
  const std::string e = error_of(head + "L,decode,llama-3.1-8b,h100-sxm,1,,,bf16,bf16,64,replica,2048,3,,output_tok_per_s_per_chip,1\n");
  EXPECT_NE(e.find("L: accepted_tokens: missing; draft_tokens 3 needs the measured tokens kept per step"), std::string::npos) << e;
}

TEST(ValidateDefaults, DrafterAcceptanceFromThePublishedTable) {
  // EAGLE-3 chain drafting on Llama 3.1 8B: vLLM's regression baseline keeps 2.60 tokens per
  // step at 3 drafts on MT-Bench (data/drafters/acceptance.csv), so row A is row B.
  const std::string head = "id,kind,model,hardware,chips,weights,kv,batch,batch_per,context,draft_tokens,accepted_tokens,drafter,metric,value\n";
  const auto r = validate_csv(head +
                              "A,decode,llama-3.1-8b,h100-sxm,1,bf16,bf16,16,replica,2048,3,,eagle3,output_tok_per_s_per_chip,1\n"
                              "B,decode,llama-3.1-8b,h100-sxm,1,bf16,bf16,16,replica,2048,3,2.6,eagle3,output_tok_per_s_per_chip,1\n"
                              "C,decode,llama-3.1-8b,h100-sxm,1,bf16,bf16,16,replica,2048,4,,eagle3,output_tok_per_s_per_chip,1\n"
                              "D,decode,llama-3.1-70b,h100-sxm,4,bf16,bf16,8,replica,2048,3,,eagle3,output_tok_per_s_per_chip,1\n");
  const auto &a = find_row(r, "A"), &b = find_row(r, "B"), &c = find_row(r, "C"), &d = find_row(r, "D");
  ASSERT_EQ(a.status, RowStatus::predicted) << a.reason;
  EXPECT_DOUBLE_EQ(a.predicted, b.predicted);
  EXPECT_NE(assumption(a, "accepted_tokens: ").find("accepted_tokens: empty, 2.6 tokens kept per step: eagle3 drafting 3 for a llama target, as published "
                                                    "(data/drafters/acceptance.csv; vllm-project/vllm tests/v1/spec_decode/test_acceptance_length.py"),
            std::string::npos)
      << assumption(a, "accepted_tokens: ");
  // Four drafts, nearest row 3: a + a^2 + a^3 = 1.6 gives a = 0.7171, and 2.6 + a^4 = 2.864.
  ASSERT_EQ(c.status, RowStatus::predicted) << c.reason;
  EXPECT_NE(assumption(c, "accepted_tokens: ").find("accepted_tokens: empty, 2.864 tokens kept per step: eagle3 for a llama target keeps 2.6 at 3 drafts"),
            std::string::npos)
      << assumption(c, "accepted_tokens: ");
  EXPECT_NE(assumption(c, "accepted_tokens: ").find("71.71% per draft"), std::string::npos) << assumption(c, "accepted_tokens: ");
  // Llama 3.1 70B is the same family: the 8B's figure, said to be the 8B's.
  ASSERT_EQ(d.status, RowStatus::predicted) << d.reason;
  EXPECT_NE(assumption(d, "accepted_tokens: ").find("empty, 2.6 tokens kept per step: eagle3 drafting 3 for a llama target (measured on llama-3.1-8b)"),
            std::string::npos)
      << assumption(d, "accepted_tokens: ");
  // A family the table lacks: an error naming what it has.
  const std::string m = error_of(head + "M,decode,mixtral-8x7b,h100-sxm,2,bf16,bf16,8,replica,2048,3,,eagle3,output_tok_per_s_per_chip,1\n");
  EXPECT_NE(m.find("M: accepted_tokens: missing; draft_tokens 3 needs the measured tokens kept per step: chalk has no published acceptance for drafter "
                   "eagle3 on a mixtral target (it has DeepSeek-V3's and R1's MTP module, and eagle3 on llama, eagle3 on qwen3, eagle3 on gpt_oss"),
            std::string::npos)
      << m;
  // A drafter the table does not hold, and a drafter with no draft length.
  const std::string u = error_of(head + "U,decode,llama-3.1-8b,h100-sxm,1,bf16,bf16,16,replica,2048,3,,medusa,output_tok_per_s_per_chip,1\n");
  EXPECT_NE(u.find("U: drafter: 'medusa' is not one of mtp, eagle3 ("), std::string::npos) << u;
  const std::string k = error_of(head + "K,decode,llama-3.1-8b,h100-sxm,1,bf16,bf16,16,replica,2048,,,eagle3,output_tok_per_s_per_chip,1\n");
  EXPECT_NE(k.find("K: drafter: drafter eagle3 needs draft_tokens, the tokens it drafts per step (at least 1)"), std::string::npos) << k;
}

TEST(ValidateDefaults, PerDraftAcceptanceInvertsLeviathanEq1) {
  // 1 + a + a^2 = 1 + 0.5 + 0.25 = 1.75 at a = 0.5, two drafts; 1 + 0.875 = 1.875 at one.
  EXPECT_NEAR(detail::per_draft_acceptance(2, 1.75), 0.5, 1e-9);
  EXPECT_NEAR(detail::per_draft_acceptance(1, 1.875), 0.875, 1e-9);
}

}  // namespace
}  // namespace chalk
