// Step 8's tiles (tensor/gemm/int8.h), written once for any width and
// instantiated by tensor/gemm/simd/int8_avx512.cpp and int8_avx2.cpp with
// their intrinsics. A call computes MR rows of C times NV panels of 16
// outputs, over the whole depth, group by group:
//
//   int8 x int8    per group, MR x NV x (16 / L) int32 accumulators, each
//                  step adding 4 products per lane exactly (V::dot); at the
//                  group's end each is converted to float32 (exact: below
//                  2^24) and added with one FMA, scaled by sa * sw;
//   float x weight per group, a float32 sum per lane, k in order (one FMA
//                  per k), then added to the total with one FMA by the
//                  group's scale (bfloat16: no scale, one group).
//
// The sum of one element of C runs in that order in one lane, whatever L,
// MR or NV, so every width gives the bits tensor/gemm/step8_int8.cpp's
// plain C loops give.
#pragma once

#include <cstdint>
#include <cstring>
#include <utility>

namespace ember::gemm::simd {

/// One call of an int8 x int8 tile.
struct Int8Tile {
  int64_t groups = 0, group = 0;
  const int8_t* a = nullptr;  // row 0 of MR quantized rows of A
  int64_t lda = 0;
  const float* a_scale = nullptr;  // [i][g], rows a_scale_ld apart
  int64_t a_scale_ld = 0;
  const char* w = nullptr;  // the first of NV panels, panel_bytes apart
  int64_t panel_bytes = 0;
  const float* w_scale = nullptr;  // the first panel's [g][16]; the next w_scale_ld floats on
  int64_t w_scale_ld = 0;
  float* c = nullptr;
  int64_t ldc = 0, cols = 0;  // cols: columns of C from c (at most NV x 16)
};
/// One call of a float32 x (int8 or bfloat16) tile.
struct FloatTile {
  int64_t groups = 0, group = 0, k = 0;  // k: A's length (the panels are padded past it)
  const float* a = nullptr;
  int64_t lda = 0;
  const char* w = nullptr;
  int64_t panel_bytes = 0;
  const float* w_scale = nullptr;  // int8 only
  int64_t w_scale_ld = 0;
  float* c = nullptr;
  int64_t ldc = 0, cols = 0;
};
using Int8TileFn = void (*)(const Int8Tile&);
using FloatTileFn = void (*)(const FloatTile&);

inline constexpr int kMaxMr = 4, kMaxNv = 4;
/// A width's tiles: [MR - 1][NV - 1].
struct Int8Kernels {
  Int8TileFn int8[kMaxMr][kMaxNv];
  FloatTileFn float_int8[kMaxMr][kMaxNv];
  FloatTileFn float_bf16[kMaxMr][kMaxNv];
  int mr, nv_rows, nv_row;  // MR for products of many rows (and their NV), NV for one row
};

// Stores L lanes of v at c, or the first n (n < L) through a buffer.
template <class V>
inline void store_lanes(float* c, typename V::F v, int64_t n) {
  if (n >= V::L) return V::storeu(c, v);
  float tmp[V::L];
  V::storeu(tmp, v);
  std::memcpy(c, tmp, static_cast<size_t>(n) * sizeof(float));
}

// The MR x NV x 16 totals to C, rows ldc apart, the columns past `cols` left out.
template <class V, int MR, int NV>
inline void store_tile(const typename V::F (&f)[MR][NV][16 / V::L], float* c, int64_t ldc, int64_t cols) {
#pragma GCC unroll 4
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v)
#pragma GCC unroll 2
      for (int p = 0; p < 16 / V::L; ++p) {
        const int64_t col = v * 16 + p * V::L;
        if (col < cols) store_lanes<V>(c + i * ldc + col, f[i][v][p], cols - col);
      }
}

template <class V, int MR, int NV>
void int8_tile(const Int8Tile& t) {
  constexpr int PV = 16 / V::L;  // vectors per panel
  typename V::F f[MR][NV][PV];
#pragma GCC unroll 4
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v)
#pragma GCC unroll 2
      for (int p = 0; p < PV; ++p) f[i][v][p] = V::fzero();
  const int64_t steps = t.group / 4;
  for (int64_t g = 0; g < t.groups; ++g) {
    typename V::I acc[MR][NV][PV], ws[NV][PV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v)
#pragma GCC unroll 2
      for (int p = 0; p < PV; ++p) {
        ws[v][p] = V::izero();
#pragma GCC unroll 4
        for (int i = 0; i < MR; ++i) acc[i][v][p] = V::izero();
      }
    const char* w = t.w + g * t.group * 16;
    const int8_t* a = t.a + g * t.group;
    for (int64_t s = 0; s < steps; ++s, w += 64, a += 4) {
      typename V::I b[NV][PV];
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v)
#pragma GCC unroll 2
        for (int p = 0; p < PV; ++p) {
          b[v][p] = V::load(w + v * t.panel_bytes + p * (64 / PV));
          if constexpr (V::kOffset) ws[v][p] = V::wsum(ws[v][p], b[v][p]);
        }
#pragma GCC unroll 4
      for (int i = 0; i < MR; ++i) {
        int32_t four;
        std::memcpy(&four, a + i * t.lda, 4);
        const typename V::A ai = V::prep(four);
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v)
#pragma GCC unroll 2
          for (int p = 0; p < PV; ++p) acc[i][v][p] = V::dot(acc[i][v][p], ai, b[v][p]);
      }
    }
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v)
#pragma GCC unroll 2
      for (int p = 0; p < PV; ++p) {
        const typename V::F sw = V::loadu(t.w_scale + v * t.w_scale_ld + g * 16 + p * V::L);
#pragma GCC unroll 4
        for (int i = 0; i < MR; ++i) {
          typename V::I exact = acc[i][v][p];
          if constexpr (V::kOffset) exact = V::correct(exact, ws[v][p]);
          const typename V::F s = V::mul(sw, V::set1(t.a_scale[i * t.a_scale_ld + g]));
          f[i][v][p] = V::fmadd(V::cvt(exact), s, f[i][v][p]);
        }
      }
  }
  store_tile<V, MR, NV>(f, t.c, t.ldc, t.cols);
}

