"""gradcheck of the same functions on both: broadcasting, a non-contiguous input, a softmax."""


def run(T):
    a = T.tensor([[0.1 * (i - j) for j in range(4)] for i in range(3)], dtype=T.float64, requires_grad=True)
    b = T.tensor([0.5, -1.0, 1.5, 2.0], dtype=T.float64, requires_grad=True)
    w = T.tensor([[0.2 * i - 0.1 * j for j in range(3)] for i in range(4)], dtype=T.float64, requires_grad=True)
    wt = w.detach().t().requires_grad_()  # a non-contiguous leaf
    checks = {
        "tanh(a * b) (broadcast)": (lambda x, y: (x * y).tanh(), (a, b)),
        "a.t() @ ... (non-contiguous)": (lambda x, y: (x.t() @ y).sin(), (a, wt)),
        "softmax(a @ w, -1)": (lambda x, y: (x @ y).softmax(-1), (a, w)),
        "log_softmax + exp": (lambda x: x.log_softmax(0).exp() * x, (a,)),
    }
    return {name: T.autograd.gradcheck(f, inputs) for name, (f, inputs) in checks.items()}
