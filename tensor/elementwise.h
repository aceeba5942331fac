/// @file
/// The elementwise engine: apply a function to every element of one, two or
/// three broadcast, arbitrarily strided tensors, writing a fresh contiguous
/// output. Every elementwise op (add, exp, where, ...) and many backward rules
/// are one call to map1/map2/map3 with a small lambda.
///
/// How it works: all operands are viewed with the output's shape (broadcast
/// dims get stride 0), neighbouring dims that are contiguous for every operand
/// are merged ("coalesced"), and the innermost dim becomes a tight loop. When
/// every operand is contiguous in that loop the compiler can vectorize it.
#pragma once

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <type_traits>

#include "base/error.h"
#include "base/hooks.h"
#include "tensor/dtype.h"
#include "tensor/machine/vec_math.h"
#include "tensor/parallel.h"
#include "tensor/tensor.h"

// Forces a per-element lambda inline into the loop that calls it, so the
// loop vectorizes (GCC leaves larger lambdas, e.g. GELU's, as calls).
#define EMBER_INLINE __attribute__((always_inline))

namespace ember::detail {

// ---- loops at the CPU's SIMD width ----
// ember builds for baseline x86-64, where the compiler vectorizes a float
// loop 4 lanes wide (SSE2). at_width(loop) runs `loop` compiled three
// times: baseline, AVX2 and AVX-512, the one vec_math_isa() names (the
// widest the CPU has, or EMBER_SIMD's). `loop` and the per-element function
// inside it must be EMBER_INLINE, so that they are compiled into each copy.
// No multiply-add is fused into an FMA (fp-contract=off), so the three copies
// do the same operations per element and give the same bits.
/// 2 for AVX-512, 1 for AVX2, 0 for the baseline (SSE2).
inline int simd_width_level() {
  static const int level = [] {
    const std::string isa = vec_math_isa();
    return isa == "AVX-512" ? 2 : isa == "AVX2" ? 1 : 0;
  }();
  return level;
}
template <typename L>
[[gnu::target("avx2"), gnu::optimize("fp-contract=off")]] void loop_avx2(const L& loop) {
  loop();
}
template <typename L>
[[gnu::target("avx512f"), gnu::optimize("fp-contract=off")]] void loop_avx512(const L& loop) {
  loop();
}
template <typename L>
void at_width(const L& loop) {
  switch (simd_width_level()) {
    case 2: loop_avx512(loop); break;
    case 1: loop_avx2(loop); break;
    default: loop(); break;
  }
}

template <size_t N>
struct StridedLoop {
  Shape shape;                    // coalesced shape
  std::array<Shape, N> strides;   // in bytes

  StridedLoop(const Shape& s, const std::array<Shape, N>& st) {
    // Drop size-1 dims, then merge dim i into i-1 where that is contiguous
    // for every operand.
    for (size_t d = 0; d < s.size(); ++d) {
      if (s[d] == 1) continue;
      bool merge = !shape.empty();
      for (size_t k = 0; k < N && merge; ++k) merge = strides[k].back() == st[k][d] * s[d];
      if (merge) {
        shape.back() *= s[d];
        for (size_t k = 0; k < N; ++k) strides[k].back() = st[k][d];
      } else {
        shape.push_back(s[d]);
        for (size_t k = 0; k < N; ++k) strides[k].push_back(st[k][d]);
      }
    }
    if (shape.empty()) {
      shape.push_back(1);
      for (size_t k = 0; k < N; ++k) strides[k].push_back(0);
    }
  }

  /// The operands' addresses at the i-th element (row-major) of the first
  /// `dims` coalesced dims, from base; its index goes to idx if given.
  std::array<char*, N> at(std::array<char*, N> p, int64_t i, int64_t dims, int64_t* idx = nullptr) const {
    for (int64_t d = dims - 1; d >= 0; --d) {
      const int64_t j = i % shape[d];
      i /= shape[d];
      if (idx) idx[d] = j;
      for (size_t k = 0; k < N; ++k) p[k] += j * strides[k][d];
    }
    return p;
  }

