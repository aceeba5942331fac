"""Tensors from Python: creation, metadata, views, indexing, ops, operators."""
import numpy as np
import pytest

import ember


def arr(t):
    return np.asarray(t.detach())


def test_creation_dtypes_follow_pytorch():
    assert ember.tensor([1.5, 2]).dtype == ember.float32
    assert ember.tensor([1, 2]).dtype == ember.int64
    assert ember.tensor([True, False]).dtype == ember.bool
    assert ember.tensor([1, 2], dtype=ember.float64).dtype == ember.float64
    assert ember.arange(5).dtype == ember.int64
    assert ember.arange(0, 1, 0.25).tolist() == [0.0, 0.25, 0.5, 0.75]
    assert ember.zeros(2, 3).shape == (2, 3)
    assert ember.ones((2, 3), dtype=ember.float64).tolist() == [[1.0] * 3] * 2
    assert ember.full((2,), 7.0).tolist() == [7.0, 7.0]
    assert ember.eye(2).tolist() == [[1.0, 0.0], [0.0, 1.0]]
    assert ember.tensor(3.5).shape == ()


def test_seeded_random_is_reproducible():
    ember.manual_seed(7)
    a = ember.randn(4, 5)
    ember.manual_seed(7)
    b = ember.randn(4, 5)
    assert ember.equal_bits(a, b)
    g = ember.Generator(7)
    assert ember.equal_bits(ember.randn((4, 5), generator=g), a)
    ints = ember.randint(0, 10, (1000,))
    assert ints.dtype == ember.int64 and 0 <= ints.min().item() and ints.max().item() < 10


def test_metadata_and_views_share_memory():
    x = ember.arange(12, dtype=ember.float32).reshape(3, 4)
    assert x.shape == (3, 4) and x.stride() == (4, 1) and x.ndim == 2 and x.numel() == 12
    t = x.t()
    assert t.shape == (4, 3) and t.stride() == (1, 4) and not t.is_contiguous()
    t[0, 1] = 100.0  # writes x[1, 0]
    assert x[1, 0].item() == 100.0
    assert x.T.shape == (4, 3)
    assert x.view(2, 6).shape == (2, 6) and x.view((12,)).shape == (12,)
    assert x.permute(1, 0).shape == (4, 3)
    assert x.unsqueeze(0).expand(2, 3, 4).stride() == (0, 4, 1)


def test_indexing_matches_numpy():
    a = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    x = ember.tensor(a)
    for key in [0, -1, (1, 2), (slice(None), 1), (slice(0, 3, 2), slice(1, None)), (Ellipsis, 2), (None, 1),
                (1, Ellipsis, None), (slice(-2, None), slice(None, None, 3), 4), [2, 0, 2], (slice(None), [3, 1])]:
        expected = a[tuple(key) if isinstance(key, tuple) else key]
        got = x[key]
        assert got.shape == expected.shape, key
        np.testing.assert_array_equal(arr(got), expected)
    ids = ember.tensor([[0, 2], [1, 1]])
    np.testing.assert_array_equal(arr(x[ids]), a[np.array([[0, 2], [1, 1]])])
    assert [row.shape for row in x] == [(4, 5)] * 3 and len(x) == 3


def test_setitem_writes_through_views():
    x = ember.zeros(3, 4)
    x[1] = 2.0
    x[:, 3] = ember.tensor([7.0, 8.0, 9.0])
    assert x.tolist() == [[0, 0, 0, 7], [2, 2, 2, 8], [0, 0, 0, 9]]


def test_bad_index_is_an_error_not_a_crash():
    x = ember.zeros(3, 4)
    with pytest.raises(ember.Error, match="select"):
        x[3]
    with pytest.raises(ember.Error, match="too many indices"):
        x[0, 0, 0]
    with pytest.raises(ember.Error, match="step"):
        x[::-1]
    with pytest.raises(ember.Error, match="int64"):
        x[ember.tensor([0.5])]
    with pytest.raises(ember.Error, match="copy"):
        x[[0, 1]] = 1.0
    with pytest.raises(ember.Error, match="bool"):
        x[True]
    with pytest.raises(OverflowError):
        x[2 ** 70]
    assert x[np.int64(1)].shape == (4,)


