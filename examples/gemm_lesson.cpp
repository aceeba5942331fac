// How a matrix product gets fast: every step of ember's GEMM (tensor/gemm/,
// read in order) timed on this machine, against OpenBLAS's sgemm and
// against this machine's arithmetic peak (measured here, not a datasheet's),
// and drawn on a roofline with the memory and compute ceilings measured here.
//
//   ./build/examples/gemm_lesson                       # C = A B at 1024^2 (docs/book/13_gemm_and_bfloat16.md)
//   ./build/examples/gemm_lesson --size 512 --rounds 3 --out out/gemm
//
// Writes to --out: roofline.png and gemm_lesson.csv (every number of the
// table). Timing: each kernel runs once to warm up, then once per round,
// the kernels interleaved so that a burst of load elsewhere hits them all
// (a threaded kernel's timed run right after an untimed one, its threads
// awake); the table gives each kernel's median. Peaks are the best of many short
// runs (load only ever makes them lower). Adaptive threads are off, so each
// kernel runs on the threads the table says. --check exits 1 when a
// kernel's product is off by more than its rounding bound (the CTest run).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "common/program.h"
#include "common/report.h"
#include "ember.h"
#include "plot/plot.h"
#include "tensor/gemm/gemm.h"
#include "tensor/gemm/int8.h"
#include "tensor/gemm/microkernels.h"
#include "tensor/kernels.h"
#include "tensor/storage.h"

using namespace ember;

namespace {

struct Flags {
  int64_t size = 1024;
  int threads = 2, rounds = 7;
  std::string out = "out/gemm_lesson";
  bool check = false;
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::string load_average() {
  std::ifstream f("/proc/loadavg");
  std::string a, b, c;
  f >> a >> b >> c;
  return a + " " + b + " " + c;
}

// ---- the ceilings ----

// Copy bandwidth (bytes read + written per second) of `bytes`-sized
// buffers over ember's threads: the best of `repeats`.
double copy_gbps(size_t bytes, int repeats) {
  void* src = allocator::allocate(bytes);
  void* dst = allocator::allocate(bytes);
  std::memset(src, 1, bytes);
  std::memset(dst, 0, bytes);
  const int64_t piece = std::max<int64_t>(int64_t{1} << 16, static_cast<int64_t>(bytes) / 64);
  double best = 0;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    detail::parallel_for(static_cast<int64_t>(bytes), piece, [&](int64_t b0, int64_t b1) {
      std::memcpy(static_cast<char*>(dst) + b0, static_cast<char*>(src) + b0, static_cast<size_t>(b1 - b0));
    });
    best = std::max(best, 2.0 * static_cast<double>(bytes) / seconds_since(t0) / 1e9);
  }
  allocator::deallocate(src, bytes);
  allocator::deallocate(dst, bytes);
  return best;
}

struct Ceilings {
  double fma_1t = 0, fma_nt = 0, fma_avx2_nt = 0, bf16_nt = 0;  // GFLOP/s
  double int8_nt = 0;  // vpdpbusd, G int8 operations per second (0 without AVX512_VNNI)
  double dram_gbps = 0, l3_gbps = 0;
  const char* isa = "";
};

Ceilings measure_ceilings(int threads) {
  Ceilings c;
  const gemm::Isa widest = gemm::isas_for_this_cpu().front();
  c.isa = gemm::isa_name(widest);
  c.fma_1t = gemm::measured_peak_gflops(widest, false, 1);
  c.fma_nt = gemm::measured_peak_gflops(widest, false, threads);
  if (widest == gemm::Isa::AVX512) c.fma_avx2_nt = gemm::measured_peak_gflops(gemm::Isa::AVX2, false, threads);
  if (gemm::has_avx512_bf16()) c.bf16_nt = gemm::measured_peak_gflops(gemm::Isa::AVX512, true, threads);
  c.int8_nt = gemm::measured_int8_peak(threads);
  c.dram_gbps = copy_gbps(size_t{256} << 20, 15);  // far larger than any cache
  c.l3_gbps = copy_gbps(size_t{4} << 20, 200);     // two 4 MiB buffers: in L3, not in L2
  return c;
}

// ---- the kernels ----

struct Kernel {
  std::string name;
  int threads;
  bool bf16;
  // Bytes between L2 and the rest of memory, from the loop structure (the
  // roofline's x is flops over this): B read once, C read and written once
  // per depth block of kc, A read once per column block of nc; OpenBLAS is
  // given the least any GEMM must move (A and B read once, C written once).
  int64_t kc, nc;
  std::function<void()> run;
  std::vector<double> seconds{};
  double error_ratio = 0;  // worst error over its rounding bound
  // step 8: the weight (B, as Bᵀ's rows) in int8, multiplied with int8 or float32 activations
  std::optional<gemm::Int8Mode> int8 = std::nullopt;
  gemm::Isa isa = gemm::Isa::Portable;
};

double modeled_bytes(const Kernel& k, double n) {
  // step 8: A read once (float32), and with int8 activations written and read
  // once more as int8; the weight once (a byte and 4 / 32 of a scale per
  // value); C written once
  if (k.int8) return 4 * n * n + (*k.int8 == gemm::Int8Mode::Int8Activations ? 2 * n * n : 0) + 1.125 * n * n + 4 * n * n;
  if (k.kc == 0) return 4 * 3 * n * n;                         // the minimum
  if (k.nc == 0) return 4 * n * n * n;                         // all of B for every row of A
  return 4 * n * n + 8 * n * n * std::ceil(n / double(k.kc)) + 4 * n * n * std::ceil(n / double(k.nc));
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

// The float64 product and sum_k |a||b|, for the error bounds (O(n^3), once).
struct Exact {
  std::vector<double> value, scale;
};
Exact exact_product(const std::vector<float>& a, const std::vector<float>& b, int64_t n) {
  Exact e{std::vector<double>(size_t(n * n), 0.0), std::vector<double>(size_t(n * n), 0.0)};
  detail::parallel_for(n, 1, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i)
      for (int64_t k = 0; k < n; ++k) {
        const double x = a[size_t(i * n + k)];
        for (int64_t j = 0; j < n; ++j) {
          const double y = b[size_t(k * n + j)];
          e.value[size_t(i * n + j)] += x * y;
          e.scale[size_t(i * n + j)] += std::fabs(x * y);
        }
      }
  });
  return e;
}

