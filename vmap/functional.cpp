#include "vmap/functional.h"

#include "autograd/engine.h"
#include "autograd/grad_mode.h"
#include "autograd/ops.h"
#include "base/error.h"
#include "tensor/factory.h"
#include "vmap/vmap.h"

namespace ember {

namespace {

const Tensor& argument(const std::vector<Tensor>& inputs, int argnum, const char* op) {
  EMBER_CHECK(argnum >= 0 && static_cast<size_t>(argnum) < inputs.size(), op,
              "argnum " << argnum << " is out of range for " << inputs.size() << " inputs");
  const Tensor& x = inputs[static_cast<size_t>(argnum)];
  EMBER_CHECK(x.defined() && x.is_floating_point(), op,
              "input " << argnum << " must be float32 or float64, got "
                       << (x.defined() ? dtype_name(x.dtype()) : "an undefined tensor"));
  return x;
}

Tensor checked(const Tensor& out, const char* op) {
  EMBER_CHECK(out.defined() && out.is_floating_point(), op,
              "the function must return a float32 or float64 tensor, got "
                  << (out.defined() ? dtype_name(out.dtype()) : "an undefined tensor"));
  return out;
}

Shape joined(const Shape& a, const Shape& b) {
  Shape s = a;
  s.insert(s.end(), b.begin(), b.end());
  return s;
}

// The n unit vectors of `shape`, stacked: (n, *shape), n = numel(shape).
Tensor basis(const Shape& shape, DType dt) {
  const int64_t n = numel_of(shape);
  return eye(n, n, dt).reshape(joined({n}, shape));
}

// f(inputs) with input argnum a tensor of its own to differentiate for (as
// vjp makes it): a recorded copy if it requires grad (an outer transform
// differentiates through), else a fresh leaf over its memory.
struct Traced {
  std::vector<Tensor> inputs;
  Tensor x, out;
};
Traced run_traced(const TensorFn& f, const std::vector<Tensor>& inputs, int argnum, const char* op) {
  Traced t;
  t.inputs = inputs;
  EnableGradGuard on;
  Tensor& x = t.inputs[static_cast<size_t>(argnum)];
  x = x.requires_grad() ? x.clone() : x.detach().requires_grad_();
  t.x = x;
  t.out = checked(f(t.inputs), op);
  return t;
}

}  // namespace

JacobianFn jacrev_vmap(const TensorFn& f, int argnum) {
  return [f, argnum](const std::vector<Tensor>& inputs) {
    const Tensor& x = argument(inputs, argnum, "jacrev_vmap");
    const Traced t = run_traced(f, inputs, argnum, "jacrev_vmap");
    const Shape shape = joined(t.out.shape(), x.shape());
    if (t.out.numel() == 0 || x.numel() == 0) return zeros(shape, x.dtype());
    // one row uᵀ J per unit vector u, all at once
    const BatchFn pull = [&](const std::vector<Tensor>& u) {
      Tensor row = grad({t.out}, {t.x}, {u[0]}, {.retain_graph = true, .allow_unused = true})[0];
      return std::vector<Tensor>{row.defined() ? row : zeros(x.shape(), x.dtype())};
    };
    return vmap(pull)({basis(t.out.shape(), t.out.dtype())})[0].reshape(shape);
  };
}

JacobianFn jacfwd_vmap(const TensorFn& f, int argnum, Randomness randomness) {
  return [f, argnum, randomness](const std::vector<Tensor>& inputs) {
    const Tensor& x = argument(inputs, argnum, "jacfwd_vmap");
    if (x.numel() == 0) return zeros(joined(checked(f(inputs), "jacfwd_vmap").shape(), x.shape()), x.dtype());
    // J v, one column per unit vector v, all at once: vmap of jvp
    const BatchFn column = [&](const std::vector<Tensor>& v) {
      std::vector<Tensor> tangents(inputs.size());
      tangents[static_cast<size_t>(argnum)] = v[0];
      return std::vector<Tensor>{checked(jvp(f, inputs, tangents).tangent, "jacfwd_vmap")};
    };
    const Tensor columns =
        vmap(column, {.out_dims = {-1}, .randomness = randomness})({basis(x.shape(), x.dtype())})[0];  // (*out, n)
    const Shape out(columns.shape().begin(), columns.shape().end() - 1);
    return columns.reshape(joined(out, x.shape()));
  };
}

JacobianFn hessian_vmap(const TensorFn& f, int argnum) {
  return [f, argnum](const std::vector<Tensor>& inputs) {
    const Tensor& x = argument(inputs, argnum, "hessian_vmap");
    const Traced t = run_traced(f, inputs, argnum, "hessian_vmap");
    EMBER_CHECK(t.out.numel() == 1, "hessian_vmap",
                "the function must return one number, got a tensor of shape " << shape_str(t.out.shape()));
    const Shape shape = joined(x.shape(), x.shape());
    if (x.numel() == 0) return zeros(shape, x.dtype());
    Tensor g;
    {
      EnableGradGuard on;
      g = grad({t.out}, {t.x}, {}, {.create_graph = true, .allow_unused = true})[0];
    }
    if (!g.defined() || !g.requires_grad()) return zeros(shape, x.dtype());
    // H v = d <g, v> / d x, one per unit vector v, all at once (H is symmetric: rows or columns alike)
    const BatchFn hvp = [&](const std::vector<Tensor>& v) {
      Tensor row = grad({g}, {t.x}, {v[0]}, {.retain_graph = true, .allow_unused = true})[0];
      return std::vector<Tensor>{row.defined() ? row : zeros(x.shape(), x.dtype())};
    };
    return vmap(hvp)({basis(x.shape(), x.dtype())})[0].reshape(shape);
  };
}

}  // namespace ember
