#!/usr/bin/env python3
"""PyTorch's side of bench/decode_compare.sh: the GPT of bench/bench_decode.cpp
(GPT-2's 124M shape, or the tiny one) with random weights, prefill and
decode with a key-value cache as Hugging Face's GPT-2 keeps one
(past_key_values), here preallocated and written in place (faster than
concatenating every step), and decode without it (the whole context every
token). The same measurements and output lines as bench_decode.

    /usr/bin/python3 bench/torch_decode.py --model gpt2 --prompts 16,64,256,1024 --new 256
    /usr/bin/python3 bench/torch_decode.py --model gpt2 --mv   (one-row products as torch.mv)
    /usr/bin/python3 bench/torch_decode.py --model gpt2 --prompts 256 --no-uncached --mv --profile

The model is written here from GPT-2's description (Debian 12 has no
transformers): pre-LN blocks, the tanh GELU, learned positions, the head
tied to the token table. Runs under torch.inference_mode with --threads
threads; each decode step ends in the greedy token, as bench_decode's.
"""
import argparse
import math
import statistics
import time

import torch
import torch.nn.functional as F

SHAPES = {"gpt2": dict(V=50257, L=1024, D=768, H=12, layers=12, gelu="tanh"),
          "tiny": dict(V=65, L=1024, D=128, H=4, layers=3, gelu="none")}


