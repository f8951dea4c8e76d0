// chalk-calibrate: measures what this GPU achieves, and writes it as a chalk-hardware/1
// file that chalk reads (chalk decode --hardware FILE, chalk validate, ...).
//
//   * matmul throughput by shape and dtype (bf16, fp16, fp8 e4m3 where the GPU has it)
//     through cuBLASLt with its heuristic's first algorithm: square sizes 1024..16384
//     and decode-like skinny shapes (M = 1..256 tokens, N = K = 8192);
//   * HBM bandwidth with a STREAM-style Copy kernel (bytes read + bytes written) and
//     cudaMemcpy device to device;
//   * the fixed time of one dependent kernel inside a CUDA graph (chalk's kernel floor).
//
// The output is the --base system file with its `efficiency` block replaced by the
// measured best fractions of the base file's peaks (the MAMF and STREAM conventions of
// docs/sources/hardware.md "Fallback efficiencies"), a `notes` line with the kernel floor and small-shape rates, and
// optionally (--rows) the measurements as microbenchmark rows in the format of
// data/measurements/measurements.csv.
//
// Usage: chalk-calibrate --base data/hardware/h100-sxm.json --out my-h100.json
//                        [--name my-h100] [--rows my-h100.csv] [--iters 50] [--quick]
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}
void check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) throw std::runtime_error(std::string(what) + ": cuBLAS status " + std::to_string(static_cast<int>(s)));
}

struct Args {
  std::string base, out, name, rows;
  int iters = 50;
  bool quick = false;
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::runtime_error(k + ": missing value");
      return argv[++i];
    };
    if (k == "--base") a.base = value();
    else if (k == "--out") a.out = value();
    else if (k == "--name") a.name = value();
    else if (k == "--rows") a.rows = value();
    else if (k == "--iters") a.iters = std::stoi(value());
    else if (k == "--quick") a.quick = true;
    else if (k == "--help" || k == "-h") {
      std::puts("usage: chalk-calibrate --base SYSTEM.json --out OUT.json [--name NAME] [--rows ROWS.csv] [--iters N] [--quick]");
      std::exit(0);
    } else {
      throw std::runtime_error(k + ": unknown option (see --help)");
    }
  }
  if (a.base.empty() || a.out.empty()) throw std::runtime_error("--base and --out are required (see --help)");
  if (a.iters < 1) throw std::runtime_error("--iters: must be >= 1");
  return a;
}

/// Times `fn` (which enqueues work on `stream`) over `iters` runs after `iters / 5 + 2`
/// warm-up runs; returns seconds per run.
template <class F>
double time_it(cudaStream_t stream, int iters, F fn) {
  for (int i = 0; i < iters / 5 + 2; ++i) fn();
  cudaEvent_t a, b;
  check(cudaEventCreate(&a), "event");
  check(cudaEventCreate(&b), "event");
  check(cudaEventRecord(a, stream), "record");
  for (int i = 0; i < iters; ++i) fn();
  check(cudaEventRecord(b, stream), "record");
  check(cudaEventSynchronize(b), "sync");
  float ms = 0;
  check(cudaEventElapsedTime(&ms, a, b), "elapsed");
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return ms * 1e-3 / iters;
}

struct Dtype {
  const char* name;      // chalk's name
  cudaDataType_t in;     // A and B
  cudaDataType_t out;    // C and D
  int bytes;
  const char* peak_key;  // chalk-hardware/1 peak_tflop_per_s key
};

struct GemmResult {
  std::string dtype;
  long m, n, k;
  double seconds, tflops, gb_per_s;
};

