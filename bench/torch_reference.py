#!/usr/bin/env python3
"""The PyTorch side of bench/compare.sh: the workloads of bench_ember.cpp,
defined the same way, timed the same way (setup untimed, 2 warmup runs, the
median of `reps` timed runs), printed the same way: `name median_ms`.

    python3 bench/torch_reference.py [--threads N] [--bf16] [--profile] [workload ...]

--bf16 runs every timed body under torch.autocast("cpu", dtype=torch.bfloat16).
--profile times nothing: one run of each workload under torch.profiler, its
ops by self CPU time (bench_ember --profile's counterpart).

Some workloads add `<name>_ns_per_op` / `<name>_tokens_per_s` lines; the last
line is `peak_rss_mb N`, the process's peak resident memory.

cblas_sgemm_1024 has no PyTorch counterpart and is not listed here.
"""
import argparse
import contextlib
import resource
import statistics
import sys
import time

import functorch
import torch
import torch.utils.checkpoint


def matmul_1024():
    a, b = torch.randn(1024, 1024), torch.randn(1024, 1024)
    return lambda: torch.matmul(a, b)


def add_4m():
    a, b = torch.randn(2048, 2048), torch.randn(2048, 2048)
    return lambda: a + b


def add_bcast_4m():
    a, b = torch.randn(2048, 2048), torch.randn(2048, 1)
    return lambda: a + b


def where_4m():
    a, b = torch.randn(2048, 2048), torch.randn(2048, 2048)
    c = a > b
    return lambda: torch.where(c, a, b)


def transpose_copy_4m():
    a = torch.randn(2048, 2048)
    return lambda: a.t().contiguous()


def gelu_fwd_bwd(approximate):
    """GELU forward and backward of a fixed gradient, (1024, 3072)."""
    def setup():
        x = torch.randn(1024, 3072, requires_grad=True)
        grad = torch.randn(1024, 3072)

        def body():
            torch.nn.functional.gelu(x, approximate=approximate).backward(grad)
            x.grad = None
        return body
    return setup


def layer_norm_fwd_bwd_3m():
    x = torch.randn(4096, 768, requires_grad=True)
    weight, bias = torch.randn(768, requires_grad=True), torch.randn(768, requires_grad=True)
    grad = torch.randn(4096, 768)

    def body():
        torch.nn.functional.layer_norm(x, (768,), weight, bias).backward(grad)
        x.grad = weight.grad = bias.grad = None
    return body


# bench_compile's workloads (compile/), forward only and without autograd;
# PyTorch 1.13 runs them eagerly (it has no torch.compile).
def no_grad(fn):
    def body():
        with torch.no_grad():
            fn()
    return body


def mlp_inputs():
    return torch.randn(1024, 3072), torch.randn(3072)


def gelu_fwd_3m():
    x, _ = mlp_inputs()
    return no_grad(lambda: torch.nn.functional.gelu(x))


def bias_gelu_fwd_3m():
    x, b = mlp_inputs()
    return no_grad(lambda: torch.nn.functional.gelu(x + b))


def gelu_tanh_by_ops_fwd_3m():
    x, _ = mlp_inputs()
    k = 0.7978845608028654
    return no_grad(lambda: 0.5 * x * (1.0 + torch.tanh(k * (x + 0.044715 * x * x * x))))


def layer_norm_fwd_3m():
    x, weight, bias = torch.randn(4096, 768), torch.randn(768), torch.randn(768)
    return no_grad(lambda: torch.nn.functional.layer_norm(x, (768,), weight, bias))


def softmax_fwd_3m():
    x = torch.randn(4096, 768)
    return no_grad(lambda: torch.softmax(x, -1))


def softmax_fwd_bwd_3m():
    x = torch.randn(4096, 768, requires_grad=True)
    grad = torch.randn(4096, 768)

    def body():
        torch.softmax(x, -1).backward(grad)
        x.grad = None
    return body


def chain_2000_small_ops_fwd():
    x = torch.ones(4)

    def chain():
        y = x
        for _ in range(1000):
            y = y * 1.0001 + 0.5
    return no_grad(chain)


