// Step 8: fewer bits again. Weights in int8 with a scale per group.
//
// Quantization (quantize_row). A group of G values x gets the scale
// s = max|x| / 127 and each value becomes q = round(x / s), an integer in
// [-127, 127]; it stands for q s. Rounding to the nearest integer is off by
// at most half a step, so each value is off by at most
//
//   |x - q s| <= rho s,    rho = 1/2 + 2^-17
//
// (the 2^-17 covers the rounding of x / s itself: |x / s| <= 127 and one
// float32 division is off by at most 127 x 2^-24). The largest value of the
// group is exact (q = 127); a group with one large value and many small
// ones loses the small ones, which is why the groups are short: one outlier
// costs its own group only.
//
// The product, int8 x int8. Row i of A and row j of W are quantized with
// scales a_g and w_g per group. The kernel sums each group's integer
// products exactly in int32 (|sum| <= G 127^2 < 2^24, so its conversion to
// float32 is exact too), then adds sum_g * fl(a_g w_g) to the total with one
// FMA per group. Against the exact product of the original values,
//
//   x y - (q_x a)(q_y w) = x e_y + y e_x - e_x e_y    (e: the rounding errors)
//
// so, with |e_x| <= rho a_g and |e_y| <= rho w_g, and the float32 sum of
// n = G-groups terms adding at most gamma_{n+1} (Higham, 3.1) of the sum of
// their magnitudes,
//
//   |C_int8[i][j] - C[i][j]| <= sum_g sum_{k in g} (rho w_g |x_k| + rho a_g |y_k| + rho^2 a_g w_g)
//                               + gamma_{n+1} sum_k (|x_k| + rho a_g)(|y_k| + rho w_g)
//
// The first line is the quantization, nearly all of the bound; it is reached
// when every value of both rows lies just below a midpoint between two
// steps, so that all of them round down together (tested). For values
// spread like a layer's, the errors have both signs and the error is far
// smaller: about sqrt(K) of the terms instead of K.
//
// The product, float32 x int8. Only the weights are rounded: the bound is
// sum_k rho w_g |x_k| + gamma_{G+n+1} sum_k |x_k| (|y_k| + rho w_g): each
// group's float32 sum (G FMAs in k order), then one FMA by its scale.
//
// Why G = 32 by default (nn/quantize.h): the scales cost 4 / G bytes per
// weight (0.125 at 32: a checkpoint of about 0.29 of float32's; 0.0625 at
// 64), and the error grows with the largest value of a group: at 32, as
// llama.cpp's Q8_0 chose, the tiny GPT's validation loss moves by less than
// a thousandth of a nat (examples/quantize_gpt measures 32, 64, 128 and 256).
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "base/error.h"
#include "tensor/gemm/int8.h"
#include "tensor/gemm/microkernels.h"
#include "tensor/gemm/simd/int8_tiles.h"
#include "tensor/machine/at_each_width.h"
#include "tensor/parallel.h"
#include "tensor/storage.h"

