// Checks exercise 1.3: the diagonal's values, that it is a view (shares the
// storage, sees writes), on plain, transposed and narrowed matrices. Wrong
// values are compared with the views the usual mistakes make (one step down
// only, the stride of a contiguous matrix, no offset) to name the one it is.
#include "exercises/checks/check.h"

namespace ex1_3 {
ember::Tensor diagonal(const ember::Tensor& x);
}

namespace {

using namespace ember;

// The (n) view of x with this stride and offset, or nothing when it does not
// fit x's storage.
Tensor view_of(const Tensor& x, int64_t stride, int64_t offset) {
  try {
    return kernel::as_strided(x, {x.size(0)}, {stride}, offset);
  } catch (const Error&) {
    return Tensor();
  }
}

// The hint for a wrong diagonal of the square matrix x, from the way it is wrong.
std::string hint_for(const Tensor& got, const Tensor& x) {
  const int64_t n = x.size(0), down = x.stride()[0], right = x.stride()[1], start = x.storage_offset();
  if (got.defined() && got.numel() == n && got.dim() != 1)
    return "the diagonal of an (n, n) matrix is one number per row: shape (n), one dim";
  if (check::matches(got, view_of(x, down, start)))
    return "these are the first column: each step goes one row down, but the diagonal also goes one column right";
  if (check::matches(got, view_of(x, right, start)))
    return "these are the first row: each step goes one column right, but the diagonal also goes one row down";
  if (down + right != n + 1 && check::matches(got, view_of(x, n + 1, start)))
    return "n + 1 is the diagonal's stride only for a contiguous matrix; this x is a view with strides " +
           check::show(x.stride()) + ": how far do one row down and one column right move for it?";
  if (start != 0 && check::matches(got, view_of(x, down + right, 0)))
    return "x does not start at its storage's first element (it is a narrowed view): where does x[0, 0] live?";
  return "one step along the diagonal is one row down and one column right, from where x[0, 0] lives";
}

void expect_diagonal(const Tensor& x, const Tensor& want, const std::string& what) {
  const Tensor got = ex1_3::diagonal(x);
  if (!check::matches(got, want, 1e-6))
    check::fail(what + " is " + check::show(got) + ", but should be " + check::show(want), hint_for(got, x));
}

// Every matrix of these steps is square: a refusal means the check is wrong.
const std::vector<std::pair<std::string, std::string>> kSquare = {
    {"diagonal", "this matrix is square, whatever its strides and offset: only its shape decides"}};

}  // namespace

check::Exercise check::exercise() {
  return {"1.3", "The diagonal as a view", "docs/book/01_tensors.md", {
    {"the diagonal of a 3x3 matrix", [] {
       expect_diagonal(arange(9).reshape({3, 3}), tensor({0.0, 4.0, 8.0}), "diagonal(arange(9).reshape({3, 3}))");
     }, kSquare},
    {"it is a view: the same storage, and a write into x shows in it", [] {
       Tensor x = arange(9).reshape({3, 3});
       Tensor d = ex1_3::diagonal(x);
       expect(d.storage() == x.storage(), "diagonal(x) has a storage of its own: it copied",
              "a view reads x's own storage, through a shape, strides and an offset of its own; copying the numbers "
              "out makes a tensor that no longer sees x");
       x.select(0, 1).select(0, 1).fill_(100.0);
       expect_close(d, tensor({0.0, 100.0, 8.0}), "after x[1, 1] = 100, diagonal(x)",
                    1e-6, "a view reads x's storage each time");
     }, kSquare},
    {"a transposed matrix has the same diagonal", [] {
       expect_diagonal(arange(16).reshape({4, 4}).t(), tensor({0.0, 5.0, 10.0, 15.0}), "diagonal(x.t())");
     }, kSquare},
    {"a matrix that is itself a view (narrowed: an offset, a row stride of 5)", [] {
       Tensor x = arange(25).reshape({5, 5}).narrow(0, 1, 3).narrow(1, 1, 3);  // rows 1..3, columns 1..3
       expect_diagonal(x, tensor({6.0, 12.0, 18.0}), "the diagonal of rows 1..3 x columns 1..3 of a 5x5 matrix");
     }, kSquare},
    {"anything but a square matrix is an ember::Error", [] {
       expect_error([] { (void)ex1_3::diagonal(zeros({2, 3})); }, {"diagonal", "(2, 3)"}, "diagonal of a (2, 3) matrix",
                    "a (2, 3) matrix has no diagonal from corner to corner: are both sizes compared?",
                    "the message names the op and the shape, the shape as shape_str writes it: (2, 3)");
       expect_error([] { (void)ex1_3::diagonal(zeros({4})); }, {"diagonal", "(4)"}, "diagonal of a (4) vector",
                    "a (4) vector is no matrix: is the number of dims checked?",
                    "the refusal should be your own, naming \"diagonal\" and the shape: is the number of dims "
                    "checked before the sizes are read?");
     }},
  }};
}
