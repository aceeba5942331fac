/// @file
/// Step 8 of the GEMM lesson: weights in fewer bits again. A layer's weight
/// W (N outputs x K inputs) is stored as int8 with one float32 scale per
/// group of G consecutive inputs of a row (group-wise symmetric
/// quantization), or as bfloat16; the product is
///
///   C (M, N) = A (M, K) Wᵀ        A float32 activations, row-major
///
/// as a Linear layer computes it. Two ways to multiply an int8 weight:
///
///   Int8Activations   each row of A is quantized the same way on the fly
///                     (int8, a scale per group of G), every group's dot
///                     product is summed exactly in int32 (AVX-512 VNNI's
///                     vpdpbusd: 64 multiply-adds per instruction; AVX2's
///                     vpmaddubsw + vpmaddwd elsewhere), then scaled by
///                     the two scales and added in float32;
///   FloatActivations  A stays float32; each weight is turned back into a
///                     float32 inside the kernel and multiplied with FMAs,
///                     the group's sum scaled once.
///
/// bfloat16 weights take the second path (a bfloat16 is a float32's top half).
/// Decoding one token multiplies one row of A by every weight once, so it is
/// bound by the bytes of the weights: int8 reads a quarter of float32's
/// (plus 4 bytes of scale per group), bfloat16 half.
///
/// Every element of C is summed in one fixed order (groups in order, and
/// within a group k in order, or exactly in int32), so every width (AVX-512,
/// AVX2, plain C) and every thread count gives the same bits. The rounding
/// analysis, and the bound the tests hold the kernels to, is at the top of
/// tensor/gemm/step8_int8.cpp.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tensor/gemm/gemm.h"

namespace ember::gemm {

/// The group sizes step 8 takes: 32, 64, 128 or 256 inputs (a power of two,
/// at least one cache line of int8, at most where a group's int32 sum still
/// converts to float32 exactly: 256 x 127 x 127 < 2^24).
bool valid_int8_group(int64_t group);

/// Symmetric group-wise quantization of one row of n values: group g
/// (values [gG, gG + G), the last one shorter) gets the scale
/// s = max|x| / 127 and each value q = round(x / s) to nearest, ties to
/// even, in [-127, 127] (s = 0 and q = 0 for a group of zeros). `q` gets
/// n values, `scale` ceil(n / G). A group holding a NaN or an infinity gets
/// the scale NaN and q = 0, so a product with it is NaN, as float32's would
/// be. The same at every width: the weights are quantized with it once, the
/// activations on every product. Any group >= 1 (the products take
/// valid_int8_group's); an error naming the values otherwise.
void quantize_row(const float* x, int64_t n, int64_t group, int8_t* q, float* scale);

enum class WeightFormat { Int8, BFloat16 };
enum class Int8Mode { Int8Activations, FloatActivations };
const char* mode_name(Int8Mode mode);  // "int8 activations" / "float32 activations"

/// A weight packed for the kernels: panels of 16 outputs (rows of W),
/// the inputs padded with zeros to whole groups. Made once per layer.
///   Int8 + Int8Activations    [panel][k / 4][16 rows][4]: 64 bytes per
///                             vpdpbusd, one int32 lane per output
///   Int8 + FloatActivations   [panel][k][16 rows]: 16 values per FMA vector
///   BFloat16                  [panel][k][16 rows], 2 bytes each
/// and the scales [panel][group][16 rows] (int8 only; zero past the last row).
struct PackedWeight {
  WeightFormat format = WeightFormat::Int8;
  Int8Mode mode = Int8Mode::Int8Activations;
  int64_t rows = 0, cols = 0;  // N, K
  int64_t group = 0;           // G (int8); K rounded up to 32 for bfloat16
  int64_t groups = 0, padded_cols = 0, panels = 0;
  std::shared_ptr<char> data;  // panels x 16 x padded_cols values, 64-byte aligned
  std::shared_ptr<float> scales;
  int64_t panel_bytes() const;  // bytes of one panel's values
  /// Bytes a product reads of the weight: values and scales.
  int64_t bytes() const;
};

/// W (rows x cols, row-major, int8, every value in [-127, 127]: -128 is an
/// error naming its place) with its scales (rows x groups).
PackedWeight pack_int8(const int8_t* q, const float* scale, int64_t rows, int64_t cols, int64_t group, Int8Mode mode);
/// W (rows x cols, row-major) as bfloat16 bits.
PackedWeight pack_bf16(const uint16_t* w, int64_t rows, int64_t cols);

/// C = A Wᵀ: A (M, w.cols) float32 rows `lda` apart, C (M, w.rows) rows
/// `ldc` apart, overwritten. On ember's threads when `parallel` and the
/// product is large enough; the bits do not depend on it, nor on `isa`.
void weight_product(const float* a, int64_t M, int64_t lda, const PackedWeight& w, float* c, int64_t ldc, Isa isa,
                    bool parallel = true);

/// The widths step 8 runs on this CPU, widest first: AVX-512 (with VNNI:
/// AVX512_VNNI and BW), AVX2, and SSE2 (plain C) always. An AVX-512 CPU
/// without VNNI runs AVX2's (256-bit) int8 kernel when asked for AVX-512.
std::vector<Isa> int8_isas_for_this_cpu();
bool has_avx512_vnni();
/// The instructions the int8 product uses at `isa` ("vpdpbusd", "vpmaddubsw", "plain C").
const char* int8_instructions(Isa isa);

/// vpdpbusd's peak on this machine, measured as measured_peak_gflops
/// measures the FMA's: G int8 operations (a multiply or an add) per second
/// on `threads` threads; 0 on a CPU without AVX512_VNNI.
double measured_int8_peak(int threads, int repeats = 100);

/// The bound of tensor/gemm/step8_int8.cpp on |C[i][j] - (A Wᵀ)[i][j]| for
/// the original float A row `a` and W row `w` (k values each), with the
/// scales the quantization gives them: what the tests and the lesson
/// compare each kernel's error with.
double int8_error_bound(const float* a, const float* w, int64_t k, int64_t group, Int8Mode mode);

}  // namespace ember::gemm
