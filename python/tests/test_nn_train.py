"""nn and training from Python: modules, parameters, state, optimizers,
checkpoints, the instruments, and the tiny GPT trained as train_gpt trains it."""
import csv
import os
import subprocess
import sys

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember import nn


def arr(t):
    return np.asarray(t.detach())


def test_linear_is_x_w_transposed_plus_b():
    ember.manual_seed(0)
    lin = nn.Linear(3, 2, dtype=ember.float64)
    x = ember.randn((4, 3), dtype=ember.float64)
    np.testing.assert_allclose(arr(lin(x)), arr(x) @ arr(lin.weight).T + arr(lin.bias), rtol=1e-14)
    assert [n for n, _ in lin.named_parameters()] == ["weight", "bias"]
    assert isinstance(lin, nn.Module)


def test_embedding_with_tied_head():
    emb = nn.Embedding(10, 4)
    head = nn.LMHead(4, 10)
    nn.tie_weights(head, emb)
    assert head.is_tied and head.weight.is_same(emb.weight)
    ids = ember.tensor([[1, 2, 3]])
    assert emb(ids).shape == (1, 3, 4)
    np.testing.assert_array_equal(arr(emb(ids))[0, 0], arr(emb.weight)[1])


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8, dtype=ember.float64)
        self.fc2 = nn.Linear(8, 1, dtype=ember.float64)
        self.scale = nn.Parameter(ember.ones(1, dtype=ember.float64))

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x))) * self.scale


def test_a_module_written_in_python():
    m = MLP()
    assert [n for n, _ in m.named_parameters()] == ["scale", "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]
    assert m.num_parameters() == 1 + 32 + 8 + 8 + 1
    x = ember.randn((5, 4), dtype=ember.float64)
    m(x).sum().backward()
    assert all(p.grad is not None for p in m.parameters())
    m.zero_grad()
    assert all(p.grad is None for p in m.parameters())
    # state_dict round trip into another model
    other = MLP()
    other.load_state_dict(m.state_dict())
    assert ember.equal_bits(other(x), m(x))
    with pytest.raises(ember.Error, match="missing"):
        other.load_state_dict({})
    seq = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 1))
    assert [n for n, _ in seq.named_parameters()] == ["0.weight", "0.bias", "2.weight", "2.bias"]


