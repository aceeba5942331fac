"""ember from Python.

The C++ library does the work; this package is its Python face. The
extension module `ember._ember` (python/src/, pybind11) binds the Tensor
class, every op of tensor/op_list.h (as a function and as a method, from
generated bindings), the autograd engine, nn, the optimizers and the
instruments. What is written here in Python is what Python users expect
and C++ has no need of: `with ember.no_grad():`, `ember.tensor([[1, 2]])`,
`ember.autograd.Function`, nn.Module subclasses written in Python.

    import ember
    x = ember.randn((3, 4), requires_grad=True)
    (x * x).sum().backward()
    x.grad                      # 2x
"""
import builtins as _builtins

import numpy as _np

from . import _ember
from ._ember import *  # noqa: F401,F403  the ops, factories, Tensor, Error, dtypes
from ._ember import Error, Tensor, dtype

# shown as ember.Error and ember.Tensor (in tracebacks, reprs), not ember._ember.*
Error.__module__ = Tensor.__module__ = "ember"

float32 = dtype.float32
float64 = dtype.float64
int64 = dtype.int64
bool = dtype.bool  # noqa: A001  (ember.bool, as torch.bool)
bfloat16 = dtype.bfloat16
int8 = dtype.int8
float = float32  # noqa: A001
double = float64
long = int64

_NUMPY_OF = {float32: _np.float32, float64: _np.float64, int64: _np.int64, bool: _np.bool_}


def _requires(t, requires_grad):
    if requires_grad:
        t.requires_grad_(True)
    return t