  /// row(ptrs, n, inner_strides) is called once per innermost row.
  template <typename Row>
  void run(std::array<char*, N> base, const Row& row) const {
    const int64_t nd = static_cast<int64_t>(shape.size());
    const int64_t inner = shape.back();
    int64_t rows = 1;
    for (int64_t d = 0; d + 1 < nd; ++d) rows *= shape[d];
    if (rows * inner == 0) return;
    std::array<int64_t, N> inner_st;
    for (size_t k = 0; k < N; ++k) inner_st[k] = strides[k].back();
    // Fewer rows than threads (a tensor that coalesces into one long row,
    // as every contiguous one does): each row is cut into pieces instead.
    // Every element is its own, so the cut changes no bits.
    const int64_t threads = get_num_threads();
    if (rows < threads && inner >= 2 * kGrain) {
      const int64_t cuts = std::min<int64_t>(inner / kGrain, threads);
      parallel_for(rows * cuts, 1, [&](int64_t i0, int64_t i1) {
        for (int64_t i = i0; i < i1; ++i) {
          const int64_t begin = inner * (i % cuts) / cuts, end = inner * (i % cuts + 1) / cuts;
          std::array<char*, N> p = at(base, i / cuts, nd - 1);
          for (size_t k = 0; k < N; ++k) p[k] += begin * inner_st[k];
          row(p, end - begin, inner_st);
        }
      });
      return;
    }
    if (nd >= 2 && crosses_rows()) {
      run_in_tiles(base, row);
      return;
    }
    int64_t grain = std::max<int64_t>(1, kGrain / std::max<int64_t>(inner, 1));
    parallel_for(rows, grain, [&](int64_t r0, int64_t r1) {
      // Odometer over the outer dims, starting at row r0.
      Shape idx(std::max<int64_t>(nd - 1, 0), 0);
      std::array<char*, N> p = at(base, r0, nd - 1, idx.data());
      for (int64_t r = r0; r < r1; ++r) {
        row(p, inner, inner_st);
        for (int64_t d = nd - 2; d >= 0; --d) {
          for (size_t k = 0; k < N; ++k) p[k] += strides[k][d];
          if (++idx[d] < shape[d]) break;
          for (size_t k = 0; k < N; ++k) p[k] -= strides[k][d] * shape[d];
          idx[d] = 0;
        }
      }
    });
  }

  // Whether an operand runs through memory faster along the second-to-last
  // dim than along the last (a transpose): then a row of the output reads
  // one element from each of many cache lines of that operand.
  bool crosses_rows() const {
    const size_t nd = shape.size();
    for (size_t k = 0; k < N; ++k) {
      const int64_t in_row = std::abs(strides[k][nd - 1]), across = std::abs(strides[k][nd - 2]);
      if (across != 0 && in_row > across && in_row > 64) return true;
    }
    return false;
  }

  // The last two dims in tiles of kTileRows x kTileCols, so that the cache
  // lines a tile's first row brings in are used by its next rows too. The
  // tiles are narrow: the lines a row of a tile reads lie one operand row
  // apart, and at a power-of-two row length (2048 floats: 8 KiB) they all
  // fall into one set of the L1 cache, which holds 8 to 12 of them; 64 of
  // them evict each other before the next row comes back to them (a
  // transposed copy of 2048 x 2048 took 4.9 ms in 16 x 64 tiles, 1.6 in
  // 128 x 8; of 2000 x 2000, 1.8 and 2.0).
  template <typename Row>
  void run_in_tiles(std::array<char*, N> base, const Row& row) const {
    constexpr int64_t kTileRows = 128, kTileCols = 8;
    const int64_t nd = static_cast<int64_t>(shape.size());
    const int64_t R = shape[nd - 2], C = shape[nd - 1];
    int64_t outer = 1;
    for (int64_t d = 0; d + 2 < nd; ++d) outer *= shape[d];
    std::array<int64_t, N> in_row, across;
    for (size_t k = 0; k < N; ++k) {
      in_row[k] = strides[k][nd - 1];
      across[k] = strides[k][nd - 2];
    }
    const int64_t row_tiles = (R + kTileRows - 1) / kTileRows;
    const int64_t grain = std::max<int64_t>(1, kGrain / (kTileRows * C));
    parallel_for(outer * row_tiles, grain, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) {
        const std::array<char*, N> p = at(base, i / row_tiles, nd - 2);
        const int64_t r0 = (i % row_tiles) * kTileRows, r1 = std::min(R, r0 + kTileRows);
        for (int64_t c0 = 0; c0 < C; c0 += kTileCols) {
          const int64_t w = std::min(kTileCols, C - c0);
          for (int64_t r = r0; r < r1; ++r) {
            std::array<char*, N> q;
            for (size_t k = 0; k < N; ++k) q[k] = p[k] + r * across[k] + c0 * in_row[k];
            row(q, w, in_row);
          }
        }
      }
    });
  }
};

