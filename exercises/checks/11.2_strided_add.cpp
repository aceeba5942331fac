// Checks exercise 11.2: add_2d against a + b on contiguous, transposed,
// stepped and expanded operands. A wrong sum is compared with the usual
// mistakes' (a view's memory read as if it were contiguous, its offset added
// twice, the result written through an operand's strides) to name the one it
// is.
#include "exercises/checks/check.h"

namespace ex11_2 {
ember::Tensor add_2d(const ember::Tensor& a, const ember::Tensor& b);
}

namespace {

using namespace ember;

// A wrong sum that a mistake gives, and what the mistake is.
struct Mistake {
  Tensor sum;
  std::string hint;
};

// R*C numbers of base (flat, contiguous) from position `from`, as an (R, C)
// matrix: what reading a view as if it were contiguous gives.
Tensor read_flat(const Tensor& base, int64_t from, int64_t R, int64_t C) {
  return base.reshape({-1}).narrow(0, from, R * C).reshape({R, C});
}

void expect_sum(const Tensor& a, const Tensor& b, const std::string& what, const std::vector<Mistake>& mistakes) {
  const Tensor got = ex11_2::add_2d(a, b), want = a + b;
  if (check::max_diff(got, want, what) <= 1e-6) return;
  std::string hint = "element (i, j) of each operand is i strides[0] plus j strides[1] floats from where its "
                     "data_ptr points";
  for (const Mistake& m : mistakes)
    if (check::matches(got, m.sum, 1e-6)) {
      hint = m.hint;
      break;
    }
  check::fail(what + " is " + check::show(got) + ", but should be " + check::show(want), hint);
}

const std::string kReadAsContiguous =
    "a view was read as if its numbers lay row by row from its first element: its strides say where each "
    "element is";

}  // namespace

check::Exercise check::exercise() {
  return {"11.2", "A strided loop", "docs/book/11_speed.md", {
    {"two contiguous (3, 4) matrices", [] {
       Tensor a = arange(12).reshape({3, 4}), b = arange(12).reshape({3, 4}) * 10.0;
       expect_sum(a, b, "add_2d(a, b)", {});
       expect(ex11_2::add_2d(a, b).is_contiguous(), "the result should be a new contiguous tensor",
              "a new (R, C) tensor made for the result has its elements row by row");
     }},
    {"a transposed view", [] {
       Tensor base = arange(12).reshape({4, 3});
       Tensor a = base.t(), b = arange(12).reshape({3, 4}) * 100.0;
       expect_sum(a, b, "add_2d(x.t(), y)",
                  {{read_flat(base, 0, 3, 4) + b, kReadAsContiguous + ": (1, 3) here"},
                   {(a + b).t().contiguous().reshape({3, 4}),
                    "the result was written through a's strides: it is a new contiguous tensor, with strides of "
                    "its own"}});
     }},
    {"a slice with a step, and a narrowed view (an offset)", [] {
       Tensor base = arange(60).reshape({5, 12});
       Tensor a = base.slice(1, 0, 8, 2), b = base.narrow(1, 3, 4);  // (5, 4) each; b starts 3 floats in
       expect_sum(a, b, "add_2d of a stepped slice and a narrowed view",
                  {{a + base.narrow(1, 6, 4),
                    "b's values come from 3 columns further on: b's offset was added twice, and data_ptr<float>() "
                    "already points at the view's first element"},
                   {read_flat(base, 0, 5, 4) + read_flat(base, 3, 5, 4), kReadAsContiguous},
                   {read_flat(base, 0, 5, 4) + b, kReadAsContiguous + ": a's are (12, 2) here"},
                   {a + read_flat(base, 3, 5, 4), kReadAsContiguous + ": b's are (12, 1) here"}});
     }},
    {"an expanded row (stride 0): broadcasting by strides", [] {
       Tensor row = tensor({1.0, 2.0, 3.0, 4.0}).reshape({1, 4}).expand({3, 4});
       Tensor b = arange(12).reshape({3, 4});
       expect_sum(row, b, "add_2d(row.expand({3, 4}), b)", {});
     }},
    {"different shapes are an ember::Error naming both", [] {
       expect_error([] { (void)ex11_2::add_2d(zeros({2, 3}), zeros({3, 2})); }, {"(2, 3)", "(3, 2)"},
                      "add_2d((2, 3), (3, 2))",
                      "(2, 3) and (3, 2) have as many numbers, but no element-by-element sum: what does your check "
                      "compare?",
                      "the message names both shapes, so that whoever reads it sees which sizes disagree");
     }},
  }};
}
