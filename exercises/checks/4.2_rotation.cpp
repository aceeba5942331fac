// Checks exercise 4.2: the learner's matrix maps every position's pair to the
// pair offset positions later, in ember's own table. A wrong M is compared
// with the usual mistakes (transposed, one position's turn, the frequency of
// k instead of 2k, sin and cos swapped) to name the one it is.
#include <cmath>

#include "exercises/checks/check.h"

namespace ex4_2 {
ember::Tensor rotation(int64_t offset, int64_t k, int64_t D);
}

namespace {

using namespace ember;

// The rotation by angle b, laid out as the exercise's M (rows: new sin, new cos).
Tensor rotation_by(double b) { return tensor({std::cos(b), std::sin(b), -std::sin(b), std::cos(b)}, {2, 2}, kFloat64); }

double frequency(double exponent) { return 1.0 / std::pow(10000.0, exponent); }

// The hint for a wrong M, from the way it is wrong.
std::string hint_for(const Tensor& M, int64_t offset, int64_t k, int64_t D) {
  const double w = frequency(static_cast<double>(2 * k) / static_cast<double>(D)), b = static_cast<double>(offset) * w;
  if (check::matches(M, rotation_by(b).t(), 1e-12))
    return "M is transposed: it turns the pair by -b, back to position p - offset; with the vector (sin, cos), the "
           "first row gives sin(a + b) = cos b sin a + sin b cos a";
  if (offset != 1 && check::matches(M, rotation_by(w), 1e-12))
    return "that turns the pair as far as one position does: over offset positions the angle grows offset times "
           "as much";
  if (check::matches(M, rotation_by(static_cast<double>(offset) * frequency(static_cast<double>(k) / D)), 1e-12))
    return "pair k's frequency is 1 / 10000^(2k / D): features 2k and 2k + 1, so the exponent counts features, "
           "not pairs";
  if (check::matches(M, tensor({std::sin(b), std::cos(b), std::cos(b), -std::sin(b)}, {2, 2}, kFloat64), 1e-12) ||
      check::matches(M, tensor({-std::sin(b), std::cos(b), std::cos(b), std::sin(b)}, {2, 2}, kFloat64), 1e-12))
    return "the roles of sin b and cos b are swapped: at offset 0 M must be the identity";
  return "the first row of M gives the sin, the second the cos of p + offset, from (sin, cos) of p";
}

void maps_every_position(int64_t offset, int64_t k, int64_t D) {
  const int64_t L = 64;
  nn::SinusoidalPositionalEmbedding table(L, D, kFloat64);
  Tensor M = ex4_2::rotation(offset, k, D);
  const std::string what = "rotation(" + std::to_string(offset) + ", " + std::to_string(k) + ", " + std::to_string(D) + ")";
  check::expect(M.defined() && M.shape() == Shape{2, 2}, what + " is not a (2, 2) tensor");
  Tensor pairs = table.table.narrow(1, 2 * k, 2);                 // (L, 2): pair k of every position
  Tensor from = pairs.narrow(0, 0, L - offset);                   // positions p
  Tensor to = pairs.narrow(0, offset, L - offset);                // positions p + offset
  Tensor mapped = matmul(from, M.to(kFloat64).t());               // each row times M^T: M applied to each pair
  check::expect_close(mapped, to, what + " applied to pair " + std::to_string(k) + " of every position p", 1e-9,
                      hint_for(M.to(kFloat64), offset, k, D));
}

}  // namespace

check::Exercise check::exercise() {
  return {"4.2", "Position p + offset as a rotation", "docs/book/04_embeddings.md", {
    {"offset 1, the fastest pair (k = 0), D = 16", [] { maps_every_position(1, 0, 16); }},
    {"offsets 5 and 17, every pair of D = 16", [] {
       for (int64_t k = 0; k < 8; ++k) {
         maps_every_position(5, k, 16);
         maps_every_position(17, k, 16);
       }
     }},
    {"it is a rotation: M times its transpose is the identity", [] {
       Tensor M = ex4_2::rotation(3, 2, 16).to(kFloat64);
       expect_close(matmul(M, M.t()), eye(2, 2, kFloat64), "M M^T", 1e-12,
                    "a rotation keeps lengths: its rows are unit vectors at right angles, cos^2 + sin^2 = 1");
     }},
  }};
}
