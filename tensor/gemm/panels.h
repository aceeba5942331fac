/// @file
/// Step 4's machinery, shared by steps 4-7: packing blocks of A and B into
/// panels, and walking the panels tile by tile with a microkernel.
///
/// A block of A (mc rows, kc columns) is packed as mc/MR micro-panels, each
/// MR rows wide and stored column after column: a[k][0..MR). A block of B
/// (kc rows, nc columns) as nc/NR micro-panels stored row after row:
/// b[k][0..NR). The microkernel then reads both panels front to back, at
/// unit stride, whatever the strides of A and B were (a transposed view is
/// just packed in a different loop order): packing is where the layout
/// question is answered, once per block, instead of in the inner loop. Rows
/// or columns past the matrix's edge are packed as zeros, so the microkernel
/// always computes a full MR x NR tile; the edge tile is written through a
/// small buffer (tile_through_buffer).
///
/// bfloat16 panels (step 7) hold pairs: for each pair of k, a[k/2][i][0..2)
/// and b[k/2][j][0..2), the layout vdpbf16ps multiplies (a pair of A
/// broadcast as one 32-bit value against 16 pairs of B); an odd kc ends
/// with a zero. Packing is also where float32 becomes bfloat16: each value
/// is rounded as it is copied, in a loop the compiler vectorizes.
#pragma once

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <cstring>
#include <functional>
#include <new>
#include <type_traits>

#include "tensor/bfloat16_each.h"
#include "tensor/gemm/gemm.h"
#include "tensor/storage.h"

