"""Training steps of a small MLP from the same starting weights: losses and weights after SGD with momentum and AdamW."""
import numpy as np


def weights(T):
    rng = np.random.default_rng(0)
    return [T.tensor(rng.standard_normal(s) * 0.5, dtype=T.float32) for s in [(8, 4), (8,), (3, 8), (3,)]]


def train(T, make_opt, steps=3):
    params = [w.detach().requires_grad_() for w in weights(T)]
    rng = np.random.default_rng(1)
    x = T.tensor(rng.standard_normal((16, 4)), dtype=T.float32)
    y = T.tensor(rng.integers(0, 3, 16))
    opt = make_opt(params)
    losses = []
    for _ in range(steps):
        h = T.nn.functional.gelu(T.nn.functional.linear(x, params[0], params[1]))
        loss = T.nn.functional.cross_entropy(T.nn.functional.linear(h, params[2], params[3]), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return T.tensor(losses), params


def run(T):
    sgd_losses, sgd = train(T, lambda ps: T.optim.SGD(ps, lr=0.1, momentum=0.9))
    adamw_losses, adamw = train(T, lambda ps: T.optim.AdamW(ps, lr=0.01, weight_decay=0.1))
    return {"SGD losses": sgd_losses, "SGD weights": sgd[0], "AdamW losses": adamw_losses, "AdamW weights": adamw[0]}
