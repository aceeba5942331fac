"""The function transforms, torch.func's spellings over ember's
(autograd/functional.h, vmap/vmap.h). f takes tensors and returns one tensor."""
from . import _ember
from ._ember import Tensor


def _tuple(x):
    return (x,) if isinstance(x, Tensor) else tuple(x)


def jvp(func, primals, tangents):
    """(func(*primals), J v): forward mode's directional derivative."""
    return _ember._jvp(func, _tuple(primals), _tuple(tangents))


def vjp(func, *primals):
    """(func(*primals), vjp_fn): vjp_fn(v) gives vᵀJ, one gradient per primal."""
    return _ember._vjp(func, primals)


def jacrev(func, argnums=0):
    """A function giving the Jacobian of func in argument argnums, row by row (reverse mode)."""
    return _ember._jacrev(func, argnums)


def jacfwd(func, argnums=0):
    """The same Jacobian, column by column (forward mode)."""
    return _ember._jacfwd(func, argnums)


def hessian(func, argnums=0):
    return _ember._hessian(func, argnums)


def hvp(func, primals, v, argnums=0):
    """The Hessian of a scalar func in argument argnums times v."""
    return _ember._hvp(func, _tuple(primals), v, argnums)


def vmap(func, in_dims=0, out_dims=0, randomness="error"):
    """func over a batch: each input mapped along in_dims (an int for all, or
    one per input, None = not mapped), the outputs stacked along out_dims."""
    def batched(*args):
        dims = [in_dims] * len(args) if isinstance(in_dims, int) or in_dims is None else list(in_dims)
        outs = [out_dims] if isinstance(out_dims, int) else list(out_dims)
        result = _ember._vmap(func, dims, outs, randomness)(*args)
        return result[0] if len(result) == 1 else tuple(result)
    return batched
