// Stage 6, the reference solution: each op computes its forward with stage
// 3's tensor ops along the last dim (keepdim, so that a row's number
// broadcasts over the row), and records one node whose backward is the
// derivation's formula.
#include "mini/derived.h"

#include <cmath>
#include <numbers>
#include <string>

#include "mini/error.h"

namespace mini {

namespace {

// "(2, 3)"
std::string str(const Shape& s) {
  std::string out = "(";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + ")";
}

int64_t last(const Tensor& x) { return x.dim() - 1; }

Tensor number(double v) { return Tensor({v}, {1}); }

// Along the last dim, keeping it as a size 1.
Tensor row_sum(const Tensor& x) { return sum(x, {last(x)}, true); }
Tensor row_mean(const Tensor& x) { return div(row_sum(x), number(static_cast<double>(x.shape().back()))); }

// softmax along the last dim, shifted by each row's max.
Tensor softmax_of(const Tensor& x) {
  const Tensor e = exp(sub(x, max(x, last(x), true)));
  return div(e, row_sum(e));
}

// log_softmax along the last dim: x - m - log(sum e^(x - m)); the sum is at
// least 1 (the max's own term), so its log is finite.
Tensor log_softmax_of(const Tensor& x) {
  const Tensor shifted = sub(x, max(x, last(x), true));
  return sub(shifted, log(row_sum(exp(shifted))));
}

void check_not_0d(const Var& x, const char* op) {
  MINI_CHECK(x.data().dim() >= 1, op, "x of shape " << str(x.shape()) << ": a 0-d x has no last dim to work along");
}

}  // namespace

Var softmax(const Var& x) {
  check_not_0d(x, "softmax");
  return record(softmax_of(x.data()), "softmax", {x}, [xv = Saved(x)](const Tensor& g) {
    // dy_i/dx_j = y_i (δ_ij - y_j), so dx_j = sum_i g_i y_i (δ_ij - y_j) = y_j (g_j - sum_i g_i y_i)
    const Tensor y = softmax_of(xv.get("softmax"));
    return std::vector<Tensor>{mul(y, sub(g, row_sum(mul(g, y))))};
  });
}

Var log_softmax(const Var& x) {
  check_not_0d(x, "log_softmax");
  return record(log_softmax_of(x.data()), "log_softmax", {x}, [xv = Saved(x)](const Tensor& g) {
    // dy_i/dx_j = δ_ij - softmax_j, so dx_j = g_j - softmax_j sum_i g_i
    return std::vector<Tensor>{sub(g, mul(softmax_of(xv.get("log_softmax")), row_sum(g)))};
  });
}

Var cross_entropy(const Var& logits, const std::vector<int64_t>& targets) {
  const Shape& s = logits.shape();
  MINI_CHECK(s.size() == 2, "cross_entropy", "logits of shape " << str(s) << ": they must be (N, C), a row for each target");
  const int64_t n = s[0], c = s[1];
  MINI_CHECK(static_cast<int64_t>(targets.size()) == n, "cross_entropy",
             targets.size() << " targets for logits of shape " << str(s) << ": one for each row");
  MINI_CHECK(n > 0, "cross_entropy", "logits of shape " << str(s) << ": no rows, and a mean over none");
  for (int64_t i = 0; i < n; ++i)
    MINI_CHECK(targets[static_cast<size_t>(i)] >= 0 && targets[static_cast<size_t>(i)] < c, "cross_entropy",
               "target " << targets[static_cast<size_t>(i)] << " of row " << i << " is not a class of logits of shape "
                         << str(s) << " (0 to " << c - 1 << ")");
  const Tensor lsm = log_softmax_of(logits.data());
  double total = 0;
  for (int64_t i = 0; i < n; ++i) total -= lsm.at({i, targets[static_cast<size_t>(i)]});
  return record(Tensor({total / static_cast<double>(n)}, {}), "cross_entropy", {logits},
                [xv = Saved(logits), targets, n](const Tensor& g) {
                  // d loss/d logits[n] = (softmax(logits[n]) - onehot(t_n)) / N, times the incoming g
                  Tensor d = softmax_of(xv.get("cross_entropy"));
                  for (int64_t i = 0; i < n; ++i) d.at({i, targets[static_cast<size_t>(i)]}) -= 1;
                  return std::vector<Tensor>{mul(d, div(g, number(static_cast<double>(n))))};
                });
}

Var layer_norm(const Var& x, const Var& gamma, const Var& beta, double eps) {
  check_not_0d(x, "layer_norm");
  const Shape d{x.shape().back()};
  MINI_CHECK(gamma.shape() == d && beta.shape() == d, "layer_norm",
             "x of shape " << str(x.shape()) << " needs gamma and beta of shape " << str(d) << ", not "
                           << str(gamma.shape()) << " and " << str(beta.shape()));
  // x̂ = (x - μ) r, r = 1/sqrt(σ² + eps) per row
  auto normalize = [eps](const Tensor& xt, Tensor* r_out) {
    const Tensor centered = sub(xt, row_mean(xt));
    const Tensor r = map(row_mean(mul(centered, centered)), [eps](double v) { return 1 / std::sqrt(v + eps); });
    if (r_out) *r_out = r;
    return mul(centered, r);
  };
  const Tensor xhat = normalize(x.data(), nullptr);
  return record(add(mul(xhat, gamma.data()), beta.data()), "layer_norm", {x, gamma, beta},
                [xv = Saved(x), gv = Saved(gamma), normalize, shape = x.shape()](const Tensor& g) {
                  Tensor r = number(0);
                  const Tensor xh = normalize(xv.get("layer_norm"), &r);
                  // with g' = g γ: dx = r (g' - mean(g') - x̂ mean(g' x̂)); dγ = Σ_rows g x̂; dβ = Σ_rows g
                  const Tensor gp = mul(g, gv.get("layer_norm"));
                  const Tensor dx = mul(r, sub(sub(gp, row_mean(gp)), mul(xh, row_mean(mul(gp, xh)))));
                  const Shape row{shape.back()};
                  return std::vector<Tensor>{dx, sum_to(mul(g, xh), row), sum_to(g, row)};
                });
}

Var gelu(const Var& x) {
  auto phi_big = [](double v) { return 0.5 * (1 + std::erf(v / std::numbers::sqrt2)); };  // Φ(v), the normal CDF
  return record(map(x.data(), [phi_big](double v) { return v * phi_big(v); }), "gelu", {x},
                [xv = Saved(x), phi_big](const Tensor& g) {
                  // (x Φ(x))' = Φ(x) + x φ(x), φ the normal density
                  const Tensor d = map(xv.get("gelu"), [phi_big](double v) {
                    return phi_big(v) + v * std::exp(-0.5 * v * v) / std::sqrt(2 * std::numbers::pi);
                  });
                  return std::vector<Tensor>{mul(g, d)};
                });
}

}  // namespace mini