namespace ember::gemm {

namespace {
constexpr int64_t kPanel = 16;  // outputs per panel

std::shared_ptr<char> aligned_bytes(int64_t n) {
  const size_t bytes = static_cast<size_t>(std::max<int64_t>(n, 64));
  return std::shared_ptr<char>(static_cast<char*>(allocator::allocate(bytes)),
                               [bytes](char* p) { allocator::deallocate(p, bytes); });
}

struct QuantizeRows {
  template <typename T>
  [[gnu::always_inline]] static inline void run(const float* x, int64_t n, int64_t group, int8_t* q, float* scale) {
    for (int64_t g0 = 0, gi = 0; g0 < n; g0 += group, ++gi) {
      const int64_t len = std::min(group, n - g0);
      float amax = 0;
      bool finite = true;  // a NaN or an infinity makes the group's scale NaN, so the products say so
      for (int64_t k = 0; k < len; ++k) {
        const float v = std::fabs(x[g0 + k]);
        finite = finite && v <= 3.4028235e38f;
        amax = std::max(amax, v);
      }
      const float s = finite ? amax / 127.0f : std::numeric_limits<float>::quiet_NaN();
      scale[gi] = s;
      for (int64_t k = 0; k < len; ++k) {
        float r = s > 0 ? x[g0 + k] / s : 0.0f;
        r = std::min(127.0f, std::max(-127.0f, r));
        // nearest, ties to even: adding and taking away 1.5 x 2^23 leaves the
        // integer that float32 rounding picks (|r| <= 127), at every width alike
        const float magic = 12582912.0f;
        r = (r + magic) - magic;
        q[g0 + k] = static_cast<int8_t>(r);
      }
    }
  }
};

const simd::Int8Kernels* kernels_at(Isa isa) {
  static const std::vector<Isa> runnable = int8_isas_for_this_cpu();
  EMBER_CHECK(std::find(runnable.begin(), runnable.end(), isa) != runnable.end(), "int8 product",
              "the " << isa_name(isa) << " kernel was asked for, but this CPU does not run it");
  if (isa == Isa::AVX512 && has_avx512_vnni()) return &simd::kInt8Avx512Vnni;
  if (isa == Isa::AVX512 || isa == Isa::AVX2) return &simd::kInt8Avx2;
  return nullptr;  // plain C
}

// ---- plain C: the same sums in the same order, one lane at a time ----
void int8_plain(const simd::Int8Tile& t, int mr, int nv) {
  for (int i = 0; i < mr; ++i)
    for (int64_t col = 0; col < std::min<int64_t>(t.cols, nv * kPanel); ++col) {
      const int64_t v = col / kPanel, r = col % kPanel;
      const int8_t* w = reinterpret_cast<const int8_t*>(t.w + v * t.panel_bytes);
      float f = 0;
      for (int64_t g = 0; g < t.groups; ++g) {
        int32_t sum = 0;
        for (int64_t k = g * t.group; k < (g + 1) * t.group; ++k)
          sum += int32_t(t.a[i * t.lda + k]) * int32_t(w[(k / 4) * 64 + r * 4 + k % 4]);
        const float s = t.w_scale[v * t.w_scale_ld + g * kPanel + r] * t.a_scale[i * t.a_scale_ld + g];
        f = std::fma(static_cast<float>(sum), s, f);
      }
      t.c[i * t.ldc + col] = f;
    }
}
void float_plain(const simd::FloatTile& t, int mr, int nv, bool bf16) {
  for (int i = 0; i < mr; ++i)
    for (int64_t col = 0; col < std::min<int64_t>(t.cols, nv * kPanel); ++col) {
      const int64_t v = col / kPanel, r = col % kPanel;
      const char* w = t.w + v * t.panel_bytes;
      float f = 0;
      for (int64_t g = 0; g < t.groups; ++g) {
        float s = 0;
        for (int64_t k = g * t.group; k < std::min(t.k, (g + 1) * t.group); ++k) {
          float wv;
          if (bf16) {
            uint16_t h;
            std::memcpy(&h, w + (k * kPanel + r) * 2, 2);
            wv = static_cast<float>(bfloat16::from_bits(h));
          } else {
            wv = static_cast<float>(static_cast<int8_t>(w[k * kPanel + r]));
          }
          s = std::fma(t.a[i * t.lda + k], wv, s);
        }
        f = bf16 ? s : std::fma(s, t.w_scale[v * t.w_scale_ld + g * kPanel + r], f);
      }
      t.c[i * t.ldc + col] = f;
    }
}

// body(t) for t < tasks, each once, from a shared counter (as step 6's).
template <typename F>
void each_task(int64_t tasks, bool parallel, const F& body) {
  if (!parallel || tasks <= 1) {
    for (int64_t t = 0; t < tasks; ++t) body(t);
    return;
  }
  std::atomic<int64_t> next{0};
  detail::parallel_for(std::min<int64_t>(get_num_threads(), tasks), 1, [&](int64_t, int64_t) {
    for (int64_t t = next.fetch_add(1, std::memory_order_relaxed); t < tasks; t = next.fetch_add(1, std::memory_order_relaxed))
      body(t);
  });
}

PackedWeight layout(WeightFormat format, Int8Mode mode, int64_t rows, int64_t cols, int64_t group) {
  PackedWeight w;
  w.format = format;
  w.mode = mode;
  w.rows = rows;
  w.cols = cols;
  w.group = group;
  w.padded_cols = (cols + group - 1) / group * group;
  w.groups = w.padded_cols / group;
  w.panels = (rows + kPanel - 1) / kPanel;
  w.data = aligned_bytes(w.panels * w.panel_bytes());
  std::memset(w.data.get(), 0, static_cast<size_t>(w.panels * w.panel_bytes()));
  return w;
}
}  // namespace

bool valid_int8_group(int64_t group) { return group == 32 || group == 64 || group == 128 || group == 256; }

const char* mode_name(Int8Mode mode) {
  return mode == Int8Mode::Int8Activations ? "int8 activations" : "float32 activations";
}

void quantize_row(const float* x, int64_t n, int64_t group, int8_t* q, float* scale) {
  EMBER_CHECK(n >= 0 && group >= 1, "quantize_row", "needs n >= 0 values and a group of at least 1, got n " << n << ", group " << group);
  detail::AtEachWidth<QuantizeRows>::run<float>(x, n, group, q, scale);
}

int64_t PackedWeight::panel_bytes() const {
  return kPanel * padded_cols * (format == WeightFormat::BFloat16 ? 2 : 1);
}
int64_t PackedWeight::bytes() const {
  return panels * panel_bytes() + (format == WeightFormat::Int8 ? panels * groups * kPanel * 4 : 0);
}

PackedWeight pack_int8(const int8_t* q, const float* scale, int64_t rows, int64_t cols, int64_t group, Int8Mode mode) {
  EMBER_CHECK(valid_int8_group(group), "pack_int8", "the group size must be 32, 64, 128 or 256, got " << group);
  EMBER_CHECK(rows >= 0 && cols >= 0, "pack_int8", "a weight of " << rows << " x " << cols);
  // -128 has no opposite in int8: the AVX2 kernel's sign trick would get it wrong
  for (int64_t i = 0; i < rows * cols; ++i)
    EMBER_CHECK(q[i] != -128, "pack_int8",
                "the value -128 at element " << i << " of the " << rows << " x " << cols
                                             << " weight: symmetric int8 weights lie in [-127, 127]");
  PackedWeight w = layout(WeightFormat::Int8, mode, rows, cols, group);
  const int64_t pb = w.panel_bytes();
  int8_t* d = reinterpret_cast<int8_t*>(w.data.get());
  for (int64_t j = 0; j < rows; ++j) {
    int8_t* panel = d + (j / kPanel) * pb;
    const int64_t r = j % kPanel;
    for (int64_t k = 0; k < cols; ++k) {
      const int8_t v = q[j * cols + k];
      if (mode == Int8Mode::Int8Activations) panel[(k / 4) * 64 + r * 4 + k % 4] = v;
      else panel[k * kPanel + r] = v;
    }
  }
  const int64_t n_scales = w.panels * w.groups * kPanel;
  w.scales = std::shared_ptr<float>(static_cast<float*>(allocator::allocate(static_cast<size_t>(n_scales) * 4)),
                                    [n_scales](float* p) { allocator::deallocate(p, static_cast<size_t>(n_scales) * 4); });
  std::fill(w.scales.get(), w.scales.get() + n_scales, 0.0f);
  for (int64_t j = 0; j < rows; ++j)
    for (int64_t g = 0; g < w.groups; ++g) w.scales.get()[(j / kPanel) * w.groups * kPanel + g * kPanel + j % kPanel] = scale[j * w.groups + g];
  return w;
}

PackedWeight pack_bf16(const uint16_t* src, int64_t rows, int64_t cols) {
  EMBER_CHECK(rows >= 0 && cols >= 0, "pack_bf16", "a weight of " << rows << " x " << cols);
  PackedWeight w = layout(WeightFormat::BFloat16, Int8Mode::FloatActivations, rows, cols, std::max<int64_t>(32, (cols + 31) / 32 * 32));
  const int64_t pb = w.panel_bytes();
  for (int64_t j = 0; j < rows; ++j) {
    uint16_t* panel = reinterpret_cast<uint16_t*>(w.data.get() + (j / kPanel) * pb);
    for (int64_t k = 0; k < cols; ++k) panel[k * kPanel + j % kPanel] = src[j * cols + k];
  }
  return w;
}

bool has_avx512_vnni() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni");
}