/// One cuBLASLt matmul D = A B (A: m x k, B: k x n) in `t`, column-major with A transposed
/// (the "TN" layout FP8 requires); nullopt-like negative time when no algorithm exists.
double gemm_seconds(cublasLtHandle_t lt, cudaStream_t stream, const Dtype& t, long m, long n, long k, void* A, void* B, void* D,
                    void* workspace, size_t workspace_bytes, int iters) {
  cublasLtMatmulDesc_t op;
  check(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F), "desc");
  const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
  check(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta), "transa");
  check(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb), "transb");
  cublasLtMatrixLayout_t la, lb, lc;
  check(cublasLtMatrixLayoutCreate(&la, t.in, k, m, k), "layout A");
  check(cublasLtMatrixLayoutCreate(&lb, t.in, k, n, k), "layout B");
  check(cublasLtMatrixLayoutCreate(&lc, t.out, m, n, m), "layout C");
  cublasLtMatmulPreference_t pref;
  check(cublasLtMatmulPreferenceCreate(&pref), "pref");
  check(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace_bytes, sizeof workspace_bytes), "ws");
  cublasLtMatmulHeuristicResult_t heur{};
  int found = 0;
  const cublasStatus_t hs = cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, lc, lc, pref, 1, &heur, &found);
  double seconds = -1;
  if (hs == CUBLAS_STATUS_SUCCESS && found > 0) {
    const float alpha = 1, beta = 0;
    seconds = time_it(stream, iters, [&] {
      check(cublasLtMatmul(lt, op, &alpha, A, la, B, lb, &beta, D, lc, D, lc, &heur.algo, workspace, workspace_bytes, stream), "matmul");
    });
  }
  cublasLtMatmulPreferenceDestroy(pref);
  cublasLtMatrixLayoutDestroy(la);
  cublasLtMatrixLayoutDestroy(lb);
  cublasLtMatrixLayoutDestroy(lc);
  cublasLtMatmulDescDestroy(op);
  return seconds;
}

__global__ void copy_kernel(const float4* __restrict__ in, float4* __restrict__ out, size_t n) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n; i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    out[i] = in[i];
  }
}

__global__ void tick_kernel(int* p) { *p += 1; }

std::string today() {
  char buf[16];
  const std::time_t now = std::time(nullptr);
  std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&now));
  return buf;
}

