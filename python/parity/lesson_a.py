"""Lesson A: the sinusoidal table by its formula, and the cosine similarity of neighbours."""


def run(T):
    L, D = 16, 8
    p = T.arange(0, L, dtype=T.float64).reshape(L, 1)
    two_k = T.tensor([float(2 * (j // 2)) for j in range(D)], dtype=T.float64)
    angle = p / (10000.0 ** (two_k / D))
    is_even = T.tensor([j % 2 == 0 for j in range(D)])
    table = T.where(is_even, angle.sin(), angle.cos())
    a, b = table[:-1], table[1:]
    cos = (a * b).sum(-1) / ((a * a).sum(-1).sqrt() * (b * b).sum(-1).sqrt())
    return {"table": table, "cosine of neighbours": cos}
