// Checks exercise 4.1: the table against nn::SinusoidalPositionalEmbedding's
// buffer, for even and odd D. A wrong table is compared with the tables the
// usual mistakes make (exponent i instead of 2 (i / 2), an integer exponent,
// sin and cos swapped, float32, the odd D's last column left out) to name
// the one it is.
#include <cmath>

#include "exercises/checks/check.h"

namespace ex4_1 {
ember::Tensor sinusoidal_table(int64_t L, int64_t D);
}

namespace {

using namespace ember;

// The table with angle p / 10000^(exponent(i)), sin at even i (or at odd i
// when swapped).
template <class Exponent>
Tensor table(int64_t L, int64_t D, Exponent exponent, bool swapped = false) {
  Tensor t = empty({L, D}, kFloat64);
  double* out = t.data_ptr<double>();
  for (int64_t p = 0; p < L; ++p)
    for (int64_t i = 0; i < D; ++i) {
      const double angle = static_cast<double>(p) / std::pow(10000.0, exponent(i));
      out[p * D + i] = (i % 2 == 0) != swapped ? std::sin(angle) : std::cos(angle);
    }
  return t;
}

// The hint for a wrong table, from the way it is wrong.
std::string hint_for(const Tensor& got, int64_t L, int64_t D) {
  const double d = static_cast<double>(D);
  const auto right = [d](int64_t i) { return static_cast<double>(2 * (i / 2)) / d; };
  if (got.defined() && got.shape() == Shape{D, L} && L != D)
    return "the table is (L, D): one row per position, one column per feature";
  if (got.defined() && got.dtype() != kFloat64 && check::matches(got, table(L, D, right), 1e-6))
    return "the numbers are right to float32's 7 digits: the table is float64";
  if (check::matches(got, table(L, D, right, true), 1e-9))
    return "sin and cos are swapped: the even features (2k) are the sin, the odd ones (2k + 1) the cos";
  if (check::matches(got, table(L, D, [d](int64_t i) { return static_cast<double>(i) / d; }), 1e-9))
    return "the exponent grows at every feature: features 2k and 2k + 1 share one angle, so the exponent is 2k / D "
           "for both, with k = i / 2 rounded down";
  if (check::matches(got, table(L, D, [d](int64_t i) { return static_cast<double>(2 * i) / d; }), 1e-9))
    return "the exponent 2i / D counts every feature twice: with k = i / 2 rounded down it is 2k / D";
  if (check::matches(got, table(L, D, [D](int64_t i) { return static_cast<double>(2 * (i / 2) / D); }), 1e-9))
    return "every angle is p itself: the exponent 2k / D was computed in integers, where it is 0; it is a "
           "fraction between 0 and 1";
  if (D % 2 == 1 && got.defined() && got.shape() == Shape{L, D} &&
      check::matches(got.narrow(1, 0, D - 1), table(L, D, right).narrow(1, 0, D - 1), 1e-9))
    return "all but the last column are right: with an odd D the last feature, 2k = D - 1, has no partner, and "
           "is a sin";
  return "angle(p, i) = p / 10000^(2k / D) with k = i / 2 rounded down; sin at even i, cos at odd i";
}

void same_as_ember(int64_t L, int64_t D) {
  const std::string what = "sinusoidal_table(" + std::to_string(L) + ", " + std::to_string(D) + ")";
  const Tensor got = ex4_1::sinusoidal_table(L, D);
  nn::SinusoidalPositionalEmbedding ember_table(L, D, kFloat64);
  check::expect(got.defined() && got.shape() == ember_table.table.shape(),
                what + " has shape " + (got.defined() ? check::show(got.shape()) : std::string("(undefined)")) +
                    ", but should have shape " + check::show(ember_table.table.shape()),
                hint_for(got, L, D));
  check::expect_close(got, ember_table.table, what, 1e-12, hint_for(got, L, D));
}

}  // namespace

check::Exercise check::exercise() {
  return {"4.1", "The sinusoidal table by its formula", "docs/book/04_embeddings.md", {
    {"position 0 is (0, 1, 0, 1, ...)", [] {
       const Tensor got = ex4_1::sinusoidal_table(1, 4);
       expect_close(got, tensor({0.0, 1.0, 0.0, 1.0}, {1, 4}, kFloat64), "sinusoidal_table(1, 4)", 1e-12,
                    check::matches(got, tensor({1.0, 0.0, 1.0, 0.0}, {1, 4}, kFloat64))
                        ? "sin and cos are swapped: at angle 0 the sin (even features) is 0 and the cos is 1"
                        : "at position 0 every angle is 0: sin(0) = 0, cos(0) = 1");
     }},
    {"a small table, D = 8", [] { same_as_ember(6, 8); }},
    {"an odd D = 7 (the last column is a sin)", [] { same_as_ember(10, 7); }},
    {"the demo's table, L = 128, D = 64", [] { same_as_ember(128, 64); }},
  }};
}
