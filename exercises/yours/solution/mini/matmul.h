// Stage 5 of your framework: the matrix product
// (docs/book/build_your_own/05_matmul.md).
//
// matmul(a, b) of a (n, k) and b (k, m) is c (n, m) with
//   c[i][j] = sum over p of a[i][p] * b[p][j].
// With more than 2 dims, the last two are the matrices and the dims before
// them a batch of them, broadcast as stage 3 broadcasts: a (B, T, D) times
// b (D, H) is B products of (T, D) by (D, H). Each product reads a and b
// through their strides, so that b.transpose(0, 1) costs no copy.
//
// matmul_blocked computes the same numbers tile by tile: block × block
// pieces of a, b and c, small enough to stay in the cache while they are
// used block times each. (The order of the additions changes, so the last
// bits may too.)
//
// On Vars, matmul records its backward: for c = a b,
//   d/da = grad bᵀ,   d/db = aᵀ grad
// (bᵀ: the last two dims swapped), each summed back to its input's shape
// when the batch was broadcast.
#pragma once

#include "mini/autograd.h"

namespace mini {

/// The product of a (..., n, k) and b (..., k, m): (batch..., n, m), the
/// batch dims broadcast. Refuses a tensor of fewer than 2 dims, inner sizes
/// that differ (a's k and b's k), and batch dims that do not broadcast, with
/// a message naming "matmul" and both shapes.
Tensor matmul(const Tensor& a, const Tensor& b);
/// The same product, computed in tiles of block × block (block >= 1; sizes
/// need not be multiples of it). Refuses what matmul refuses, and a block
/// below 1.
Tensor matmul_blocked(const Tensor& a, const Tensor& b, int64_t block = 32);
/// matmul on Vars, with its backward.
Var matmul(const Var& a, const Var& b);

}  // namespace mini
