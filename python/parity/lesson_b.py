"""Lesson B: how a token id selects a vector ("The cat sleeps")."""


def run(T):
    E = T.tensor([[-0.4, 0.8], [0.1, 0.5], [0.2, -0.1], [-0.2, 0.6], [0.7, 0.3]], dtype=T.float64)
    ids = T.tensor([[2, 4, 0]])
    lookup = T.nn.functional.embedding(ids, E)
    via_one_hot = T.nn.functional.one_hot(ids, 5).double() @ E
    moved = T.nn.functional.embedding(T.tensor([[0, 0, 0, 0, 0, 0, 0, 4]]), E)[0, 7]
    return {"lookup": lookup, "shape": list(lookup.shape), "one_hot @ E": via_one_hot, "cat at position 7": moved}
