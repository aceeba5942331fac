// where, masked_fill, tril/triu (autograd/ops/select.cpp).
#include "autograd/ops.h"
#include "inputs.h"

namespace ember::samples {

void add_select_samples(std::vector<OpInfo>& ops) {
  ops.push_back({.name = "where",
                 .nodes = {"WhereBackward"},
                 .fn = [](const Inputs& in) { return where(in[0], in[1], in[2]); },
                 .samples = [](Generator& g) -> Samples {
                   return {{"same shape", {mask({2, 3}), normal_leaf(g, {2, 3}), normal_leaf(g, {2, 3})}},
                           {"broadcast", {mask({3, 1}), normal_leaf(g, {1, 4}), normal_leaf(g, {4})}},
                           {"non-contiguous",
                            {mask({3, 4}), transposed(normal_values(g, {3, 4})), strided(normal_values(g, {4}))}},
                           {"zero-size", {mask({0, 3}), normal_leaf(g, {0, 3}), normal_leaf(g, {3})}},
                           {"b is a constant", {mask({2, 3}), normal_leaf(g, {2, 3}), normal_values(g, {2, 3})}}};
                 }});
  ops.push_back({.name = "masked_fill",
                 .nodes = {"MaskedFillBackward"},
                 .fn = [](const Inputs& in) { return masked_fill(in[0], in[1], -1.0); },
                 .samples = [](Generator& g) -> Samples {
                   return {{"same shape", {normal_leaf(g, {2, 3}), mask({2, 3})}},
                           {"broadcast mask", {normal_leaf(g, {2, 3}), mask({3})}},
                           {"non-contiguous", {transposed(normal_values(g, {3, 4})), mask({3, 4})}},
                           {"zero-size", {normal_leaf(g, {0, 3}), mask({3})}}};
                 }});
  auto triangle_samples = [](Generator& g) -> Samples {
    return {{"wide", {normal_leaf(g, {3, 4})}},
            {"batched", {normal_leaf(g, {2, 3, 3})}},
            {"non-contiguous (transposed)", {transposed(normal_values(g, {4, 3}))}},
            {"zero-size", {normal_leaf(g, {0, 3})}}};
  };
  ops.push_back({.name = "tril",
                 .nodes = {"TriangleBackward"},
                 .fn = [](const Inputs& in) { return tril(in[0]); },
                 .samples = triangle_samples});
  ops.push_back({.name = "triu",
                 .nodes = {"TriangleBackward"},
                 .fn = [](const Inputs& in) { return triu(in[0], 1); },
                 .samples = triangle_samples});
}

}  // namespace ember::samples
