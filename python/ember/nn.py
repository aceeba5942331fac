"""ember.nn: the modules.

Two kinds live here side by side. The C++ modules of nn/ (Linear,
Embedding, LayerNorm, MultiHeadAttention, TransformerBlock, GPT, ...) are
bound as they are: their forward is C++ and their parameters are the C++
module's own. `Module` is written in Python, as PyTorch's is, for models
written in Python: an attribute that is a module (of either kind) becomes
a child, an attribute that is a leaf tensor requiring grad (Parameter(...))
becomes a parameter, register_buffer names the rest.

    class MLP(ember.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = ember.nn.Linear(4, 8)
            self.fc2 = ember.nn.Linear(8, 1)

        def forward(self, x):
            return self.fc2(ember.nn.functional.relu(self.fc1(x)))
"""
import abc
import sys
import types

from . import _ember
from ._ember import Error, Tensor
from ._ember.nn import (  # noqa: F401
    GELU, GPT, Dropout, Embedding, EmbeddingComposer, GPTConfig, LayerNorm, LearnedPositionalEmbedding, Linear,
    LMHead, MultiHeadAttention, PositionalEmbedding, ReLU, Sigmoid, SinusoidalPositionalEmbedding, Tanh,
    TransformerBlock, UnaryModule, quantization_of, quantize, tie_weights)

_CppModule = _ember.nn.Module


def Parameter(data, requires_grad=True):  # noqa: N802  (PyTorch's spelling)
    """A leaf tensor of data's values (not a copy: the same memory, detached
    from any graph) that requires grad: assigned to a Module's attribute, it
    is a parameter."""
    return data.detach().requires_grad_(requires_grad)


class Module(metaclass=abc.ABCMeta):
    """The base of models written in Python (see the module's docstring)."""

    def __init__(self):
        object.__setattr__(self, "_parameters", {})
        object.__setattr__(self, "_buffers", {})
        object.__setattr__(self, "_modules", {})
        object.__setattr__(self, "training", True)

    def __setattr__(self, name, value):
        if "_parameters" not in self.__dict__:
            raise Error(f"{type(self).__name__}: call super().__init__() before assigning {name}")
        for table in (self._parameters, self._buffers, self._modules):
            table.pop(name, None)
        if isinstance(value, (Module, _CppModule)):
            self._modules[name] = value
        elif isinstance(value, Tensor) and value.is_leaf and value.requires_grad:
            self._parameters[name] = value
        object.__setattr__(self, name, value)

    def register_buffer(self, name, tensor):
        self.__setattr__(name, tensor)
        self._buffers[name] = tensor

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} has no forward")

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def named_children(self):
        return list(self._modules.items())

    def children(self):
        return list(self._modules.values())

    def _named(self, kind, prefix=""):
        out = [(prefix + n, t) for n, t in getattr(self, kind).items()]
        for name, child in self._modules.items():
            p = f"{prefix}{name}."
            if not isinstance(child, _CppModule):
                out += child._named(kind, p)
            elif kind == "_parameters":
                out += [(p + n, t) for n, t in child.named_parameters()]
            else:
                out += [(p + n, t) for n, t in child.named_buffers()]
        return out

    def named_parameters(self):
        """(name, tensor) of every parameter, each once (a tied one under its first name)."""
        seen, out = set(), []
        for n, t in self._named("_parameters"):
            if hash(t) not in seen:
                seen.add(hash(t))
                out.append((n, t))
        return out

    def parameters(self):
        return [t for _, t in self.named_parameters()]

    def named_buffers(self):
        return self._named("_buffers")

    def num_parameters(self):
        return sum(p.numel() for p in self.parameters())

    def zero_grad(self, set_to_none=True):
        for p in self.parameters():
            if set_to_none:
                p.grad = None
            elif p.grad is not None:
                p.grad.zero_()

    def train(self, mode=True):
        object.__setattr__(self, "training", mode)
        for child in self._modules.values():
            child.train(mode)
        return self

    def eval(self):
        return self.train(False)

    def state_dict(self):
        """Every parameter and buffer by name (tied parameters under each name), in order."""
        out = dict(self._named("_parameters"))
        out.update(self._named("_buffers"))
        return out

    def load_state_dict(self, state_dict, strict=True):
        """Copies the values in (checked first: an error changes nothing)."""
        mine = self.state_dict()
        missing = [k for k in mine if k not in state_dict]
        unexpected = [k for k in state_dict if k not in mine]
        if strict and (missing or unexpected):
            raise Error(f"load_state_dict: missing {missing}, unexpected {unexpected}")
        for k, t in mine.items():
            if k in state_dict and tuple(state_dict[k].shape) != tuple(t.shape):
                raise Error(f"load_state_dict: {k} has shape {tuple(state_dict[k].shape)} in the state "
                            f"and {tuple(t.shape)} in the module")
        from . import no_grad
        with no_grad():
            for k, t in mine.items():
                if k in state_dict:
                    t.copy_(state_dict[k])

    def extra_repr(self):
        return ""

    def __repr__(self):
        lines = [f"{type(self).__name__}({self.extra_repr()}"]
        for name, child in self._modules.items():
            body = repr(child).replace("\n", "\n  ")
            lines.append(f"  ({name}): {body}")
        return lines[0] + ")" if len(lines) == 1 else "\n".join(lines) + "\n)"


Module.register(_CppModule)


class Sequential(Module):
    """Modules applied in order; children named "0", "1", ... as in PyTorch."""

    def __init__(self, *modules):
        super().__init__()
        for i, m in enumerate(modules):
            setattr(self, str(i), m)

    def forward(self, x):
        for m in self._modules.values():
            x = m(x)
        return x

    def __getitem__(self, i):
        return list(self._modules.values())[i]

    def __len__(self):
        return len(self._modules)


class ModuleList(Module):
    def __init__(self, modules=()):
        super().__init__()
        for m in modules:
            self.append(m)

    def append(self, m):
        setattr(self, str(len(self._modules)), m)
        return self

    def __getitem__(self, i):
        return list(self._modules.values())[i]

    def __iter__(self):
        return iter(self._modules.values())

    def __len__(self):
        return len(self._modules)


# ---- ember.nn.functional ----
functional = types.ModuleType("ember.nn.functional", "The layers' functions (torch.nn.functional's spellings).")
F = functional
for _name in ("cross_entropy", "mse_loss", "linear", "embedding", "gelu", "dropout"):
    setattr(F, _name, getattr(_ember.nn, _name))
F.relu = _ember.relu
F.tanh = _ember.tanh
F.sigmoid = _ember.sigmoid
F.softplus = _ember.softplus
F.softmax = _ember.softmax
F.log_softmax = _ember.log_softmax
F.one_hot = _ember.one_hot


def _layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):  # noqa: A002
    """Over the last dim (ember's layer_norm normalizes one dim)."""
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if len(shape) != 1:
        raise Error(f"layer_norm: ember normalizes the last dim only, not {shape}")
    if weight is None:
        weight = _ember.ones(shape, input.dtype)
    if bias is None:
        bias = _ember.zeros(shape, input.dtype)
    return _ember.nn.layer_norm(input, weight, bias, eps)


def _sdpa(query, key, value, attn_mask=None, is_causal=False):
    """softmax(q kᵀ / sqrt(d)) v; the weights too with return_weights (ember.nn.attention)."""
    return _ember.nn.scaled_dot_product_attention(query, key, value, attn_mask, is_causal)[0]


F.layer_norm = _layer_norm
F.scaled_dot_product_attention = _sdpa
F.attention = _ember.nn.scaled_dot_product_attention
sys.modules["ember.nn.functional"] = F
