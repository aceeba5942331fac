// Stage 5: the matrix product (docs/book/build_your_own/05_matmul.md).
// Each MINI_TODO asks a question; replace it with your code, then run
//   bash scripts/build_your_own.sh 5
#include "mini/matmul.h"

#include <algorithm>
#include <string>

#include "mini/error.h"

namespace mini {

namespace {

// "(2, 3)": a shape, for the messages of your refusals (given).
[[maybe_unused]] std::string str(const Shape& s) {
  std::string out = "(";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + ")";
}

}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b) {
  (void)a;
  (void)b;
  MINI_TODO("which sizes must agree, and what shape is the result? With a batch, which of stage 3's tools makes a's "
            "and b's batch dims one shape? Then for one product: in which order do your three loops run, and how "
            "do a view's strides find a[i][p]?");
}

Tensor matmul_blocked(const Tensor& a, const Tensor& b, int64_t block) {
  (void)a;
  (void)b;
  (void)block;
  MINI_TODO("the same sums, in tiles: which loops cut into blocks, and where does the last tile of a dim end "
            "when its size is not a multiple of block?");
}

Var matmul(const Var& a, const Var& b) {
  (void)a;
  (void)b;
  MINI_TODO("a[i][p] moved which elements of c, by how much? Write the sum over them as a product of two "
            "matrices: which, and in which order? And when the batch was broadcast?");
}

}  // namespace mini