def small_op_overhead():
    a, b = torch.randn(4), torch.randn(4)

    def body():
        for _ in range(10000):
            a + b
    return body


def chain_2000_small_ops():
    x = torch.ones(4, requires_grad=True)

    def body():
        y = x
        for _ in range(1000):
            y = y * 1.0001 + 0.5
        y.sum().backward()
        x.grad = None
    return body


def matmul_fwd_bwd_1024():
    a = torch.randn(1024, 1024, requires_grad=True)
    b = torch.randn(1024, 1024, requires_grad=True)

    def body():
        torch.matmul(a, b).sum().backward()
        a.grad = None
        b.grad = None
    return body


class Block(torch.nn.Module):
    """A pre-LN Transformer block like nanoGPT's, written out by hand (torch
    1.13 has no F.scaled_dot_product_attention): separate q/k/v/o Linears,
    masked_fill + softmax attention, exact GELU, no dropout."""

    def __init__(self, dim, heads, mlp_ratio=4):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = torch.nn.LayerNorm(dim), torch.nn.LayerNorm(dim)
        self.w_q, self.w_k = torch.nn.Linear(dim, dim), torch.nn.Linear(dim, dim)
        self.w_v, self.w_o = torch.nn.Linear(dim, dim), torch.nn.Linear(dim, dim)
        self.fc1, self.fc2 = torch.nn.Linear(dim, mlp_ratio * dim), torch.nn.Linear(mlp_ratio * dim, dim)

    def attn(self, x):
        B, T, D = x.shape
        h, d = self.heads, D // self.heads
        q = self.w_q(x).view(B, T, h, d).transpose(1, 2)  # (B, h, T, d)
        k = self.w_k(x).view(B, T, h, d).transpose(1, 2)
        v = self.w_v(x).view(B, T, h, d).transpose(1, 2)
        scores = (q @ k.transpose(-2, -1)) * (1.0 / d ** 0.5)
        future = torch.triu(torch.ones(T, T, dtype=torch.bool), 1)
        weights = torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1)
        y = (weights @ v).transpose(1, 2).reshape(B, T, D)
        return self.w_o(y)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.fc2(torch.nn.functional.gelu(self.fc1(self.ln2(x))))


def attention_block_fwd_bwd():
    block = Block(256, 8)
    x = torch.randn(8, 128, 256, requires_grad=True)

    def body():
        block(x).sum().backward()
        block.zero_grad(set_to_none=True)
        x.grad = None
    return body


def embed_fwd_bwd_gpt2():
    tok, pos = torch.nn.Embedding(50257, 768), torch.nn.Embedding(1024, 768)
    ids = torch.randint(0, 50257, (8, 256))
    positions = torch.arange(256)

    def body():
        (tok(ids) + pos(positions)).sum().backward()
        tok.weight.grad = None
        pos.weight.grad = None
    return body


def embed_sparse_sgd_step_gpt2():
    tok = torch.nn.Embedding(50257, 768, sparse=True)
    pos = torch.nn.Embedding(1024, 768)
    sgd = torch.optim.SGD(list(tok.parameters()) + list(pos.parameters()), lr=1e-3)
    ids = torch.randint(0, 50257, (8, 256))
    positions = torch.arange(256)

    def body():
        (tok(ids) + pos(positions)).sum().backward()
        sgd.step()
        sgd.zero_grad(set_to_none=True)
    return body


class GPT(torch.nn.Module):
    """nanoGPT's shape with ember's GPT choices: learned positions, pre-LN
    Blocks (above: biases, 4D exact-GELU MLP, masked_fill + softmax causal
    attention), a final LayerNorm and an LM head tied to the token embedding
    (no bias)."""

    def __init__(self, V, L, D, heads, layers):
        super().__init__()
        self.tok, self.pos = torch.nn.Embedding(V, D), torch.nn.Embedding(L, D)
        self.blocks = torch.nn.ModuleList(Block(D, heads) for _ in range(layers))
        self.ln_f = torch.nn.LayerNorm(D)
        self.head = torch.nn.Linear(D, V, bias=False)
        self.head.weight = self.tok.weight  # tied

    def loss(self, ids, targets):
        B, T = ids.shape
        x = self.tok(ids) + self.pos(torch.arange(T))
        for block in self.blocks:
            x = block(x)
        logits = self.head(self.ln_f(x))  # (B, T, V)
        return torch.nn.functional.cross_entropy(logits.view(B * T, -1), targets.view(B * T))


