// Fused ops with kernels of their own (tensor/fused.cpp; their rules are
// autograd/ops/layer_norm.cpp and cross_entropy.cpp).
//
// Legend: N rows, D normalized dim, B batch, T sequence length, C classes.
#include "autograd/ops.h"
#include "inputs.h"

namespace ember::samples {

void add_fused_samples(std::vector<OpInfo>& ops) {
  // x (*, D), weight (D), bias (D) -> (*, D)
  ops.push_back({.name = "layer_norm",
                 .nodes = {"LayerNormBackward"},
                 .fn = [](const Inputs& in) { return layer_norm(in[0], in[1], in[2]); },
                 .samples = [](Generator& g) -> Samples {
                   return {{"(N, D)", {normal_leaf(g, {3, 5}), normal_leaf(g, {5}), normal_leaf(g, {5})}},
                           {"(B, T, D)", {normal_leaf(g, {2, 3, 4}), normal_leaf(g, {4}), normal_leaf(g, {4})}},
                           {"non-contiguous x", {transposed(normal_values(g, {3, 4})), normal_leaf(g, {4}), normal_leaf(g, {4})}},
                           {"weight and bias are constants", {normal_leaf(g, {2, 3}), randn({3}, g, kFloat64), randn({3}, g, kFloat64)}},
                           {"zero-size (N = 0)", {normal_leaf(g, {0, 3}), normal_leaf(g, {3}), normal_leaf(g, {3})}}};
                 }});
  // logits (N, C) or (B, T, C), targets int64 -> () or per-target losses
  auto ce_samples = [](Generator& g) -> Samples {
    return {{"(N, C)", {normal_leaf(g, {3, 4}), ids({0, 3, 2}, {3})}},
            {"(B, T, C)", {normal_leaf(g, {2, 2, 3}), ids({0, 2, 1, 1}, {2, 2})}},
            {"ignore_index -100 (not counted)", {normal_leaf(g, {3, 4}), ids({1, -100, 3}, {3})}},
            {"non-contiguous logits", {transposed(normal_values(g, {3, 4})), ids({2, 2, 0}, {3})}}};
  };
  auto ce = [](Reduction r) {
    return [r](const Inputs& in) { return cross_entropy(in[0], in[1], r); };
  };
  ops.push_back({.name = "cross_entropy", .nodes = {"CrossEntropyBackward"}, .fn = ce(Reduction::Mean),
                 .samples = ce_samples});
  ops.push_back({.name = "cross_entropy(sum)", .nodes = {"CrossEntropyBackward"}, .fn = ce(Reduction::Sum),
                 .samples = ce_samples});
  ops.push_back({.name = "cross_entropy(none)", .nodes = {"CrossEntropyBackward"}, .fn = ce(Reduction::None),
                 .samples = ce_samples});
}

}  // namespace ember::samples
