/// @file
/// float32 exp, erf, tanh and GELU over arrays, at this CPU's SIMD width.
///
/// std::exp and std::erf are scalar calls: a loop over a million floats
/// calling them cannot use SIMD, and GELU and softmax become the slowest ops
/// of a Transformer step. exp goes to SLEEF (Debian's libsleef, the vector
/// math library PyTorch uses; its 1.0-ULP version), in 16-, 8- or 4-float
/// vectors: AVX-512, AVX2 or SSE2, chosen once at run time from what the CPU
/// supports (tensor/machine/simd/*.cpp, each compiled for its instruction set; the
/// build itself stays baseline x86-64). erf is a short rational form on that
/// exp (|error| < 3e-7, relative near 0; tensor/machine/simd/vec_math_impl.h says
/// why not SLEEF's).
///
/// tanh is SLEEF's too (1.0-ULP). GELU's two forms, forward and backward,
/// run as one pass over blocks of 256 floats that stay in L1, every loop at
/// the chosen width (the backward of the exact form reuses the exp that erf
/// computed: phi(x) is exp(-(x/sqrt 2)^2) / sqrt(2 pi)).
///
/// float64 keeps the C library's exp, erf and tanh: gradcheck, which runs in
/// float64, checks the exact formulas.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ember::detail {

/// y[i] = exp(x[i]), i < n. y may be x.
void exp_f32(const float* x, float* y, int64_t n);
/// y[i] = erf(x[i]), i < n. y may be x.
void erf_f32(const float* x, float* y, int64_t n);
/// y[i] = tanh(x[i]), i < n. y may be x.
void tanh_f32(const float* x, float* y, int64_t n);
/// y[i] = gelu(x[i]) = x/2 (1 + erf(x / sqrt 2)), i < n. y may be x.
void gelu_f32(const float* x, float* y, int64_t n);
/// y[i] = g[i] gelu'(x[i]), i < n. y may be x or g.
void gelu_backward_f32(const float* x, const float* g, float* y, int64_t n);
/// The tanh form, x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), and its
/// backward, as above.
void gelu_tanh_f32(const float* x, float* y, int64_t n);
void gelu_tanh_backward_f32(const float* x, const float* g, float* y, int64_t n);
/// "AVX-512", "AVX2" or "SSE2": the width the two functions above run at
/// (the widest this CPU has, or a narrower one asked for with EMBER_SIMD=AVX2
/// or EMBER_SIMD=SSE2 in the environment; a width this CPU lacks, or another
/// value, is an ember::Error at the first use).
const char* vec_math_isa();
/// The widths this CPU runs, widest first (the tests run under each).
std::vector<std::string> vec_math_isas_for_this_cpu();

/// Elements per block when a kernel works through an array in pieces that
/// stay in L1 (a few arrays of this many floats on the stack).
inline constexpr int64_t kVecBlock = 512;

}  // namespace ember::detail