def gpt_train_step(V, L, D, heads, layers, B, T, bf16=False):
    """One step as in bench_ember.cpp: forward, loss, zero grads, backward,
    AdamW(lr=1e-3); with bf16, the step under bfloat16 autocast."""
    def setup():
        model = GPT(V, L, D, heads, layers)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
        x, y = torch.randint(0, V, (B, T)), torch.randint(0, V, (B, T))

        def body():
            with torch.autocast("cpu", dtype=torch.bfloat16) if bf16 else contextlib.nullcontext():
                loss = model.loss(x, y)
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
        return body
    return setup


def adamw_update_gpt_tiny():
    """bench_compile's adamw_update_gpt_tiny: AdamW's update of every
    parameter of the tiny GPT (V=65, L=64, D=64, 4 heads, 2 layers), here
    torch.optim.AdamW with foreach=True (its fastest on the CPU), in place."""
    model = GPT(65, 64, 64, 4, 2)
    for p in model.parameters():
        p.grad = torch.randn_like(p)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, foreach=True)
    opt.step()
    return opt.step


def mlp_jacobian(forward, n=64, m=16):
    """f(x) = W2 tanh(W1 x), R^n -> R^m (hidden 64): the whole Jacobian
    (functorch, which batches the n jvps or the m pullbacks with vmap: its
    best way). bench_vmap.cpp has the same, as a loop and batched."""
    def setup():
        W1, W2, x = torch.randn(64, n) / 8, torch.randn(m, 64) / 8, torch.randn(n)
        f = lambda v: W2 @ torch.tanh(W1 @ v)
        j = functorch.jacfwd(f) if forward else functorch.jacrev(f)
        return lambda: j(x)
    return setup


def hessian_gpt_tiny_ln_f():
    """bench_vmap's: the Hessian of the tiny GPT's loss (B=2, T=32) in the
    final layer norm's weight (64 numbers). functorch.hessian (jacfwd over
    jacrev) stops at cross-entropy's backward in PyTorch 1.13 (no forward-mode
    rule for _log_softmax_backward_data), so jacrev over jacrev, vmapped."""
    model = GPT(65, 64, 64, 4, 2)
    model.forward = model.loss
    x, y = torch.randint(0, 65, (2, 32)), torch.randint(0, 65, (2, 32))
    params = {k: v.detach() for k, v in model.named_parameters()}
    def loss(w):
        return torch.nn.utils.stateless.functional_call(model, {**params, "ln_f.weight": w}, (x, y))
    h = functorch.jacrev(functorch.jacrev(loss))
    w = params["ln_f.weight"]
    return lambda: h(w)


def per_sample_grads(loss, params, batch):
    """vmap(grad(loss)) over the batch's samples, the parameters shared: functorch's way."""
    g = functorch.vmap(functorch.grad(loss), in_dims=(None,) + (0,) * len(batch))
    return lambda: g(params, *batch)


def per_sample_grads_mlp_b64():
    """bench_vmap's: an MLP 64 -> 128 -> 10 (tanh, cross-entropy), batch 64."""
    params = [torch.randn(64, 128) / 8, torch.zeros(128), torch.randn(128, 10) / 11, torch.zeros(10)]
    x, y = torch.randn(64, 64), torch.randint(0, 10, (64,))
    def loss(p, xi, yi):
        h = torch.tanh(xi.unsqueeze(0) @ p[0] + p[1])
        return torch.nn.functional.cross_entropy(h @ p[2] + p[3], yi.unsqueeze(0))
    return per_sample_grads(loss, params, (x, y))