// The work rule of the elementwise engine (for inspect/'s profiler): one
// floating-point operation per output element (an exp or an erf costs more
// than an add; the rule does not see it), every operand read once and the
// output written once.
inline void note_elementwise(const Tensor& out, std::initializer_list<const Tensor*> inputs, bool computes = true) {
  if (!tensor_observer()) return;
  double read = 0;
  for (const Tensor* t : inputs) read += static_cast<double>(t->numel()) * static_cast<double>(dtype_size(t->dtype()));
  const double n = static_cast<double>(out.numel());
  note_work(computes ? n : 0.0, read, n * static_cast<double>(dtype_size(out.dtype())));
}

inline Shape byte_strides(const Tensor& t, const Shape& target) {
  Shape st = broadcast_strides(t.shape(), t.stride(), target);
  for (auto& s : st) s *= static_cast<int64_t>(dtype_size(t.dtype()));
  return st;
}

// The elements of a contiguous operand. A bool tensor may be read as bytes
// (A = uint8_t, 0 or 1): GCC vectorizes a select on a loaded byte
// (where, masked_fill), not on a loaded bool.
template <typename A>
const A* elements_of(const Tensor& t) {
  if constexpr (std::is_same_v<A, uint8_t>) {
    EMBER_CHECK(t.dtype() == kBool, "elements_of", "bytes are read from a bool tensor, not " << dtype_name(t.dtype()));
    return static_cast<const A*>(t.raw_data());
  } else {
    return t.data_ptr<A>();
  }
}

/// out[i] = f(a[i])
template <typename O, typename A, typename F>
Tensor map1(const Tensor& a, const F& f, DType out_dtype = dtype_of<O>::value) {
  Tensor out = empty(a.shape(), out_dtype);
  note_elementwise(out, {&a});
  if (a.is_contiguous()) {
    const A* pa = elements_of<A>(a);
    O* po = out.data_ptr<O>();
    parallel_for(a.numel(), kGrain, [&](int64_t b, int64_t e) {
      at_width([&]() EMBER_INLINE {
        for (int64_t i = b; i < e; ++i) po[i] = f(pa[i]);
      });
    });
    return out;
  }
  StridedLoop<2> loop(a.shape(), {byte_strides(out, a.shape()), byte_strides(a, a.shape())});
  loop.run({static_cast<char*>(out.raw_data()), static_cast<char*>(a.raw_data())},
           [&](std::array<char*, 2> p, int64_t n, std::array<int64_t, 2> st) {
             O* po = reinterpret_cast<O*>(p[0]);
             const A* pa = reinterpret_cast<const A*>(p[1]);
             if (st[1] == sizeof(A)) {  // a run of a (a slice of rows, say): as the contiguous loop
               at_width([&]() EMBER_INLINE {
                 for (int64_t i = 0; i < n; ++i) po[i] = f(pa[i]);
               });
             } else {
               for (int64_t i = 0; i < n; ++i) po[i] = f(*reinterpret_cast<const A*>(p[1] + i * st[1]));
             }
           });
  return out;
}