// Worst |c - exact| / bound, with the float32 bound gamma_K, or
// bfloat16's ((1 + u)^2 (1 + gamma_K) - 1) (tensor/gemm/step7_bfloat16.cpp).
double error_ratio(const std::vector<float>& c, const Exact& e, int64_t K, bool bf16) {
  const double v = std::ldexp(1.0, -24), u = std::ldexp(1.0, -8), g = K * v / (1 - K * v);
  const double factor = bf16 ? (1 + u) * (1 + u) * (1 + g) - 1 : g;
  double worst = 0;
  for (size_t i = 0; i < c.size(); ++i) worst = std::max(worst, std::fabs(c[i] - e.value[i]) / (factor * e.scale[i] + 1e-300));
  return worst;
}

// Step 8's bound (tensor/gemm/step8_int8.cpp) for every element: row i of A
// against column j of B (row j of the weight Bᵀ).
double int8_error_ratio(const std::vector<float>& c, const std::vector<float>& a, const std::vector<float>& bt,
                        const Exact& e, int64_t n, gemm::Int8Mode mode) {
  std::vector<double> worst(static_cast<size_t>(n), 0.0);
  detail::parallel_for(n, 1, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i)
      for (int64_t j = 0; j < n; ++j) {
        const double bound = gemm::int8_error_bound(&a[size_t(i * n)], &bt[size_t(j * n)], n, 32, mode);
        worst[size_t(i)] = std::max(worst[size_t(i)], std::fabs(c[size_t(i * n + j)] - e.value[size_t(i * n + j)]) / (bound + 1e-300));
      }
  });
  return *std::max_element(worst.begin(), worst.end());
}

