"""Lesson C: the numbers the lesson works by hand, the derivatives by autograd."""
import math


def run(T):
    out = {}
    # linear RNN h_t = 0.5 h_{t-1} + x_t, h_0 = 0, x = (2, 0, 1)
    x = T.tensor([2.0, 0.0, 1.0], dtype=T.float64, requires_grad=True)
    h, hs = T.zeros(1, dtype=T.float64), []
    for t in range(3):
        h = 0.5 * h + x[t]
        hs.append(h)
    out["h"] = T.cat(hs)
    (out["dh3/dx"],) = T.autograd.grad(hs[-1].sum(), x)
    # vanishing gradient: 10 steps of local derivative 0.5
    z = T.tensor([1.0], dtype=T.float64, requires_grad=True)
    y = z
    for _ in range(10):
        y = 0.5 * y
    (out["0.5^10"],) = T.autograd.grad(y.sum(), z)
    # LSTM's worked step
    c_prev, f, i, g = (T.tensor([v], dtype=T.float64) for v in (0.8, 0.9, 0.2, 0.5))
    out["lstm c_t"] = f * c_prev + i * g
    # two scores -> weights -> context
    w = T.tensor([2.0, 1.0], dtype=T.float64).softmax(0)
    out["weights"] = w
    out["context"] = (w * T.tensor([10.0, 4.0], dtype=T.float64)).sum()
    # causal self-attention weights of 4 positions, scores from a fixed X
    X = T.arange(0, 12, dtype=T.float64).reshape(4, 3) / 10
    scores = X @ X.t() / math.sqrt(3)
    mask = T.ones(4, 4).triu(1) > 0
    out["causal weights"] = scores.masked_fill(mask, -math.inf).softmax(-1)
    return out
