// Checks exercise 12.2: unit rows, the error for a zero row naming it, and
// that a refused call leaves x exactly as it was.
#include "exercises/checks/check.h"

namespace ex12_2 {
ember::Tensor& normalize_rows_(ember::Tensor& x);
}

namespace {
using namespace ember;
}  // namespace

check::Exercise check::exercise() {
  return {"12.2", "All or nothing: an in-place op that fails cleanly", "docs/book/12_bad_input_and_faults.md", {
    {"rows (3, 4) and (0, 2) become (0.6, 0.8) and (0, 1), in place", [] {
       Tensor x = tensor({3.0, 4.0, 0.0, 2.0}, {2, 2});
       const void* storage = x.storage().get();
       Tensor& r = ex12_2::normalize_rows_(x);
       expect(&r == &x && x.storage().get() == storage, "normalize_rows_ should write into x and return it",
              "copy_ writes into x's own storage");
       expect_close(x, tensor({0.6, 0.8, 0.0, 1.0}, {2, 2}), "x after normalize_rows_");
     }},
    {"a zero row is an ember::Error naming the row", [] {
       Tensor x = tensor({1.0, 1.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 5.0}, {3, 3});
       expect_error([&] { (void)ex12_2::normalize_rows_(x); }, {"normalize_rows_", "row 1"},
                    "normalize_rows_ of a matrix whose row 1 is zeros");
     }},
    {"a refused call leaves x exactly as it was (rows before the zero one too)", [] {
       Tensor x = tensor({1.0, 1.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 5.0}, {3, 3});
       const Tensor before = x.clone();
       try {
         (void)ex12_2::normalize_rows_(x);
       } catch (const Error&) {
       }
       expect(equal_bits(x, before), "after the refusal x is " + show(x) + ", not " + show(before),
              "check every row before writing any: all or nothing");
     }},
    {"a tensor that is not a matrix is refused", [] {
       Tensor v = tensor({3.0, 4.0});
       expect_error([&] { (void)ex12_2::normalize_rows_(v); }, {"normalize_rows_", "(2)"}, "normalize_rows_ of a vector");
     }},
  }};
}
