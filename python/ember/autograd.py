"""ember.autograd: grad, backward, gradcheck, and Function (an op whose
forward and backward are written in Python, as torch.autograd.Function).

The engine is ember's C++ engine: a Function's backward is a node of the
same graph, and the engine calls back into Python (taking the GIL) when it
reaches it, as it does for a hook."""
from . import _ember
from ._ember import Error, Tensor


def _as_tuple(x):
    return (x,) if isinstance(x, Tensor) else tuple(x)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, allow_unused=False):
    """The gradients of outputs with respect to inputs, as a tuple (None for an
    unused input with allow_unused). Writes no .grad."""
    if retain_graph is None:
        retain_graph = create_graph
    outs, ins = _as_tuple(outputs), _as_tuple(inputs)
    gos = None if grad_outputs is None else _as_tuple(grad_outputs)
    return _ember._grad(outs, ins, gos, retain_graph, create_graph, allow_unused)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False):
    tensors = _as_tuple(tensors)
    grads = (None,) * len(tensors) if grad_tensors is None else _as_tuple(grad_tensors)
    for t, g in zip(tensors, grads):
        t.backward(g, retain_graph=True if len(tensors) > 1 else retain_graph, create_graph=create_graph)


class GradcheckError(Error):
    """gradcheck found an analytic gradient that differs from the numerical one."""


def _check(which, func, inputs, eps, atol, rtol, raise_exception):
    r = which(func, _as_tuple(inputs), eps, atol, rtol)
    if not r.ok and raise_exception:
        raise GradcheckError(r.report)
    return r.ok


def gradcheck(func, inputs, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True):
    """Backward's Jacobian against central differences (use float64 inputs).
    True, or GradcheckError with the first entry that differs."""
    return _check(_ember._gradcheck, func, inputs, eps, atol, rtol, raise_exception)


def gradgradcheck(func, inputs, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True):
    """The same for the gradient's own derivative (backward with create_graph)."""
    return _check(_ember._gradgradcheck, func, inputs, eps, atol, rtol, raise_exception)


def forward_gradcheck(func, inputs, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True):
    """Forward mode's Jacobian-vector products against central differences."""
    return _check(_ember._forward_gradcheck, func, inputs, eps, atol, rtol, raise_exception)


class FunctionCtx:
    """What forward leaves for backward: ctx.save_for_backward(*tensors) (read
    back as ctx.saved_tensors, checked against in-place writes like every
    saved tensor) and any attribute."""

    def __init__(self):
        self._to_save = ()
        self._node = None

    def save_for_backward(self, *tensors):
        self._to_save = tensors

    @property
    def saved_tensors(self):
        if self._node is None:
            raise Error("saved_tensors: read them in backward")
        return self._node.saved_tensors()


class Function:
    """An op written in Python:

        class Cube(ember.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x * x

            @staticmethod
            def backward(ctx, grad):
                (x,) = ctx.saved_tensors
                return grad * 3 * x * x

        y = Cube.apply(x)

    forward runs without recording (its ops are not in the graph); the
    output gets one node, whose rule is backward: one gradient (or None) per
    argument of forward that is a tensor. A backward written with ember ops
    is differentiable again (create_graph)."""

    @staticmethod
    def forward(ctx, *args):
        raise NotImplementedError

    @staticmethod
    def backward(ctx, *grads):
        raise NotImplementedError

    @classmethod
    def apply(cls, *args):
        ctx = FunctionCtx()
        with _ember_no_grad():
            out = cls.forward(ctx, *args)
        if not isinstance(out, Tensor):
            raise Error(f"{cls.__name__}.forward must return one ember.Tensor, not {type(out).__name__}")
        inputs = [a for a in args if isinstance(a, Tensor)]
        tensor_positions = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        backward = cls.backward
        if len(tensor_positions) != len(args):
            # backward returns one value per argument; the node wants the tensors'
            def backward(ctx_, grad_, _b=cls.backward, _pos=tensor_positions):
                g = _b(ctx_, grad_)
                g = g if isinstance(g, tuple) else (g,)
                if len(g) != len(args):
                    raise Error(f"{cls.__name__}.backward returned {len(g)} gradients for {len(args)} arguments of forward")
                return tuple(g[i] for i in _pos)
        return _ember._record_function(out, inputs, ctx, backward, list(ctx._to_save), cls.__name__)


def _ember_no_grad():
    from . import no_grad
    return no_grad()