struct Int8Weights {
  std::vector<float> bt;  // B transposed: the weight's rows
  gemm::PackedWeight int8_acts, float_acts;
};
Int8Weights int8_weights(const std::vector<float>& b, int64_t n) {
  Int8Weights w;
  w.bt.resize(size_t(n * n));
  for (int64_t k = 0; k < n; ++k)
    for (int64_t j = 0; j < n; ++j) w.bt[size_t(j * n + k)] = b[size_t(k * n + j)];
  const int64_t groups = (n + 31) / 32;
  std::vector<int8_t> q(size_t(n * n));
  std::vector<float> s(size_t(n * groups));
  for (int64_t j = 0; j < n; ++j) gemm::quantize_row(&w.bt[size_t(j * n)], n, 32, &q[size_t(j * n)], &s[size_t(j * groups)]);
  w.int8_acts = gemm::pack_int8(q.data(), s.data(), n, n, 32, gemm::Int8Mode::Int8Activations);
  w.float_acts = gemm::pack_int8(q.data(), s.data(), n, n, 32, gemm::Int8Mode::FloatActivations);
  return w;
}

std::vector<Kernel> kernels(const std::vector<float>& a, const std::vector<float>& b, std::vector<float>& c, int64_t n,
                            int threads, const Int8Weights& w8) {
  const gemm::View<float> A{a.data(), n, n, n, 1}, B{b.data(), n, n, n, 1};
  const gemm::Out C{c.data(), n, n, n};
  const std::string T = std::to_string(threads);
  const int nn = static_cast<int>(n);
  const float *ap = a.data(), *bp = b.data();
  float* cp = c.data();
  std::vector<Kernel> ks = {
      {"1 naive (i, j, k)", 1, false, 1, 0, [=] { gemm::naive(A, B, C); }},
      {"2 loop order (i, k, j)", 1, false, 1, 0, [=] { gemm::loop_order(A, B, C); }},
      {"3 cache blocking", 1, false, 128, 512, [=] { gemm::blocked(A, B, C); }},
      {"4 packing, plain C", 1, false, 256, 1024, [=] { gemm::packed(A, B, C); }},
  };
  for (gemm::Isa isa : gemm::isas_for_this_cpu()) {
    if (isa == gemm::Isa::Portable) continue;
    ks.push_back({std::string("5 microkernel ") + gemm::isa_name(isa), 1, false, 256, 1024, [=] { gemm::microkernel(A, B, C, isa); }});
  }
  // step 6 at every width too: OpenBLAS's kernels may be narrower than the widest (OPENBLAS_CORETYPE)
  for (gemm::Isa isa : gemm::isas_for_this_cpu()) {
    if (isa == gemm::Isa::Portable) continue;
    ks.push_back({std::string("6 threads ") + gemm::isa_name(isa), threads, false, 256, 2048, [=] { gemm::threaded(A, B, C, isa); }});
  }
  const gemm::Isa widest = gemm::isas_for_this_cpu().front();
  ks.push_back({"OpenBLAS sgemm", 1, false, 0, 0, [=] {
                  blas::set_num_threads(1);
                  blas::sgemm(false, false, nn, nn, nn, 1.0f, ap, nn, bp, nn, 0.0f, cp, nn);
                }});
  ks.push_back({"OpenBLAS sgemm, its threads", threads, false, 0, 0, [=] {
                  blas::set_num_threads(threads);
                  blas::sgemm(false, false, nn, nn, nn, 1.0f, ap, nn, bp, nn, 0.0f, cp, nn);
                  blas::set_num_threads(1);
                }});
  if (gemm::has_avx512_bf16())
    ks.push_back({"7 bfloat16 vdpbf16ps", threads, true, 512, 2048, [=] { gemm::bf16_product(A, B, C, gemm::Isa::AVX512, true); }});
  ks.push_back({std::string("7 bfloat16 fallback ") + gemm::isa_name(widest), threads, true, 512, 2048,
                [=] { gemm::bf16_product(A, B, C, widest, false); }});
  // step 8 at each SIMD width: int8 activations, then float32 ones at the widest
  const gemm::PackedWeight *i8 = &w8.int8_acts, *f8 = &w8.float_acts;
  for (gemm::Isa isa : gemm::int8_isas_for_this_cpu()) {
    if (isa == gemm::Isa::Portable) continue;
    if (isa == gemm::Isa::AVX512 && !gemm::has_avx512_vnni()) continue;  // AVX2's kernel: its own row
    Kernel k{std::string("8 int8 ") + gemm::int8_instructions(isa), threads, false, 0, 0,
             [=] { gemm::weight_product(ap, n, n, *i8, cp, n, isa); }};
    k.int8 = gemm::Int8Mode::Int8Activations, k.isa = isa;
    ks.push_back(k);
  }
  Kernel k{std::string("8 int8, f32 acts ") + gemm::isa_name(widest), threads, false, 0, 0,
           [=] { gemm::weight_product(ap, n, n, *f8, cp, n, widest); }};
  k.int8 = gemm::Int8Mode::FloatActivations, k.isa = widest;
  ks.push_back(k);
  return ks;
}

