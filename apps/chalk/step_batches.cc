#include "step_batches.h"

#include <algorithm>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

#include <fmt/format.h>

#include "arg_parse.h"
#include "chalk/base/error.h"
#include "web_json.h"

namespace chalk::cli {
namespace {

std::vector<std::string> step_split_commas(const std::string& text) {
  std::vector<std::string> out;
  if (text.empty()) return out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) out.push_back(item);
  if (text.back() == ',') out.emplace_back();
  return out;
}

/// An integer of a JSON batch, named by `field`.
int64_t step_json_count(const nlohmann::json& v, const std::string& field) {
  if (!v.is_number_integer()) throw InputError(field, "expected an integer, got " + web::json_excerpt(v, 40));
  return v.get<int64_t>();
}

const nlohmann::json& step_member(const nlohmann::json& o, const char* key, const std::string& field) {
  if (!o.is_object()) throw InputError(field, "expected an object, got " + web::json_excerpt(o, 40));
  const auto it = o.find(key);
  if (it == o.end()) throw InputError(field, std::string("missing \"") + key + "\"");
  return *it;
}

const nlohmann::json& step_list(const nlohmann::json& v, const std::string& field) {
  if (!v.is_array()) throw InputError(field, "expected a list, got " + web::json_excerpt(v, 40));
  return v;
}

StepBatch step_batch_of(const nlohmann::json& b, const std::string& at) {
  if (!b.is_object()) throw InputError(at, "expected a batch object ({\"prefill\": [...], \"decode\": [...]}, BLIS's or SGLang's), got " + web::json_excerpt(b, 40));
  const bool chalk = b.contains("prefill") || b.contains("decode");
  const bool blis = b.contains("prefill_requests") || b.contains("decode_requests");
  const bool sglang = b.contains("reqs");
  if (chalk + blis + sglang > 1) throw InputError(at, "mixes two forms of a batch (chalk's prefill/decode, BLIS's prefill_requests/decode_requests, SGLang's reqs); expected one");
  for (const auto& [key, value] : b.items()) {
    static const std::vector<std::string> known = {"prefill", "decode", "prefill_requests", "decode_requests", "reqs"};
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      throw InputError(at + "." + web::utf8_prefix(key, 40), "unknown key; expected prefill and decode (chalk), prefill_requests and decode_requests (BLIS) or reqs (SGLang)");
    }
  }
  StepBatch out;
  if (chalk) {
    if (b.contains("prefill")) {
      const auto& l = step_list(b["prefill"], at + ".prefill");
      for (std::size_t i = 0; i < l.size(); ++i) {
        const std::string f = fmt::format("{}.prefill[{}]", at, i);
        if (l[i].is_array()) {
          if (l[i].size() != 2) throw InputError(f, "expected [tokens, cached], got " + web::json_excerpt(l[i], 40));
          out.prefill.push_back({step_json_count(l[i][0], f + "[0]"), step_json_count(l[i][1], f + "[1]")});
        } else {
          const int64_t cached = l[i].is_object() && l[i].contains("cached") ? step_json_count(l[i]["cached"], f + ".cached") : 0;
          out.prefill.push_back({step_json_count(step_member(l[i], "tokens", f), f + ".tokens"), cached});
        }
      }
    }
    if (b.contains("decode")) {
      const auto& l = step_list(b["decode"], at + ".decode");
      for (std::size_t i = 0; i < l.size(); ++i) {
        const std::string f = fmt::format("{}.decode[{}]", at, i);
        out.decode.push_back(l[i].is_object() ? step_json_count(step_member(l[i], "context", f), f + ".context") : step_json_count(l[i], f));
      }
    }
  } else if (blis) {
    if (b.contains("prefill_requests") && !b["prefill_requests"].is_null()) {
      const auto& l = step_list(b["prefill_requests"], at + ".prefill_requests");
      for (std::size_t i = 0; i < l.size(); ++i) {
        const std::string f = fmt::format("{}.prefill_requests[{}]", at, i);
        out.prefill.push_back({step_json_count(step_member(l[i], "num_new_prefill_tokens", f), f + ".num_new_prefill_tokens"),
                               step_json_count(step_member(l[i], "progress_index", f), f + ".progress_index")});
      }
    }
    if (b.contains("decode_requests") && !b["decode_requests"].is_null()) {
      const auto& l = step_list(b["decode_requests"], at + ".decode_requests");
      for (std::size_t i = 0; i < l.size(); ++i) {
        const std::string f = fmt::format("{}.decode_requests[{}]", at, i);
        if (l[i].is_object() && l[i].contains("num_new_decode_tokens")) {
          const int64_t n = step_json_count(l[i]["num_new_decode_tokens"], f + ".num_new_decode_tokens");
          if (n != 1) throw InputError(f + ".num_new_decode_tokens", fmt::format("must be 1 (one token per decode and step), got {}", n));
        }
        out.decode.push_back(step_json_count(step_member(l[i], "progress_index", f), f + ".progress_index"));
      }
    }
  } else if (sglang) {
    const auto& l = step_list(b["reqs"], at + ".reqs");
    for (std::size_t i = 0; i < l.size(); ++i) {
      const std::string f = fmt::format("{}.reqs[{}]", at, i);
      const int64_t n = step_json_count(step_member(l[i], "extend_length", f), f + ".extend_length");
      const int64_t past = l[i].contains("past_kv_length") ? step_json_count(l[i]["past_kv_length"], f + ".past_kv_length") : 0;
      if (n == 1) {
        out.decode.push_back(past);
      } else {
        out.prefill.push_back({n, past});
      }
    }
  }
  return out;
}

}  // namespace