/// out[i] = f(a[i], b[i]) with broadcasting.
template <typename O, typename A, typename B, typename F>
Tensor map2(const Tensor& a, const Tensor& b, const F& f, const char* op, DType out_dtype = dtype_of<O>::value) {
  Shape shape = a.shape() == b.shape() ? a.shape() : broadcast_shapes(a.shape(), b.shape(), op);
  Tensor out = empty(shape, out_dtype);
  note_elementwise(out, {&a, &b});
  O* po = out.data_ptr<O>();
  if (a.shape() == b.shape() && a.is_contiguous() && b.is_contiguous()) {
    const A* pa = elements_of<A>(a);
    const B* pb = elements_of<B>(b);
    parallel_for(out.numel(), kGrain, [&](int64_t s, int64_t e) {
      at_width([&]() EMBER_INLINE {
        for (int64_t i = s; i < e; ++i) po[i] = f(pa[i], pb[i]);
      });
    });
    return out;
  }
  StridedLoop<3> loop(shape, {byte_strides(out, shape), byte_strides(a, shape), byte_strides(b, shape)});
  loop.run({static_cast<char*>(out.raw_data()), static_cast<char*>(a.raw_data()), static_cast<char*>(b.raw_data())},
           [&](std::array<char*, 3> p, int64_t n, std::array<int64_t, 3> st) {
             O* o = reinterpret_cast<O*>(p[0]);
             const A* x = reinterpret_cast<const A*>(p[1]);
             const B* y = reinterpret_cast<const B*>(p[2]);
             if (st[1] == sizeof(A) && st[2] == sizeof(B)) {
               at_width([&]() EMBER_INLINE {
                 for (int64_t i = 0; i < n; ++i) o[i] = f(x[i], y[i]);
               });
             } else if (st[1] == sizeof(A) && st[2] == 0) {
               const B y0 = *y;
               at_width([&]() EMBER_INLINE {
                 for (int64_t i = 0; i < n; ++i) o[i] = f(x[i], y0);
               });
             } else if (st[1] == 0 && st[2] == sizeof(B)) {
               const A x0 = *x;
               at_width([&]() EMBER_INLINE {
                 for (int64_t i = 0; i < n; ++i) o[i] = f(x0, y[i]);
               });
             } else {
               for (int64_t i = 0; i < n; ++i)
                 o[i] = f(*reinterpret_cast<const A*>(p[1] + i * st[1]), *reinterpret_cast<const B*>(p[2] + i * st[2]));
             }
           });
  return out;
}

/// out[i] = f(a[i], b[i], c[i]) with broadcasting (where, masked ops, fused backward rules).
template <typename O, typename A, typename B, typename C, typename F>
Tensor map3(const Tensor& a, const Tensor& b, const Tensor& c, const F& f, const char* op,
            DType out_dtype = dtype_of<O>::value) {
  Shape shape = broadcast_shapes(broadcast_shapes(a.shape(), b.shape(), op), c.shape(), op);
  Tensor out = empty(shape, out_dtype);
  note_elementwise(out, {&a, &b, &c});
  StridedLoop<4> loop(shape, {byte_strides(out, shape), byte_strides(a, shape), byte_strides(b, shape),
                              byte_strides(c, shape)});
  loop.run({static_cast<char*>(out.raw_data()), static_cast<char*>(a.raw_data()), static_cast<char*>(b.raw_data()),
            static_cast<char*>(c.raw_data())},
           [&](std::array<char*, 4> p, int64_t n, std::array<int64_t, 4> st) {
             O* o = reinterpret_cast<O*>(p[0]);
             const A* x = reinterpret_cast<const A*>(p[1]);
             const B* y = reinterpret_cast<const B*>(p[2]);
             const C* z = reinterpret_cast<const C*>(p[3]);
             if (st[1] == sizeof(A) && st[2] == sizeof(B) && st[3] == sizeof(C)) {
               at_width([&]() EMBER_INLINE {
                 for (int64_t i = 0; i < n; ++i) o[i] = f(x[i], y[i], z[i]);
               });
             } else if (st[1] == sizeof(A) && st[2] == sizeof(B) && st[3] == 0) {  // where(mask, x, scalar)
               const C z0 = *z;
               at_width([&]() EMBER_INLINE {
                 for (int64_t i = 0; i < n; ++i) o[i] = f(x[i], y[i], z0);
               });
             } else {
               for (int64_t i = 0; i < n; ++i)
                 o[i] = f(*reinterpret_cast<const A*>(p[1] + i * st[1]), *reinterpret_cast<const B*>(p[2] + i * st[2]),
                          *reinterpret_cast<const C*>(p[3] + i * st[3]));
             }
           });
  return out;
}