class GPT(torch.nn.Module):
    def __init__(self, V, L, D, H, layers, gelu):
        super().__init__()
        self.V, self.L, self.D, self.H, self.gelu = V, L, D, H, gelu
        self.wte = torch.nn.Parameter(torch.randn(V, D) * 0.02)
        self.wpe = torch.nn.Parameter(torch.randn(L, D) * 0.02)
        lin = lambda i, o: (torch.nn.Parameter(torch.randn(o, i) * 0.02), torch.nn.Parameter(torch.zeros(o)))
        self.blocks = []
        for _ in range(layers):
            b = {"ln1": (torch.ones(D), torch.zeros(D)), "ln2": (torch.ones(D), torch.zeros(D)),
                 "qkv": lin(D, 3 * D), "proj": lin(D, D), "fc": lin(D, 4 * D), "out": lin(4 * D, D)}
            self.blocks.append(b)
        self.lnf = (torch.ones(D), torch.zeros(D))
        self.mv = False
        self.head = None

    def quantize_int8(self):
        """Every Linear and the head as PyTorch's dynamically quantized Linear (int8
        weights, one scale per output row; the activations quantized per call)."""
        qconfig = torch.ao.quantization.per_channel_dynamic_qconfig

        def q(w, b):
            lin = torch.nn.Linear(w.shape[1], w.shape[0], bias=b is not None)
            with torch.no_grad():
                lin.weight.copy_(w)
                if b is not None:
                    lin.bias.copy_(b)
            return torch.ao.quantization.quantize_dynamic(torch.nn.Sequential(lin), {torch.nn.Linear: qconfig},
                                                          dtype=torch.qint8)[0]
        for blk in self.blocks:
            for key in ("qkv", "proj", "fc", "out"):
                blk[key] = q(*blk[key])
        self.head = q(self.wte.detach(), None)

    def linear(self, x, wb):
        if callable(wb):  # quantized
            return wb(x)
        w, b = wb
        if self.mv and x.shape[0] == 1:  # one row: a matrix-vector product
            return (torch.mv(w, x[0]) + b).unsqueeze(0)
        return F.linear(x, w, b)

    def forward(self, ids, cache=None, pos=0):
        """ids (T,) -> logits (T, V); cache: per layer (K, V) of (H, L, d), written at pos.."""
        T, D, H = ids.shape[0], self.D, self.H
        d = D // H
        x = self.wte[ids] + self.wpe[pos:pos + T]
        for i, b in enumerate(self.blocks):
            h = F.layer_norm(x, (D,), *b["ln1"], 1e-5)
            q, k, v = self.linear(h, b["qkv"]).split(D, dim=1)
            q, k, v = (t.view(T, H, d).transpose(0, 1) for t in (q, k, v))
            if cache is not None:
                K, Vc = cache[i]
                K[:, pos:pos + T] = k
                Vc[:, pos:pos + T] = v
                k, v = K[:, :pos + T], Vc[:, :pos + T]
            s = (q @ k.transpose(1, 2)) * (1.0 / math.sqrt(d))
            if T > 1:  # query i (at pos + i) sees keys 0..pos+i
                s = s.masked_fill(torch.ones(T, pos + T, dtype=torch.bool).triu(pos + 1), float("-inf"))
            y = (s.softmax(-1) @ v).transpose(0, 1).reshape(T, D)
            x = x + self.linear(y, b["proj"])
            h = F.layer_norm(x, (D,), *b["ln2"], 1e-5)
            h = F.gelu(self.linear(h, b["fc"]), approximate=self.gelu)
            x = x + self.linear(h, b["out"])
        x = F.layer_norm(x, (D,), *self.lnf, 1e-5)
        if self.head is not None:
            return self.head(x)
        if self.mv and x.shape[0] == 1:
            return torch.mv(self.wte, x[0]).unsqueeze(0)
        return x @ self.wte.t()

    def new_cache(self):
        d = self.D // self.H
        return [(torch.zeros(self.H, self.L, d), torch.zeros(self.H, self.L, d)) for _ in self.blocks]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="gpt2", choices=sorted(SHAPES))
    ap.add_argument("--prompts", default="16,64,256,1024")
    ap.add_argument("--new", type=int, default=256)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--uncached-every", type=int, default=0)
    ap.add_argument("--no-uncached", action="store_true")
    ap.add_argument("--mv", action="store_true", help="one-row products as torch.mv")
    ap.add_argument("--int8", action="store_true",
                    help="weights in int8: torch.ao.quantization.quantize_dynamic on every Linear and the head")
    ap.add_argument("--qengine", default="", help="with --int8: torch.backends.quantized.engine (qnnpack, onednn)")
    ap.add_argument("--profile", action="store_true",
                    help="profile 32 cached decode steps after each prompt (torch.profiler) and print the table")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    shape = SHAPES[args.model]
    model = GPT(**shape)
    model.mv = args.mv
    every = args.uncached_every or (16 if args.model == "gpt2" else 1)
    L, V = shape["L"], shape["V"]
    params = sum(p.numel() for p in [model.wte, model.wpe]) + sum(
        t.numel() for b in model.blocks for pair in b.values() for t in pair) + 2 * shape["D"]
    if args.int8:
        if args.qengine:
            torch.backends.quantized.engine = args.qengine
        model.quantize_int8()
    print("model %s (PyTorch %s%s%s): %.1f M parameters" % (
        args.model, torch.__version__, ", torch.mv" if args.mv else "",
        ", int8 dynamic (engine %s)" % torch.backends.quantized.engine if args.int8 else "", params / 1e6))
    g = torch.Generator().manual_seed(7)
    now = time.perf_counter
    with torch.inference_mode():
        cache = model.new_cache()
        for P in [int(p) for p in args.prompts.split(",") if p]:
            N = min(args.new, L - P)
            prompt = torch.randint(0, V, (P,), generator=g)
            pre, dec, unc = [], [], []
            for r in range(args.reps + 1):
                t0 = now()
                nxt = int(model(prompt, cache, 0)[-1].argmax())
                pre_ms = (now() - t0) * 1e3
                t0 = now()
                for i in range(N):
                    nxt = int(model(torch.tensor([nxt]), cache, P + i)[-1].argmax())
                dec_ms = (now() - t0) * 1e3 / N if N else 0.0
                unc_ms = 0.0
                if not args.no_uncached and N:
                    text = torch.cat([prompt, torch.ones(N, dtype=torch.long)])
                    times = []
                    for i in range(0, N, every):
                        t0 = now()
                        int(model(text[:P + i])[-1].argmax())
                        times.append((now() - t0) * 1e3)
                    unc_ms = sum(times) / len(times)
                if r:
                    pre.append(pre_ms), dec.append(dec_ms), unc.append(unc_ms)
            p, dm, um = statistics.median(pre), statistics.median(dec), statistics.median(unc)
            line = "decode model=%s P=%d N=%d prefill_ms=%.3f prefill_tok_s=%.1f cached_ms=%.4f cached_tok_s=%.2f" % (
                args.model, P, N, p, P / p * 1e3, dm, 1e3 / dm if dm else 0.0)
            if not args.no_uncached and N:
                line += " uncached_ms=%.3f uncached_tok_s=%.2f speedup=%.2f" % (um, 1e3 / um, um / dm)
            print(line, flush=True)
            if args.profile and N:
                profile_steps(model, cache, P, min(32, N), nxt)


def profile_steps(model, cache, P, steps, nxt):
    """steps cached decode steps after a prompt of P, under torch.profiler:
    the ops by self time, as bench_decode --profile prints ember's."""
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for i in range(steps):
            nxt = int(model(torch.tensor([nxt]), cache, P + i)[-1].argmax())
    print("# %d cached decode steps after a prompt of %d, under torch.profiler:" % (steps, P))
    print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=12), flush=True)


if __name__ == "__main__":
    main()
