// Sample inputs for the gradcheck registry: values, layouts and ids, written
// once for every family table.
//
// Conventions (sample labels are what the tour and test failures print):
//   "contiguous" / "same shape"   the plain case
//   "broadcast"                   shapes that broadcast, so the engine must sum back
//   "non-contiguous (...)"        a leaf whose memory is transposed or strided
//   "zero-size"                   a dim of size 0 (an empty Jacobian, but the
//                                 forward and backward must still run)
//   "0-d"                         a scalar tensor
//   "b is a constant"             one operand does not require grad
//   "same tensor twice"           x op x: both gradients accumulate into x
// Values avoid the points where an op is not differentiable (0 for abs and
// relu, the bounds of clamp, ties for max), because a central difference
// straddling a kink measures the average of two slopes, not a derivative.
#pragma once

#include <functional>
#include <vector>

#include "registry.h"
#include "tensor/factory.h"

namespace ember::samples {

using Inputs = std::vector<Tensor>;
using Samples = std::vector<OpSample>;
// Makes the values of one input: float64, not yet requiring grad.
using Make = std::function<Tensor(Generator&, const Shape&)>;

// ---- values (float64, not requiring grad) ----
Tensor normal_values(Generator& g, const Shape& s);  // N(0, 1)
Tensor away_from_zero(Generator& g, const Shape& s); // N(0, 1), at least 0.1 from 0
Tensor positive(Generator& g, const Shape& s);       // U(0.5, 2)
// N(0, 1) values, each redrawn until it is at least 0.1 away from every kink.
Make avoiding(std::vector<double> kinks);

// ---- layouts: each returns a leaf that requires grad and holds `values` ----
Tensor leaf(const Tensor& values);
// The last two dims laid out transposed in memory: what x.t() hands an op. (2+ dims)
Tensor transposed(const Tensor& values);
// Every second element of a buffer (stride 2 in the last dim).
Tensor strided(const Tensor& values);
// A (B, T, F) sequence stored time-major, (T, B, F) in memory.
Tensor time_major(const Tensor& values);
// Shorthand for the most common input: leaf(normal_values(g, s) * scale).
Tensor normal_leaf(Generator& g, const Shape& s, double scale = 1.0);

// ---- not differentiated ----
Tensor ids(const std::vector<int64_t>& v, const Shape& s = {});  // int64; 1-D when s is empty
Tensor bools(const std::vector<bool>& v, const Shape& s);
Tensor mask(const Shape& s);  // a bool mask with a fixed, mixed pattern (every third element true)

// ---- standard sample sets ----
// One-input elementwise ops (and anything else happy with any shape).
Samples unary_samples(Generator& g, const Make& make = normal_values);
// Broadcasting binary ops: a from make_a, b from make_b.
Samples binary_samples(Generator& g, const Make& make_a, const Make& make_b);

// Several outputs as one: the flattened tensors concatenated, so one
// Jacobian covers all of them (that is why CatBackward shows up in such
// entries' node lists).
Tensor flat_cat(const std::vector<Tensor>& ts);

}  // namespace ember::samples
