// Checks exercise 4.2: the learner's matrix maps every position's pair to the
// pair offset positions later, in ember's own table.
#include "exercises/checks/check.h"

namespace ex4_2 {
ember::Tensor rotation(int64_t offset, int64_t k, int64_t D);
}

namespace {

using namespace ember;

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
                      "the first row of M gives the sin, the second the cos of p + offset");
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
       expect_close(matmul(M, M.t()), eye(2, 2, kFloat64), "M M^T", 1e-12);
     }},
  }};
}