def per_sample_grads_gpt_tiny_b64():
    """bench_vmap's: the tiny GPT, batch 64 of sequences of 32 tokens."""
    model = GPT(65, 64, 64, 4, 2)
    model.forward = model.loss
    params = {k: v.detach() for k, v in model.named_parameters()}
    x, y = torch.randint(0, 65, (64, 32)), torch.randint(0, 65, (64, 32))
    def loss(p, xi, yi):
        return torch.nn.utils.stateless.functional_call(model, p, (xi.unsqueeze(0), yi.unsqueeze(0)))
    return per_sample_grads(loss, params, (x, y))


def hvp_4096_params():
    """H V for sum(tanh(W x)^2) in W (64 x 64), forward-over-reverse."""
    W, V, x = torch.randn(64, 64) / 8, torch.randn(64, 64), torch.randn(64, 32)
    loss = lambda w: (torch.tanh(w @ x) ** 2).sum()
    return lambda: functorch.jvp(functorch.grad(loss), (W,), (V,))


# name -> (setup, reps, ops_per_run, tokens_per_run); setup returns the timed body.
def long_block(T, checkpointed):
    """bench_ember's long_block_T<T>_stored / _ckpt: one block (D = 256, 8
    heads, B = 4, causal), forward and backward of a fixed gradient. PyTorch
    1.13 has no attention that drops the weights on the CPU: both keep them,
    and _ckpt recomputes the block in backward (torch.utils.checkpoint)."""
    def setup():
        block = Block(256, 8)
        x = torch.randn(4, T, 256, requires_grad=True)
        grad = torch.randn(4, T, 256)

        def body():
            if checkpointed:
                y = torch.utils.checkpoint.checkpoint(block, x, use_reentrant=False)
            else:
                y = block(x)
            y.backward(grad)
            block.zero_grad(set_to_none=True)
            x.grad = None
        return body
    return setup


WORKLOADS = {
    "matmul_1024": (matmul_1024, 10, 0, 0),
    "add_4M": (add_4m, 20, 0, 0),
    "add_bcast_4M": (add_bcast_4m, 20, 0, 0),
    "where_4M": (where_4m, 20, 0, 0),
    "transpose_copy_4M": (transpose_copy_4m, 20, 0, 0),
    "gelu_fwd_bwd_3M": (gelu_fwd_bwd("none"), 20, 0, 0),
    "gelu_tanh_fwd_bwd_3M": (gelu_fwd_bwd("tanh"), 20, 0, 0),
    "layer_norm_fwd_bwd_3M": (layer_norm_fwd_bwd_3m, 20, 0, 0),
    "small_op_overhead": (small_op_overhead, 20, 10000, 0),
    "gelu_fwd_3M": (gelu_fwd_3m, 20, 0, 0),
    "bias_gelu_fwd_3M": (bias_gelu_fwd_3m, 20, 0, 0),
    "gelu_tanh_by_ops_fwd_3M": (gelu_tanh_by_ops_fwd_3m, 20, 0, 0),
    "layer_norm_fwd_3M": (layer_norm_fwd_3m, 20, 0, 0),
    "softmax_fwd_3M": (softmax_fwd_3m, 20, 0, 0),
    "softmax_fwd_bwd_3M": (softmax_fwd_bwd_3m, 20, 0, 0),
    "chain_2000_small_ops_fwd": (chain_2000_small_ops_fwd, 20, 0, 0),
    "chain_2000_small_ops": (chain_2000_small_ops, 20, 0, 0),
    "matmul_fwd_bwd_1024": (matmul_fwd_bwd_1024, 5, 0, 0),
    "attention_block_fwd_bwd": (attention_block_fwd_bwd, 10, 0, 0),
    "embed_fwd_bwd_gpt2": (embed_fwd_bwd_gpt2, 10, 0, 0),
    "embed_sparse_sgd_step_gpt2": (embed_sparse_sgd_step_gpt2, 10, 0, 0),
    "jacfwd_64_to_16": (mlp_jacobian(True), 20, 0, 0),
    "jacrev_64_to_16": (mlp_jacobian(False), 20, 0, 0),
    "hvp_4096_params": (hvp_4096_params, 20, 0, 0),
    "jacfwd_16_to_64": (mlp_jacobian(True, 16, 64), 20, 0, 0),
    "jacrev_16_to_64": (mlp_jacobian(False, 16, 64), 20, 0, 0),
    "hessian_gpt_tiny_ln_f": (hessian_gpt_tiny_ln_f, 5, 0, 0),
    "per_sample_grads_mlp_b64": (per_sample_grads_mlp_b64, 20, 0, 0),
    "per_sample_grads_gpt_tiny_b64": (per_sample_grads_gpt_tiny_b64, 3, 0, 0),
    # V=65, L=64, D=64, heads=4, layers=2, B=16, T=64
    "gpt_tiny_train_step": (gpt_train_step(65, 64, 64, 4, 2, 16, 64), 20, 0, 16 * 64),
    "adamw_update_gpt_tiny": (adamw_update_gpt_tiny, 20, 0, 0),
    # V=65, L=256, D=192, heads=6, layers=4, B=16, T=128
    "gpt_small_train_step": (gpt_train_step(65, 256, 192, 6, 4, 16, 128), 5, 0, 16 * 128),
    "gpt_small_train_step_bf16": (gpt_train_step(65, 256, 192, 6, 4, 16, 128, bf16=True), 5, 0, 16 * 128),
}
# Only when named (as in bench_ember): one per process, each adds `<name>_step_mb`.
LONG_WORKLOADS = {}
for _T in (128, 256, 512, 1024, 2048, 4096):
    for _kind, _ckpt in (("stored", False), ("ckpt", True)):
        LONG_WORKLOADS[f"long_block_T{_T}_{_kind}"] = (long_block(_T, _ckpt), 3 if _T >= 2048 else 5, 0, 0)


