// Exercise 13.2: Quantizing a group to int8 (chapter 13, docs/book/13_gemm_and_bfloat16.md)
//
// Store a group of n float32 values as n int8 numbers and one float32
// scale, as ember stores a quantized weight. The scale s is the size of one
// step: s = max|x| / 127, so that the value of largest magnitude sits
// exactly 127 steps from zero. Each value becomes the whole number of steps
// nearest to it, q[k] = x[k] / s rounded to nearest (exactly half-way: to
// the even neighbour) and kept within [-127, 127]. It stands for q[k] * s.
//
// Write three functions:
//   quantize_group(x, n, q)         fills q[0] ... q[n-1] and returns s;
//   dequantize_group(q, n, s, out)  the values q stands for: out[k] = q[k] * s;
//   error_bound(x, n)               before quantizing anything, the largest
//                                   |x[k] - q[k] * s| this group can have,
//                                   from max|x| alone.
// Compute as ember does, in float32: s = max|x| / 127.0f and x[k] / s, one
// float32 division each. The checker compares your s and q with ember's bit
// for bit.
//
// Think about:
//   * int8 goes from -128 to 127. Why does ember use only -127 ... 127, and
//     divide by 127 and not by 128?
//   * which value of the group comes back exactly, and what is its q?
//   * rounding to the nearest step moves a value by at most how much? That,
//     in terms of max|x|, is the bound. (x[k] / s is itself rounded to a
//     float32, which can add a sliver: ember's analysis allows 1/2 + 2^-17
//     of a step. Add it or leave it out; the checker allows for it.)
//   * a group of zeros: what is s, and what would x[k] / s be? Every q must
//     still be written, and none may come from a NaN.
//   * 2.5 steps is exactly half-way: ember makes it 2, and 3.5 makes 4 (ties
//     to even). std::round gives 3; std::nearbyint (or std::rint) in the
//     default rounding mode gives 2. Why might rounding every tie away from
//     zero be worse for a matrix of millions of weights?
//
// Compare with, after you try: tensor/gemm/step8_int8.cpp (quantize_row).
//
// Check it:  bash scripts/exercise.sh 13.2
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "exercises/exercise.h"

namespace ex13_2 {

float quantize_group(const float* x, int n, int8_t* q) {
  (void)x, (void)n, (void)q;
  TODO("s = max|x| / 127.0f; each q[k] = x[k] / s rounded to nearest (ties to even) in [-127, 127]; and a group of zeros?");
}

void dequantize_group(const int8_t* q, int n, float s, float* out) {
  (void)q, (void)n, (void)s, (void)out;
  TODO("out[k]: the value that q[k] steps of size s stand for");
}

double error_bound(const float* x, int n) {
  (void)x, (void)n;
  TODO("the most that rounding to the nearest step can move a value of this group, from max|x|");
}

}  // namespace ex13_2
