// Exercise 11.2: A strided loop (chapter 11, docs/book/11_speed.md)
//
// Write add_2d(a, b): the sum of two float32 matrices of one shape (R, C),
// into a new contiguous tensor, reading a and b through their own strides
// and offsets (chapter 1), never assuming they are contiguous: a transposed
// view, a slice with a step and an expanded row (stride 0) must all work.
//   element (i, j) of t is at t.data_ptr<float>()[i * t.stride()[0] + j * t.stride()[1]]
// (data_ptr already points at t's first element: the offset is applied).
// Different shapes are an ember::Error naming both.
//
// tensor/elementwise.h does the same for any number of dims, and first
// merges dims that are contiguous in every operand: read it after.
//
// Check it:  bash scripts/exercise.sh 11.2
#include "exercises/exercise.h"

using namespace ember;

namespace ex11_2 {

Tensor add_2d(const Tensor& a, const Tensor& b) {
  (void)a;
  (void)b;
  TODO("check the shapes; out = empty({R, C}); two loops, each operand read through its strides");
}

}  // namespace ex11_2