// Each kernel once to warm up (its result checked), then once per round,
// interleaved; a kernel slower than a second runs in 3 rounds only; a
// threaded one's timed run follows an untimed one.
void time_kernels(std::vector<Kernel>& ks, const Exact& exact, const std::vector<float>& a, const Int8Weights& w8,
                  const std::vector<float>& c, int64_t n, int rounds) {
  for (Kernel& k : ks) {
    const auto t0 = std::chrono::steady_clock::now();
    k.run();
    k.seconds.push_back(seconds_since(t0));
    k.error_ratio = k.int8 ? int8_error_ratio(c, a, w8.bt, exact, n, *k.int8) : error_ratio(c, exact, n, k.bf16);
    std::printf("  %-30s warm-up %8.1f ms\n", k.name.c_str(), 1e3 * k.seconds.back());
    std::fflush(stdout);
  }
  for (Kernel& k : ks) k.seconds.clear();
  for (int r = 0; r < rounds; ++r)
    for (Kernel& k : ks) {
      if (r >= 3 && !k.seconds.empty() && median(k.seconds) > 1.0) continue;
      // After a one-thread kernel (the naive one takes seconds) the other
      // threads sleep, and an idle core may be slow to wake (a virtual
      // machine's especially): a threaded kernel runs once untimed first,
      // as products come back to back in a training step.
      if (k.threads > 1) k.run();
      const auto t0 = std::chrono::steady_clock::now();
      k.run();
      k.seconds.push_back(seconds_since(t0));
    }
}

void draw_roofline(const std::vector<Kernel>& ks, const Ceilings& c, int64_t n, int threads, const std::string& path) {
  plot::LinePlot fig;
  fig.title = "Roofline: C = A B at " + std::to_string(n) + "^2";
  fig.x = {.label = "flops per byte beyond L2 (modeled from the loops)", .log = true};
  fig.y = {.label = "GFLOP/s (measured, median)", .log = true};
  fig.width = 1500;
  fig.height = 800;
  fig.legend = plot::Corner::Outside;
  std::vector<double> xs;
  for (double x = 0.05; x <= 2000; x *= 1.1) xs.push_back(x);
  auto roof = [&](const std::string& label, double gbps, double peak, plot::Color color) {
    plot::Series s{label};
    s.color = color;
    for (double x : xs) {
      s.x.push_back(x);
      s.y.push_back(std::min(gbps * x, peak));
    }
    fig.series.push_back(s);
  };
  char label[160];
  std::snprintf(label, sizeof label, "memory %.0f GB/s, %s FMA %.0f (%d thr)", c.dram_gbps, c.isa, c.fma_nt, threads);
  roof(label, c.dram_gbps, c.fma_nt, {40, 40, 40});
  std::snprintf(label, sizeof label, "L3 %.0f GB/s", c.l3_gbps);
  roof(label, c.l3_gbps, c.bf16_nt > 0 ? c.bf16_nt : c.fma_nt, {150, 150, 150});
  auto peak = [&](double v, const std::string& what) {
    char t[120];
    std::snprintf(t, sizeof t, "%s %.0f", what.c_str(), v);
    fig.hlines.push_back({v, t});
  };
  peak(c.fma_1t, std::string(c.isa) + " FMA (1 thr)");
  if (c.fma_avx2_nt > 0) peak(c.fma_avx2_nt, "AVX2 FMA (" + std::to_string(threads) + " thr)");
  if (c.bf16_nt > 0) peak(c.bf16_nt, "vdpbf16ps (" + std::to_string(threads) + " thr)");
  if (c.int8_nt > 0) peak(c.int8_nt, "vpdpbusd (" + std::to_string(threads) + " thr)");
  for (size_t i = 0; i < ks.size(); ++i) {
    const Kernel& k = ks[i];
    const double flops = 2.0 * n * n * n, g = flops / median(k.seconds) / 1e9;
    std::snprintf(label, sizeof label, "%s (%d): %.1f", k.name.c_str(), k.threads, g);
    plot::Series s{label, {flops / modeled_bytes(k, double(n))}, {g}};
    s.line = false;
    s.points = true;
    s.width = 7;
    s.color = plot::palette(i);
    fig.series.push_back(s);
  }
  examples::check_picture(plot::layout_problems(plot::write_png(fig, path)), "gemm_lesson", path);
}