def test_gradcheck_of_modules():
    ember.manual_seed(1)
    ln = nn.LayerNorm(4, dtype=ember.float64)
    x = ember.randn((3, 4), dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(lambda t: ln(t), (x,))
    attn = nn.MultiHeadAttention(4, 2, causal=True, dtype=ember.float64)
    assert ember.autograd.gradcheck(lambda t: attn(t), (ember.randn((1, 3, 4), dtype=ember.float64, requires_grad=True),))


def test_sgd_step_closed_form():
    w = ember.tensor([1.0, -2.0], dtype=ember.float64, requires_grad=True)
    opt = ember.optim.SGD([w], lr=0.1)
    (w * w).sum().backward()
    opt.step()
    assert w.tolist() == [1.0 - 0.1 * 2.0, -2.0 + 0.1 * 4.0]


def test_checkpoint_round_trip_and_a_refused_load(tmp_path):
    cfg = nn.GPTConfig(vocab_size=11, context_length=8, dim=8, heads=2, layers=1, seed=3)
    a, b = nn.GPT(cfg), nn.GPT(nn.GPTConfig(vocab_size=11, context_length=8, dim=8, heads=2, layers=1, seed=4))
    path = str(tmp_path / "m.safetensors")
    ember.save(a, path, {"note": "python"})
    before = [p.clone() for p in b.parameters()]
    small = nn.GPT(nn.GPTConfig(vocab_size=12, context_length=8, dim=8, heads=2, layers=1))
    with pytest.raises(ember.Error):
        ember.load(small, path)  # another shape: refused, nothing changed
    assert ember.load(b, path)["note"] == "python"
    assert all(ember.equal_bits(p, q) for p, q in zip(a.parameters(), b.parameters()))
    assert not all(ember.equal_bits(p, q) for p, q in zip(before, b.parameters()))


def test_the_instruments(tmp_path):
    model = nn.GPT(nn.GPTConfig(vocab_size=11, context_length=8, dim=8, heads=2, layers=1))
    x = ember.randint(0, 11, (2, 8))
    with ember.inspect.Profiler() as prof:
        model.loss(x, x).backward()
    table = prof.table()
    assert "matmul" in table and "MatmulBackward" in table
    with ember.inspect.BackwardTrace() as trace:
        model.loss(x, x).backward()
    assert trace.complete and "blocks.0.attn.w_q.weight" in trace.text()
    page = tmp_path / "backward.html"
    trace.to_html(str(page))
    assert page.stat().st_size > 1000


def read_csv(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def test_the_tiny_gpt_trains_from_python_as_train_gpt_does(build_dir, source_dir, tmp_path):
    """Same flags, same thread count: the same weights bit for bit, and the same losses."""
    if not os.path.exists(f"{build_dir}/examples/train_gpt"):
        pytest.skip("a build without the examples (the sanitizer build): no train_gpt to compare with")
    flags = ["--steps", "30", "--eval-every", "10", "--threads", "2", "--seed", "5"]
    subprocess.run([f"{build_dir}/examples/train_gpt", *flags, "--out", str(tmp_path / "cpp"), "--sample-chars", "0"],
                   check=True, capture_output=True)
    env = dict(os.environ)
    subprocess.run([sys.executable, f"{source_dir}/python/examples/train_gpt.py", *flags, "--out", str(tmp_path / "py")],
                   check=True, capture_output=True, env=env)
    cpp, py = read_csv(tmp_path / "cpp" / "loss.csv"), read_csv(tmp_path / "py" / "loss.csv")
    assert len(cpp) == len(py) == 31
    for c, p in zip(cpp, py):
        for key in ("loss", "lr", "grad_norm", "val_loss"):
            assert (c[key] == "") == (p[key] == ""), (c, p)
            if c[key]:
                assert float(c[key]) == float(f"{float(p[key]):.6g}"), (key, c, p)  # train_gpt writes 6 digits
    cfg = nn.GPTConfig(vocab_size=65, context_length=64, dim=128, heads=4, layers=3)
    a, b = nn.GPT(cfg), nn.GPT(cfg)
    ember.load(a, str(tmp_path / "cpp" / "model.safetensors"))
    ember.load(b, str(tmp_path / "py" / "model.safetensors"))
    assert all(ember.equal_bits(p, q) for p, q in zip(a.parameters(), b.parameters()))


def test_a_quantized_gpt_keeps_int8_buffers_and_stays_near_its_float_logits():
    cfg = nn.GPTConfig()
    cfg.vocab_size, cfg.dim, cfg.layers, cfg.context_length = 65, 64, 1, 16
    model = nn.GPT(cfg)
    model.eval()
    ids = ember.tensor([[1, 5, 9, 2]])
    with ember.no_grad():
        before = np.asarray(model(ids))
        nn.quantize(model, group=32)
        after = np.asarray(model(ids))
    assert nn.quantization_of(model) == "int8 group=32"
    buffers = dict(model.named_buffers())
    assert buffers["blocks.0.fc1.weight"].dtype == ember.int8
    assert buffers["blocks.0.fc1.weight_scale"].shape == (256, 2)
    assert np.asarray(buffers["blocks.0.fc1.weight"]).dtype == np.int8
    assert np.abs(after - before).max() < 0.02 * np.abs(before).max()
    with pytest.raises(ember.Error, match="quantized already"):
        nn.quantize(model)
    with pytest.raises(ember.Error, match="'int4' is not 'int8' or 'bfloat16'"):
        nn.quantize(nn.GPT(cfg), dtype="int4")
