// cat and stack (autograd/ops/join.cpp).
#include "autograd/ops.h"
#include "inputs.h"

namespace ember::samples {

void add_join_samples(std::vector<OpInfo>& ops) {
  ops.push_back({.name = "cat",
                 .nodes = {"CatBackward"},
                 .fn = [](const Inputs& in) { return cat(in, 0); },
                 .samples = [](Generator& g) -> Samples {
                   return {{"three pieces", {normal_leaf(g, {2, 3}), normal_leaf(g, {1, 3}),
                                             normal_leaf(g, {3, 3})}},
                           {"1-D", {normal_leaf(g, {2}), normal_leaf(g, {3})}},
                           {"non-contiguous", {transposed(normal_values(g, {2, 3})), normal_leaf(g, {1, 3})}},
                           {"zero-size piece", {normal_leaf(g, {0, 3}), normal_leaf(g, {2, 3})}},
                           {"b is a constant", {normal_leaf(g, {2, 3}), normal_values(g, {1, 3})}}};
                 }});
  ops.push_back({.name = "cat_last_dim",
                 .nodes = {"CatBackward"},
                 .fn = [](const Inputs& in) { return cat(in, -1); },
                 .samples = [](Generator& g) -> Samples {
                   return {{"two pieces", {normal_leaf(g, {2, 1}), normal_leaf(g, {2, 3})}},
                           {"non-contiguous", {transposed(normal_values(g, {3, 4})), normal_leaf(g, {3, 2})}},
                           {"zero-size piece", {normal_leaf(g, {2, 0}), normal_leaf(g, {2, 3})}}};
                 }});
  ops.push_back({.name = "stack",
                 .nodes = {"ReshapeBackward", "CatBackward"},  // unsqueeze each, then cat
                 .fn = [](const Inputs& in) { return stack(in, -1); },
                 .samples = [](Generator& g) -> Samples {
                   return {{"two", {normal_leaf(g, {2, 3}), normal_leaf(g, {2, 3})}},
                           {"non-contiguous", {transposed(normal_values(g, {3, 2})), strided(normal_values(g, {3, 2})),
                                               normal_leaf(g, {3, 2})}},
                           {"zero-size", {normal_leaf(g, {0, 3}), normal_leaf(g, {0, 3})}},
                           {"0-d", {normal_leaf(g, {}), normal_leaf(g, {})}}};
                 }});
}

}  // namespace ember::samples
