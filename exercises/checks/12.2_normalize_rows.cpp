// Checks exercise 12.2: unit rows (a wrong result is compared with the usual
// mistakes': norms not lined up with their rows, the norms of the columns,
// squared norms), the error for a zero row naming it (NaN where a refusal
// belongs is named), and that a refused call leaves x exactly as it was.
#include <cmath>

#include "exercises/checks/check.h"

namespace ex12_2 {
ember::Tensor& normalize_rows_(ember::Tensor& x);
}

namespace {

using namespace ember;

std::string value_mistake(const Tensor& got, const Tensor& x) {
  const Tensor rows = sqrt(sum(x * x, {1})), cols = sqrt(sum(x * x, {0}));
  if (check::matches(got, x / rows, 1e-6))
    return "column j was divided by row j's norm: a (R) tensor of norms broadcasts along the last dim; each norm "
           "must be lined up with its own row, as an (R, 1) column";
  if (check::matches(got, x / unsqueeze(cols, 1), 1e-6) || check::matches(got, x / cols, 1e-6))
    return "those are the norms of the columns: a row runs along dim 1, so its norm is taken over dim 1";
  if (check::matches(got, x / unsqueeze(rows * rows, 1), 1e-6))
    return "each row was divided by its squared length: the L2 norm is the square root of the sum of squares";
  if (check::matches(got, x / std::sqrt(sum(x * x).item<float>()), 1e-6))
    return "the whole matrix was divided by one norm: each row by its own";
  return "each row divided by its own L2 norm: (3, 4) has norm 5";
}

bool has_nan(const Tensor& t) {
  for (float v : t.to(kFloat32).to_vector<float>())
    if (std::isnan(v)) return true;
  return false;
}

Tensor with_zero_row() { return tensor({1.0, 1.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 5.0}, {3, 3}); }

}  // namespace

check::Exercise check::exercise() {
  return {"12.2", "All or nothing: an in-place op that fails cleanly", "docs/book/12_bad_input_and_faults.md", {
    {"rows (3, 4) and (0, 2) become (0.6, 0.8) and (0, 1), in place", [] {
       const Tensor before = tensor({3.0, 4.0, 0.0, 2.0}, {2, 2});
       Tensor x = before.clone();
       const void* storage = x.storage().get();
       Tensor& r = ex12_2::normalize_rows_(x);
       expect(&r == &x, "normalize_rows_ should return x itself", "an in-place op returns the tensor it wrote into");
       expect(x.storage().get() == storage, "x holds a new storage after normalize_rows_: the numbers were not "
              "written into x's own",
              "x = ... makes x another tensor, and whoever else holds x's storage still sees the old numbers: in "
              "place, the new numbers go into the storage x already has");
       const Tensor want = tensor({0.6, 0.8, 0.0, 1.0}, {2, 2});
       if (check::max_diff(x, want, "x after normalize_rows_") > 1e-6)
         fail("x after normalize_rows_ is " + show(x) + ", but should be " + show(want), value_mistake(x, before));
     }},
    {"a zero row is an ember::Error naming the row", [] {
       Tensor probe = with_zero_row();  // first: what an unrefused call leaves in x
       bool returned = true;
       try {
         (void)ex12_2::normalize_rows_(probe);
       } catch (...) {
         returned = false;
       }
       Tensor x = with_zero_row();
       const std::string msg = expect_error(
           [&] { (void)ex12_2::normalize_rows_(x); }, {}, "normalize_rows_ of a matrix whose row 1 is zeros",
           returned && has_nan(probe)
               ? "row 1 was divided by its norm, 0, and 0/0 is NaN: x now holds NaNs where a refusal belongs"
               : "a row of zeros has no direction: refuse it");
       expect(msg.find("normalize_rows_") != std::string::npos,
              "the message \"" + msg + "\" should mention \"normalize_rows_\"",
              "the refusal came from an op inside: normalize_rows_'s own check names normalize_rows_");
       expect(msg.find("row 1") != std::string::npos, "the message \"" + msg + "\" should mention \"row 1\"",
              msg.find("row 2") != std::string::npos ? "rows are counted from 0, as everywhere in ember"
                                                     : "name the row, so that whoever reads it can find it");
     }},
    {"a refused call leaves x exactly as it was (rows before the zero one too)", [] {
       Tensor x = with_zero_row();
       const Tensor before = x.clone();
       try {
         (void)ex12_2::normalize_rows_(x);
       } catch (const Error&) {
       }
       const bool first_row_written = !equal_bits(x.narrow(0, 0, 1), before.narrow(0, 0, 1)) &&
                                      equal_bits(x.narrow(0, 1, 2), before.narrow(0, 1, 2));
       expect(equal_bits(x, before), "after the refusal x is " + show(x) + ", not " + show(before),
              first_row_written ? "row 0 was already divided when row 1 was refused: every row must pass before "
                                  "any is written (all or nothing)"
                                : "a refused op writes nothing: every row must pass before any is written");
     }},
    {"a tensor that is not a matrix is refused", [] {
       Tensor v = tensor({3.0, 4.0});
       const std::string msg = expect_error([&] { (void)ex12_2::normalize_rows_(v); }, {},
                                              "normalize_rows_ of a vector",
                                              "a vector has no rows: refuse anything that is not 2-D");
       expect(msg.find("normalize_rows_") != std::string::npos,
              "the message \"" + msg + "\" should mention \"normalize_rows_\"",
              "the refusal came from an op inside: normalize_rows_'s own check, first, names normalize_rows_ and "
              "the shape");
       expect(msg.find("(2)") != std::string::npos, "the message \"" + msg + "\" should mention \"(2)\"",
              "name the shape that is not a matrix's");
     }},
  }};
}
