// Checks exercise 11.2: add_2d against a + b on contiguous, transposed,
// stepped and expanded operands.
#include "exercises/checks/check.h"

namespace ex11_2 {
ember::Tensor add_2d(const ember::Tensor& a, const ember::Tensor& b);
}

namespace {
using namespace ember;
}  // namespace

check::Exercise check::exercise() {
  return {"11.2", "A strided loop", "docs/book/11_speed.md", {
    {"two contiguous (3, 4) matrices", [] {
       Tensor a = arange(12).reshape({3, 4}), b = arange(12).reshape({3, 4}) * 10.0;
       Tensor out = ex11_2::add_2d(a, b);
       expect_close(out, a + b, "add_2d(a, b)");
       expect(out.is_contiguous(), "the result should be a new contiguous tensor");
     }},
    {"a transposed view", [] {
       Tensor a = arange(12).reshape({4, 3}).t(), b = ones({3, 4});
       expect_close(ex11_2::add_2d(a, b), a + b, "add_2d(x.t(), ones)", 1e-6, "follow a's strides: (1, 3) here");
     }},
    {"a slice with a step, and a narrowed view (an offset)", [] {
       Tensor base = arange(40).reshape({5, 8});
       Tensor a = base.slice(1, 0, 8, 2), b = base.narrow(1, 3, 4);  // (5, 4) each
       expect_close(ex11_2::add_2d(a, b), a + b, "add_2d of a stepped slice and a narrowed view", 1e-6,
                    "data_ptr<float>() points at the view's first element");
     }},
    {"an expanded row (stride 0): broadcasting by strides", [] {
       Tensor row = tensor({1.0, 2.0, 3.0, 4.0}).reshape({1, 4}).expand({3, 4});
       Tensor b = arange(12).reshape({3, 4});
       expect_close(ex11_2::add_2d(row, b), row + b, "add_2d(row.expand({3, 4}), b)");
     }},
    {"different shapes are an ember::Error naming both", [] {
       expect_error([] { (void)ex11_2::add_2d(zeros({2, 3}), zeros({3, 2})); }, {"(2, 3)", "(3, 2)"},
                    "add_2d((2, 3), (3, 2))");
     }},
  }};
}