int lesson(const Flags& f) {
  set_num_threads(f.threads);
  set_adaptive_threads(false);
  const std::string load_before = load_average();
  std::cout << "machine     " << examples::machine_line() << "\n"
            << "load        " << load_before << " (1, 5, 15 min) before measuring\n"
            << "product     C = A B, A and B " << f.size << " x " << f.size << " float32 (2 n^3 = "
            << 2.0 * f.size * f.size * f.size / 1e9 << " GFLOP)\n\n";
  std::cout << "measuring the ceilings (best of many runs) ..." << std::endl;
  const Ceilings c = measure_ceilings(f.threads);
  std::printf("  %s FMA peak     %7.1f GFLOP/s on 1 thread, %7.1f on %d\n", c.isa, c.fma_1t, c.fma_nt, f.threads);
  if (c.fma_avx2_nt > 0) std::printf("  AVX2 FMA peak     %7.1f GFLOP/s on %d threads\n", c.fma_avx2_nt, f.threads);
  if (c.bf16_nt > 0) std::printf("  vdpbf16ps peak    %7.1f GFLOP/s on %d threads\n", c.bf16_nt, f.threads);
  if (c.int8_nt > 0) std::printf("  vpdpbusd peak     %7.1f G int8 operations/s on %d threads\n", c.int8_nt, f.threads);
  std::printf("  memory (copy)     %7.1f GB/s, L3 (copy) %.1f GB/s\n\n", c.dram_gbps, c.l3_gbps);

  const int64_t n = f.size;
  Generator gen(0);
  const std::vector<float> a = randn({n, n}, gen).to_vector<float>(), b = randn({n, n}, gen).to_vector<float>();
  std::vector<float> out(size_t(n * n));
  std::cout << "the float64 product, for the error bounds ..." << std::endl;
  const Exact exact = exact_product(a, b, n);
  const Int8Weights w8 = int8_weights(b, n);
  std::vector<Kernel> ks = kernels(a, b, out, n, f.threads, w8);
  std::cout << "timing (" << f.rounds << " rounds, interleaved) ..." << std::endl;
  time_kernels(ks, exact, a, w8, out, n, f.rounds);

  const double flops = 2.0 * n * n * n;
  auto gflops = [&](const Kernel& k) { return flops / median(k.seconds) / 1e9; };
  double blas_1t = 0, blas_nt = 0, best_ours = 0, bf16_best = 0, int8_best = 0;
  for (const Kernel& k : ks) {
    if (k.name.rfind("OpenBLAS", 0) == 0) (k.threads == 1 ? blas_1t : blas_nt) = gflops(k);
    if (k.name.rfind("6 ", 0) == 0) best_ours = std::max(best_ours, gflops(k));
    if (k.bf16) bf16_best = std::max(bf16_best, gflops(k));
    if (k.int8) int8_best = std::max(int8_best, gflops(k));
  }
  std::printf("\n%-30s %4s %10s %8s %9s %10s %7s %9s %6s\n", "step", "thr", "median ms", "best ms", "GFLOP/s", "% OpenBLAS",
              "% peak", "flop/byte", "error");
  std::printf("%s\n", std::string(102, '-').c_str());
  std::ofstream csv(f.out + "/gemm_lesson.csv");
  csv << "step,threads,median_ms,best_ms,gflops,percent_openblas,percent_peak,flops_per_byte,error_over_bound\n";
  bool ok = true;
  for (const Kernel& k : ks) {
    const double g = gflops(k), blas = k.threads == 1 ? blas_1t : blas_nt;
    double peak = k.bf16 && k.name.find("vdpbf16ps") != std::string::npos ? c.bf16_nt : (k.threads == 1 ? c.fma_1t : c.fma_nt);
    if (k.int8 && k.name.find("vpdpbusd") != std::string::npos) peak = c.int8_nt;
    else if (k.int8 && k.isa == gemm::Isa::AVX2 && c.fma_avx2_nt > 0) peak = c.fma_avx2_nt;
    const double ai = flops / modeled_bytes(k, double(n));
    const double best = *std::min_element(k.seconds.begin(), k.seconds.end());
    std::printf("%-30s %4d %10.2f %8.2f %9.1f %9.0f%% %6.0f%% %9.1f %6.3f\n", k.name.c_str(), k.threads,
                1e3 * median(k.seconds), 1e3 * best, g, 100 * g / blas, 100 * g / peak, ai, k.error_ratio);
    csv << k.name << "," << k.threads << "," << 1e3 * median(k.seconds) << "," << 1e3 * best << "," << g << ","
        << 100 * g / blas << "," << 100 * g / peak << "," << ai << "," << k.error_ratio << "\n";
    ok = ok && k.error_ratio <= 1.0;
  }
  std::printf("(GFLOP/s and %%: from the median; %% OpenBLAS: of OpenBLAS's sgemm on as many threads; %% peak: of the %s\n"
              " FMA peak on as many threads, or of vdpbf16ps's, or of vpdpbusd's (int8 operations); flop/byte: modeled from\n"
              " the loop structure (the roofline's x; step 8's: the least traffic, as OpenBLAS's); step 8: GFLOP-equivalent/s,\n"
              " 2 n^3 over the time, with B in int8 (groups of 32); error: the worst |C - exact| over its rounding bound,\n"
              " which must stay <= 1: gamma_n sum|a||b| in float32, ((1+2^-8)^2 (1+gamma_n) - 1) sum|a||b| in bfloat16,\n"
              " tensor/gemm/step8_int8.cpp's in int8)\n\n",
              c.isa);
  std::printf("step 6 (its fastest width) against OpenBLAS's sgemm on %d threads: %.0f%% (the target: at least 85%%)\n", f.threads, 100 * best_ours / blas_nt);
  std::printf("bfloat16 against OpenBLAS's float32 sgemm:    %.2fx (the target on an AVX512_BF16 CPU: at least 1.7x)\n",
              bf16_best / blas_nt);
  std::printf("int8 weights against OpenBLAS's float32 sgemm: %.2fx\n", int8_best / blas_nt);
  std::printf("float32 on this machine: %s is faster (%.1f against %.1f GFLOP/s, the medians); matmul uses %s%s\n",
              best_ours > blas_nt ? "ember's step 6" : "OpenBLAS", std::max(best_ours, blas_nt), std::min(best_ours, blas_nt),
              gemm::f32_matmul_uses_ember() ? "ember's (EMBER_GEMM=ember)" : "OpenBLAS",
              !gemm::f32_matmul_uses_ember() && best_ours > blas_nt ? " (EMBER_GEMM=ember would switch it)" : "");
  std::printf("load        %s before, %s after\n", load_before.c_str(), load_average().c_str());
  draw_roofline(ks, c, n, f.threads, f.out + "/roofline.png");
  std::cout << "wrote " << f.out << "/roofline.png, " << f.out << "/gemm_lesson.csv" << std::endl;
  if (f.check && !ok) {
    std::cerr << "gemm_lesson: a kernel's error is over its rounding bound\n";
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"How a matrix product gets fast: ember's GEMM step by step against OpenBLAS and this machine's peak."};
  examples::show_defaults(app);
  Flags f;
  app.add_option("--size", f.size, "n: A, B and C are n x n")->check(ember::examples::between(int64_t{1}, int64_t{4096}));
  app.add_option("--threads", f.threads, "threads for the threaded steps and OpenBLAS")->check(ember::examples::between(1, 256));
  app.add_option("--rounds", f.rounds, "timed runs of each kernel (the median is shown)")->check(ember::examples::between(1, 100));
  app.add_option("--out", f.out, "directory for roofline.png and gemm_lesson.csv");
  app.add_flag("--check", f.check, "exit 1 if a kernel's error is over its rounding bound");
  EMBER_PARSE("gemm_lesson", app, argc, argv);
  return examples::run("gemm_lesson", [&] {
    std::filesystem::create_directories(f.out);
    return lesson(f);
  });
}
