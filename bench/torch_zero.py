#!/usr/bin/env python3
"""PyTorch's counterpart of `bench_distributed --zero`: the same small GPT
trained with plain data parallelism (DistributedDataParallel + AdamW) and with
ZeRO stage 1 (DistributedDataParallel + ZeroRedundancyOptimizer, which keeps
AdamW's moments only for this rank's share of the parameters and broadcasts
the updated parameters after each step, bucket by bucket).

    mpirun --oversubscribe --bind-to none -np 2 python3 bench/torch_zero.py [--steps S] [--rounds R]
    python3 bench/torch_zero.py [--steps S] [--rounds R]      one process, no process group: the baseline

The workload is bench_distributed.cpp's: GPT dim 128, 3 layers, 4 heads,
context 64, vocab 65 (the model of torch_reference.py), a global batch of 16
sequences split evenly over the ranks, AdamW (lr 3e-3, betas 0.9/0.95, weight
decay 0.1 on matrices, none on embeddings, LayerNorms and biases), gradients
clipped to norm 1. Ranks talk over gloo on 127.0.0.1 (MASTER_PORT, default
29517). Each round builds a fresh model, runs 3 untimed steps, then times S
steps (forward, backward, clipping, optimizer step) by wall clock; the
configurations take turns within a round so that drift of the machine hits
them alike. Printed by rank 0: the median over rounds of each round's median
step, and the bytes of optimizer state that each rank holds after warm-up.
"""
import argparse
import importlib.util
import os
import statistics
import time

import torch
import torch.distributed as dist
from torch.distributed.optim import ZeroRedundancyOptimizer
from torch.nn.parallel import DistributedDataParallel

_spec = importlib.util.spec_from_file_location(
    "torch_reference", os.path.join(os.path.dirname(os.path.abspath(__file__)), "torch_reference.py"))
torch_reference = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(torch_reference)  # definitions only: its main() is guarded

V, L, D, HEADS, LAYERS, BATCH = 65, 64, 128, 4, 3, 16


class Loss(torch.nn.Module):
    """The GPT with its loss as forward(), so that DDP's forward hooks run."""

    def __init__(self, gpt):
        super().__init__()
        self.gpt = gpt

    def forward(self, ids, targets):
        return self.gpt.loss(ids, targets)


def param_groups(gpt):
    decay, rest = [], []
    for name, p in gpt.named_parameters():  # the tied head is tok.weight, listed once
        is_matrix = p.dim() >= 2 and not name.startswith(("tok.", "pos."))
        (decay if is_matrix else rest).append(p)
    return [{"params": decay, "weight_decay": 0.1}, {"params": rest, "weight_decay": 0.0}]


def state_bytes(optim):
    return sum(t.numel() * t.element_size()
               for s in optim.state.values() for t in s.values() if torch.is_tensor(t))


def run(config, world, rank, steps):
    """One round of `config`: (median step seconds, this rank's optimizer state bytes)."""
    torch.manual_seed(0)  # the same initial model on every rank
    gpt = torch_reference.GPT(V, L, D, HEADS, LAYERS)
    adamw = dict(lr=3e-3, betas=(0.9, 0.95), eps=1e-8)
    model = Loss(gpt) if config == "one process" else DistributedDataParallel(Loss(gpt))
    if config == "ZeRO stage 1":
        # parameters_as_bucket_view: the updated parameters travel in one
        # broadcast per bucket instead of one per tensor (its faster setting here)
        opt = ZeroRedundancyOptimizer(param_groups(gpt), optimizer_class=torch.optim.AdamW,
                                      parameters_as_bucket_view=True, **adamw)
    else:
        opt = torch.optim.AdamW(param_groups(gpt), **adamw)
    gen = torch.Generator().manual_seed(1000 + rank)
    b = BATCH // world
    x, y = torch.randint(0, V, (b, L), generator=gen), torch.randint(0, V, (b, L), generator=gen)

    def step():
        loss = model(x, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(gpt.parameters(), 1.0)
        opt.step()

    for _ in range(3):
        step()
    nbytes = state_bytes(opt.optim if config == "ZeRO stage 1" else opt)
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        step()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), nbytes


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", type=int, default=0, help="per process (default: 1 under mpirun, else 2)")
    args = parser.parse_args()
    env = os.environ
    rank = int(env.get("OMPI_COMM_WORLD_RANK", env.get("RANK", 0)))
    world = int(env.get("OMPI_COMM_WORLD_SIZE", env.get("WORLD_SIZE", 1)))
    assert BATCH % world == 0, f"the batch of {BATCH} does not split over {world} ranks"
    if world > 1:
        env.setdefault("MASTER_ADDR", "127.0.0.1")
        env.setdefault("MASTER_PORT", "29517")
        dist.init_process_group("gloo", rank=rank, world_size=world)
    threads = args.threads or (1 if world > 1 else 2)
    torch.set_num_threads(threads)

    configs = ["DataParallel", "ZeRO stage 1"] if world > 1 else ["one process"]
    times = {c: [] for c in configs}
    nbytes = {}
    for _ in range(args.rounds):
        for c in configs:
            t, nbytes[c] = run(c, world, rank, args.steps)
            times[c].append(t)
    per_rank = {}  # config -> every rank's optimizer state bytes (last round)
    for c in configs:
        gathered = [None] * world
        if world > 1:
            dist.all_gather_object(gathered, nbytes[c])
        else:
            gathered = [nbytes[c]]
        per_rank[c] = gathered

    if rank == 0:
        print(f"torch {torch.__version__}, {world} process(es) x {threads} thread(s), "
              f"{args.rounds} rounds of {args.steps} steps, batch {BATCH} x {L} tokens")
        print(f"{'config':<18} {'ms/step':>8} {'tok/s':>9}  vs {configs[0]}")
        base = statistics.median(times[configs[0]])
        for c in configs:
            s = statistics.median(times[c])
            print(f"{c:<18} {s * 1e3:8.2f} {BATCH * L / s:9.0f}  {s / base:.3f}x")
        parts = []
        for c in configs:
            b = per_rank[c]
            if len(set(b)) == 1:
                parts.append(f"{c} {b[0]} on every rank")
            else:
                ideal = sum(b) / world
                parts.append(f"{c} {', '.join(map(str, b))} (largest / ideal {max(b) / ideal:.4f})")
        print("optimizer state bytes per rank: " + "; ".join(parts))
    if world > 1:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