namespace ember::gemm {

/// A microkernel (tensor/gemm/microkernels.h): the MR x NR tile of C at c
/// (rows ldc apart) gets the product of the two packed micro-panels over kc,
/// stored, or added to what is there when `accumulate`.
using MicroKernel = void (*)(int64_t kc, const void* a, const void* b, float* c, int64_t ldc, bool accumulate);

struct Kernel {
  int mr = 0, nr = 0;
  MicroKernel run = nullptr;
  bool bf16_pairs = false;  // the panels hold bfloat16 pairs (else float32)
  const char* name = "";
  int k_align = 1;          // the panels' depth is a multiple of this (2 for pairs)
};

/// Step 4's microkernel in plain C (MR 4, NR 16): the portable one, for
/// CPUs without AVX2 (tensor/gemm/step4_packed.cpp).
Kernel portable_kernel();

// ---- packing ----
//
// A block of A and a block of B are packed by one function: B's panels are
// A's panels of B transposed (panel[k][j] = B[k][j] = Bt[j][k]). A "row" r
// below is a row of A or a column of B; `unit` is MR or NR.

/// What the panels hold: float32 as it is (steps 4-6); float32 rounded to
/// bfloat16 with each pair of k swapped, k + 1 first, the order vdpbf16ps
/// adds them in (step 7's fallback); or bfloat16 pairs (step 7, vdpbf16ps).
/// Both pair forms pad the depth to even with zeros.
enum class Packing { Plain, Bf16PairsSwapped, Bf16Pairs };

/// The depth a panel holds: kc, or kc rounded up to even for pairs.
inline int64_t padded_depth(int k_align, int64_t kc) { return (kc + k_align - 1) / k_align * k_align; }

/// The bits of the bfloat16 nearest to each of n floats (tensor/bfloat16.h
/// has the rule and the loop), at the baseline width.
inline void bf16_bits_of(const float* src, uint16_t* dst, int64_t n) { bf16_bits_of_each(src, dst, n); }

/// dst[c * dst_stride + r] = src[r * src_stride + c] for r < rows, c < cols,
/// 32-bit values (floats, or pairs of bfloat16), in register tiles at the
/// widest width this CPU runs (tensor/gemm/simd/isa_impl.h).
void transpose32(const void* src, int64_t src_stride, int64_t rows, int64_t cols, void* dst, int64_t dst_stride);
/// bf16_bits_of at the widest width this CPU runs (the same bits).
void to_bf16_bits(const float* src, uint16_t* dst, int64_t n);
/// A block of float32 whose lines of k are at unit stride (line k at
/// src + k * ks, `rows` values) rounded straight into bfloat16 pair panels
/// of `unit` rows over depth kc (padded to even): pack_along_r's work for
/// Packing::Bf16Pairs in one pass (tensor/gemm/simd/isa_impl.h).
void to_bf16_pair_panels(const float* src, int64_t ks, int64_t rows, int64_t kc, int unit, void* dst);

/// n values of m starting at (r, k), along k or along r, into out: as float32
/// (rounded to bfloat16 when `round`), or as bfloat16 bits (P = uint16_t).
template <typename P, typename S>
void read_line(View<S> m, int64_t r, int64_t k, int64_t n, bool along_k, P* out, bool round) {
  const S* p = m.data + r * m.row_stride + k * m.col_stride;
  const int64_t step = along_k ? m.col_stride : m.row_stride;
  alignas(64) float tmp[1024];
  for (int64_t done = 0; done < n; done += 1024) {  // in pieces of at most 1024
    const int64_t len = std::min<int64_t>(1024, n - done);
    const S* q = p + done * step;
    if constexpr (std::is_same_v<S, bfloat16>) {
      for (int64_t i = 0; i < len; ++i) {
        if constexpr (std::is_same_v<P, uint16_t>) out[done + i] = q[i * step].bits;
        else out[done + i] = float_from_bf16_bits(q[i * step].bits);
      }
    } else {
      const float* src = q;
      if (step != 1) {
        for (int64_t i = 0; i < len; ++i) tmp[i] = q[i * step];
        src = tmp;
      }
      if constexpr (std::is_same_v<P, uint16_t>) {
        to_bf16_bits(src, out + done, len);
      } else if (round) {
        alignas(64) uint16_t bits[1024];
        to_bf16_bits(src, bits, len);
        for (int64_t i = 0; i < len; ++i) out[done + i] = float_from_bf16_bits(bits[i]);
      } else {
        std::memcpy(out + done, src, static_cast<size_t>(len) * sizeof(float));
      }
    }
  }
}

/// lo[i], hi[i] -> out[2i], out[2i+1] for i < n (SSE2, tensor/gemm/microkernels.cpp).
void interleave16(const uint16_t* lo, const uint16_t* hi, int64_t n, uint16_t* out);

// The longest line packing reads at once, and the most rows of a panel.
inline constexpr int64_t kMaxLine = 4096, kMaxUnit = 64, kMaxDepth = 1024;

/// Packing a source whose unit stride runs along k (a row-major A, a
/// transposed B): each of a panel's rows becomes a row of 32-bit values
/// (floats, or bfloat16 pairs: the pairs of k are adjacent already), and the
/// panel is their transpose, done in register tiles.
template <typename S>
void pack_along_k(View<S> m, int64_t r0, int64_t rows, int64_t p0, int64_t kc, int unit, void* dst, Packing how) {
  const bool pairs = how != Packing::Plain;
  const int64_t depth = padded_depth(pairs ? 2 : 1, kc), width = how == Packing::Bf16Pairs ? depth / 2 : depth;
  alignas(64) static thread_local uint32_t staged[kMaxUnit * kMaxDepth];  // a panel's rows, as 32-bit values
  alignas(64) float line[kMaxDepth];
  for (int64_t s = 0; s < rows; s += unit) {
    const int64_t n = std::min<int64_t>(unit, rows - s), r = r0 + s;
    char* panel = static_cast<char*>(dst) + s * depth * (how == Packing::Bf16Pairs ? 2 : 4);
    if (n < unit) std::memset(panel, 0, static_cast<size_t>(unit * depth) * (how == Packing::Bf16Pairs ? 2 : 4));
    if (how == Packing::Plain && std::is_same_v<S, float>) {  // the rows as they are
      transpose32(m.data + r * m.row_stride + p0, m.row_stride, n, kc, panel, unit);
      continue;
    }
    for (int64_t i = 0; i < n; ++i) {
      uint32_t* row = staged + i * width;
      row[width - 1] = 0;  // the pad of an odd depth
      if (how == Packing::Bf16Pairs) {
        read_line(m, r + i, p0, kc, true, reinterpret_cast<uint16_t*>(row), false);
      } else {
        read_line(m, r + i, p0, kc, true, line, how == Packing::Bf16PairsSwapped);
        for (int64_t k = 0; k < kc; ++k) std::memcpy(row + (pairs ? k ^ 1 : k), line + k, 4);
        if (pairs && depth > kc) row[kc - 1] = 0;  // (k ^ 1 of the pad)
      }
    }
    transpose32(staged, width, n, width, panel, unit);
  }
}

/// Packing a source whose unit stride runs along r (a row-major B, a
/// transposed A), or neither: for each k one line across every panel's rows
/// (rounded in one vectorized pass), copied into each panel; pairs
/// interleave the lines of k and k + 1.
template <typename S>
void pack_along_r(View<S> m, int64_t r0, int64_t rows, int64_t p0, int64_t kc, int unit, void* dst, Packing how) {
  const bool pairs = how != Packing::Plain;
  const int64_t depth = padded_depth(pairs ? 2 : 1, kc), panels = (rows + unit - 1) / unit;
  const int64_t last = rows - (panels - 1) * unit;  // rows of the last panel
  alignas(64) static thread_local float line[kMaxLine];
  alignas(64) static thread_local uint16_t lo[kMaxLine], hi[kMaxLine];
  if (how == Packing::Bf16Pairs && std::is_same_v<S, float> && m.row_stride == 1) {
    return to_bf16_pair_panels(reinterpret_cast<const float*>(m.data + r0 + p0 * m.col_stride), m.col_stride, rows, kc,
                               unit, dst);
  }
  if (how == Packing::Bf16Pairs) {
    for (int64_t q = 0; q < depth / 2; ++q) {
      read_line(m, r0, p0 + 2 * q, rows, false, lo, false);
      if (2 * q + 1 < kc) read_line(m, r0, p0 + 2 * q + 1, rows, false, hi, false);
      else std::fill(hi, hi + rows, uint16_t{0});
      for (int64_t s = 0; s < panels; ++s) {
        uint16_t* at = static_cast<uint16_t*>(dst) + s * unit * depth + q * unit * 2;
        const int64_t n = s + 1 < panels ? unit : last;
        interleave16(lo + s * unit, hi + s * unit, n, at);
        std::fill(at + 2 * n, at + 2 * unit, uint16_t{0});
      }
    }
    return;
  }
  const bool direct = how == Packing::Plain && std::is_same_v<S, float> && m.row_stride == 1;
  for (int64_t k = 0; k < depth; ++k) {
    const float* src = line;
    if (k >= kc) std::fill(line, line + rows, 0.0f);  // the pad of an odd depth
    else if (direct) src = reinterpret_cast<const float*>(m.data + r0 + (p0 + k) * m.col_stride);
    else read_line(m, r0, p0 + k, rows, false, line, how == Packing::Bf16PairsSwapped);
    const int64_t place = pairs ? k ^ 1 : k;
    for (int64_t s = 0; s < panels; ++s) {
      float* at = static_cast<float*>(dst) + s * unit * depth + place * unit;
      const int64_t n = s + 1 < panels ? unit : last;
      std::memcpy(at, src + s * unit, static_cast<size_t>(n) * sizeof(float));
      std::fill(at + n, at + unit, 0.0f);
    }
  }
}

/// Rows r0 .. r0+rows of m, depth p0 .. p0+kc, into micro-panels of `unit`
/// rows: float32 panels dst[panel][k][r], or pairs dst[panel][k/2][r][k%2].
/// Each source line is read along its unit stride; rows past the edge and
/// the pad of an odd depth are zeros.
template <typename S>
void pack(View<S> m, int64_t r0, int64_t rows, int64_t p0, int64_t kc, int unit, void* dst, Packing how) {
  assert(kc < kMaxDepth && unit <= kMaxUnit && rows <= kMaxLine);
  if (m.col_stride == 1 && m.row_stride != 1) pack_along_k(m, r0, rows, p0, kc, unit, dst, how);
  else pack_along_r(m, r0, rows, p0, kc, unit, dst, how);
}

/// A block (rows i0.., depth p0..) into MR-row panels.
template <typename S>
void pack_a(View<S> a, int64_t i0, int64_t mc, int64_t p0, int64_t kc, int mr, void* dst, Packing how = Packing::Plain) {
  pack(a, i0, mc, p0, kc, mr, dst, how);
}
/// B block (depth p0.., columns j0..) into NR-column panels: A's packing of B transposed.
template <typename S>
void pack_b(View<S> b, int64_t p0, int64_t kc, int64_t j0, int64_t nc, int nr, void* dst, Packing how = Packing::Plain) {
  pack(View<S>{b.data, b.cols, b.rows, b.col_stride, b.row_stride}, j0, nc, p0, kc, nr, dst, how);
}

// ---- walking the panels ----

/// One MR x NR tile of C at (i, j) holding only rows x cols real elements:
/// the kernel writes a full tile into a buffer, the real part is copied.
void tile_through_buffer(const Kernel& k, int64_t kc, const void* a, const void* b, Out c, int64_t i, int64_t j,
                         int64_t rows, int64_t cols, bool accumulate);

/// The macro-kernel: C[i0 .. i0+mc) x [j0 .. j0+nc) (+)= packed A block x
/// packed B block, tile by tile: for each NR panel of B (kept in L1 while it
/// is used), every MR panel of A. `elem`: bytes per panel element times the
/// values per k (4 for float32, 2 for bfloat16 pairs, per k of the panel).
void macro_kernel(const Kernel& k, int64_t mc, int64_t nc, int64_t kc, const void* a_panels, const void* b_panels,
                  Out c, int64_t i0, int64_t j0, bool accumulate);

/// Step 4's five loops on the calling thread, with any float32 kernel
/// (steps 4 and 5); K > 0.
void packed_loops(View<float> a, View<float> b, Out c, const Kernel& kern);
/// C = 0: the product when K = 0 (no loop touches C then).
void fill_zero(Out c);

/// One product as step 6's threaded loops see it (step 7 reuses them with
/// bfloat16 panels): its sizes, its kernel and depth block, and how to pack
/// a block of A (rows i0.., depth p0..) or of B (depth p0.., columns j0..)
/// into panels for that kernel.
struct Product {
  int64_t M = 0, N = 0, K = 0;
  Kernel kernel;
  int64_t kc = 256;
  std::function<void(int64_t i0, int64_t mc, int64_t p0, int64_t kc, void* dst)> pack_a;
  std::function<void(int64_t p0, int64_t kc, int64_t j0, int64_t nc, void* dst)> pack_b;
};
/// Step 6's loops (tensor/gemm/step6_threads.cpp); K > 0.
void run_threaded(const Product& p, Out c, bool parallel);

/// A buffer for packed panels, aligned to a cache line (the kernels' loads
/// of B are aligned loads). It comes from the tensors' caching allocator
/// (tensor/storage.h): a training step's products ask for the same few
/// sizes again and again, and a block the cache hands back has its pages
/// mapped already, where a fresh one from the system would fault on each
/// first write (on these shapes, as long as the packing itself).
class PanelBuffer {
 public:
  explicit PanelBuffer(int64_t bytes)
      : bytes_(static_cast<size_t>(bytes)), p_(static_cast<char*>(allocator::allocate(bytes_))) {}
  ~PanelBuffer() { allocator::deallocate(p_, bytes_); }
  PanelBuffer(const PanelBuffer&) = delete;
  PanelBuffer& operator=(const PanelBuffer&) = delete;
  template <typename T>
  T* as() const {
    return reinterpret_cast<T*>(p_);
  }

 private:
  size_t bytes_;
  char* p_;
};

/// Bytes of a packed block of `rows` rows (or columns) rounded up to whole
/// micro-panels of `unit`, over kc rounded up to the kernel's k_align.
inline int64_t panel_bytes(const Kernel& k, int64_t rows, int unit, int64_t kc) {
  const int64_t padded = (rows + unit - 1) / unit * unit;
  return padded * padded_depth(k.k_align, kc) * (k.bf16_pairs ? 2 : 4);
}

}  // namespace ember::gemm
