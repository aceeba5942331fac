// The registry entries for every differentiable op in autograd/ops.h, in the
// order of that header. Each entry says which Node types the op records, how
// to call it on a list of inputs, and which inputs to try it on.
//
// Sample conventions (labels are what the tour and the test failures print):
//   "contiguous" / "same shape"   the plain case
//   "broadcast"                   shapes that broadcast, so the engine must sum back
//   "non-contiguous (...)"        a leaf whose memory is transposed or strided
//   "zero-size"                   a dim of size 0 (an empty Jacobian, but the
//                                 forward and backward must still run)
//   "0-d"                         a scalar tensor
//   "b is a constant"             one operand does not require grad
//   "same tensor twice"           x op x: both gradients accumulate into x
// Values avoid the points where an op is not differentiable (0 for abs and
// relu, the bounds of clamp, ties for max), because a central difference
// straddling a kink measures the average of two slopes, not a derivative.
#include "autograd/op_registry.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "autograd/ops.h"
#include "tensor/factory.h"

namespace ember {

namespace {

using Inputs = std::vector<Tensor>;
using Samples = std::vector<OpSample>;
// Makes the values of one input: float64, not yet requiring grad.
using Make = std::function<Tensor(Generator&, const Shape&)>;

// ---- input values ----

Tensor normal_values(Generator& g, const Shape& s) { return randn(s, g, kFloat64); }

// N(0, 1) values, each redrawn until it is at least 0.1 away from every kink.
Make avoiding(std::vector<double> kinks) {
  return [kinks](Generator& g, const Shape& s) {
    Tensor t = randn(s, g, kFloat64);
    double* p = t.data_ptr<double>();
    for (int64_t i = 0; i < t.numel(); ++i) {
      auto near_kink = [&] {
        return std::any_of(kinks.begin(), kinks.end(), [&](double k) { return std::abs(p[i] - k) < 0.1; });
      };
      while (near_kink()) p[i] = 2.0 * g.next_double() - 1.0;  // uniform in [-1, 1)
    }
    return t;
  };
}
// (Functions, not global Make objects: the registry may be built during
// another file's static initialization, before such globals are constructed.)
Tensor away_from_zero(Generator& g, const Shape& s) { return avoiding({0.0})(g, s); }
Tensor positive(Generator& g, const Shape& s) { return uniform(s, 0.5, 2.0, g, kFloat64); }

Tensor ids(const std::vector<int64_t>& v, const Shape& s = {}) { return tensor(v, s.empty() ? Shape{int64_t(v.size())} : s); }

// A bool mask with a fixed, mixed pattern (every third element true).
Tensor mask(const Shape& s) {
  std::vector<bool> v(static_cast<size_t>(numel_of(s)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = i % 3 == 0;
  return tensor(v, s);
}

// ---- input layouts ----

// A leaf that requires grad and holds `values`.
Tensor leaf(Tensor values) { return values.requires_grad_(); }

// The same values with the last two dims laid out transposed in memory:
// the non-contiguous leaf that x.t() would hand to an op. (2+ dims)
Tensor transposed(const Tensor& values) {
  Tensor swapped = values.transpose(-1, -2).contiguous();  // (..., c, r), row-major
  return swapped.transpose(-1, -2).detach().requires_grad_();
}

// The same values at every second element of a buffer (stride 2 in the last dim).
Tensor strided(const Tensor& values) {
  Shape big = values.shape();
  big.back() *= 2;
  Tensor buffer = zeros(big, kFloat64);
  Tensor every_other = buffer.slice(-1, 0, big.back(), 2);
  every_other.copy_(values);
  return every_other.detach().requires_grad_();
}

// ---- standard sample sets ----

// One-input elementwise ops (and anything else happy with any shape).
Samples unary_samples(Generator& g, const Make& make = normal_values) {
  return {
      {"contiguous", {leaf(make(g, {2, 3}))}},
      {"non-contiguous (transposed)", {transposed(make(g, {3, 4}))}},
      {"non-contiguous (stride 2)", {strided(make(g, {5}))}},
      {"zero-size", {leaf(make(g, {0, 3}))}},
      {"0-d", {leaf(make(g, {}))}},
  };
}

// Broadcasting binary ops: a from make_a, b from make_b.
Samples binary_samples(Generator& g, const Make& make_a, const Make& make_b) {
  Tensor x = leaf(make_a(g, {2, 3}));
  return {
      {"same shape", {leaf(make_a(g, {2, 3})), leaf(make_b(g, {2, 3}))}},
      {"broadcast", {leaf(make_a(g, {3, 1})), leaf(make_b(g, {4}))}},
      {"broadcast with 0-d", {leaf(make_a(g, {2, 3})), leaf(make_b(g, {}))}},
      {"non-contiguous", {transposed(make_a(g, {3, 4})), strided(make_b(g, {4}))}},
      {"zero-size", {leaf(make_a(g, {0, 3})), leaf(make_b(g, {3}))}},
      {"b is a constant", {leaf(make_a(g, {2, 3})), make_b(g, {2, 3})}},
      {"same tensor twice", {x, x}},
  };
}

Shape reversed(Shape s) {
  std::reverse(s.begin(), s.end());
  return s;
}

// ---- views ----

void add_view_ops(std::vector<OpInfo>& ops) {
  ops.push_back({.name = "reshape",
                 .nodes = {"ReshapeBackward"},
                 .fn = [](const Inputs& in) { return reshape(in[0], reversed(in[0].shape())); },
                 .samples = [](Generator& g) -> Samples {
                   return {{"contiguous (a view)", {leaf(normal_values(g, {2, 3, 4}))}},
                           {"non-contiguous (copies)", {transposed(normal_values(g, {3, 4}))}},
                           {"zero-size", {leaf(normal_values(g, {0, 3}))}},
                           {"0-d", {leaf(normal_values(g, {}))}}};
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
                   return {{"contiguous", {leaf(normal_values(g, {2, 3, 4}))}},
                           {"non-contiguous (transposed)", {transposed(normal_values(g, {3, 4}))}},
                           {"zero-size", {leaf(normal_values(g, {0, 4}))}}};
                 }});
  ops.push_back({.name = "transpose",
                 .nodes = {"PermuteBackward"},
                 .fn = [](const Inputs& in) { return transpose(in[0], 0, -1); },
                 .samples = [](Generator& g) -> Samples {
                   return {{"2-D", {leaf(normal_values(g, {2, 3}))}},
                           {"3-D", {leaf(normal_values(g, {2, 3, 4}))}},
                           {"non-contiguous (transposed)", {transposed(normal_values(g, {3, 4}))}},
                           {"zero-size", {leaf(normal_values(g, {0, 3}))}}};
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
                   return {{"3-D", {leaf(normal_values(g, {2, 3, 4}))}},
                           {"non-contiguous (transposed)", {transposed(normal_values(g, {3, 4}))}},
                           {"zero-size", {leaf(normal_values(g, {0, 2, 3}))}}};
                 }});
  ops.push_back({.name = "unsqueeze",
                 .nodes = {"ReshapeBackward"},
                 .fn = [](const Inputs& in) { return unsqueeze(in[0], 1); },
                 .samples = [](Generator& g) -> Samples {
                   return {{"contiguous", {leaf(normal_values(g, {2, 3}))}},
                           {"non-contiguous (transposed)", {transposed(normal_values(g, {3, 4}))}},
                           {"non-contiguous (stride 2)", {strided(normal_values(g, {5}))}},
                           {"zero-size", {leaf(normal_values(g, {0, 3}))}}};
                 }});
  ops.push_back({.name = "squeeze",
                 .nodes = {"ReshapeBackward"},
                 .fn = [](const Inputs& in) { return squeeze(in[0]); },
                 .samples = [](Generator& g) -> Samples {
                   return {{"one size-1 dim", {leaf(normal_values(g, {2, 1, 3}))}},
                           {"two size-1 dims", {leaf(normal_values(g, {1, 3, 1}))}},
                           {"non-contiguous (stride 2)", {strided(normal_values(g, {2, 1, 3}))}},
                           {"zero-size", {leaf(normal_values(g, {0, 1, 3}))}},
                           {"0-d", {leaf(normal_values(g, {}))}}};
                 }});
  ops.push_back({.name = "squeeze_dim",
                 .nodes = {"ReshapeBackward"},
                 .fn = [](const Inputs& in) { return squeeze(in[0], 1); },
                 .samples = [](Generator& g) -> Samples {
                   return {{"size-1 dim", {leaf(normal_values(g, {2, 1, 3}))}},
                           {"dim is not size 1 (no-op)", {leaf(normal_values(g, {2, 3}))}},
                           {"non-contiguous (stride 2)", {strided(normal_values(g, {2, 1, 3}))}},
                           {"zero-size", {leaf(normal_values(g, {0, 1, 3}))}}};
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
                   return {{"row", {leaf(normal_values(g, {1, 3}))}},
                           {"column", {leaf(normal_values(g, {3, 1}))}},
                           {"0-d", {leaf(normal_values(g, {}))}},
                           {"non-contiguous (stride 2)", {strided(normal_values(g, {1, 4}))}},
                           {"zero-size", {leaf(normal_values(g, {0, 1}))}}};
                 }});
  ops.push_back({.name = "narrow",
                 .nodes = {"SliceBackward"},
                 .fn = [](const Inputs& in) { return narrow(in[0], -1, 1, 2); },
                 .samples = [](Generator& g) -> Samples {
                   return {{"contiguous", {leaf(normal_values(g, {2, 4}))}},
                           {"non-contiguous (transposed)", {transposed(normal_values(g, {3, 4}))}},
                           {"non-contiguous (stride 2)", {strided(normal_values(g, {5}))}},
                           {"zero-size", {leaf(normal_values(g, {0, 4}))}}};
                 }});
  ops.push_back({.name = "slice_step",
                 .nodes = {"SliceBackward"},
                 .fn = [](const Inputs& in) { return slice(in[0], -1, 1, in[0].size(-1), 2); },
                 .samples = [](Generator& g) -> Samples {
                   return {{"1-D", {leaf(normal_values(g, {7}))}},
                           {"contiguous", {leaf(normal_values(g, {2, 5}))}},
                           {"non-contiguous (transposed)", {transposed(normal_values(g, {3, 4}))}},
                           {"non-contiguous (stride 2)", {strided(normal_values(g, {6}))}},
                           {"zero-size", {leaf(normal_values(g, {0, 5}))}}};
                 }});
  ops.push_back({.name = "select",
                 .nodes = {"SliceBackward"},
                 .fn = [](const Inputs& in) { return select(in[0], -1, 1); },
                 .samples = [](Generator& g) -> Samples {
                   return {{"contiguous", {leaf(normal_values(g, {2, 3}))}},
                           {"non-contiguous (transposed)", {transposed(normal_values(g, {3, 4}))}},
                           {"1-D to 0-d, stride 2", {strided(normal_values(g, {4}))}},
                           {"zero-size", {leaf(normal_values(g, {0, 3}))}}};
                 }});
  ops.push_back({.name = "flatten",
                 .nodes = {"ReshapeBackward"},
                 .fn = [](const Inputs& in) { return flatten(in[0], 1); },
                 .samples = [](Generator& g) -> Samples {
                   return {{"3-D", {leaf(normal_values(g, {2, 3, 4}))}},
                           {"non-contiguous (copies)", {transposed(normal_values(g, {2, 3, 4}))}},
                           {"zero-size", {leaf(normal_values(g, {2, 0, 3}))}}};
                 }});
  ops.push_back({.name = "contiguous",
                 .nodes = {"IdentityBackward"},
                 .fn = [](const Inputs& in) { return contiguous(in[0]); },
                 .samples = [](Generator& g) -> Samples {
                   return {{"non-contiguous (transposed)", {transposed(normal_values(g, {3, 4}))}},
                           {"non-contiguous (stride 2)", {strided(normal_values(g, {5}))}},
                           {"already contiguous (returns x)", {leaf(normal_values(g, {2, 3}))}}};
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

// ---- joining ----

void add_join_ops(std::vector<OpInfo>& ops) {
  ops.push_back({.name = "cat",
                 .nodes = {"CatBackward"},
                 .fn = [](const Inputs& in) { return cat(in, 0); },
                 .samples = [](Generator& g) -> Samples {
                   return {{"three pieces", {leaf(normal_values(g, {2, 3})), leaf(normal_values(g, {1, 3})),
                                             leaf(normal_values(g, {3, 3}))}},
                           {"1-D", {leaf(normal_values(g, {2})), leaf(normal_values(g, {3}))}},
                           {"non-contiguous", {transposed(normal_values(g, {2, 3})), leaf(normal_values(g, {1, 3}))}},
                           {"zero-size piece", {leaf(normal_values(g, {0, 3})), leaf(normal_values(g, {2, 3}))}},
                           {"b is a constant", {leaf(normal_values(g, {2, 3})), normal_values(g, {1, 3})}}};
                 }});
  ops.push_back({.name = "cat_last_dim",
                 .nodes = {"CatBackward"},
                 .fn = [](const Inputs& in) { return cat(in, -1); },
                 .samples = [](Generator& g) -> Samples {
                   return {{"two pieces", {leaf(normal_values(g, {2, 1})), leaf(normal_values(g, {2, 3}))}},
                           {"non-contiguous", {transposed(normal_values(g, {3, 4})), leaf(normal_values(g, {3, 2}))}},
                           {"zero-size piece", {leaf(normal_values(g, {2, 0})), leaf(normal_values(g, {2, 3}))}}};
                 }});
  ops.push_back({.name = "stack",
                 .nodes = {"ReshapeBackward", "CatBackward"},  // unsqueeze each, then cat
                 .fn = [](const Inputs& in) { return stack(in, -1); },
                 .samples = [](Generator& g) -> Samples {
                   return {{"two", {leaf(normal_values(g, {2, 3})), leaf(normal_values(g, {2, 3}))}},
                           {"non-contiguous", {transposed(normal_values(g, {3, 2})), strided(normal_values(g, {3, 2})),
                                               leaf(normal_values(g, {3, 2}))}},
                           {"zero-size", {leaf(normal_values(g, {0, 3})), leaf(normal_values(g, {0, 3}))}},
                           {"0-d", {leaf(normal_values(g, {})), leaf(normal_values(g, {}))}}};
                 }});
}

// ---- binary elementwise ----

void add_binary_ops(std::vector<OpInfo>& ops) {
  auto binary = [&ops](std::string name, std::string node, std::function<Tensor(const Tensor&, const Tensor&)> f,
                       Make make_a, Make make_b) {
    ops.push_back({.name = std::move(name),
                   .nodes = {std::move(node)},
                   .fn = [f](const Inputs& in) { return f(in[0], in[1]); },
                   .samples = [make_a, make_b](Generator& g) { return binary_samples(g, make_a, make_b); }});
  };
  binary("add", "AddBackward", [](const Tensor& a, const Tensor& b) { return a + b; }, normal_values, normal_values);
  binary("sub", "AddBackward", [](const Tensor& a, const Tensor& b) { return a - b; }, normal_values, normal_values);
  binary("mul", "MulBackward", [](const Tensor& a, const Tensor& b) { return a * b; }, normal_values, normal_values);
  binary("div", "DivBackward", [](const Tensor& a, const Tensor& b) { return a / b; }, normal_values, away_from_zero);
  binary("pow", "PowBackward", [](const Tensor& a, const Tensor& b) { return pow(a, b); }, positive, normal_values);
  // Random doubles never tie; "same tensor twice" ties everywhere and checks the 50/50 split.
  binary("maximum", "MaximumBackward", [](const Tensor& a, const Tensor& b) { return maximum(a, b); }, normal_values,
         normal_values);
  binary("minimum", "MaximumBackward", [](const Tensor& a, const Tensor& b) { return minimum(a, b); }, normal_values,
         normal_values);

  // Tensor-scalar forms: one input each.
  auto scalar = [&ops](std::string name, std::string node, std::function<Tensor(const Tensor&)> f, Make make) {
    ops.push_back({.name = std::move(name),
                   .nodes = {std::move(node)},
                   .fn = [f](const Inputs& in) { return f(in[0]); },
                   .samples = [make](Generator& g) { return unary_samples(g, make); }});
  };
  scalar("add_scalar", "AddScalarBackward", [](const Tensor& x) { return x + 2.5; }, normal_values);
  scalar("scalar_add", "AddScalarBackward", [](const Tensor& x) { return 2.5 + x; }, normal_values);
  scalar("sub_scalar", "AddScalarBackward", [](const Tensor& x) { return x - 1.5; }, normal_values);
  scalar("scalar_sub", "MulScalarBackward", [](const Tensor& x) { return 1.5 - x; }, normal_values);
  scalar("mul_scalar", "MulScalarBackward", [](const Tensor& x) { return x * 3.0; }, normal_values);
  scalar("scalar_mul", "MulScalarBackward", [](const Tensor& x) { return 3.0 * x; }, normal_values);
  scalar("div_scalar", "DivScalarBackward", [](const Tensor& x) { return x / 4.0; }, normal_values);
  scalar("scalar_div", "RDivScalarBackward", [](const Tensor& x) { return 2.0 / x; }, away_from_zero);
  scalar("pow_scalar", "PowScalarBackward", [](const Tensor& x) { return pow(x, 3.0); }, normal_values);
  scalar("pow_scalar_square", "PowScalarBackward", [](const Tensor& x) { return pow(x, 2.0); }, normal_values);
  scalar("pow_scalar_fraction", "PowScalarBackward", [](const Tensor& x) { return pow(x, -1.5); }, positive);
}

// ---- unary elementwise ----

void add_unary_ops(std::vector<OpInfo>& ops) {
  auto unary = [&ops](std::string name, std::string node, std::function<Tensor(const Tensor&)> f, Make make) {
    ops.push_back({.name = std::move(name),
                   .nodes = {std::move(node)},
                   .fn = [f](const Inputs& in) { return f(in[0]); },
                   .samples = [make](Generator& g) { return unary_samples(g, make); }});
  };
  unary("neg", "NegBackward", [](const Tensor& x) { return -x; }, normal_values);
  unary("exp", "ExpBackward", [](const Tensor& x) { return exp(x); }, normal_values);
  unary("log", "LogBackward", [](const Tensor& x) { return log(x); }, positive);
  unary("sqrt", "SqrtBackward", [](const Tensor& x) { return sqrt(x); }, positive);
  unary("rsqrt", "SqrtBackward", [](const Tensor& x) { return rsqrt(x); }, positive);
  unary("abs", "AbsBackward", [](const Tensor& x) { return abs(x); }, away_from_zero);
  unary("sin", "SinBackward", [](const Tensor& x) { return sin(x); }, normal_values);
  unary("cos", "CosBackward", [](const Tensor& x) { return cos(x); }, normal_values);
  unary("tanh", "TanhBackward", [](const Tensor& x) { return tanh(x); }, normal_values);
  unary("sigmoid", "SigmoidBackward", [](const Tensor& x) { return sigmoid(x); }, normal_values);
  unary("relu", "ReluBackward", [](const Tensor& x) { return relu(x); }, away_from_zero);
  unary("gelu", "GeluBackward", [](const Tensor& x) { return gelu(x); }, normal_values);
  unary("gelu_tanh", "GeluBackward", [](const Tensor& x) { return gelu(x, GeluApprox::Tanh); }, normal_values);
  unary("clamp", "ClampBackward", [](const Tensor& x) { return clamp(x, -0.5, 0.5); }, avoiding({-0.5, 0.5}));
  unary("clamp_min", "ClampBackward", [](const Tensor& x) { return clamp(x, -0.5, std::nullopt); }, avoiding({-0.5}));
}

// ---- selection ----

void add_select_ops(std::vector<OpInfo>& ops) {
  ops.push_back({.name = "where",
                 .nodes = {"WhereBackward"},
                 .fn = [](const Inputs& in) { return where(in[0], in[1], in[2]); },
                 .samples = [](Generator& g) -> Samples {
                   return {{"same shape", {mask({2, 3}), leaf(normal_values(g, {2, 3})), leaf(normal_values(g, {2, 3}))}},
                           {"broadcast", {mask({3, 1}), leaf(normal_values(g, {1, 4})), leaf(normal_values(g, {4}))}},
                           {"non-contiguous",
                            {mask({3, 4}), transposed(normal_values(g, {3, 4})), strided(normal_values(g, {4}))}},
                           {"zero-size", {mask({0, 3}), leaf(normal_values(g, {0, 3})), leaf(normal_values(g, {3}))}},
                           {"b is a constant", {mask({2, 3}), leaf(normal_values(g, {2, 3})), normal_values(g, {2, 3})}}};
                 }});
  ops.push_back({.name = "masked_fill",
                 .nodes = {"MaskedFillBackward"},
                 .fn = [](const Inputs& in) { return masked_fill(in[0], in[1], -1.0); },
                 .samples = [](Generator& g) -> Samples {
                   return {{"same shape", {leaf(normal_values(g, {2, 3})), mask({2, 3})}},
                           {"broadcast mask", {leaf(normal_values(g, {2, 3})), mask({3})}},
                           {"non-contiguous", {transposed(normal_values(g, {3, 4})), mask({3, 4})}},
                           {"zero-size", {leaf(normal_values(g, {0, 3})), mask({3})}}};
                 }});
  auto triangle_samples = [](Generator& g) -> Samples {
    return {{"wide", {leaf(normal_values(g, {3, 4}))}},
            {"batched", {leaf(normal_values(g, {2, 3, 3}))}},
            {"non-contiguous (transposed)", {transposed(normal_values(g, {4, 3}))}},
            {"zero-size", {leaf(normal_values(g, {0, 3}))}}};
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

// ---- reductions ----

void add_reduce_ops(std::vector<OpInfo>& ops) {
  // Samples for reductions over a trailing or leading dim.
  auto along_dim_samples = [](const Make& make) {
    return [make](Generator& g) -> Samples {
      return {{"2-D", {leaf(make(g, {2, 3}))}},
              {"3-D", {leaf(make(g, {2, 3, 2}))}},
              {"non-contiguous (transposed)", {transposed(make(g, {3, 4}))}},
              {"zero-size", {leaf(make(g, {0, 3}))}}};
    };
  };
  auto reduce = [&ops](std::string name, std::vector<std::string> nodes, std::function<Tensor(const Tensor&)> f,
                       std::function<Samples(Generator&)> samples) {
    ops.push_back({.name = std::move(name),
                   .nodes = std::move(nodes),
                   .fn = [f](const Inputs& in) { return f(in[0]); },
                   .samples = std::move(samples)});
  };
  // A full reduction of non-empty inputs (mean/var/max of nothing is undefined).
  auto all_samples = [](const Make& make) {
    return [make](Generator& g) -> Samples {
      return {{"contiguous", {leaf(make(g, {2, 3}))}},
              {"non-contiguous (transposed)", {transposed(make(g, {3, 4}))}},
              {"non-contiguous (stride 2)", {strided(make(g, {5}))}}};
    };
  };

  reduce("sum", {"SumBackward"}, [](const Tensor& x) { return sum(x); },
         [](Generator& g) { return unary_samples(g); });
  reduce("sum_dim", {"SumBackward"}, [](const Tensor& x) { return sum(x, {0}); }, along_dim_samples(normal_values));
  reduce("sum_keepdim", {"SumBackward"}, [](const Tensor& x) { return sum(x, {0, -1}, true); },
         along_dim_samples(normal_values));
  reduce("mean", {"SumBackward"}, [](const Tensor& x) { return mean(x); }, all_samples(normal_values));
  reduce("mean_dim", {"SumBackward"}, [](const Tensor& x) { return mean(x, {-1}); }, along_dim_samples(normal_values));
  reduce("mean_keepdim", {"SumBackward"}, [](const Tensor& x) { return mean(x, {0}, true); },
         along_dim_samples(normal_values));
  reduce("var", {"VarBackward"}, [](const Tensor& x) { return var(x); }, all_samples(normal_values));
  reduce("var_dim", {"VarBackward"}, [](const Tensor& x) { return var(x, {-1}, /*correction=*/0, /*keepdim=*/true); },
         along_dim_samples(normal_values));
  reduce("norm", {"NormBackward"}, [](const Tensor& x) { return norm(x); }, all_samples(normal_values));
  reduce("norm_dim", {"NormBackward"}, [](const Tensor& x) { return norm(x, 2.0, {-1}); },
         along_dim_samples(normal_values));
  reduce("norm_p1", {"NormBackward"}, [](const Tensor& x) { return norm(x, 1.0); }, all_samples(away_from_zero));
  reduce("norm_p3", {"NormBackward"}, [](const Tensor& x) { return norm(x, 3.0, {-1}, true); },
         along_dim_samples(away_from_zero));
  // max(x) is max over the flattened tensor, reshaped to 0-d.
  reduce("max", {"ReshapeBackward", "MaxBackward"}, [](const Tensor& x) { return max(x); },
         all_samples(normal_values));
  reduce("min", {"ReshapeBackward", "MaxBackward"}, [](const Tensor& x) { return min(x); },
         all_samples(normal_values));
  reduce("max_dim", {"MaxBackward"}, [](const Tensor& x) { return max(x, -1).first; },
         along_dim_samples(normal_values));
  reduce("min_dim", {"MaxBackward"}, [](const Tensor& x) { return min(x, 1, /*keepdim=*/true).first; },
         along_dim_samples(normal_values));
  reduce("softmax", {"SoftmaxBackward"}, [](const Tensor& x) { return softmax(x, -1); },
         [](Generator& g) { return unary_samples(g); });
  reduce("log_softmax", {"SoftmaxBackward"}, [](const Tensor& x) { return log_softmax(x, -1); },
         [](Generator& g) { return unary_samples(g); });
}

// ---- matmul ----

void add_matmul_ops(std::vector<OpInfo>& ops) {
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

// ---- indexing ----

void add_index_ops(std::vector<OpInfo>& ops) {
  ops.push_back({.name = "index_select",
                 .nodes = {"IndexSelectBackward"},
                 .fn = [](const Inputs& in) { return index_select(in[0], 0, in[1]); },
                 .samples = [](Generator& g) -> Samples {
                   return {{"repeated ids", {leaf(normal_values(g, {3, 4})), ids({0, 2, 0})}},
                           {"1-D", {leaf(normal_values(g, {4})), ids({3, 0, 3, 1})}},
                           {"non-contiguous (transposed)", {transposed(normal_values(g, {3, 4})), ids({2, 2, 1})}},
                           {"zero-size (no ids)", {leaf(normal_values(g, {3, 2})), ids({}, {0})}}};
                 }});
  ops.push_back({.name = "index_select_last_dim",
                 .nodes = {"IndexSelectBackward"},
                 .fn = [](const Inputs& in) { return index_select(in[0], -1, in[1]); },
                 .samples = [](Generator& g) -> Samples {
                   return {{"repeated ids", {leaf(normal_values(g, {2, 3})), ids({2, 0, 2})}},
                           {"non-contiguous (transposed)", {transposed(normal_values(g, {3, 4})), ids({1, 1})}},
                           {"zero-size", {leaf(normal_values(g, {0, 3})), ids({1})}}};
                 }});
  ops.push_back({.name = "gather",
                 .nodes = {"GatherBackward"},
                 .fn = [](const Inputs& in) { return gather(in[0], 1, in[1]); },
                 .samples = [](Generator& g) -> Samples {
                   return {{"repeated ids", {leaf(normal_values(g, {2, 3})), ids({0, 2, 0, 1, 2, 2, 1, 0}, {2, 4})}},
                           {"ids smaller than x", {leaf(normal_values(g, {3, 3})), ids({1, 1}, {1, 2})}},
                           {"non-contiguous (transposed)",
                            {transposed(normal_values(g, {3, 4})), ids({3, 0, 1, 1, 2, 3}, {3, 2})}},
                           {"zero-size", {leaf(normal_values(g, {2, 3})), ids({}, {2, 0})}}};
                 }});
}

std::vector<OpInfo> builtin_ops() {
  std::vector<OpInfo> ops;
  add_view_ops(ops);
  add_join_ops(ops);
  add_binary_ops(ops);
  add_unary_ops(ops);
  add_select_ops(ops);
  add_reduce_ops(ops);
  add_matmul_ops(ops);
  add_index_ops(ops);
  return ops;
}

// A function-local static: built on first use, so register_op may run from
// another file's static initializer in any order.
std::vector<OpInfo>& registry() {
  static std::vector<OpInfo> ops = builtin_ops();
  return ops;
}

}  // namespace

const std::vector<OpInfo>& op_registry() { return registry(); }

void register_op(OpInfo info) {
  EMBER_CHECK(!info.name.empty(), "register_op", "an op needs a name");
  EMBER_CHECK(info.fn && info.samples, "register_op", "op '" << info.name << "' needs both fn and samples");
  for (const OpInfo& op : registry())
    EMBER_CHECK(op.name != info.name, "register_op", "an op named '" << info.name << "' is already registered");
  registry().push_back(std::move(info));
}

}  // namespace ember