std::vector<Isa> int8_isas_for_this_cpu() { return isas_for_this_cpu(); }

const char* int8_instructions(Isa isa) {
  if (isa == Isa::AVX512 && has_avx512_vnni()) return "vpdpbusd";
  if (isa == Isa::Portable) return "plain C";
  return "vpmaddubsw";
}

void weight_product(const float* a, int64_t M, int64_t lda, const PackedWeight& w, float* c, int64_t ldc, Isa isa,
                    bool parallel) {
  const int64_t N = w.rows, K = w.cols;
  EMBER_CHECK(M >= 0 && lda >= K && ldc >= N && (M == 0 || (a && c)), "weight_product",
              "A of " << M << " rows " << lda << " apart and C of rows " << ldc << " apart do not fit a " << N << " x "
                      << K << " weight (lda >= " << K << ", ldc >= " << N << ")");
  if (M == 0 || N == 0) return;
  const simd::Int8Kernels* kern = kernels_at(isa);
  const bool int8_acts = w.format == WeightFormat::Int8 && w.mode == Int8Mode::Int8Activations;
  parallel = parallel && 2.0 * double(M) * double(N) * double(K) >= double(1 << 20);
  // int8 activations: every row of A quantized once, into rows padded with zeros to whole groups
  std::vector<int8_t> aq;
  std::vector<float> as;
  if (int8_acts) {
    aq.assign(static_cast<size_t>(M * w.padded_cols), 0);
    as.assign(static_cast<size_t>(M * w.groups), 0.0f);
    const int64_t rows_per_task = std::max<int64_t>(1, 8192 / std::max<int64_t>(K, 1));
    each_task((M + rows_per_task - 1) / rows_per_task, parallel && M > 1, [&](int64_t t) {
      for (int64_t i = t * rows_per_task; i < std::min(M, (t + 1) * rows_per_task); ++i)
        quantize_row(a + i * lda, K, w.group, aq.data() + i * w.padded_cols, as.data() + i * w.groups);
    });
  }
  const int mr_max = kern ? (M == 1 ? 1 : kern->mr) : 1;
  const int nv = kern ? (M == 1 ? kern->nv_row : kern->nv_rows) : 1;
  const int64_t chunks = (w.panels + nv - 1) / nv;
  const int64_t scale_ld = w.groups * kPanel;
  each_task(chunks, parallel, [&](int64_t t) {
    const int64_t p0 = t * nv;
    const int nvs = static_cast<int>(std::min<int64_t>(nv, w.panels - p0));
    const int64_t cols = std::min(N - p0 * kPanel, int64_t(nvs) * kPanel);
    for (int64_t i0 = 0; i0 < M; i0 += mr_max) {
      const int mr = static_cast<int>(std::min<int64_t>(mr_max, M - i0));
      if (int8_acts) {
        simd::Int8Tile tile;
        tile.groups = w.groups, tile.group = w.group;
        tile.a = aq.data() + i0 * w.padded_cols, tile.lda = w.padded_cols;
        tile.a_scale = as.data() + i0 * w.groups, tile.a_scale_ld = w.groups;
        tile.w = w.data.get() + p0 * w.panel_bytes(), tile.panel_bytes = w.panel_bytes();
        tile.w_scale = w.scales.get() + p0 * scale_ld, tile.w_scale_ld = scale_ld;
        tile.c = c + i0 * ldc + p0 * kPanel, tile.ldc = ldc, tile.cols = cols;
        if (kern) kern->int8[mr - 1][nvs - 1](tile);
        else int8_plain(tile, mr, nvs);
      } else {
        simd::FloatTile tile;
        const bool bf16 = w.format == WeightFormat::BFloat16;
        tile.groups = w.groups, tile.group = w.group, tile.k = K;
        tile.a = a + i0 * lda, tile.lda = lda;
        tile.w = w.data.get() + p0 * w.panel_bytes(), tile.panel_bytes = w.panel_bytes();
        if (!bf16) tile.w_scale = w.scales.get() + p0 * scale_ld, tile.w_scale_ld = scale_ld;
        tile.c = c + i0 * ldc + p0 * kPanel, tile.ldc = ldc, tile.cols = cols;
        if (kern) (bf16 ? kern->float_bf16 : kern->float_int8)[mr - 1][nvs - 1](tile);
        else float_plain(tile, mr, nvs, bf16);
      }
    }
  });
}

