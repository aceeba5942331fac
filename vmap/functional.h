/// @file
/// The Jacobians again, each in one batched pass instead of a loop
/// (autograd/functional.h has the loops: one pass per row or column).
///
///   jacrev_vmap(f)(x)   vmap of the pullback over the rows of the identity:
///                       every uᵀ J at once (functorch's jacrev)
///   jacfwd_vmap(f)(x)   every column J v at once, over the columns of the
///                       identity; each J v is the transpose of the pullback
///                       (below)
///   hessian_vmap(f)(x)  every H v at once: the gradient's pullback, batched
///
/// Same shapes and values as jacrev, jacfwd and hessian (up to rounding:
/// tests/vmap_functional_test.cpp), and the same errors. What they cost is
/// one pass of f (or of its gradient) and one batched pass of the rest.
///
/// Why J v comes from reverse mode here: vmap batches what compile/'s tracer
/// can write down, and forward mode keeps each tangent beside its tensor's
/// memory, where the tracer does not look (jvp under vmap is refused by
/// name). But the pullback u -> Jᵀ u is a linear function of u, recorded
/// with create_graph like any other; the gradient of <Jᵀ u, v> in u is J v,
/// exactly (the "double vjp": JAX's linear transpose). Its graph in u holds
/// the same products a forward pass would, so batched over v it costs what
/// batched jvps cost.
#pragma once

#include "autograd/functional.h"

namespace ember {

JacobianFn jacrev_vmap(const TensorFn& f, int argnum = 0);
JacobianFn jacfwd_vmap(const TensorFn& f, int argnum = 0);
/// d² f / d inputs[argnum]², for a scalar f: shape in ++ in.
JacobianFn hessian_vmap(const TensorFn& f, int argnum = 0);

}  // namespace ember
