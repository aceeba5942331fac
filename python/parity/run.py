#!/usr/bin/env python3
"""The same scripts on ember and on PyTorch, compared.

Each script here (lesson_a.py, lesson_b.py, lesson_c.py, gradcheck.py,
training_step.py) is written once, against a subset of the API the two
share: `run(T)` is called with T = ember, then with T = torch, each in a
process of its own (the two libraries bring their own OpenMP and OpenBLAS
settings), and returns named results. This program compares them and
prints a table: "bits" (identical), "1e-N" (the largest difference
relative to the largest value, under the tolerance), or "DIFFERS".

    build/python/ember-python python/parity/run.py [script ...]

Exit status 1 when a result differs beyond the tolerance: 1e-12 relative
for float64, 1e-5 for float32 (which rounds in another order in each
library), exact for integers, booleans and shapes.
"""
import argparse
import importlib
import os
import pickle
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = ["lesson_a", "lesson_b", "lesson_c", "gradcheck", "training_step"]


def to_numpy(v):
    if hasattr(v, "detach"):
        v = v.detach()
        if hasattr(v, "numpy") and not isinstance(v, np.ndarray):
            return np.array(v.numpy(), copy=True)
    return v


def one_framework(name, script):
    T = importlib.import_module(name)
    if name == "torch":
        T.set_num_threads(2)
    sys.path.insert(0, HERE)
    results = importlib.import_module(script).run(T)
    sys.stdout.buffer.write(pickle.dumps({k: to_numpy(v) for k, v in results.items()}))


def compare(a, b):
    """'bits', '1e-N' (within tolerance) or 'DIFFERS (...)'."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape:
            return f"DIFFERS (shapes {a.shape} and {b.shape})"
        if a.dtype.kind != "f" or b.dtype.kind != "f":
            return "bits" if np.array_equal(a, b) else "DIFFERS"
        if a.dtype != b.dtype:
            return f"DIFFERS (dtypes {a.dtype} and {b.dtype})"
        if a.tobytes() == b.tobytes():
            return "bits"
        # relative to the largest value (an entry near 0 would make any
        # rounding difference look large element by element)
        tol = 1e-12 if a.dtype == np.float64 else 1e-5
        rel = float(np.max(np.abs(a - b)) / max(float(np.max(np.abs(b))), 1e-30))
        return f"{rel:.0e}" if rel <= tol else f"DIFFERS (relative {rel:.1e})"
    if isinstance(a, float) and isinstance(b, float):
        return "bits" if a == b else ("1e-15" if abs(a - b) <= 1e-12 * abs(b) else f"DIFFERS ({a} and {b})")
    return "bits" if a == b else f"DIFFERS ({a!r} and {b!r})"


def show(v):
    v = np.asarray(v)
    if v.dtype == bool and v.size == 1:
        return str(bool(v))
    flat = v.reshape(-1)
    text = ", ".join(f"{x:.4g}" if v.dtype.kind == "f" else str(x) for x in flat[:3])
    return ("[" + text + (", ..." if flat.size > 3 else "") + "]") if v.ndim else text


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--framework", choices=["ember", "torch"], help=argparse.SUPPRESS)
    p.add_argument("scripts", nargs="*", default=SCRIPTS)
    a = p.parse_args()
    if a.framework:
        return one_framework(a.framework, a.scripts[0])
    failed = 0
    print(f"| {'script':13} | {'result':28} | {'ember':36} | {'match':8} |")
    print(f"|{'-' * 15}|{'-' * 30}|{'-' * 38}|{'-' * 10}|")
    for script in a.scripts:
        got = {}
        for fw in ("ember", "torch"):
            r = subprocess.run([sys.executable, __file__, "--framework", fw, script], capture_output=True)
            if r.returncode != 0:
                sys.stderr.write(r.stderr.decode())
                raise SystemExit(f"run.py: {script} failed on {fw}")
            got[fw] = pickle.loads(r.stdout)
        for key in got["ember"]:
            verdict = compare(got["ember"][key], got["torch"].get(key)) if key in got["torch"] else "DIFFERS (missing)"
            failed += verdict.startswith("DIFFERS")
            print(f"| {script:13} | {key:28} | {show(got['ember'][key]):36} | {verdict:8} |")
    print(f"\n{'every result matches' if not failed else f'{failed} results differ'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