StepBatch parse_step_flags(const std::string& prefill, const std::string& decode) {
  StepBatch b;
  for (const std::string& item : step_split_commas(prefill)) {
    const auto colon = item.find(':');
    const std::string what = fmt::format("item '{}': expected TOKENS[:CACHED] chunks such as 512:0,256:1024", web::utf8_prefix(item, 40));
    if (item.empty() || colon == 0 || colon + 1 == item.size()) throw InputError("--prefill", what);
    try {
      b.prefill.push_back({parse_integer(item.substr(0, colon), "--prefill"),
                           colon == std::string::npos ? 0 : parse_integer(item.substr(colon + 1), "--prefill")});
    } catch (const InputError&) {
      throw InputError("--prefill", what);
    }
  }
  for (const std::string& item : step_split_commas(decode)) {
    const auto x = item.find('x');
    const std::string what = fmt::format("item '{}': expected CONTEXT[xCOUNT] decodes such as 1024x32,2048", web::utf8_prefix(item, 40));
    if (item.empty() || x == 0 || x + 1 == item.size()) throw InputError("--decode", what);
    int64_t context = 0, count = 1;
    try {
      context = parse_integer(item.substr(0, x), "--decode");
      if (x != std::string::npos) count = parse_integer(item.substr(x + 1), "--decode");
    } catch (const InputError&) {
      throw InputError("--decode", what);
    }
    if (count < 1 || count > (1 << 20)) throw InputError("--decode", fmt::format("item '{}': COUNT must be in 1..{}, got {}", web::utf8_prefix(item, 40), 1 << 20, count));
    b.decode.insert(b.decode.end(), static_cast<std::size_t>(count), context);
  }
  return b;
}

std::vector<StepBatch> parse_step_batches(const nlohmann::json& j) {
  std::vector<StepBatch> out;
  if (j.is_object() && j.contains("batches")) {
    if (j.size() != 1) throw InputError("batches", "expected {\"batches\": [...]} and nothing beside it");
    return parse_step_batches(step_list(j["batches"], "batches"));
  }
  if (j.is_object()) {
    out.push_back(step_batch_of(j, "batches[0]"));
    return out;
  }
  const auto& l = step_list(j, "batches");
  out.reserve(l.size());
  for (std::size_t i = 0; i < l.size(); ++i) out.push_back(step_batch_of(l[i], fmt::format("batches[{}]", i)));
  return out;
}

nlohmann::json read_step_batches(const std::string& text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  std::string body;
  if (first != std::string::npos && (text[first] == '[' || text[first] == '{')) {
    body = text;
  } else if (text == "-") {
    body.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  } else {
    std::ifstream in(text);
    if (!in) throw InputError("--batches", fmt::format("cannot read '{}': expected JSON text, a JSON file or - for standard input", web::utf8_prefix(text, 80)));
    body.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_discarded()) throw InputError("--batches", "malformed JSON: expected a list of batches (docs/simulator.md, \"chalk as a step-time predictor\")");
  return j;
}

}  // namespace chalk::cli
