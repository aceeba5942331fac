// Exercise 11.2: A strided loop (chapter 11, docs/book/11_speed.md)
//
// Write add_2d(a, b): the sum of two float32 matrices of one shape (R, C),
// into a new contiguous tensor, reading a and b through their own strides
// and offsets (chapter 1), never assuming they are contiguous: a transposed
// view, a slice with a step and an expanded row (stride 0) must all work,
// without copying them first. Different shapes are an ember::Error naming
// both.
//
// Think about:
//   * where, counted in floats from a view's first element, is its element
//     (i, j)? what do t.stride()[0] and t.stride()[1] say?
//   * where does t.data_ptr<float>() point for a view that starts inside
//     its storage (a narrowed view, with an offset)?
//   * what does a stride of 0 do to that position, and why is that a
//     broadcast?
//
// Compare with, after you try: tensor/elementwise.h, which does the same for
// any number of dims, and first merges dims that are contiguous in every
// operand.
//
// Check it:  bash scripts/exercise.sh 11.2
#include "exercises/exercise.h"

using namespace ember;

namespace ex11_2 {

Tensor add_2d(const Tensor& a, const Tensor& b) {
  (void)a;
  (void)b;
  TODO("refuse different shapes; then a new (R, C) tensor, each element read from a and b through their strides");
}

}  // namespace ex11_2