@pytest.mark.parametrize("name", ["exp", "log", "sqrt", "tanh", "sigmoid", "relu", "abs", "sin", "cos", "neg"])
def test_unary_ops_as_function_and_method(name):
    a = np.linspace(0.1, 2.0, 12).reshape(3, 4)
    x = ember.tensor(a)  # float64
    ref = {"sigmoid": lambda v: 1 / (1 + np.exp(-v)), "relu": lambda v: np.maximum(v, 0), "neg": np.negative}.get(
        name, getattr(np, name, None))
    np.testing.assert_allclose(arr(getattr(ember, name)(x)), ref(a), rtol=1e-12)
    np.testing.assert_allclose(arr(getattr(x, name)()), ref(a), rtol=1e-12)


def test_reductions_with_keywords():
    a = np.arange(24, dtype=np.float64).reshape(2, 3, 4)
    x = ember.tensor(a)
    np.testing.assert_allclose(arr(x.sum()), a.sum())
    np.testing.assert_allclose(arr(x.sum(1)), a.sum(1))
    np.testing.assert_allclose(arr(x.sum(dim=(0, 2), keepdim=True)), a.sum((0, 2), keepdims=True))
    np.testing.assert_allclose(arr(ember.mean(x, dim=-1)), a.mean(-1))
    np.testing.assert_allclose(arr(x.var(dim=1)), a.var(1, ddof=1))
    values, ids = x.max(dim=2)
    np.testing.assert_array_equal(arr(values), a.max(2))
    np.testing.assert_array_equal(arr(ids), a.argmax(2))
    np.testing.assert_allclose(arr(x.softmax(-1).sum(-1)), np.ones((2, 3)))
    np.testing.assert_allclose(arr(x.clamp(min=3, max=5)), a.clip(3, 5))
    np.testing.assert_allclose(arr(x.flatten(start_dim=1)), a.reshape(2, 12))


def test_operators():
    a = np.array([[1.0, 2.0], [3.0, 4.0]])
    x = ember.tensor(a)
    np.testing.assert_allclose(arr(x + x), a + a)
    np.testing.assert_allclose(arr(2 - x), 2 - a)
    np.testing.assert_allclose(arr(x * 3), a * 3)
    np.testing.assert_allclose(arr(1 / x), 1 / a)
    np.testing.assert_allclose(arr(x ** 2), a ** 2)
    np.testing.assert_allclose(arr(2 ** x), 2 ** a)
    np.testing.assert_allclose(arr(x @ x), a @ a)
    np.testing.assert_allclose(arr(-x), -a)
    np.testing.assert_array_equal(arr(x > 2), a > 2)
    np.testing.assert_array_equal(arr(x == x), np.ones((2, 2), bool))
    np.testing.assert_allclose(arr(ember.maximum(x, 2.5)), np.maximum(a, 2.5))
    np.testing.assert_allclose(arr(x.add(1)), a + 1)
    y = x.clone()
    y += 1
    y *= 2
    np.testing.assert_allclose(arr(y), (a + 1) * 2)
    np.testing.assert_allclose(arr(ember.cat([x, x], dim=1)), np.concatenate([a, a], 1))
    np.testing.assert_allclose(arr(ember.stack([x, x])), np.stack([a, a]))
    np.testing.assert_allclose(arr(ember.where(x > 2, x, -x)), np.where(a > 2, a, -a))


def test_item_and_python_numbers():
    assert ember.tensor([2.5]).item() == 2.5 and isinstance(ember.tensor([2.5]).item(), float)
    assert ember.tensor([3]).item() == 3 and isinstance(ember.tensor([3]).item(), int)
    assert ember.tensor([True]).item() is True
    assert float(ember.tensor(1.5)) == 1.5 and int(ember.tensor(4)) == 4
    with pytest.raises(ember.Error, match="item"):
        ember.zeros(2).item()


def test_printing_is_the_cpp_printing():
    x = ember.tensor([[1.0, 2.5], [-3.0, 4.0]])
    assert repr(x) == x.__repr__() == str(x)
    assert repr(x).startswith("tensor(")
    x.requires_grad_()
    assert "requires_grad=True" in repr(x)
    assert "grad_fn=<MulBackward>" in repr(x * x)


def test_every_op_of_the_list_is_bound(source_dir):
    import re
    text = re.sub(r"//[^\n]*", "", open(f"{source_dir}/tensor/op_list.h").read())
    names = set(re.findall(r"EMBER_OP\([^,]+,\s*(\w+),", text))
    assert len(names) >= 50
    missing = [n for n in sorted(names) if not (hasattr(ember, n) and hasattr(ember.Tensor, n))]
    assert missing == []
