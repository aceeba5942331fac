#!/usr/bin/env python3
"""Train the tiny GPT from Python: the loop of examples/train_gpt written out
in Python over ember's modules and optimizer. With the same flags (and
thread count) it computes the same numbers as train_gpt, bit for bit: each
step below is one line of train/trainer.cpp.

    PYTHONPATH=build/python python3 python/examples/train_gpt.py --steps 200
"""
import argparse
import math
import os
import time

import ember

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "data", "tinyshakespeare.txt.gz")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--data", default=DATA)
    p.add_argument("--steps", type=int, default=1000)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--context", type=int, default=64)
    p.add_argument("--dim", type=int, default=128)
    p.add_argument("--layers", type=int, default=3)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--eval-every", type=int, default=100)
    p.add_argument("--out", help="write model.safetensors and loss.csv here")
    a = p.parse_args()

    ember.set_num_threads(a.threads)
    text = ember.data.read_text_file(a.data)
    tok = ember.data.CharTokenizer.from_text(text)
    ids = tok.encode(text)
    cfg = ember.nn.GPTConfig(vocab_size=tok.vocab_size, context_length=a.context, dim=a.dim, layers=a.layers,
                             heads=a.heads, seed=a.seed)
    model = ember.nn.GPT(cfg)
    sampler = ember.data.BatchSampler(ids, a.batch, a.context, 0.1, a.seed)

    # AdamW with weight decay on the matrices only (not the embeddings, a tied head, LayerNorm)
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2 and not n.startswith("embed.")]
    no_decay = [p for n, p in model.named_parameters() if not (p.dim() >= 2 and not n.startswith("embed."))]
    opt = ember.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=a.lr, betas=(0.9, 0.95), eps=1e-8)
    schedule = ember.optim.WarmupCosineLR(a.lr, a.lr / 10, min(50, a.steps), a.steps)

    def evaluate():
        # the same 8 validation batches every time: their own generator
        gen = ember.Generator(a.seed + 0x5EED)
        model.eval()
        with ember.no_grad():
            total = sum(model.loss(*sampler.sample_with(True, gen)).item() for _ in range(8))
        model.train()
        return total / 8

    print(f"GPT with {model.num_parameters()} parameters, vocabulary of {tok.vocab_size} characters")
    history = [(0, math.nan, math.nan, math.nan, evaluate())]
    start = time.perf_counter()
    for step in range(1, a.steps + 1):
        lr = schedule.lr(step - 1)
        opt.set_lr(lr)
        x, y = sampler.sample()
        loss = model.loss(x, y)
        opt.zero_grad()
        loss.backward()
        norm = ember.optim.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        val = evaluate() if step % a.eval_every == 0 or step == a.steps else None
        history.append((step, loss.item(), lr, norm, val))
        if step % 50 == 0 or val is not None:
            print(f"step {step:5d}/{a.steps} loss {loss.item():.4f}" + (f"  validation loss {val:.4f}" if val else ""))
    print(f"trained {a.steps} steps in {time.perf_counter() - start:.1f} s")

    if a.out:
        os.makedirs(a.out, exist_ok=True)
        ember.save(model, os.path.join(a.out, "model.safetensors"))
        with open(os.path.join(a.out, "loss.csv"), "w") as f:
            f.write("step,loss,lr,grad_norm,val_loss\n")
            for row in history:
                f.write(",".join("" if v is None or (isinstance(v, float) and math.isnan(v)) else repr(v) for v in row) + "\n")
    return model, history


if __name__ == "__main__":
    main()