/// dst[i] = f(src[i]), src broadcast to dst's shape; dst is only written
/// (it may be uninitialized).
template <typename D, typename S, typename F>
void assign(const Tensor& dst, const Tensor& src, const F& f) {
  note_elementwise(dst, {&src}, /*computes=*/false);  // a copy (or a dtype conversion)
  const Shape& shape = dst.shape();
  StridedLoop<2> loop(shape, {byte_strides(dst, shape), byte_strides(src, shape)});
  loop.run({static_cast<char*>(dst.raw_data()), static_cast<char*>(src.raw_data())},
           [&](std::array<char*, 2> p, int64_t n, std::array<int64_t, 2> st) {
             D* d = reinterpret_cast<D*>(p[0]);
             const S* s = reinterpret_cast<const S*>(p[1]);
             if (st[0] == sizeof(D) && st[1] == sizeof(S)) {  // a run of each: a dtype conversion, a slice
               at_width([&]() EMBER_INLINE {
                 for (int64_t i = 0; i < n; ++i) d[i] = f(s[i]);
               });
             } else if (st[0] == sizeof(D) && st[1] == 0) {  // one value broadcast along the run
               const D v = f(*s);
               for (int64_t i = 0; i < n; ++i) d[i] = v;
             } else {
               for (int64_t i = 0; i < n; ++i)
                 *reinterpret_cast<D*>(p[0] + i * st[0]) = f(*reinterpret_cast<const S*>(p[1] + i * st[1]));
             }
           });
}

/// dst[i] = f(dst[i], src[i]) in place, src broadcast to dst's shape.
template <typename D, typename S, typename F>
void apply_inplace(const Tensor& dst, const Tensor& src, const F& f) {
  note_elementwise(dst, {&dst, &src});
  const Shape& shape = dst.shape();
  if (dst.is_contiguous() && src.is_contiguous() && src.shape() == shape) {
    D* pd = dst.data_ptr<D>();
    const S* ps = src.data_ptr<S>();
    parallel_for(dst.numel(), kGrain, [&](int64_t b, int64_t e) {
      at_width([&]() EMBER_INLINE {
        for (int64_t i = b; i < e; ++i) pd[i] = f(pd[i], ps[i]);
      });
    });
    return;
  }
  StridedLoop<2> loop(shape, {byte_strides(dst, shape), byte_strides(src, shape)});
  loop.run({static_cast<char*>(dst.raw_data()), static_cast<char*>(src.raw_data())},
           [&](std::array<char*, 2> p, int64_t n, std::array<int64_t, 2> st) {
             D* pd = reinterpret_cast<D*>(p[0]);
             const S* ps = reinterpret_cast<const S*>(p[1]);
             if (st[0] == sizeof(D) && st[1] == sizeof(S)) {
               at_width([&]() EMBER_INLINE {
                 for (int64_t i = 0; i < n; ++i) pd[i] = f(pd[i], ps[i]);
               });
             } else if (st[0] == sizeof(D) && st[1] == 0) {  // a scalar, or a broadcast column
               const S s0 = *ps;
               at_width([&]() EMBER_INLINE {
                 for (int64_t i = 0; i < n; ++i) pd[i] = f(pd[i], s0);
               });
             } else {
               for (int64_t i = 0; i < n; ++i) {
                 D* d = reinterpret_cast<D*>(p[0] + i * st[0]);
                 *d = f(*d, *reinterpret_cast<const S*>(p[1] + i * st[1]));
               }
             }
           });
}

/// An ember::Error naming op unless x is float32 or float64.
inline void check_floating(const Tensor& x, const char* op) {
  EMBER_CHECK(is_floating(x.dtype()), op,
              "expected a float32 or float64 tensor, got " << dtype_name(x.dtype()) << " of shape " << shape_str(x.shape()));
}

/// out[i] = f(x[i]) for a float32 or float64 x, one pass: the kernel of an
/// elementwise op that is its formula on one number. Another dtype is an
/// error naming op.
template <typename F>
Tensor map_floats(const Tensor& x, const char* op, const F& f) {
  check_floating(x, op);
  return EMBER_DISPATCH_FLOAT(x.dtype(), op, [&]<typename T>() {
    return map1<T, T>(x, [&](T v) EMBER_INLINE { return static_cast<T>(f(v)); });
  });
}

}  // namespace ember::detail
