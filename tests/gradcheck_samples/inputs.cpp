#include "inputs.h"

#include <algorithm>
#include <cmath>

#include "autograd/ops.h"

namespace ember::samples {

Tensor normal_values(Generator& g, const Shape& s) { return randn(s, g, kFloat64); }

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
Tensor away_from_zero(Generator& g, const Shape& s) { return avoiding({0.0})(g, s); }
Tensor positive(Generator& g, const Shape& s) { return uniform(s, 0.5, 2.0, g, kFloat64); }

Tensor leaf(const Tensor& values) { return values.detach().requires_grad_(); }

Tensor transposed(const Tensor& values) {
  Tensor swapped = values.transpose(-1, -2).contiguous();  // (..., c, r), row-major
  return swapped.transpose(-1, -2).detach().requires_grad_();
}

Tensor strided(const Tensor& values) {
  Shape big = values.shape();
  big.back() *= 2;
  Tensor buffer = zeros(big, kFloat64);
  Tensor every_other = buffer.slice(-1, 0, big.back(), 2);
  every_other.copy_(values);
  return every_other.detach().requires_grad_();
}

Tensor time_major(const Tensor& values) {
  Tensor tbf = values.transpose(0, 1).contiguous();  // (T, B, F) in memory
  return tbf.transpose(0, 1).detach().requires_grad_();
}

Tensor normal_leaf(Generator& g, const Shape& s, double scale) {
  Tensor v = normal_values(g, s);
  return leaf(scale == 1.0 ? v : v * scale);
}

Tensor ids(const std::vector<int64_t>& v, const Shape& s) {
  return tensor(v, s.empty() ? Shape{static_cast<int64_t>(v.size())} : s);
}
Tensor bools(const std::vector<bool>& v, const Shape& s) { return tensor(v, s); }
Tensor mask(const Shape& s) {
  std::vector<bool> v(static_cast<size_t>(numel_of(s)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = i % 3 == 0;
  return tensor(v, s);
}

Samples unary_samples(Generator& g, const Make& make) {
  return {
      {"contiguous", {leaf(make(g, {2, 3}))}},
      {"non-contiguous (transposed)", {transposed(make(g, {3, 4}))}},
      {"non-contiguous (stride 2)", {strided(make(g, {5}))}},
      {"zero-size", {leaf(make(g, {0, 3}))}},
      {"0-d", {leaf(make(g, {}))}},
  };
}

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

Tensor flat_cat(const std::vector<Tensor>& ts) {
  std::vector<Tensor> flat;
  for (const Tensor& t : ts) flat.push_back(t.flatten());
  return cat(flat, 0);
}

}  // namespace ember::samples