def _size(size):
    """zeros(2, 3), zeros((2, 3)) and zeros([2, 3]) all mean shape (2, 3)."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        return tuple(size[0])
    return tuple(size)


# ---- creation ----
def tensor(data, dtype=None, requires_grad=False):
    """A new tensor holding a copy of data (a number, nested lists, a NumPy
    array or a tensor). Without dtype: floats give float32, ints int64,
    bools bool, as in PyTorch; a NumPy array keeps its dtype."""
    if isinstance(data, Tensor):
        t = data.detach().clone()
        return _requires(t if dtype is None else t.to(dtype), requires_grad)
    try:
        a = _np.asarray(data)
    except (ValueError, TypeError) as e:  # ragged lists, objects NumPy cannot hold
        raise Error(f"tensor: cannot make a tensor of this data: {e}") from None
    if dtype is not None:
        a = a.astype(_NUMPY_OF[dtype] if dtype in _NUMPY_OF else _np.float32)
    elif a.dtype.kind == "f" and not isinstance(data, _np.ndarray):
        a = a.astype(_np.float32)
    elif a.dtype.kind in "iu":
        a = a.astype(_np.int64)
    elif a.dtype.kind not in "fb":
        raise Error(f"tensor: cannot make a tensor of {a.dtype} data")
    t = from_numpy(_np.array(a, order="C", copy=True))
    if dtype is bfloat16:
        t = t.to(bfloat16)
    return _requires(t, requires_grad)


def as_tensor(data, dtype=None):
    """Shares memory with a NumPy array where it can (from_numpy), else copies."""
    if isinstance(data, _np.ndarray) and (dtype is None or _NUMPY_OF.get(dtype) == data.dtype.type):
        try:
            return from_numpy(data)
        except Error:
            pass
    return tensor(data, dtype)


def arange(start, end=None, step=1, dtype=None, requires_grad=False):
    """[start, end) by step; int64 when every argument is an int (PyTorch's rule)."""
    if end is None:
        start, end = 0, start
    if dtype is None:
        dtype = int64 if all(isinstance(v, int) for v in (start, end, step)) else float32
    return _requires(_ember._arange(start, end, step, dtype), requires_grad)


def _factory(cpp):
    def make(*size, dtype=float32, requires_grad=False, **kw):
        return _requires(cpp(_size(size), dtype=dtype, **kw), requires_grad)
    make.__name__ = cpp.__name__
    make.__doc__ = f"{cpp.__name__}(*size, dtype=float32, requires_grad=False): as in PyTorch."
    return make


zeros = _factory(_ember.zeros)
ones = _factory(_ember.ones)
empty = _factory(_ember.empty)
rand = _factory(_ember.rand)
randn = _factory(_ember.randn)


def full(size, fill_value, dtype=float32, requires_grad=False):
    return _requires(_ember.full(size, fill_value, dtype), requires_grad)


def randint(low, high=None, size=None, generator=None):
    if high is None:
        low, high = 0, low
    return _ember.randint(low, high, size, generator)


# ---- grad mode as context managers (and decorators) ----
class _GradMode:
    _mode = None

    def __enter__(self):
        self._prev = is_grad_enabled()
        _ember._set_grad_enabled(self._mode)
        return self

    def __exit__(self, *exc):
        _ember._set_grad_enabled(self._prev)
        return False

    def __call__(self, fn):
        import functools
        mode = self._mode

        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            prev = is_grad_enabled()
            _ember._set_grad_enabled(mode)
            try:
                return fn(*args, **kwargs)
            finally:
                _ember._set_grad_enabled(prev)
        return wrapped


class no_grad(_GradMode):
    """with ember.no_grad(): no op records a backward node (per thread)."""
    _mode = False


class enable_grad(_GradMode):
    _mode = True


class set_grad_enabled(_GradMode):
    def __init__(self, mode):
        self._mode = _builtins.bool(mode)
        self._prev = is_grad_enabled()
        _ember._set_grad_enabled(self._mode)  # also works as a plain call

    def __enter__(self):
        return self

    def __call__(self, fn):
        # as a decorator: undo the plain call's setting, set it while fn runs
        _ember._set_grad_enabled(self._prev)
        return super().__call__(fn)


# ---- Tensor methods better written in Python ----
def _numpy(self):
    """A NumPy array sharing this tensor's memory (the buffer protocol)."""
    return _np.asarray(self)


def _array(self, dtype=None, copy=None):
    if self.dtype == bfloat16:
        raise Error("numpy: bfloat16 has no NumPy dtype: convert with .to(ember.float32)")
    if self.requires_grad:
        raise Error("numpy: the tensor requires grad (a write through NumPy would escape autograd): use .detach()")
    a = _np.asarray(memoryview(self))
    return a if dtype is None else a.astype(dtype)


def _tolist(self):
    t = self.detach()
    if t.dtype == bfloat16:
        t = t.to(float32)
    return _np.asarray(t).tolist()


def _iter(self):
    if self.dim() == 0:
        raise TypeError("iteration over a 0-d tensor")
    for i in range(self.shape[0]):
        yield self[i]


def _shape_method(name):
    cpp = getattr(Tensor, name)

    def method(self, *shape):
        return cpp(self, _size(shape))
    method.__name__ = name
    method.__doc__ = cpp.__doc__
    return method


def _bool(self):
    return _builtins.bool(self.item())


Tensor.numpy = _numpy
Tensor.__array__ = _array
Tensor.tolist = _tolist
Tensor.__iter__ = _iter
Tensor.__bool__ = _bool
Tensor.__float__ = lambda self: _builtins.float(self.item())
Tensor.__int__ = lambda self: _builtins.int(self.item())
Tensor.__str__ = Tensor.__repr__
Tensor.data = property(lambda self: self.detach())
Tensor.device = "cpu"
for _name in ("reshape", "view", "permute", "expand"):
    setattr(Tensor, _name, _shape_method(_name))
Tensor.float = lambda self: self.to(float32)
Tensor.double = lambda self: self.to(float64)
Tensor.long = lambda self: self.to(int64)

# the package's own nn, optim and inspect (Python over the C++ submodules of
# the same names, which the star import above brought in)
for _name in ("nn", "optim", "inspect"):
    del globals()[_name]
from . import autograd  # noqa: E402
from . import nn  # noqa: E402
from . import optim  # noqa: E402
from . import inspect  # noqa: E402
from ._ember import data  # noqa: E402,F401
from .autograd import grad  # noqa: E402,F401
from .functional import jvp, vjp, jacrev, jacfwd, hessian, hvp, vmap  # noqa: E402,F401
