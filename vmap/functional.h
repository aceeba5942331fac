/// @file
/// The Jacobians again, each in one batched pass instead of a loop
/// (autograd/functional.h has the loops: one pass per row or column).
///
///   jacrev_vmap(f)(x)   vmap of the pullback over the rows of the identity:
///                       every uᵀ J at once (functorch's jacrev)
///   jacfwd_vmap(f)(x)   vmap of jvp over the columns of the identity:
///                       every column J v at once (functorch's jacfwd)
///   hessian_vmap(f)(x)  every H v at once: the gradient's pullback, batched
///
/// Same shapes and values as jacrev, jacfwd and hessian (up to rounding:
/// tests/vmap_functional_test.cpp), and the same errors. What they cost is
/// one pass of f (or of its gradient) and one batched pass of the rest.
///
/// A jvp under vmap (as under compile) is two backward passes: forward mode
/// keeps each tangent beside its tensor's memory, where compile/'s tracer
/// does not look, but the pullback u -> Jᵀ u is a linear function of u,
/// recorded with create_graph like any other, and the gradient of
/// <Jᵀ u, v> in u is J v, exactly (the "double vjp": JAX's linear
/// transpose; autograd/functional.h). Its graph in u holds the same products
/// a forward pass would, so batched over v it costs what batched jvps cost.
#pragma once

#include "autograd/functional.h"
#include "vmap/vmap.h"

namespace ember {

JacobianFn jacrev_vmap(const TensorFn& f, int argnum = 0);
/// f runs under vmap here (each column a jvp of it), so a random draw in f
/// needs `randomness` (vmap/vmap.h), as functorch's jacfwd asks for it.
JacobianFn jacfwd_vmap(const TensorFn& f, int argnum = 0, Randomness randomness = Randomness::Error);
/// d² f / d inputs[argnum]², for a scalar f: shape in ++ in.
JacobianFn hessian_vmap(const TensorFn& f, int argnum = 0);

}  // namespace ember
