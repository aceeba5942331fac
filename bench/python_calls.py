#!/usr/bin/env python3
"""The cost of one small op called from Python: ember's binding (python/) or
PyTorch's. Each workload calls one op on a 4 x 4 float32 tensor 10 000
times; bench_ember's call_* workloads are the same calls from C++. Printed
as bench_ember prints: `name median_ms` and `name_ns_per_op`.

    PYTHONPATH=build/python python3 bench/python_calls.py --framework ember [--threads N] [workload ...]
    python3 bench/python_calls.py --framework torch

bench/python_compare.sh runs the three side by side."""
import argparse
import statistics
import time

CALLS = 10000
WORKLOADS = {
    "call_add": lambda x: x + x,
    "call_exp": lambda x: x.exp(),
    "call_sum_dim": lambda x: x.sum(1),
    "call_matmul": lambda x: x @ x,
    "call_slice": lambda x: x[1:3, 0],
}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--framework", choices=["ember", "torch"], required=True)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("workloads", nargs="*", help="default: all of " + " ".join(WORKLOADS))
    a = p.parse_args()
    if a.framework == "ember":
        import ember as fw
        fw.set_num_threads(a.threads)
        fw.manual_seed(0)
        x = fw.randn(4, 4)
    else:
        import torch as fw
        fw.set_num_threads(a.threads)
        fw.manual_seed(0)
        x = fw.randn(4, 4)
    version = getattr(fw, "__version__", "")
    print(f"# {a.framework} {version} from Python, {a.threads} threads")
    for name in a.workloads or WORKLOADS:
        op = WORKLOADS[name]

        def body():
            for _ in range(CALLS):
                op(x)
        for _ in range(2):
            body()
        times = []
        for _ in range(a.reps):
            start = time.perf_counter()
            body()
            times.append((time.perf_counter() - start) * 1e3)
        ms = statistics.median(times)
        print(f"{name} {ms:.3f}")
        print(f"{name}_ns_per_op {ms * 1e6 / CALLS:.1f}", flush=True)


if __name__ == "__main__":
    main()
