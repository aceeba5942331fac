#!/usr/bin/env bash
# Decoding with weights in fewer bits (nn/quantize.h), side by side: ember's
# GPT with float32, bfloat16 and int8 weights (int8 activations: vpdpbusd;
# float32 activations), and PyTorch's float32 GPT and its dynamically
# quantized int8 one (bench/torch_decode.py --int8), against the bound that
# decoding is memory-bound (each format's bytes per token over the measured
# bandwidth). Builds nothing:
#   cmake --build build --target bench_decode && bash bench/int8_decode.sh [--model gpt2|tiny] [--reps N]
#       [--prompts 16,256] [--new 128]
#
# Each framework and format at its best: the same OpenBLAS kernels
# (OPENBLAS_CORETYPE), glibc's malloc keeping freed memory (as
# bench/compare.sh gives both), OMP_WAIT_POLICY unset and passive (PyTorch's
# float32 also as F.linear and torch.mv); per prompt length the fastest
# cached decoding is kept, with its configuration.
set -euo pipefail
cd "$(dirname "$0")/.."
build=build model=gpt2 reps=3 prompts=16,256 new=128
python=${PYTHON:-/usr/bin/python3}
while (($#)); do
  case $1 in
    --build) build=$2; shift 2 ;;
    --model) model=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --prompts) prompts=$2; shift 2 ;;
    --new) new=$2; shift 2 ;;
    *) echo "int8_decode: unknown option $1" >&2; exit 2 ;;
  esac
done
core=$("$build/bench/bench_ember" --blas-info | sed -n 's/^core //p')
keep_freed_memory=glibc.malloc.trim_threshold=1000000000:glibc.malloc.mmap_threshold=1000000000
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg); OPENBLAS_CORETYPE=$core, GLIBC_TUNABLES=$keep_freed_memory"
common=(--model "$model" --prompts "$prompts" --new "$new" --reps "$reps")
"$build/bench/bench_decode" --model "$model" --checkpoint-sizes | tee "$tmp/sizes"
for policy in default passive; do
  env=(OPENBLAS_CORETYPE="$core" GLIBC_TUNABLES="$keep_freed_memory")
  if [[ $policy == default ]]; then env=(-u OMP_WAIT_POLICY "${env[@]}"); else env+=(OMP_WAIT_POLICY="$policy"); fi
  for w in float32 bfloat16 int8 int8-f32; do
    env "${env[@]}" "$build/bench/bench_decode" "${common[@]}" --weights "$w" --no-uncached |
      tee -a "$tmp/head" | sed -n "s/^decode /ember $policy /p" >> "$tmp/lines"
  done
  env "${env[@]}" "$python" bench/torch_decode.py "${common[@]}" --no-uncached |
    sed -n "s/^decode /torch $policy,linear weights=float32 /p" >> "$tmp/lines"
  env "${env[@]}" "$python" bench/torch_decode.py "${common[@]}" --no-uncached --mv |
    sed -n "s/^decode /torch $policy,mv weights=float32 /p" >> "$tmp/lines"
  env "${env[@]}" "$python" bench/torch_decode.py "${common[@]}" --no-uncached --int8 2> /dev/null |
    tee -a "$tmp/torch_head" | sed -n "s/^decode /torch $policy,dynamic weights=int8 /p" >> "$tmp/lines"
done
grep -m1 -E '^machine ' "$tmp/head"
grep -m1 -E '^model ' "$tmp/torch_head"  # PyTorch's version and its quantized engine
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
"$python" - "$tmp/lines" "$tmp/sizes" <<'PY'
import sys
best = {}
for line in open(sys.argv[1]):
    fw, config, *kv = line.split()
    v = dict(x.split("=") for x in kv)
    key = (fw, v["weights"], int(v["P"]))
    if key not in best or float(v["cached_ms"]) < float(best[key][1]["cached_ms"]):
        best[key] = (config, v)
sizes = dict(l.split()[1:3] for l in open(sys.argv[2]) if l.startswith("checkpoint "))
print("\nmedians; each at its fastest configuration; bound: the bytes a decode step reads over the measured bandwidth")
print(" | ".join(("prompt", "framework", "weights", "prefill ms", "decode ms/token", "tokens/s", "x float32",
                  "bound ms", "ms/bound", "checkpoint MB", "x float32", "config")))
for P in sorted({k[2] for k in best}):
    for fw, order in (("ember", ("float32", "bfloat16", "int8", "int8-f32")), ("torch", ("float32", "int8"))):
        base = best.get((fw, "float32", P))
        for w in order:
            if (fw, w, P) not in best:
                continue
            config, v = best[(fw, w, P)]
            ms = float(v["cached_ms"])
            row = [str(P), fw, w, v["prefill_ms"], v["cached_ms"], "%.1f" % (1e3 / ms),
                   "%.2f" % (float(base[1]["cached_ms"]) / ms) if base else "-"]
            row += [v.get("bound_ms", "-"), v.get("of_bound", "-")]
            if fw == "ember" and w in sizes:
                row += ["%.1f" % (float(sizes[w]) / 1e6), "%.3f" % (float(sizes[w]) / float(sizes["float32"]))]
            else:
                row += ["-", "-"]
            print(" | ".join(row + [config]))
PY