def max_rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def median_ms(setup, reps, warmup=2, bf16=False, rss=None):
    body = timed_body(setup, bf16)
    if rss is not None:
        rss.append(max_rss_mb())
    for _ in range(warmup):
        body()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        body()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def timed_body(setup, bf16):
    body = setup()
    if not bf16:
        return body

    def autocast_body():
        with torch.autocast("cpu", dtype=torch.bfloat16):
            body()
    return autocast_body


def profile(name, setup, bf16=False, warmup=2):
    """bench_ember --profile's counterpart: the workload warmed up as for
    timing, then one run under torch.profiler, its ops by self CPU time."""
    body = timed_body(setup, bf16)
    for _ in range(warmup):
        body()
    with torch.profiler.profile() as p:
        body()
    print(f"# {name}, one run under torch.profiler:", flush=True)
    print(p.key_averages().table(sort_by="self_cpu_time_total", row_limit=15), flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--bf16", action="store_true", help='autocast: torch.autocast("cpu", dtype=torch.bfloat16)')
    parser.add_argument("--profile", action="store_true",
                        help="after the warm-up, one run of each workload under torch.profiler: its ops by self CPU time")
    parser.add_argument("workloads", nargs="*", help="default: all of " + " ".join(WORKLOADS))
    args = parser.parse_args()
    table = dict(WORKLOADS)
    table.update({n: LONG_WORKLOADS[n] for n in args.workloads if n in LONG_WORKLOADS})
    unknown = [n for n in args.workloads if n not in table]
    if unknown:
        sys.exit("torch_reference.py: unknown workload(s): " + " ".join(unknown))

    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    for name, (setup, reps, ops, tokens) in table.items():
        if args.workloads and name not in args.workloads:
            continue
        if args.profile:
            profile(name, setup, bf16=args.bf16)
            continue
        rss = []
        ms = median_ms(setup, reps, bf16=args.bf16, rss=rss)
        print(f"{name} {ms:.3f}", flush=True)
        if name.startswith("long_"):
            print(f"{name}_step_mb {max_rss_mb() - rss[0]:.1f}", flush=True)
        if ops:
            print(f"{name}_ns_per_op {ms * 1e6 / ops:.1f}", flush=True)
        if tokens:
            print(f"{name}_tokens_per_s {tokens / (ms * 1e-3):.0f}", flush=True)
    # The process's peak resident set (Linux: ru_maxrss in KiB), as bench_ember
    # prints it; it includes the Python interpreter and torch's libraries.
    print(f"peak_rss_mb {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.1f}", flush=True)


if __name__ == "__main__":
    main()
