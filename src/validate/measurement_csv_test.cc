// The measurement format's parser (docs/file-formats.md, "Measurements"): the built-in
// rows, quoting, and every error naming the row id and the column.
#include <gtest/gtest.h>

#include "chalk/base/error.h"
#include "chalk/validate/measurement.h"

namespace chalk {
namespace {

const char* kHeader = "id,kind,model,hardware,chips,tp,batch,batch_per,context,metric,value,notes\n";

std::string decode_row(const std::string& id, const std::string& tail = "tpot_ms,20,\"say \"\"hi\"\", twice\"") {
  return id + ",decode,llama-3.1-70b,h100-sxm,8,8,64,run,2048," + tail + "\n";
}

TEST(MeasurementCsv, BuiltinRows) {
  const auto rows = builtin_measurements();
  // the 53 rows first collected (data/measurements/README.md); the 6 microbenchmark rows holding several
  // values are one row per value (FLASHMLA-1, AZURE-GB200-MICRO: 2; DEEPEP-LL-EP8,
  // DEEPEP-LL-EP128: 2; DEEPEP-NORMAL: 8), so 53 + 1 + 1 + 1 + 1 + 7 = 64; then 19 rows
  // from sources outside the reference (TensorRT-LLM's DeepSeek-R1 guide, blog and
  // perf-overview, AMD's vLLM docker, MLPerf v4.1 and v5.0): 83; then Korthikanti et al.
  // 2022's four step times with sequence parallelism and selective recomputation: 87; then
  // Megatron-Bridge's ten throughputs on H100, B200 and GB200 (issue 33): 97; then its
  // Qwen3-30B-A3B steps over NCCL's all-to-all on 16 H100, without and with EP overlap: 99;
  // then Korthikanti et al.'s four full-recomputation step times without sequence
  // parallelism (column sequence_parallel): 103; then 18 rows from sources no row had used:
  // torchtitan's performance table (9), MLPerf v5.0 Server and Offline on H100 and B200 (5),
  // v5.1 Offline on MI325X (2) and MaxText's TPU v5p table (2): 121; then the 19 MoE rows of
  // Megatron-Bridge's 25.09 and 25.11 tables that were not rows (issue 33; the GB300
  // DeepSeek-V3 row left out: its EP64 exceeds the 32 ranks of a PP8 stage): 140.
  ASSERT_EQ(rows.size(), 140u);
  EXPECT_EQ(rows.front().id, "POPE-1");
  EXPECT_EQ(rows.front().line, 2);
  EXPECT_EQ(rows.front().kind, "prefill");
  EXPECT_EQ(rows.front().metric, "prefill_ms");
  EXPECT_DOUBLE_EQ(rows.front().value, 290);  // Pope Table 2: 0.29 s
  EXPECT_EQ(*rows.front().padded_heads, 64);
  EXPECT_EQ(rows[63].id, "FT-GPT175B-B16");
  EXPECT_DOUBLE_EQ(rows[63].value, 3.70623);  // 3706.23 ms
  EXPECT_EQ(*rows[63].input_tokens, 512);
  EXPECT_EQ(rows[82].id, "MLPERF50-L70B-B200x8-OFFLINE");
  EXPECT_DOUBLE_EQ(rows[82].value, 98858);  // 'Tokens per second: 98858'
  EXPECT_EQ(rows[82].kv_admission, "on_demand");
  EXPECT_EQ(rows[86].id, "KORTH22-1T");
  EXPECT_DOUBLE_EQ(rows[86].value, 71.49);  // Table 5, 1T, present work: 71.49 s
  EXPECT_EQ(rows[86].recompute, "selective");
  EXPECT_EQ(rows[96].id, "MBR2511-GB200-L8B");
  EXPECT_DOUBLE_EQ(rows[96].value, 31508);  // 'LLAMA3_8B | 8 | FP8-CS (FP8-MX) | ... | 31508 (29789)'
  EXPECT_EQ(rows[96].compute, "fp8");
  EXPECT_EQ(rows[99].id, "KORTH22-22B-FULL");
  EXPECT_DOUBLE_EQ(rows[99].value, 1.42);  // Table 5, 22B, full recompute: 1.42 s
  EXPECT_EQ(rows[99].recompute, "full");
  EXPECT_EQ(rows[99].sequence_parallel, "no");
  EXPECT_EQ(rows[86].sequence_parallel, "");  // the selective rows ran with it: the default
  EXPECT_EQ(rows[103].id, "TT-L8B-H100x8-FSDP");
  EXPECT_DOUBLE_EQ(rows[103].value, 5762);  // torchtitan Table 1, 'FSDP | 5,762 | 82.4'
  EXPECT_EQ(rows[103].engine, "torchtitan");
  EXPECT_EQ(rows[103].hardware, "hardware/h100-sxm-96gb-hbm2e-500w.json");
  EXPECT_EQ(*rows[103].dp, 8);
  EXPECT_EQ(rows[136].id, "MBR2509-B200-Q30B");
  EXPECT_DOUBLE_EQ(rows[136].value, 18066);  // 'Qwen3_30B_a3B (tokendrop) | 8 | 512 | 1 | ... | 18066 | 416'
  EXPECT_EQ(*rows[136].microbatch, 1);
  EXPECT_EQ(rows[136].fp8_recipe, "tensorwise");  // no precision column in 25.09: assumed
  EXPECT_EQ(rows[131].id, "MBR2511-H100-Q235B");
  EXPECT_EQ(rows[131].batch, "2048");  // the row lacks its GBS cell: 25.09's, assumed
  EXPECT_DOUBLE_EQ(rows[131].value, 1575);
  EXPECT_EQ(*rows[131].virtual_stages, 4);
  EXPECT_EQ(rows[111].id, "TT-L405B-H100x512-3D-INTERLEAVED");
  EXPECT_EQ(*rows[111].pp, 8);
  EXPECT_EQ(rows[111].schedule, "interleaved");
  // torchtitan @9dec370 (parallelisms/pipelining_utils.py, build_pipeline_schedule) defaults
  // pipeline_parallel_microbatches to pipeline_parallel_degree for every schedule, looped
  // ones included: 8 microbatches of the 32 sequences per pipeline, 4 each (not one per
  // stage, 16 of 2); as the 1F1B row.
  EXPECT_EQ(*rows[111].microbatch, 4);
  EXPECT_EQ(*rows[110].microbatch, 4);
  EXPECT_EQ(*rows[111].virtual_stages, 2);
  EXPECT_EQ(rows[113].id, "MLPERF50-L405B-B200x8-SERVER-TTFT");
  EXPECT_DOUBLE_EQ(rows[113].value, 1860.083);  // 'Mean First Token latency (ns) : 1860083007'
  EXPECT_DOUBLE_EQ(*rows[113].request_rate_per_s, 1.3);  // target_qps 1.3
  EXPECT_EQ(rows[113].arrivals, "poisson");  // LoadGen's Server scenario
  EXPECT_EQ(*rows[113].requests, 780);       // 1.3 queries/s x min_duration 600 s
  EXPECT_EQ(rows[116].id, "MLPERF50-MIX-B200x8-OFFLINE");
  EXPECT_EQ(*rows[116].max_sequences, 6144);  // gpu_batch_size 6 * 1024
  EXPECT_EQ(rows[116].chunked_prefill, "no");
  EXPECT_EQ(rows[118].id, "MLPERF51-MIX-MI325Xx8-OFFLINE");
  EXPECT_EQ(rows[118].arrivals, "");  // the column added for the Server rows is empty on the others
  EXPECT_EQ(rows[119].id, "MAXTEXT-V5P-32B-64");
  EXPECT_DOUBLE_EQ(rows[119].value, 328);  // '1x v5p-128 | 328 | 71.47%'
  EXPECT_EQ(rows[119].model, "models/maxtext-32b.json");
  EXPECT_EQ(*rows[119].chips, 64);  // v5p-128 names 128 TensorCores, two per chip
}

TEST(MeasurementCsv, ColumnsInAnyOrderOthersEmpty) {
  const auto f = parse_measurements(std::string(kHeader) + decode_row("A") + "B,decode,m,h,1,,1,chip,100,tok_per_s_per_user,3,\"two\nlines\"\n" + decode_row("C"),
                                    "t.csv");
  ASSERT_EQ(f.rows.size(), 3u);
  EXPECT_EQ(f.rows[0].notes, "say \"hi\", twice");
  EXPECT_EQ(*f.rows[0].tp, 8);
  EXPECT_FALSE(f.rows[0].ep.has_value());  // a column the file leaves out is empty
  EXPECT_TRUE(f.rows[0].kv.empty());
  EXPECT_EQ(f.rows[1].notes, "two\nlines");
  EXPECT_EQ(f.rows[2].line, 5);  // after the two-line row
}

void expect_error(const std::string& text, const std::string& what) {
  try {
    parse_measurements(text, "t.csv");
    FAIL() << "no error for " << what;
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
  }
}

TEST(MeasurementCsv, FileErrors) {
  expect_error("", "empty file");
  expect_error("id,kind,value\n", "header: missing column 'metric'");
  expect_error("id,kind,modle,metric,value\n", "header: unknown column 'modle' (column 3)");
  expect_error("id,kind,kind,metric,value\n", "header: repeated column 'kind'");
  expect_error(std::string(kHeader) + "A,decode,M\n", "line 2: expected 12 fields, got 3");
  expect_error(std::string(kHeader) + decode_row("A") + decode_row("A"), "line 3: A: id: repeated id 'A'");
  expect_error(std::string(kHeader) + decode_row(""), "line 2: id: empty id");
  // The row reader trims cells, so an id of blanks is empty and " A" repeats "A" (a fuzzer
  // found a row of blanks accepted with an empty id).
  expect_error(std::string(kHeader) + decode_row(" \t "), "line 2: id: empty id");
  expect_error(std::string(kHeader) + decode_row("A") + decode_row(" A"), "line 3: A: id: repeated id 'A'");
  expect_error(std::string(kHeader) + "A,\"open\n", "line 2: unterminated quoted field");
}

TEST(MeasurementCsv, RowErrorsNameIdAndColumn) {
  const std::string h = kHeader;
  auto bad = [&](const std::string& row, const std::string& what) { expect_error(h + row + "\n", what); };
  bad("X,Decode,m,h,8,8,64,run,2048,tpot_ms,20,", "line 2: X: kind: 'Decode' is not one of decode, prefill, serving");
  bad("X,decode,m,h,8,8,64,run,2048,mfu_pct,20,", "X: metric: 'mfu_pct' is not a metric of kind decode");
  bad("X,decode,m,h,8,8,64,run,2048,tok/s,20,", "X: metric: 'tok/s' is not one of");
  bad("X,decode,m,h,8,8,max,run,2048,tpot_ms,20,", "X: batch: max (what the engine admits) is for a throughput; a decode latency states");
  bad("X,decode,m,h,8,8,64,,2048,tpot_ms,20,", "X: batch_per: missing");
  bad("X,decode,m,h,8,8,64,node,2048,tpot_ms,20,", "X: batch_per: 'node' is not one of run, replica, chip");
  bad("X,decode,m,h,8,8,64,run,,tpot_ms,20,", "X: context: missing");
  bad("X,decode,m,h,8,8,64,run,2048,tpot_ms,,", "X: value: missing");
  bad("X,decode,m,h,8,8,64,run,2048,tpot_ms,~20,", "X: value: expected a number, got '~20'");
  bad("X,decode,m,h,8,8,64,run,2048,tpot_ms,-3,", "X: value: expected a positive number");
  // Plain decimal only (docs/file-formats.md): strtod reads 0x1e as 30 and takes inf and
  // nan; the format has none of them, and the error names the column (QA).
  bad("X,decode,m,h,8,8,64,run,2048,tpot_ms,0x1e,", "line 2: X: value: expected a number, got '0x1e' (plain decimal only");
  bad("X,decode,m,h,8,8,64,run,2048,tpot_ms,nan,", "X: value: expected a number, got 'nan' (plain decimal only");
  bad("X,decode,m,h,8,8,64,run,2048,tpot_ms,1e,", "X: value: expected a number, got '1e'");
  bad("X,decode,m,h,8,8,0x40,run,2048,tpot_ms,20,", "X: batch: expected a whole number, got '0x40'");
  bad("X,decode,m,h,8 (1 node),8,64,run,2048,tpot_ms,20,", "X: chips: expected a whole number, got '8 (1 node)'");
  bad("X,decode,m,h,0,8,64,run,2048,tpot_ms,20,", "X: chips: expected at least 1, got 0");
  bad("X,decode,m,h,8,8,64.5,run,2048,tpot_ms,20,", "X: batch: expected a whole number, got '64.5'");
  bad("X,decode,,h,8,8,64,run,2048,tpot_ms,20,", "X: model: missing");
  bad("X,decode,m,,8,8,64,run,2048,tpot_ms,20,", "X: hardware: missing");
  bad("X,microbenchmark,,h,1,,,,,tflop_per_s_per_chip,20,", "X: operation: missing");
  // Columns beyond the short header.
  auto bad_wide = [&](const std::string& cols, const std::string& cells, const std::string& what) {
    expect_error("id,kind,model,hardware,chips,batch,batch_per,context,metric,value," + cols + "\nX,decode,m,h,8,64,run,2048,tpot_ms,20," + cells + "\n", what);
  };
  bad_wide("weights", "FP4", "X: weights: 'FP4' is not one of bf16, fp16, fp8, int8, int4, nvfp4, mxfp4");
  bad_wide("weights", "attention=bf16;moe=nvfp4", "X: weights: part 'moe' is not one of attention, ffn, experts, embeddings");
  bad_wide("weights", "attention=bf16;ffn=fp4", "X: weights: format 'fp4' of ffn is not one of");
  bad_wide("weights", "attention=bf16;attention=fp8", "X: weights: part 'attention' given twice");
  bad_wide("kv", "fp8_e4m3", "X: kv: 'fp8_e4m3' is not one of");
  bad_wide("attention", "mla", "X: attention: 'mla' is not one of tp, dp");
  bad_wide("two_batch_overlap", "true", "X: two_batch_overlap: 'true' is not one of yes, no");
  bad_wide("eplb", "on", "X: eplb: 'on' is not one of yes, no");
  bad_wide("engine", "vLLM", "X: engine: 'vLLM' is not one of vllm");
  // A serving engine may name its release (engine_policy: vllm before 0.14 does not overlap
  // its host work); a release that is not digits and dots names the form.
  bad_wide("engine", "vllm-0.1o", "X: engine: 'vllm-0.1o': expected NAME or NAME-X.Y[.Z]");
  bad_wide("engine", "tgi-2.0", "X: engine: 'tgi-2.0' is not one of vllm");
  bad_wide("assumed", "batch;chip", "X: assumed: 'chip' is not a column");
  bad_wide("assumed,kv", "kv,", "X: assumed: 'kv' is listed as assumed but the row leaves it empty");
  bad_wide("draft_tokens,accepted_tokens", "1,2.5", "X: accepted_tokens: expected between 1 and draft_tokens + 1 = 2, got 2.5");
  bad_wide("accepted_tokens", "1.5", "X: draft_tokens: missing; accepted_tokens 1.5 needs the draft length");
  bad_wide("input_tokens,cached_tokens", "100,100", "X: cached_tokens: the cached prefix must be shorter than input_tokens");
  bad_wide("dp", "3", "X: dp: 3 replicas do not divide the 8 chips");
  // How a rated run's requests arrived (issue 29: inference-perf's `constant` load type).
  bad_wide("request_rate_per_s,arrivals", "5,uniform", "X: arrivals: 'uniform' is not one of poisson, constant");
  bad_wide("arrivals", "constant", "X: request_rate_per_s: missing; arrivals constant describes a run at a request rate");
  expect_error("id,kind,model,hardware,chips,batch,batch_per,metric,value\nX,decode,m,h,8,64,run,decode_s,20\n", "X: context: missing");
  expect_error("id,kind,model,hardware,chips,batch,batch_per,context,metric,value\nX,decode,m,h,8,64,run,2048,decode_s,20\n",
               "X: output_tokens: missing; decode_s is the time of output_tokens steps");
  expect_error("id,kind,model,hardware,chips,batch,batch_per,metric,value\nX,serving,m,h,8,max,,e2e_s,20\n", "X: input_tokens: missing");
  expect_error("id,kind,model,hardware,chips,batch,input_tokens,output_tokens,metric,value\nX,serving,m,h,8,max,10,10,e2e_s,20\n",
               "X: batch: max (what the engine admits) is for a throughput; e2e_s is predicted at a stated batch");
  // At a request rate e2e_s goes through the simulator: no batch needed.
  EXPECT_EQ(parse_measurements("id,kind,model,hardware,chips,request_rate_per_s,input_tokens,output_tokens,metric,value\n"
                               "X,serving,m,h,8,5,10,10,e2e_s,20\n",
                               "t.csv")
                .rows.size(),
            1u);
  expect_error("id,kind,model,hardware,chips,batch,batch_per,metric,value\nX,training,m,h,8,64,run,step_s,20\n", "X: input_tokens: missing");
  expect_error("id,kind,model,hardware,chips,metric,value\nX,run,m,h,8,gpu_hours,20\n", "X: train_tokens: missing");
}

TEST(MeasurementCsv, KeepGoingReportsBadRowsAndGoesOn) {
  const std::string text = std::string(kHeader) + decode_row("A") + "B,decode,m,h,8,8,64,run,2048,tpot_ms,fast,\n" + decode_row("C") + decode_row("A");
  EXPECT_THROW(parse_measurements(text, "t.csv"), InputError);
  const auto f = parse_measurements(text, "t.csv", true, "dir");
  ASSERT_EQ(f.rows.size(), 2u);
  EXPECT_EQ(f.rows[1].id, "C");
  EXPECT_EQ(f.rows[1].base_dir, "dir");
  ASSERT_EQ(f.unreadable.size(), 2u);
  EXPECT_EQ(f.unreadable[0].id, "B");
  EXPECT_EQ(f.unreadable[0].line, 3);
  EXPECT_EQ(f.unreadable[0].error, "t.csv: line 3: B: value: expected a number, got 'fast'");
  EXPECT_EQ(f.unreadable[1].error, "t.csv: line 5: A: id: repeated id 'A'");
}

TEST(MeasurementCsv, MutatedFilesThrowOnlyInputError) {
  // Deterministic mutations of a small valid file (byte flips, deletions,
  // inserted quotes, commas and newlines): the parser either reads a file or throws
  // InputError, never anything else (a fuzzing harness can call parse_measurements the
  // same way: it is pure).
  const std::string base =
      std::string(kHeader) + decode_row("A") + decode_row("B") + "C,decode,m,h,8,,1,chip,100,tok_per_s_per_user,3,\"x\ny\"\n";
  uint64_t state = 12345;
  auto next = [&] { return state = state * 6364136223846793005ULL + 1442695040888963407ULL, state >> 33; };
  const char inserts[] = {',', '"', '\n', '\r', '-', '0', 'e', ';', '=', ' ', '\0'};
  int read = 0, rejected = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string t = base;
    for (int k = 0, edits = 1 + static_cast<int>(next() % 4); k < edits; ++k) {
      const std::size_t at = next() % t.size();
      switch (next() % 3) {
        case 0: t[at] = inserts[next() % sizeof inserts]; break;
        case 1: t.erase(at, 1 + next() % 3); break;
        default: t = t.substr(0, at) + inserts[next() % sizeof inserts] + t.substr(at); break;
      }
      if (t.empty()) t.push_back(',');
    }
    for (const bool keep_going : {false, true}) {
      try {
        parse_measurements(t, "fuzz.csv", keep_going);
        ++read;
      } catch (const InputError&) {
        ++rejected;
      }
    }
  }
  EXPECT_GT(read, 0);
  EXPECT_GT(rejected, 0);
}

// Excel's "CSV UTF-8" starts the file with a byte-order mark: the header's first column is
// still `id` (QA: "unknown column '\ufeffid'"), and plain numbers in every form the format
// shows are read (2.664e6, 0.48886, 16384).
TEST(MeasurementCsv, ByteOrderMarkAtFileStartIsNotPartOfTheHeader) {
  const std::string csv = std::string("\xEF\xBB\xBF") + kHeader + "X,decode,m,h,8,8,64,run,2048,tpot_ms,2.664e6,\nY,decode,m,h,8,8,64,run,2048,tpot_ms,0.48886,\n";
  const auto f = parse_measurements(csv, "t.csv");
  ASSERT_EQ(f.rows.size(), 2u);
  EXPECT_EQ(f.rows[0].id, "X");
  EXPECT_DOUBLE_EQ(f.rows[0].value, 2.664e6);
  EXPECT_DOUBLE_EQ(f.rows[1].value, 0.48886);
}

}  // namespace
}  // namespace chalk
