// Stage 3: elementwise ops and reductions (docs/book/build_your_own/03_elementwise.md).
// Each MINI_TODO asks a question; replace it with your code, then run
//   bash scripts/build_your_own.sh 3
#include "mini/ops.h"

#include <algorithm>
#include <cmath>
#include <limits>
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

Shape broadcast_shape(const Shape& a, const Shape& b, const std::string& op) {
  (void)a;
  (void)b;
  (void)op;
  MINI_TODO("from which end are the two shapes lined up? What is a missing dim? Which pairs of sizes fit, and "
            "which size does the result take?");
}

Tensor map(const Tensor& x, const std::function<double(double)>& f) {
  (void)x;
  (void)f;
  MINI_TODO("in which order do you read x's elements, when its strides are not those of a new tensor?");
}

Tensor zip(const Tensor& a, const Tensor& b, const std::function<double(double, double)>& f, const std::string& op) {
  (void)a;
  (void)b;
  (void)f;
  (void)op;
  MINI_TODO("for an index of the result, which element of a and which of b? Could a view of stage 2 answer "
            "that for you?");
}

Tensor add(const Tensor& a, const Tensor& b) {
  (void)a;
  (void)b;
  MINI_TODO("which of zip or map, with which function (and which name for its refusals)?");
}
Tensor sub(const Tensor& a, const Tensor& b) {
  (void)a;
  (void)b;
  MINI_TODO("as add: which one is subtracted from which?");
}
Tensor mul(const Tensor& a, const Tensor& b) {
  (void)a;
  (void)b;
  MINI_TODO("as add");
}
Tensor div(const Tensor& a, const Tensor& b) {
  (void)a;
  (void)b;
  MINI_TODO("as add: which one divides which?");
}
Tensor neg(const Tensor& x) {
  (void)x;
  MINI_TODO("which of zip or map?");
}
Tensor exp(const Tensor& x) {
  (void)x;
  MINI_TODO("as neg (std::exp)");
}
Tensor log(const Tensor& x) {
  (void)x;
  MINI_TODO("as neg (std::log)");
}
Tensor tanh(const Tensor& x) {
  (void)x;
  MINI_TODO("as neg (std::tanh)");
}
Tensor relu(const Tensor& x) {
  (void)x;
  MINI_TODO("as neg: what is relu of a negative number?");
}

Tensor sum(const Tensor& x, const Shape& dims, bool keepdim) {
  (void)x;
  (void)dims;
  (void)keepdim;
  MINI_TODO("into which element of the result does element [i, j, ...] of x go? Which shape has the result, "
            "with keepdim and without? Which dims must be refused?");
}

Tensor max(const Tensor& x, int64_t d, bool keepdim) {
  (void)x;
  (void)d;
  (void)keepdim;
  MINI_TODO("as sum over {d}, keeping the larger: from which start value, so that a row of negative numbers "
            "gets one of them? What is the max of a dim of size 0?");
}

Tensor sum_to(const Tensor& x, const Shape& shape) {
  (void)x;
  (void)shape;
  MINI_TODO("x = y.expand(...) for a y of `shape`: which dims of x repeat y's elements, and must be added back "
            "up? What does sum over no dims give, and is that what you want here?");
}

}  // namespace mini
