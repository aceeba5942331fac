// matmul with PyTorch's 1-D and batch rules (autograd/ops/matmul.cpp).
#include "autograd/ops.h"
#include "inputs.h"

namespace ember::samples {

void add_matmul_samples(std::vector<OpInfo>& ops) {
  ops.push_back({.name = "matmul",
                 .nodes = {"MatmulBackward"},
                 .fn = [](const Inputs& in) { return matmul(in[0], in[1]); },
                 .samples = [](Generator& g) -> Samples {
                   auto r = [&g](const Shape& s) { return leaf(normal_values(g, s)); };
                   return {{"1-D . 1-D (dot)", {r({3}), r({3})}},
                           {"2-D . 1-D", {r({2, 3}), r({3})}},
                           {"1-D . 2-D", {r({3}), r({3, 2})}},
                           {"2-D . 2-D", {r({2, 3}), r({3, 4})}},
                           {"batched", {r({2, 2, 3}), r({2, 3, 2})}},
                           {"broadcast batch dims", {r({2, 1, 2, 3}), r({3, 3, 2})}},
                           {"batched . 1-D", {r({2, 2, 3}), r({3})}},
                           {"1-D . batched", {r({3}), r({2, 3, 2})}},
                           {"non-contiguous (transposed)",
                            {transposed(normal_values(g, {2, 3})), transposed(normal_values(g, {3, 4}))}},
                           {"zero-size (K = 0)", {r({2, 0}), r({0, 3})}},
                           {"zero-size (M = 0)", {r({0, 3}), r({3, 2})}},
                           {"b is a constant", {r({2, 3}), normal_values(g, {3, 2})}}};
                 }});
}

}  // namespace ember::samples
