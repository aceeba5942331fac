#!/usr/bin/env bash
# Generation speed, ember against PyTorch, side by side: prefill and decode
# of the same GPT (bench/bench_decode.cpp, bench/torch_decode.py), with the
# KV cache and without it, and ember against the bound that decoding is
# memory-bound. Builds nothing:
#   cmake --build build --target bench_decode && bash bench/decode_compare.sh [--model gpt2|tiny] [--reps N]
#       [--prompts 16,64,256,1024] [--new 256]
#
# PyTorch at its best: the same OpenBLAS kernels as ember (OPENBLAS_CORETYPE),
# glibc's malloc keeping freed memory (as bench/compare.sh gives both), each
# OMP_WAIT_POLICY (unset, active, passive), and its one-row products both as
# F.linear (what Hugging Face's GPT-2 runs) and as torch.mv; ember under the
# same three policies. Per prompt length, each framework's fastest cached
# decoding (its prefill and uncached times from that same run) is kept; the
# configuration is printed beside it. The gpt2 model takes about 20 minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
build=build model=gpt2 reps=2 prompts=16,64,256,1024 new=256
python=${PYTHON:-/usr/bin/python3}
while (($#)); do
  case $1 in
    --build) build=$2; shift 2 ;;
    --model) model=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --prompts) prompts=$2; shift 2 ;;
    --new) new=$2; shift 2 ;;
    *) echo "decode_compare: unknown option $1" >&2; exit 2 ;;
  esac
done
core=$("$build/bench/bench_ember" --blas-info | sed -n 's/^core //p')
keep_freed_memory=glibc.malloc.trim_threshold=1000000000:glibc.malloc.mmap_threshold=1000000000
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg); OPENBLAS_CORETYPE=$core, GLIBC_TUNABLES=$keep_freed_memory"
common=(--model "$model" --prompts "$prompts" --new "$new" --reps "$reps")
for policy in default active passive; do
  env=(OPENBLAS_CORETYPE="$core" GLIBC_TUNABLES="$keep_freed_memory")
  if [[ $policy == default ]]; then env=(-u OMP_WAIT_POLICY "${env[@]}"); else env+=(OMP_WAIT_POLICY="$policy"); fi
  env "${env[@]}" "$build/bench/bench_decode" "${common[@]}" | tee -a "$tmp/head" | sed -n "s/^decode /ember $policy /p" >> "$tmp/lines"
  env "${env[@]}" "$python" bench/torch_decode.py "${common[@]}" | sed -n "s/^decode /torch $policy,linear /p" >> "$tmp/lines"
  env "${env[@]}" "$python" bench/torch_decode.py "${common[@]}" --mv | sed -n "s/^decode /torch $policy,mv /p" >> "$tmp/lines"
done
grep -m2 -E '^(model|machine) ' "$tmp/head"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
"$python" - "$tmp/lines" <<'EOF'
import sys
best = {}
for line in open(sys.argv[1]):
    fw, config, *kv = line.split()
    v = dict(x.split("=") for x in kv)
    key = (fw, int(v["P"]))
    score = float(v["cached_ms"]) if int(v["N"]) else float(v["prefill_ms"])
    if key not in best or score < best[key][0]:
        best[key] = (score, config, v)
prompts = sorted({p for _, p in best})
print("\nmedians; each framework's fastest configuration per prompt (its wait policy, and for PyTorch F.linear or torch.mv)")
head = ("prompt", "new", "prefill ms ember", "torch", "decode ms/token ember", "torch", "torch/ember",
        "uncached ember", "torch", "cache speedup ember", "torch", "bound ms", "ember/bound", "ember config", "torch config")
print(" | ".join(head))
for p in prompts:
    e, t = best[("ember", p)], best[("torch", p)]
    ev, tv = e[2], t[2]
    n = int(ev["N"])
    row = [str(p), str(n), ev["prefill_ms"], tv["prefill_ms"]]
    if n:
        row += [ev["cached_ms"], tv["cached_ms"], "%.2f" % (float(tv["cached_ms"]) / float(ev["cached_ms"]))]
        row += [ev.get("uncached_ms", "-"), tv.get("uncached_ms", "-"), ev.get("speedup", "-"), tv.get("speedup", "-")]
        row += [ev["bound_ms"], ev["of_bound"]]
    else:
        row += ["-"] * 9
    row += [e[1], t[1]]
    print(" | ".join(row))
EOF