double measured_int8_peak(int threads, int repeats) {
  if (!has_avx512_vnni()) return 0;
  return best_loop_rate(simd::peak_loop_vnni, 24 * 64 * 2, threads, repeats);
}

double int8_error_bound(const float* a, const float* w, int64_t k, int64_t group, Int8Mode mode) {
  EMBER_CHECK(k >= 0 && group >= 1, "int8_error_bound", "needs k >= 0 and a group of at least 1, got k " << k << ", group " << group);
  const int64_t groups = (k + group - 1) / group;
  std::vector<int8_t> q(static_cast<size_t>(k));
  std::vector<float> sa(static_cast<size_t>(groups)), sw(static_cast<size_t>(groups));
  quantize_row(w, k, group, q.data(), sw.data());
  if (mode == Int8Mode::Int8Activations) quantize_row(a, k, group, q.data(), sa.data());
  const double rho = 0.5 + std::ldexp(1.0, -17), u = std::ldexp(1.0, -24);
  const double n = mode == Int8Mode::Int8Activations ? double(groups + 1) : double(group + groups + 1);
  const double gamma = n * u / (1 - n * u);
  double quant = 0, mags = 0;
  for (int64_t i = 0; i < k; ++i) {
    const double x = std::fabs(double(a[i])), y = std::fabs(double(w[i]));
    const double ag = mode == Int8Mode::Int8Activations ? double(sa[static_cast<size_t>(i / group)]) : 0.0;
    const double wg = double(sw[static_cast<size_t>(i / group)]);
    quant += rho * wg * x + rho * ag * y + rho * rho * ag * wg;
    mags += (x + rho * ag) * (y + rho * wg);
  }
  return quant + gamma * mags;
}

}  // namespace ember::gemm
