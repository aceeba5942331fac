// Checks exercise 1.3: the diagonal's values, that it is a view (shares the
// storage, sees writes), on plain, transposed and narrowed matrices.
#include "exercises/checks/check.h"

namespace ex1_3 {
ember::Tensor diagonal(const ember::Tensor& x);
}

namespace {
using namespace ember;
}  // namespace

check::Exercise check::exercise() {
  return {"1.3", "The diagonal as a view", "docs/book/01_tensors.md", {
    {"the diagonal of a 3x3 matrix", [] {
       Tensor x = arange(9).reshape({3, 3});
       expect_close(ex1_3::diagonal(x), tensor({0.0, 4.0, 8.0}), "diagonal(arange(9).reshape({3, 3}))");
     }},
    {"it is a view: the same storage, and a write into x shows in it", [] {
       Tensor x = arange(9).reshape({3, 3});
       Tensor d = ex1_3::diagonal(x);
       expect(d.storage() == x.storage(), "diagonal(x) has a storage of its own: it copied",
              "make it with kernel::as_strided over x");
       x.select(0, 1).select(0, 1).fill_(100.0);
       expect_close(d, tensor({0.0, 100.0, 8.0}), "after x[1, 1] = 100, diagonal(x)",
                    1e-6, "a view reads x's storage each time");
     }},
    {"a transposed matrix has the same diagonal", [] {
       Tensor x = arange(16).reshape({4, 4});
       expect_close(ex1_3::diagonal(x.t()), tensor({0.0, 5.0, 10.0, 15.0}), "diagonal(x.t())", 1e-6,
                    "use x's own strides, not the strides of a contiguous matrix");
     }},
    {"a matrix that is itself a view (narrowed: an offset, a row stride of 4)", [] {
       Tensor x = arange(16).reshape({4, 4}).narrow(0, 1, 3).narrow(1, 1, 3);  // rows 1..3, columns 1..3
       expect_close(ex1_3::diagonal(x), tensor({5.0, 10.0, 15.0}), "the diagonal of rows 1..3 x columns 1..3",
                    1e-6, "start at x.storage_offset()");
     }},
    {"anything but a square matrix is an ember::Error", [] {
       expect_error([] { (void)ex1_3::diagonal(zeros({2, 3})); }, {"diagonal", "(2, 3)"}, "diagonal of a (2, 3) matrix");
       expect_error([] { (void)ex1_3::diagonal(zeros({4})); }, {"diagonal", "(4)"}, "diagonal of a (4) vector");
     }},
  }};
}
