// index_select, embedding, gather and their adjoints index_add, scatter_add
// (autograd/ops/index.cpp).
#include "autograd/ops.h"
#include "inputs.h"

namespace ember::samples {

void add_index_samples(std::vector<OpInfo>& ops) {
  ops.push_back({.name = "index_select",
                 .nodes = {"IndexSelectBackward"},
                 .grad_nodes = {"TransposedBackward"},
                 .fn = [](const Inputs& in) { return index_select(in[0], 0, in[1]); },
                 .samples = [](Generator& g) -> Samples {
                   return {{"repeated ids", {normal_leaf(g, {3, 4}), ids({0, 2, 0})}},
                           {"1-D", {normal_leaf(g, {4}), ids({3, 0, 3, 1})}},
                           {"non-contiguous (transposed)", {transposed(normal_values(g, {3, 4})), ids({2, 2, 1})}},
                           {"zero-size (no ids)", {normal_leaf(g, {3, 2}), ids({}, {0})}}};
                 }});
  ops.push_back({.name = "index_select_last_dim",
                 .nodes = {"IndexSelectBackward"},
                 .fn = [](const Inputs& in) { return index_select(in[0], -1, in[1]); },
                 .samples = [](Generator& g) -> Samples {
                   return {{"repeated ids", {normal_leaf(g, {2, 3}), ids({2, 0, 2})}},
                           {"non-contiguous (transposed)", {transposed(normal_values(g, {3, 4})), ids({1, 1})}},
                           {"zero-size", {normal_leaf(g, {0, 3}), ids({1})}}};
                 }});
  // weight (V, D), ids (*) -> (*, D): index_select of the flattened ids, reshaped
  ops.push_back({.name = "embedding",
                 .nodes = {"IndexSelectBackward"},
                 .fn = [](const Inputs& in) { return embedding(in[0], in[1]); },
                 .samples = [](Generator& g) -> Samples {
                   return {{"ids (B, T), repeated", {normal_leaf(g, {4, 3}), ids({3, 0, 3, 1, 1, 1}, {2, 3})}},
                           {"non-contiguous (transposed) weight", {transposed(normal_values(g, {3, 2})), ids({2, 2})}},
                           {"zero-size (no ids)", {normal_leaf(g, {3, 2}), ids({}, {0})}}};
                 }});
  ops.push_back({.name = "gather",
                 .nodes = {"GatherBackward"},
                 .grad_nodes = {"TransposedBackward"},
                 .fn = [](const Inputs& in) { return gather(in[0], 1, in[1]); },
                 .samples = [](Generator& g) -> Samples {
                   return {{"repeated ids", {normal_leaf(g, {2, 3}), ids({0, 2, 0, 1, 2, 2, 1, 0}, {2, 4})}},
                           {"ids smaller than x", {normal_leaf(g, {3, 3}), ids({1, 1}, {1, 2})}},
                           {"non-contiguous (transposed)",
                            {transposed(normal_values(g, {3, 4})), ids({3, 0, 1, 1, 2, 3}, {3, 2})}},
                           {"zero-size", {normal_leaf(g, {2, 3}), ids({}, {2, 0})}}};
                 }});
  // x + src's rows at ids: differentiable in both (the embedding's gradient, recorded)
  ops.push_back({.name = "index_add",
                 .nodes = {"IndexAddBackward"},
                 .fn = [](const Inputs& in) { return index_add(in[0], 0, in[1], in[2]); },
                 .samples = [](Generator& g) -> Samples {
                   return {{"repeated ids", {normal_leaf(g, {3, 2}), ids({2, 0, 2}), normal_leaf(g, {3, 2})}},
                           {"non-contiguous (transposed) source",
                            {normal_leaf(g, {4, 3}), ids({1, 3}), transposed(normal_values(g, {2, 3}))}},
                           {"0-d ids", {normal_leaf(g, {3, 2}), scalar_tensor(1, kInt64), normal_leaf(g, {2})}},
                           {"zero-size (no ids)", {normal_leaf(g, {3, 2}), ids({}, {0}), normal_leaf(g, {0, 2})}}};
                 }});
  ops.push_back({.name = "scatter_add",
                 .nodes = {"ScatterAddBackward"},
                 .fn = [](const Inputs& in) { return scatter_add(in[0], 1, in[1], in[2]); },
                 .samples = [](Generator& g) -> Samples {
                   return {{"repeated ids", {normal_leaf(g, {2, 3}), ids({0, 2, 0, 1, 2, 2}, {2, 3}), normal_leaf(g, {2, 3})}},
                           {"non-contiguous (transposed) destination",
                            {transposed(normal_values(g, {2, 3})), ids({1, 1}, {2, 1}), normal_leaf(g, {2, 1})}},
                           {"zero-size", {normal_leaf(g, {2, 3}), ids({}, {2, 0}), normal_leaf(g, {2, 0})}}};
                 }});
}

}  // namespace ember::samples
