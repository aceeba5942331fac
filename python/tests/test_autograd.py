"""Autograd from Python: the engine, grad mode, hooks, transforms, gradcheck, Functions."""
import threading

import numpy as np
import pytest

import ember
from ember.autograd import Function, gradcheck, gradgradcheck


def f64(values, requires_grad=True):
    return ember.tensor(values, dtype=ember.float64, requires_grad=requires_grad)


def test_backward_writes_grad():
    x = f64([1.0, 2.0, 3.0])
    (x * x * x).sum().backward()
    assert x.grad.tolist() == [3.0, 12.0, 27.0]
    assert x.is_leaf and (x * x).grad_fn == "MulBackward"


def test_no_grad_is_a_context_manager_and_a_decorator():
    x = f64([1.0])
    with ember.no_grad():
        assert not (x * 2).requires_grad
        with ember.enable_grad():
            assert (x * 2).requires_grad
    assert (x * 2).requires_grad

    @ember.no_grad()
    def f(v):
        return v * 2
    assert not f(x).requires_grad
    assert ember.is_grad_enabled()

    @ember.set_grad_enabled(False)
    def g(v):
        return v * 2
    assert ember.is_grad_enabled()  # the decorator sets the mode only while g runs
    assert not g(x).requires_grad and ember.is_grad_enabled()


def test_grad_mode_is_per_thread():
    seen = []
    with ember.no_grad():
        t = threading.Thread(target=lambda: seen.append(ember.is_grad_enabled()))
        t.start()
        t.join()
    assert seen == [True]


def test_grad_with_create_graph_gives_second_derivatives():
    x = f64([2.0])
    (g,) = ember.autograd.grad((x ** 3).sum(), x, create_graph=True)
    assert g.item() == 12.0
    (gg,) = ember.autograd.grad(g.sum(), x)
    assert gg.item() == 12.0  # 6x
    assert x.grad is None  # grad writes no .grad


def test_hooks_run_python_inside_the_engine():
    x = f64([1.0, 2.0])
    calls = []
    x.register_hook(lambda g: calls.append(g.tolist()))
    y = x * 3
    y.register_hook(lambda g: g * 10)  # replaces y's gradient
    y.sum().backward()
    assert calls == [[30.0, 30.0]] and x.grad.tolist() == [30.0, 30.0]


def test_an_exception_in_a_hook_reaches_the_caller():
    x = f64([1.0])

    def bad(g):
        raise KeyError("from the hook")
    x.register_hook(bad)
    with pytest.raises(KeyError, match="from the hook"):
        (x * 2).sum().backward()


def test_transforms_closed_forms():
    x = f64([1.0, 2.0], requires_grad=False)
    v = f64([1.0, 0.0], requires_grad=False)
    out, tangent = ember.jvp(lambda t: (t ** 3).sum(), (x,), (v,))
    assert out.item() == 9.0 and tangent.item() == 3.0
    out, pullback = ember.vjp(lambda t: t * t, x)
    (g,) = pullback(ember.ones(2, dtype=ember.float64))
    assert g.tolist() == [2.0, 4.0]
    W = f64([[1.0, 2.0], [3.0, 4.0]], requires_grad=False)
    np.testing.assert_array_equal(np.asarray(ember.jacrev(lambda t: W @ t)(x)), np.asarray(W))
    np.testing.assert_array_equal(np.asarray(ember.jacfwd(lambda t: W @ t)(x)), np.asarray(W))
    np.testing.assert_array_equal(np.asarray(ember.hessian(lambda t: (t ** 3).sum())(x)), np.diag([6.0, 12.0]))
    assert ember.hvp(lambda t: (t ** 3).sum(), (x,), v).tolist() == [6.0, 0.0]
    batched = ember.vmap(lambda t: (t * t).sum())(f64([[1.0, 2.0], [3.0, 4.0]], requires_grad=False))
    assert batched.tolist() == [5.0, 25.0]


def test_gradcheck_passes_and_fails():
    a = f64(np.linspace(-1, 1, 6).reshape(2, 3))
    b = f64(np.linspace(0.5, 2, 3))
    assert gradcheck(lambda p, q: (p * q).tanh().sum(-1), (a, b))
    assert gradgradcheck(lambda p, q: (p * q).tanh(), (a, b))
    assert gradcheck(lambda p: p.t().sin(), (a,))  # non-contiguous


class Cube(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 3 * x * x


class WrongCube(Cube):
    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 2 * x * x


class ScaledMul(Function):
    """Two tensors and a number: backward gives None for the number."""
    @staticmethod
    def forward(ctx, a, b, s):
        ctx.save_for_backward(a, b)
        ctx.s = s
        return a * b * s

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return grad * b * ctx.s, grad * a * ctx.s, None


def test_a_function_written_in_python_passes_gradcheck():
    x = f64([0.5, -1.0, 2.0])
    y = Cube.apply(x)
    assert y.grad_fn == "CubeBackward"
    y.sum().backward()
    assert x.grad.tolist() == [0.75, 3.0, 12.0]
    assert gradcheck(Cube.apply, (x,))
    assert gradgradcheck(Cube.apply, (x,))  # its backward is ember ops: differentiable again
    a, b = f64([[1.0, 2.0]]), f64([[3.0], [4.0]])  # broadcasting
    assert gradcheck(lambda p, q: ScaledMul.apply(p, q, 0.5), (a, b))
    with pytest.raises(ember.autograd.GradcheckError):
        gradcheck(WrongCube.apply, (x,))


def test_saved_tensors_are_checked_against_in_place_writes():
    x = f64([1.0, 2.0])
    h = x * 1
    y = Cube.apply(h)
    with ember.no_grad():
        h.add_(1.0)
    with pytest.raises(ember.Error, match="modified|version"):
        y.sum().backward()


def test_a_function_whose_backward_returns_a_wrong_gradient_is_refused_by_name():
    class WrongShape(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return ember.ones(7, dtype=grad.dtype)

    class WrongDtype(WrongShape):
        @staticmethod
        def backward(ctx, grad):
            return grad.to(ember.float32)

    class TooMany(WrongShape):
        @staticmethod
        def backward(ctx, grad):
            return grad, grad

    x = f64([1.0, 2.0, 3.0])
    with pytest.raises(ember.Error, match=r"WrongShapeBackward: .*shape \(7\).*shape \(3\)"):
        WrongShape.apply(x).sum().backward()
    with pytest.raises(ember.Error, match="WrongDtypeBackward: .*float32.*float64"):
        WrongDtype.apply(x).sum().backward()
    with pytest.raises(ember.Error, match="2 gradients for 1 inputs"):
        TooMany.apply(x).sum().backward()
    assert x.grad is None  # nothing was written


def test_saved_tensors_are_read_only_inside_backward_even_after_it_raised():
    seen = {}

    class Raises(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            seen["ctx"] = ctx
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            raise KeyError("from backward")

    x = f64([1.0])
    with pytest.raises(KeyError, match="from backward"):
        Raises.apply(x).sum().backward()
    with pytest.raises(ember.Error, match="saved_tensors: read them in backward"):
        seen["ctx"].saved_tensors  # the node is gone: no dangling link to it
