/// @file
/// Function transforms: derivatives as functions, the way JAX and
/// torch.func spell them. Each takes a function of tensors,
///   Tensor f(const std::vector<Tensor>& inputs),
/// and differentiates it with respect to its floating inputs.
///
///   jvp(f, x, v)     f(x) and J v, by one forward pass carrying a tangent
///   vjp(f, x)        f(x) and the function u -> uᵀ J, by reverse mode
///   jacfwd(f)(x)     the Jacobian, one jvp per input element (columns)
///   jacrev(f)(x)     the Jacobian, one vjp per output element (rows)
///   hessian(f)(x)    jacfwd(jacrev(f)): forward-over-reverse
///   hvp(f, x, v)     H v for a scalar f: one jvp of the gradient
///
/// Jacobians have shape out.shape ++ in.shape (PyTorch's layout). jacfwd
/// costs n forward passes for n input elements, jacrev m backward passes for
/// m output elements: which one wins depends on the shape of f
/// (examples/forward_vs_reverse.cpp measures the crossover).
///
/// vjp and jacrev keep the graph when their inputs require grad, so they
/// nest (jacrev(jacrev(f))). Forward mode has one level (autograd/forward.h):
/// jvp inside jvp, or jacfwd(jacfwd(f)), is refused with an error naming it.
#pragma once

#include <functional>
#include <vector>

#include "tensor/tensor.h"

namespace ember {

using TensorFn = std::function<Tensor(const std::vector<Tensor>&)>;
/// What jacrev, jacfwd and hessian return: a function of the same inputs.
using JacobianFn = std::function<Tensor(const std::vector<Tensor>&)>;

struct JvpResult {
  Tensor output;   // f(primals)
  Tensor tangent;  // J v: the directional derivative of f along the tangents
};
/// tangents has one entry per primal, of its shape; an undefined entry means
/// "not differentiated" (tangent 0), and is the only one an int64 or bool
/// input takes (a defined one is an error). While compile/'s tracer captures
/// the caller (compile, vmap), J v comes from two backward passes instead,
/// the derivative of the pullback u -> Jᵀ u along v (a graph holds those,
/// not tangents): the same values up to rounding.
JvpResult jvp(const TensorFn& f, const std::vector<Tensor>& primals, const std::vector<Tensor>& tangents);

struct VjpResult {
  Tensor output;  // f(primals)
  /// u (of the output's shape) -> uᵀ J, one tensor per primal (zeros for a
  /// primal f does not depend on; undefined for int64/bool inputs). It may be
  /// called any number of times.
  std::function<std::vector<Tensor>(const Tensor& cotangent)> pullback;
};
VjpResult vjp(const TensorFn& f, const std::vector<Tensor>& primals);

/// d f / d inputs[argnum], by reverse mode (one pullback per output element).
JacobianFn jacrev(const TensorFn& f, int argnum = 0);
/// d f / d inputs[argnum], by forward mode (one jvp per input element).
JacobianFn jacfwd(const TensorFn& f, int argnum = 0);
/// d² f / d inputs[argnum]², as jacfwd(jacrev(f)): shape out ++ in ++ in.
JacobianFn hessian(const TensorFn& f, int argnum = 0);
/// H v for a scalar f, H the Hessian in inputs[argnum] (v of its shape):
/// the tangent of the gradient along v, forward-over-reverse. v must be
/// defined (an error otherwise: it is the direction, not an input to skip).
Tensor hvp(const TensorFn& f, const std::vector<Tensor>& primals, const Tensor& v, int argnum = 0);

}  // namespace ember