std::string fmt(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string csv(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string o = "\"";
  for (char c : s) o += c == '"' ? std::string("\"\"") : std::string(1, c);
  return o + "\"";
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Args args = parse(argc, argv);
    std::ifstream in(args.base);
    if (!in) throw std::runtime_error(args.base + ": cannot read file");
    nlohmann::json sys = nlohmann::json::parse(in);
    if (sys.value("format", "") != "chalk-hardware/1") throw std::runtime_error(args.base + ": format: expected chalk-hardware/1");
    const auto& peaks = sys.at("chip").at("peak_tflop_per_s");
    const double hbm_peak_tb_per_s = sys.at("chip").at("hbm_tb_per_s").get<double>();

    int dev = 0;
    check(cudaGetDevice(&dev), "device");
    cudaDeviceProp prop{};
    check(cudaGetDeviceProperties(&prop, dev), "properties");
    const std::string device = prop.name;
    const int cc = prop.major * 10 + prop.minor;
    std::printf("chalk-calibrate on %s (compute capability %d.%d, %d SMs, %.1f GB)\n", device.c_str(), prop.major, prop.minor,
                prop.multiProcessorCount, prop.totalGlobalMem / 1e9);

    cudaStream_t stream;
    check(cudaStreamCreate(&stream), "stream");
    cublasLtHandle_t lt;
    check(cublasLtCreate(&lt), "cublasLt");

    // Matmul throughput by dtype and shape.
    std::vector<Dtype> dtypes = {{"bf16", CUDA_R_16BF, CUDA_R_16BF, 2, "bf16"}, {"fp16", CUDA_R_16F, CUDA_R_16F, 2, "bf16"}};
    if (cc >= 89 && peaks.contains("fp8")) dtypes.push_back({"fp8", CUDA_R_8F_E4M3, CUDA_R_16BF, 1, "fp8"});
    const long max_side = args.quick ? 4096 : 16384;
    std::vector<long> squares;
    for (long s = 1024; s <= max_side; s *= 2) squares.push_back(s);
    const std::vector<long> skinny_m = {1, 16, 64, 256};
    const long skinny_nk = 8192;
    const size_t elems = static_cast<size_t>(std::max(max_side, skinny_nk)) * std::max(max_side, skinny_nk);
    void *A, *B, *D, *ws;
    const size_t ws_bytes = 64u << 20;
    check(cudaMalloc(&A, elems * 2), "alloc A");
    check(cudaMalloc(&B, elems * 2), "alloc B");
    check(cudaMalloc(&D, elems * 2), "alloc D");
    check(cudaMalloc(&ws, ws_bytes), "alloc workspace");
    check(cudaMemset(A, 0x3c, elems * 2), "fill A");  // small finite values in every format
    check(cudaMemset(B, 0x3c, elems * 2), "fill B");

    std::vector<GemmResult> results;
    auto run = [&](const Dtype& t, long m, long n, long k) {
      const double s = gemm_seconds(lt, stream, t, m, n, k, A, B, D, ws, ws_bytes, args.iters);
      if (s <= 0) {
        std::printf("  %-5s %6ld x %6ld x %6ld  no cuBLASLt algorithm\n", t.name, m, n, k);
        return;
      }
      const double flops = 2.0 * m * n * k;
      const double bytes = static_cast<double>(t.bytes) * (m * k + k * n) + 2.0 * m * n;
      results.push_back({t.name, m, n, k, s, flops / s / 1e12, bytes / s / 1e9});
      std::printf("  %-5s %6ld x %6ld x %6ld  %9.2f us  %8.1f TFLOP/s  %7.0f GB/s\n", t.name, m, n, k, s * 1e6, flops / s / 1e12,
                  bytes / s / 1e9);
    };
    std::puts("matmul (M x N x K, cuBLASLt, A transposed):");
    for (const auto& t : dtypes) {
      for (long s : squares) run(t, s, s, s);
      for (long m : skinny_m) run(t, m, skinny_nk, skinny_nk);
    }

    // HBM: STREAM-style Copy (read + write) and cudaMemcpy.
    const size_t copy_bytes = args.quick ? (512u << 20) : (2048ull << 20);
    void *src, *dst;
    check(cudaMalloc(&src, copy_bytes), "alloc src");
    check(cudaMalloc(&dst, copy_bytes), "alloc dst");
    check(cudaMemset(src, 1, copy_bytes), "fill src");
    const size_t n4 = copy_bytes / sizeof(float4);
    const int blocks = prop.multiProcessorCount * 8;
    const double t_copy = time_it(stream, args.iters, [&] {
      copy_kernel<<<blocks, 512, 0, stream>>>(static_cast<const float4*>(src), static_cast<float4*>(dst), n4);
    });
    check(cudaGetLastError(), "copy kernel");
    const double t_memcpy = time_it(stream, args.iters, [&] { check(cudaMemcpyAsync(dst, src, copy_bytes, cudaMemcpyDeviceToDevice, stream), "memcpy"); });
    const double copy_tb_per_s = 2.0 * copy_bytes / t_copy / 1e12, memcpy_tb_per_s = 2.0 * copy_bytes / t_memcpy / 1e12;
    std::printf("HBM: Copy kernel %.2f TB/s, cudaMemcpy %.2f TB/s (read + write; peak %.2f)\n", copy_tb_per_s, memcpy_tb_per_s, hbm_peak_tb_per_s);

    // Kernel floor: dependent kernels replayed from a CUDA graph.
    int* counter;
    check(cudaMalloc(&counter, sizeof(int)), "alloc counter");
    const int chain = 1000;
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal), "capture");
    for (int i = 0; i < chain; ++i) tick_kernel<<<1, 1, 0, stream>>>(counter);
    check(cudaStreamEndCapture(stream, &graph), "end capture");
    check(cudaGraphInstantiate(&exec, graph, 0), "instantiate");
    const double t_chain = time_it(stream, std::max(args.iters / 10, 3), [&] { check(cudaGraphLaunch(exec, stream), "graph launch"); });
    const double floor_us = t_chain / chain * 1e6;
    std::printf("kernel floor: %.2f us per dependent kernel in a CUDA graph\n", floor_us);

    // Efficiencies: the best large-shape rate per class over the base file's peak.
    nlohmann::json matmul = nlohmann::json::object();
    std::string matmul_source = "tools/calibrate (cuBLASLt) on " + device + ", " + today() + ":";
    for (const char* cls : {"bf16", "fp8"}) {
      if (!peaks.contains(cls)) continue;
      double best = 0;
      std::string at;
      for (const auto& r : results) {
        const bool same = r.dtype == cls || (std::string(cls) == "bf16" && r.dtype == "fp16");
        if (same && r.m == r.n && r.tflops > best) {
          best = r.tflops;
          at = r.dtype + " " + std::to_string(r.m) + "^3";
        }
      }
      if (best <= 0) continue;
      const double peak = peaks.at(cls).get<double>();
      matmul[cls] = std::min(1.0, best / peak);
      matmul_source += " " + std::string(cls) + " " + fmt(best, 1) + "/" + fmt(peak, 1) + " TF (" + at + ")";
    }
    if (!matmul.contains("bf16")) throw std::runtime_error("no bf16 matmul result; cannot write efficiency.matmul.bf16");
    const double best_hbm = std::max(copy_tb_per_s, memcpy_tb_per_s);
    nlohmann::json eff = {{"matmul", matmul},
                          {"hbm", std::min(1.0, best_hbm / hbm_peak_tb_per_s)},
                          {"matmul_source", matmul_source},
                          {"hbm_source", "tools/calibrate Copy kernel on " + device + ", " + today() + ": " + fmt(best_hbm, 2) + "/" +
                                             fmt(hbm_peak_tb_per_s, 2) + " TB/s (read + write)"}};
    std::string small = "kernel floor " + fmt(floor_us, 2) + " us per dependent kernel (CUDA graph);";
    for (const auto& r : results) {
      if (r.m != r.n) small += " " + r.dtype + " M=" + std::to_string(r.m) + ": " + fmt(r.gb_per_s, 0) + " GB/s;";
    }
    sys["efficiency"] = eff;
    sys["name"] = args.name.empty() ? sys.value("name", "system") + "-calibrated" : args.name;
    sys["description"] = sys.value("description", "") + " (calibrated on " + device + ")";
    sys["source"] = sys.value("source", "") + "; efficiencies measured by tools/calibrate";
    sys["date"] = today();
    sys["notes"] = small;
    std::ofstream out(args.out);
    if (!out) throw std::runtime_error(args.out + ": cannot write file");
    out << sys.dump(2) << '\n';
    std::printf("wrote %s (use it with: chalk decode --hardware %s)\n", args.out.c_str(), args.out.c_str());

    if (!args.rows.empty()) {
      std::ofstream rows(args.rows);
      if (!rows) throw std::runtime_error(args.rows + ": cannot write file");
      rows << "id,kind,model,model_shape,hardware,num_chips,interconnect,precision_weights,precision_kv_or_activations,parallelism,"
              "batch_or_concurrency,input_len,output_len_or_context,metric,value,unit,hw_peak_specs,source,source_location,confidence,notes\n";
      int i = 0;
      for (const auto& r : results) {
        const std::string shape = std::to_string(r.m) + "x" + std::to_string(r.n) + "x" + std::to_string(r.k);
        rows << "CAL-GEMM-" << ++i << ",microbenchmark (GEMM)," << csv("cuBLASLt " + r.dtype + " GEMM " + shape) << ",-," << csv(device)
             << ",1,-," << r.dtype << "," << r.dtype << ",-,M=" << r.m << ",-,-,achieved GEMM throughput," << fmt(r.tflops, 1)
             << ",TFLOPS,-,tools/calibrate,-,A," << csv(fmt(r.gb_per_s, 0) + " GB/s moved") << "\n";
      }
      rows << "CAL-HBM-1,microbenchmark (HBM bandwidth),STREAM-style Copy kernel,-," << csv(device)
           << ",1,-,-,-,-,-,-,-,achieved HBM bandwidth (Copy)," << fmt(copy_tb_per_s, 2) << ",TB/s," << fmt(hbm_peak_tb_per_s, 2)
           << " TB/s (base file),tools/calibrate,-,A,-\n";
      std::printf("wrote %s\n", args.rows.c_str());
    }
    cudaFree(A);
    cudaFree(B);
    cudaFree(D);
    cudaFree(ws);
    cudaFree(src);
    cudaFree(dst);
    cudaFree(counter);
    cublasLtDestroy(lt);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "chalk-calibrate: error: %s\n", e.what());
    return 2;
  }
}
