#include "autograd/gradcheck.h"

#include <cmath>
#include <sstream>

#include "autograd/engine.h"
#include "autograd/forward.h"
#include "autograd/functional.h"
#include "autograd/grad_mode.h"
#include "autograd/ops.h"
#include "tensor/factory.h"
#include "tensor/kernels.h"
#include "tensor/random.h"

namespace ember {

namespace {

// Address of the flat (row-major) element j of a strided tensor.
double* element(const Tensor& t, int64_t j) {
  int64_t off = 0;
  for (int64_t d = t.dim() - 1; d >= 0; --d) {
    off += (j % t.shape()[d]) * t.stride()[d];
    j /= t.shape()[d];
  }
  return t.data_ptr<double>() + off;
}

std::vector<double> eval_flat(const GradFn& fn, const std::vector<Tensor>& inputs) {
  NoGradGuard no_grad;
  return fn(inputs).to_vector<double>();
}

// Column j of d fn / d x by central differences: x's element j moved by
// +-eps in place (x is one of the inputs), then put back.
std::vector<double> numeric_column(const GradFn& fn, const std::vector<Tensor>& inputs, const Tensor& x, int64_t j,
                                   double eps) {
  double* p = element(x, j);
  const double orig = *p;
  *p = orig + eps;
  std::vector<double> col = eval_flat(fn, inputs);
  *p = orig - eps;
  std::vector<double> fm = eval_flat(fn, inputs);
  *p = orig;
  for (size_t i = 0; i < col.size(); ++i) col[i] = (col[i] - fm[i]) / (2 * eps);
  return col;
}

// Counts one Jacobian entry into res; true if it is within tolerance.
bool entry_close(GradcheckResult& res, double analytic, double numeric, const GradcheckOptions& opt) {
  const double err = std::abs(analytic - numeric), tol = opt.atol + opt.rtol * std::abs(numeric);
  ++res.checked;
  res.max_abs_err = std::max(res.max_abs_err, err);
  if (err > 1e-12) res.max_rel_err = std::max(res.max_rel_err, err / std::max(std::abs(numeric), 1e-12));
  res.max_err_over_tol = std::max(res.max_err_over_tol, err / tol);
  return err <= tol && std::isnan(analytic) == std::isnan(numeric);
}

}  // namespace

GradcheckResult gradcheck(const GradFn& fn, const std::vector<Tensor>& inputs, const GradcheckOptions& opt) {
  std::vector<size_t> checked_inputs;
  for (size_t k = 0; k < inputs.size(); ++k) {
    const Tensor& x = inputs[k];
    if (!x.defined() || !x.is_floating_point() || !x.requires_grad()) continue;
    EMBER_CHECK(x.dtype() == kFloat64, "gradcheck",
                "input " << k << " of shape " << shape_str(x.shape()) << " is " << dtype_name(x.dtype())
                         << "; gradcheck needs float64 inputs");
    EMBER_CHECK(x.is_leaf(), "gradcheck", "input " << k << " of shape " << shape_str(x.shape()) << " must be a leaf");
    for (int64_t d = 0; d < x.dim(); ++d) {
      EMBER_CHECK(!(x.stride()[d] == 0 && x.shape()[d] > 1), "gradcheck",
                  "input " << k << " of shape " << shape_str(x.shape()) << " and strides " << shape_str(x.stride())
                           << " has overlapping memory (stride 0 at dim " << d
                           << "): perturbing one element would move several; pass a clone()");
    }
    checked_inputs.push_back(k);
  }

  // Output shape and the analytic Jacobian: one backward per output element.
  Tensor out0 = fn(inputs);
  EMBER_CHECK(out0.dtype() == kFloat64, "gradcheck",
              "the function must return a float64 tensor, got " << dtype_name(out0.dtype()) << " of shape "
                                                                << shape_str(out0.shape()));
  const int64_t n_out = out0.numel();
  std::vector<std::vector<double>> analytic(inputs.size());  // [input][i * n_in + j]
  for (size_t k : checked_inputs) analytic[k].assign(static_cast<size_t>(n_out * inputs[k].numel()), 0.0);
  for (int64_t i = 0; i < n_out; ++i) {
    for (size_t k : checked_inputs) inputs[k].set_grad(Tensor());
    Tensor out = fn(inputs);
    if (!out.requires_grad()) break;  // output does not depend on any input: analytic Jacobian is 0
    Tensor seed = zeros(out.shape(), kFloat64);
    seed.data_ptr<double>()[i] = 1.0;
    out.backward(seed);
    for (size_t k : checked_inputs) {
      Tensor g = inputs[k].grad();
      if (!g.defined()) continue;
      std::vector<double> gv = g.to_vector<double>();
      std::copy(gv.begin(), gv.end(), analytic[k].begin() + i * inputs[k].numel());
    }
  }
  for (size_t k : checked_inputs) inputs[k].set_grad(Tensor());

  GradcheckResult res;
  std::ostringstream report;
  for (size_t k : checked_inputs) {
    const Tensor& x = inputs[k];
    for (int64_t j = 0; j < x.numel(); ++j) {
      const std::vector<double> numeric = numeric_column(fn, inputs, x, j, opt.eps);
      for (int64_t i = 0; i < n_out; ++i) {
        const double a = analytic[k][i * x.numel() + j], nv = numeric[static_cast<size_t>(i)];
        if (!entry_close(res, a, nv, opt) && res.ok) {
          res.ok = false;
          report << "gradcheck failed for input " << k << " of shape " << shape_str(x.shape()) << " at element "
                 << index_str(j, x.shape()) << ", output element " << i << ": analytic " << a << " vs numeric " << nv
                 << " (abs err " << std::abs(a - nv) << ")";
        }
      }
    }
  }
  res.report = res.ok ? "ok" : report.str();
  return res;
}

GradcheckResult gradgradcheck(const GradFn& fn, const std::vector<Tensor>& inputs, const GradcheckOptions& opt,
                              uint64_t seed) {
  std::vector<size_t> diff;  // the inputs that are differentiated
  for (size_t k = 0; k < inputs.size(); ++k)
    if (inputs[k].defined() && inputs[k].is_floating_point() && inputs[k].requires_grad()) diff.push_back(k);
  Tensor out0 = fn(inputs);
  GradcheckResult none;
  if (diff.empty() || !out0.requires_grad()) return none;  // nothing depends on anything: no second derivative
  Generator gen(seed);
  std::vector<Tensor> all = inputs;
  all.push_back(randn(out0.shape(), gen, kFloat64).requires_grad_());  // v
  const size_t n = inputs.size();
  const GradFn first = [fn, diff, n](const std::vector<Tensor>& xs) {
    EnableGradGuard grad_on;  // the first derivative needs a graph, also when gradcheck evaluates without one
    std::vector<Tensor> ins(xs.begin(), xs.begin() + static_cast<std::ptrdiff_t>(n));
    Tensor out = fn(ins);
    std::vector<Tensor> wrt;
    for (size_t k : diff) wrt.push_back(ins[k]);
    std::vector<Tensor> parts;
    if (out.requires_grad()) {
      std::vector<Tensor> gs = grad({out}, wrt, {xs[n]}, {.create_graph = true, .allow_unused = true});
      for (size_t i = 0; i < gs.size(); ++i)
        parts.push_back(reshape(gs[i].defined() ? gs[i] : zeros_like(wrt[i]), {-1}));
    } else {
      for (const Tensor& w : wrt) parts.push_back(zeros({w.numel()}, kFloat64));
    }
    return cat(parts, 0);
  };
  return gradcheck(first, all, opt);
}

namespace {

// What forward_gradcheck found: the first failure is the report.
struct ForwardCheck {
  GradcheckResult res;
  std::ostringstream report;
  void fail(const std::string& what) {
    if (res.ok) report << what;
    res.ok = false;
  }
};

// The inputs forward_gradcheck differentiates: floating, requiring grad,
// and then float64.
std::vector<size_t> float64_inputs(const std::vector<Tensor>& inputs) {
  std::vector<size_t> diff;
  for (size_t k = 0; k < inputs.size(); ++k) {
    const Tensor& x = inputs[k];
    if (!x.defined() || !x.is_floating_point() || !x.requires_grad()) continue;
    EMBER_CHECK(x.dtype() == kFloat64, "forward_gradcheck",
                "input " << k << " of shape " << shape_str(x.shape()) << " is " << dtype_name(x.dtype())
                         << "; forward_gradcheck needs float64 inputs");
    diff.push_back(k);
  }
  return diff;
}

// 1. Each column J e_j of input k, by a jvp, against central differences.
void check_columns(ForwardCheck& c, const GradFn& fn, const std::vector<Tensor>& inputs, size_t k, int64_t n_out,
                   const GradcheckOptions& opt) {
  const Tensor& x = inputs[k];
  for (int64_t j = 0; j < x.numel(); ++j) {
    std::vector<Tensor> ts(inputs.size());
    Tensor e = zeros(x.shape(), kFloat64);
    reshape(e, {-1}).data_ptr<double>()[j] = 1.0;
    // The same tensor passed twice (mul(x, x)) moves at both places, as the
    // central differences move it.
    for (size_t q = 0; q < inputs.size(); ++q)
      if (inputs[q].defined() && inputs[q].impl() == x.impl()) ts[q] = e;
    std::vector<double> col;
    {
      NoGradGuard plain;  // forward mode alone: no graph
      col = jvp(fn, inputs, ts).tangent.to_vector<double>();
    }
    const std::vector<double> numeric = numeric_column(fn, inputs, x, j, opt.eps);
    for (int64_t i = 0; i < n_out; ++i) {
      const double a = col[static_cast<size_t>(i)], nv = numeric[static_cast<size_t>(i)];
      if (entry_close(c.res, a, nv, opt)) continue;
      std::ostringstream m;
      m << "forward_gradcheck failed for input " << k << " of shape " << shape_str(x.shape()) << " at element "
        << index_str(j, x.shape()) << ", output element " << i << ": JVP " << a << " vs numeric " << nv
        << " (abs err " << std::abs(a - nv) << ")";
      c.fail(m.str());
    }
  }
}

// 2. <u, J v> by the forward rules against <u^T J, v> by the backward rules.
// Outputs that are not finite (a mean over zero elements) are left out: u is
// 0 there.
void check_modes_agree(ForwardCheck& c, const GradFn& fn, const std::vector<Tensor>& inputs,
                       const std::vector<size_t>& diff, const Tensor& out0, const GradcheckOptions& opt,
                       uint64_t seed) {
  Generator gen(seed);
  Tensor u = randn(out0.shape(), gen, kFloat64);
  std::vector<Tensor> vs(inputs.size());
  for (size_t k : diff) vs[k] = randn(inputs[k].shape(), gen, kFloat64);
  const std::vector<double> o = out0.to_vector<double>();
  double* up = u.data_ptr<double>();
  for (size_t i = 0; i < o.size(); ++i)
    if (!std::isfinite(o[i])) up[i] = 0.0;
  double fwd = 0, bwd = 0, scale = 0;
  {
    NoGradGuard plain;
    const std::vector<double> jv = jvp(fn, inputs, vs).tangent.to_vector<double>(), uv = u.to_vector<double>();
    for (size_t i = 0; i < jv.size(); ++i) {
      if (!std::isfinite(o[i])) continue;
      fwd += uv[i] * jv[i];
      scale += std::abs(uv[i] * jv[i]);
    }
  }
  const std::vector<Tensor> pulled = vjp(fn, inputs).pullback(u);
  for (size_t k : diff) {
    const std::vector<double> g = pulled[k].to_vector<double>(), v = vs[k].to_vector<double>();
    for (size_t i = 0; i < g.size(); ++i) {
      bwd += g[i] * v[i];
      scale += std::abs(g[i] * v[i]);
    }
  }
  // Round-off of float64 sums; an op that passes through float32 (to) is
  // held to its looser gradcheck settings instead.
  const bool loose = opt.rtol > 1e-3 || opt.atol > 1e-5;
  const double err = std::abs(fwd - bwd), tol = (loose ? opt.rtol : 1e-10) * std::max(scale, 1e-300);
  if (err <= tol || (std::isnan(fwd) && std::isnan(bwd))) return;
  std::ostringstream m;
  m << "forward and backward rules disagree: <u, J v> = " << fwd << " by the forward rules, <u^T J, v> = " << bwd
    << " by the backward rules (difference " << err << ", scale " << scale << ")";
  c.fail(m.str());
}

}  // namespace

GradcheckResult forward_gradcheck(const GradFn& fn, const std::vector<Tensor>& inputs, const GradcheckOptions& opt,
                                  uint64_t seed) {
  const std::vector<size_t> diff = float64_inputs(inputs);
  const Tensor out0 = [&] {
    NoGradGuard plain;
    return fn(inputs);
  }();
  EMBER_CHECK(out0.dtype() == kFloat64, "forward_gradcheck",
              "the function must return a float64 tensor, got " << dtype_name(out0.dtype()));
  ForwardCheck c;
  for (size_t k : diff) check_columns(c, fn, inputs, k, out0.numel(), opt);
  if (!diff.empty() && out0.numel() > 0) check_modes_agree(c, fn, inputs, diff, out0, opt, seed);
  c.res.report = c.res.ok ? "ok" : c.report.str();
  return c.res;
}

}  // namespace ember
