// Checks exercise 4.1: the table against nn::SinusoidalPositionalEmbedding's
// buffer, for even and odd D.
#include "exercises/checks/check.h"

namespace ex4_1 {
ember::Tensor sinusoidal_table(int64_t L, int64_t D);
}

namespace {

using namespace ember;

void same_as_ember(int64_t L, int64_t D) {
  const std::string what = "sinusoidal_table(" + std::to_string(L) + ", " + std::to_string(D) + ")";
  Tensor got = ex4_1::sinusoidal_table(L, D);
  nn::SinusoidalPositionalEmbedding ember_table(L, D, kFloat64);
  check::expect_close(got, ember_table.table, what, 1e-12,
                      "i / 2 rounds down: features 2k and 2k + 1 share one angle, sin then cos");
}

}  // namespace

check::Exercise check::exercise() {
  return {"4.1", "The sinusoidal table by its formula", "docs/book/04_embeddings.md", {
    {"position 0 is (0, 1, 0, 1, ...)", [] {
       expect_close(ex4_1::sinusoidal_table(1, 4), tensor({0.0, 1.0, 0.0, 1.0}, {1, 4}, kFloat64),
                    "sinusoidal_table(1, 4)", 1e-12, "sin(0) = 0 at even i, cos(0) = 1 at odd i");
     }},
    {"a small table, D = 8", [] { same_as_ember(6, 8); }},
    {"an odd D = 7 (the last column is a sin)", [] { same_as_ember(10, 7); }},
    {"the demo's table, L = 128, D = 64", [] { same_as_ember(128, 64); }},
  }};
}
