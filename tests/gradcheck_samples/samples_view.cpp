// Views and copies (autograd/ops/view.cpp).
#include <algorithm>

#include "autograd/ops.h"
#include "inputs.h"

namespace ember::samples {

namespace {
Shape reversed(Shape s) {
  std::reverse(s.begin(), s.end());
  return s;
}
}  // namespace

void add_view_samples(std::vector<OpInfo>& ops) {
  ops.push_back({.name = "reshape",
                 .nodes = {"ReshapeBackward"},
                 .fn = [](const Inputs& in) { return reshape(in[0], reversed(in[0].shape())); },
                 .samples = [](Generator& g) -> Samples {
                   return {{"contiguous (a view)", {normal_leaf(g, {2, 3, 4})}},
                           {"non-contiguous (copies)", {transposed(normal_values(g, {3, 4}))}},
                           {"zero-size", {normal_leaf(g, {0, 3})}},
                           {"0-d", {normal_leaf(g, {})}}};
                 }});
  // Splits the last dim in two: (..., n) -> (..., 2, n/2); a view even of a transposed tensor.
  ops.push_back({.name = "view",
                 .nodes = {"ReshapeBackward"},
                 .fn =
                     [](const Inputs& in) {
                       Shape s = in[0].shape();
                       int64_t n = s.back();
                       s.back() = 2;
                       s.push_back(n / 2);
                       return view(in[0], s);
                     },
                 .samples = [](Generator& g) -> Samples {
                   return {{"contiguous", {normal_leaf(g, {2, 3, 4})}},
                           {"non-contiguous (transposed)", {transposed(normal_values(g, {3, 4}))}},
                           {"zero-size", {normal_leaf(g, {0, 4})}}};
                 }});
  ops.push_back({.name = "transpose",
                 .nodes = {"PermuteBackward"},
                 .fn = [](const Inputs& in) { return transpose(in[0], 0, -1); },
                 .samples = [](Generator& g) -> Samples {
                   return {{"2-D", {normal_leaf(g, {2, 3})}},
                           {"3-D", {normal_leaf(g, {2, 3, 4})}},
                           {"non-contiguous (transposed)", {transposed(normal_values(g, {3, 4}))}},
                           {"zero-size", {normal_leaf(g, {0, 3})}}};
                 }});
  // Rotates the dims right: (a, b, c) -> (c, a, b).
  ops.push_back({.name = "permute",
                 .nodes = {"PermuteBackward"},
                 .fn =
                     [](const Inputs& in) {
                       Shape dims{in[0].dim() - 1};
                       for (int64_t d = 0; d + 1 < in[0].dim(); ++d) dims.push_back(d);
                       return permute(in[0], dims);
                     },
                 .samples = [](Generator& g) -> Samples {
                   return {{"3-D", {normal_leaf(g, {2, 3, 4})}},
                           {"non-contiguous (transposed)", {transposed(normal_values(g, {3, 4}))}},
                           {"zero-size", {normal_leaf(g, {0, 2, 3})}}};
                 }});
  ops.push_back({.name = "unsqueeze",
                 .nodes = {"ReshapeBackward"},
                 .fn = [](const Inputs& in) { return unsqueeze(in[0], 1); },
                 .samples = [](Generator& g) -> Samples {
                   return {{"contiguous", {normal_leaf(g, {2, 3})}},
                           {"non-contiguous (transposed)", {transposed(normal_values(g, {3, 4}))}},
                           {"non-contiguous (stride 2)", {strided(normal_values(g, {5}))}},
                           {"zero-size", {normal_leaf(g, {0, 3})}}};
                 }});
  ops.push_back({.name = "squeeze",
                 .nodes = {"ReshapeBackward"},
                 .fn = [](const Inputs& in) { return squeeze(in[0]); },
                 .samples = [](Generator& g) -> Samples {
                   return {{"one size-1 dim", {normal_leaf(g, {2, 1, 3})}},
                           {"two size-1 dims", {normal_leaf(g, {1, 3, 1})}},
                           {"non-contiguous (stride 2)", {strided(normal_values(g, {2, 1, 3}))}},
                           {"zero-size", {normal_leaf(g, {0, 1, 3})}},
                           {"0-d", {normal_leaf(g, {})}}};
                 }});
  ops.push_back({.name = "squeeze_dim",
                 .nodes = {"ReshapeBackward"},
                 .fn = [](const Inputs& in) { return squeeze(in[0], 1); },
                 .samples = [](Generator& g) -> Samples {
                   return {{"size-1 dim", {normal_leaf(g, {2, 1, 3})}},
                           {"dim is not size 1 (no-op)", {normal_leaf(g, {2, 3})}},
                           {"non-contiguous (stride 2)", {strided(normal_values(g, {2, 1, 3}))}},
                           {"zero-size", {normal_leaf(g, {0, 1, 3})}}};
                 }});
  // Stretches every size-1 dim to 3 and adds a leading dim of 2.
  ops.push_back({.name = "expand",
                 .nodes = {"ExpandBackward"},
                 .fn =
                     [](const Inputs& in) {
                       Shape s{2};
                       for (int64_t n : in[0].shape()) s.push_back(n == 1 ? 3 : n);
                       return expand(in[0], s);
                     },
                 .samples = [](Generator& g) -> Samples {
                   return {{"row", {normal_leaf(g, {1, 3})}},
                           {"column", {normal_leaf(g, {3, 1})}},
                           {"0-d", {normal_leaf(g, {})}},
                           {"non-contiguous (stride 2)", {strided(normal_values(g, {1, 4}))}},
                           {"zero-size", {normal_leaf(g, {0, 1})}}};
                 }});
  ops.push_back({.name = "narrow",
                 .nodes = {"SliceBackward"},
                 .grad_nodes = {"TransposedBackward"},
                 .fn = [](const Inputs& in) { return narrow(in[0], -1, 1, 2); },
                 .samples = [](Generator& g) -> Samples {
                   return {{"contiguous", {normal_leaf(g, {2, 4})}},
                           {"non-contiguous (transposed)", {transposed(normal_values(g, {3, 4}))}},
                           {"non-contiguous (stride 2)", {strided(normal_values(g, {5}))}},
                           {"zero-size", {normal_leaf(g, {0, 4})}}};
                 }});
  ops.push_back({.name = "slice_step",
                 .nodes = {"SliceBackward"},
                 .grad_nodes = {"TransposedBackward"},
                 .fn = [](const Inputs& in) { return slice(in[0], -1, 1, in[0].size(-1), 2); },
                 .samples = [](Generator& g) -> Samples {
                   return {{"1-D", {normal_leaf(g, {7})}},
                           {"contiguous", {normal_leaf(g, {2, 5})}},
                           {"non-contiguous (transposed)", {transposed(normal_values(g, {3, 4}))}},
                           {"non-contiguous (stride 2)", {strided(normal_values(g, {6}))}},
                           {"zero-size", {normal_leaf(g, {0, 5})}}};
                 }});
  ops.push_back({.name = "select",
                 .nodes = {"SliceBackward"},
                 .grad_nodes = {"TransposedBackward"},
                 .fn = [](const Inputs& in) { return select(in[0], -1, 1); },
                 .samples = [](Generator& g) -> Samples {
                   return {{"contiguous", {normal_leaf(g, {2, 3})}},
                           {"non-contiguous (transposed)", {transposed(normal_values(g, {3, 4}))}},
                           {"1-D to 0-d, stride 2", {strided(normal_values(g, {4}))}},
                           {"zero-size", {normal_leaf(g, {0, 3})}}};
                 }});
  ops.push_back({.name = "flatten",
                 .nodes = {"ReshapeBackward"},
                 .fn = [](const Inputs& in) { return flatten(in[0], 1); },
                 .samples = [](Generator& g) -> Samples {
                   return {{"3-D", {normal_leaf(g, {2, 3, 4})}},
                           {"non-contiguous (copies)", {transposed(normal_values(g, {2, 3, 4}))}},
                           {"zero-size", {normal_leaf(g, {2, 0, 3})}}};
                 }});
  ops.push_back({.name = "contiguous",
                 .nodes = {"IdentityBackward"},
                 .fn = [](const Inputs& in) { return contiguous(in[0]); },
                 .samples = [](Generator& g) -> Samples {
                   return {{"non-contiguous (transposed)", {transposed(normal_values(g, {3, 4}))}},
                           {"non-contiguous (stride 2)", {strided(normal_values(g, {5}))}},
                           {"already contiguous (returns x)", {normal_leaf(g, {2, 3})}}};
                 }});
  ops.push_back({.name = "clone",
                 .nodes = {"IdentityBackward"},
                 .fn = [](const Inputs& in) { return clone(in[0]); },
                 .samples = [](Generator& g) { return unary_samples(g); }});
  // to(kFloat64) of a float64 tensor is x itself and records nothing, so the
  // round trip through float32 is what exercises ToBackward. float32 keeps
  // ~7 digits: with eps = 1e-6 the central difference would be mostly
  // rounding noise, with eps = 1e-3 the noise is ~1e-4 of a derivative of 1.
  ops.push_back({.name = "to",
                 .nodes = {"ToBackward"},
                 .fn = [](const Inputs& in) { return to(to(in[0], kFloat32), kFloat64); },
                 .samples = [](Generator& g) { return unary_samples(g); },
                 .gradcheck = {.eps = 1e-3, .atol = 1e-3, .rtol = 1e-3}});
}

}  // namespace ember::samples
