// Stage 3 of your framework: elementwise ops and reductions
// (docs/book/build_your_own/03_elementwise.md).
//
// Every op here reads its inputs through their (shape, strides, offset), so
// that it works on any view of stage 2 (transposed, sliced with a step,
// expanded), and returns a new contiguous tensor. Two ops make all the
// elementwise ones: map(x, f) applies f to each element; zip(a, b, f) to each
// pair of elements of a and b broadcast to one shape. Broadcasting (NumPy's
// and PyTorch's rule): line the shapes up from the right; a missing leading
// dim counts as a size 1; two sizes fit when they are equal or one is 1, and
// the result takes the larger:
//
//   (2, 3) and (3)     -> (2, 3)     b is repeated along a new leading dim
//   (4, 1) and (1, 5)  -> (4, 5)     each is repeated along the other's dim
//   (2, 3) and (2)     -> refused    3 and 2 differ, and neither is 1
//
// The reductions sum or take the max over some dims; sum_to(x, shape) is the
// reverse of expand: it adds up what broadcasting repeated, back to the shape
// it was broadcast from (stage 4's backward needs exactly that).
//
// As in stage 2, what a caller gets wrong is refused with a mini::Error
// (MINI_CHECK) naming the op and the shapes or dims it was given.
#pragma once

#include <functional>
#include <string>

#include "mini/tensor.h"

namespace mini {

/// The shape a and b broadcast to. Refuses shapes that do not broadcast, with
/// a message that starts with `op` (the op that asked) and names both shapes.
Shape broadcast_shape(const Shape& a, const Shape& b, const std::string& op = "broadcast_shape");

/// f of each element of x, in a new contiguous tensor of x's shape (x: any
/// strides).
Tensor map(const Tensor& x, const std::function<double(double)>& f);
/// f(a's element, b's element) for each element of the shape a and b
/// broadcast to, in a new contiguous tensor of that shape (a, b: any
/// strides). `op` names the op in a refusal.
Tensor zip(const Tensor& a, const Tensor& b, const std::function<double(double, double)>& f,
           const std::string& op = "zip");

// ---- the usual ops, on top of zip and map ----
Tensor add(const Tensor& a, const Tensor& b);  // a + b, broadcast; refusals name "add"
Tensor sub(const Tensor& a, const Tensor& b);  // a - b                           "sub"
Tensor mul(const Tensor& a, const Tensor& b);  // a * b                           "mul"
Tensor div(const Tensor& a, const Tensor& b);  // a / b                           "div"
Tensor neg(const Tensor& x);                   // -x
Tensor exp(const Tensor& x);
Tensor log(const Tensor& x);
Tensor tanh(const Tensor& x);
Tensor relu(const Tensor& x);  // max(x, 0)

// ---- reductions ----
/// The sum over `dims` (none: over every dim). keepdim keeps each summed dim
/// as a size 1 (so the result broadcasts against x); otherwise it is gone.
/// Refuses a dim out of range or given twice. A sum over no elements is 0.
Tensor sum(const Tensor& x, const Shape& dims = {}, bool keepdim = false);
/// The largest element along dim d, as sum over {d} shapes it. Refuses a dim
/// out of range, and a dim of size 0 (the max of nothing is not a number).
Tensor max(const Tensor& x, int64_t d, bool keepdim = false);
/// The reverse of expand: x (of a shape that `shape` broadcasts to) summed
/// back to `shape`, over the leading dims that broadcasting added and over
/// the dims where `shape` has a size 1 that was repeated. Refuses a shape
/// that does not broadcast to x's.
Tensor sum_to(const Tensor& x, const Shape& shape);

}  // namespace mini
