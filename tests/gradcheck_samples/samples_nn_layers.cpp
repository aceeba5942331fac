// Linear, dropout (nn/layers.cpp) and mse_loss (nn/loss.cpp), called as a
// learner calls them. A module owns its weights, so each fn builds a small
// module and points its public weight handles at the inputs: gradcheck then
// perturbs exactly the tensors forward() reads.
//
// Legend: I in features, O out features.
#include "autograd/ops.h"
#include "inputs.h"
#include "nn/layers.h"
#include "nn/loss.h"

namespace ember::samples {

using namespace ember::nn;

void add_nn_layer_samples(std::vector<OpInfo>& ops) {
  // x (*, I), W (O, I) [, b (O)] -> (*, O)
  ops.push_back({.name = "nn.Linear",
                 .nodes = {"PermuteBackward", "MatmulBackward", "AddBackward"},
                 .fn =
                     [](const Inputs& in) {
                       Generator init(0);  // the weights no input replaces: the same at every call
                       Linear lin(in[1].size(1), in[1].size(0), {.bias = in.size() > 2, .dtype = kFloat64, .generator = &init});
                       lin.weight = in[1];
                       if (in.size() > 2) lin.bias = in[2];
                       return lin.forward(in[0]);
                     },
                 .samples = [](Generator& g) -> Samples {
                   return {{"(N, I)", {normal_leaf(g, {3, 4}), normal_leaf(g, {2, 4}), normal_leaf(g, {2})}},
                           {"(B, T, I)", {normal_leaf(g, {2, 3, 4}), normal_leaf(g, {2, 4}), normal_leaf(g, {2})}},
                           {"non-contiguous x and W", {transposed(normal_values(g, {3, 4})), transposed(normal_values(g, {2, 4})), normal_leaf(g, {2})}},
                           {"no bias", {normal_leaf(g, {3, 2}), normal_leaf(g, {3, 2})}},
                           {"zero-size (N = 0)", {normal_leaf(g, {0, 3}), normal_leaf(g, {2, 3}), normal_leaf(g, {2})}}};
                 }});


  // x (any) -> x * mask / (1 - p); a fixed seed inside fn, so every call of
  // the function (gradcheck calls it many times) draws the same mask
  ops.push_back({.name = "nn.dropout",
                 .nodes = {"MulBackward"},
                 .fn =
                     [](const Inputs& in) {
                       Generator gen(5);
                       return dropout(in[0], 0.4, gen);
                     },
                 .samples = [](Generator& g) -> Samples {
                   return {{"contiguous", {normal_leaf(g, {3, 4})}},
                           {"non-contiguous (transposed)", {transposed(normal_values(g, {3, 4}))}},
                           {"zero-size", {normal_leaf(g, {0, 3})}}};
                 }});
  // input, target (broadcast) -> mean of squared differences
  ops.push_back({.name = "nn.mse_loss",
                 .nodes = {"AddBackward", "MulBackward", "SumBackward"},  // sub records AddBackward (b scaled by -1)
                 .fn = [](const Inputs& in) { return mse_loss(in[0], in[1]); },
                 .samples = [](Generator& g) -> Samples {
                   return {{"same shape", {normal_leaf(g, {2, 3}), normal_leaf(g, {2, 3})}},
                           {"broadcast target", {normal_leaf(g, {2, 3}), normal_leaf(g, {3})}},
                           {"non-contiguous", {transposed(normal_values(g, {3, 4})), normal_leaf(g, {3, 4})}},
                           {"target is a constant", {normal_leaf(g, {4}), randn({4}, g, kFloat64)}}};
                 }});
}

}  // namespace ember::samples