// Bf16: the panels hold bfloat16 (one group, no scale); else int8 and scales.
template <class V, int MR, int NV, bool Bf16>
void float_tile(const FloatTile& t) {
  constexpr int PV = 16 / V::L;
  constexpr int64_t E = Bf16 ? 2 : 1;  // bytes per weight
  typename V::F f[MR][NV][PV];
#pragma GCC unroll 4
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v)
#pragma GCC unroll 2
      for (int p = 0; p < PV; ++p) f[i][v][p] = V::fzero();
  for (int64_t g = 0; g < t.groups; ++g) {
    const int64_t k0 = g * t.group, k1 = k0 + t.group < t.k ? k0 + t.group : t.k;
    typename V::F s[MR][NV][PV];
#pragma GCC unroll 4
    for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v)
#pragma GCC unroll 2
        for (int p = 0; p < PV; ++p) s[i][v][p] = V::fzero();
    for (int64_t k = k0; k < k1; ++k) {
      typename V::F w[NV][PV];
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v)
#pragma GCC unroll 2
        for (int p = 0; p < PV; ++p) {
          const char* at = t.w + v * t.panel_bytes + (k * 16 + p * V::L) * E;
          if constexpr (Bf16) w[v][p] = V::widen_bf16(at);
          else w[v][p] = V::widen_int8(at);
        }
#pragma GCC unroll 4
      for (int i = 0; i < MR; ++i) {
        const typename V::F x = V::set1(t.a[i * t.lda + k]);
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v)
#pragma GCC unroll 2
          for (int p = 0; p < PV; ++p) s[i][v][p] = V::fmadd(x, w[v][p], s[i][v][p]);
      }
    }
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v)
#pragma GCC unroll 2
      for (int p = 0; p < PV; ++p) {
        if constexpr (Bf16) {
#pragma GCC unroll 4
          for (int i = 0; i < MR; ++i) f[i][v][p] = s[i][v][p];
        } else {
          const typename V::F sw = V::loadu(t.w_scale + v * t.w_scale_ld + g * 16 + p * V::L);
#pragma GCC unroll 4
          for (int i = 0; i < MR; ++i) f[i][v][p] = V::fmadd(s[i][v][p], sw, f[i][v][p]);
        }
      }
  }
  store_tile<V, MR, NV>(f, t.c, t.ldc, t.cols);
}

// The table of every (MR, NV) up to kMaxMr x kMaxNv.
template <class V, int MR, int... NV>
constexpr void fill_row(Int8Kernels& k, std::integer_sequence<int, NV...>) {
  ((k.int8[MR - 1][NV] = int8_tile<V, MR, NV + 1>), ...);
  ((k.float_int8[MR - 1][NV] = float_tile<V, MR, NV + 1, false>), ...);
  ((k.float_bf16[MR - 1][NV] = float_tile<V, MR, NV + 1, true>), ...);
}
template <class V>
constexpr Int8Kernels int8_kernels(int mr, int nv_rows, int nv_row) {
  Int8Kernels k{};
  fill_row<V, 1>(k, std::make_integer_sequence<int, kMaxNv>{});
  fill_row<V, 2>(k, std::make_integer_sequence<int, kMaxNv>{});
  fill_row<V, 3>(k, std::make_integer_sequence<int, kMaxNv>{});
  fill_row<V, 4>(k, std::make_integer_sequence<int, kMaxNv>{});
  k.mr = mr, k.nv_rows = nv_rows, k.nv_row = nv_row;
  return k;
}

extern const Int8Kernels kInt8Avx512Vnni;  // int8_avx512.cpp
float peak_loop_vnni(int64_t iters);        // int8_avx512.cpp
extern const Int8Kernels kInt8Avx2;        // int8_avx2.cpp

}  // namespace ember::gemm::simd
