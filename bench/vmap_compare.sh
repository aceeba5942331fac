#!/usr/bin/env bash
# vmap/ measured: bench_vmap's workloads as ember's loop, ember's vmap, and
# functorch's vmap in PyTorch, side by side. Builds nothing:
#   cmake --build build --target bench_vmap && bash bench/vmap_compare.sh
#
# Usage: bench/vmap_compare.sh [--build DIR] [--threads N] [workload ...]
#
# As bench/compare.sh does: both frameworks on the same OpenBLAS kernels,
# each under OMP_WAIT_POLICY unset, active and passive, with the malloc
# setting compare.sh gives both, keeping each one's fastest. Prints the table,
# then where the batched per-sample gradients of the tiny GPT spend their
# time (bench_vmap --profile).
set -euo pipefail
cd "$(dirname "$0")/.."

source bench/side_by_side.sh
side_by_side_setup bench_vmap "$@"

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for policy in default active passive; do
  policy_env "$policy"
  "${env[@]}" "$bench" --threads "$threads" "${names[@]}" 2>/dev/null | grep -v '^#' >"$tmp/ember.$policy"
  "${env[@]}" "$python" bench/torch_reference.py --threads "$threads" "${names[@]}" |
    grep -v -e '^#' -e '^peak_rss_mb' | sed 's/^\([^ ]*\) /torch.\1 /' >"$tmp/torch.$policy"
done

echo "cpu: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), threads: $threads"
echo "ember: $("$build/bench/bench_ember" --blas-info 2>/dev/null | sed -n 's/^summary //p')"
echo "torch: $("$python" -c 'import torch; print("PyTorch", torch.__version__)') with functorch (vmap, grad, jacfwd, jacrev)"
echo "each: the fastest of OMP_WAIT_POLICY unset, =active and =passive; GLIBC_TUNABLES=$keep_freed_memory"
echo "load average before: $load_before, after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
cat "$tmp"/ember.* "$tmp"/torch.* | awk -v order="${names[*]}" '
  { k = $1; v = $2; if (!(k in best) || v < best[k]) best[k] = v }
  END {
    printf "| %-30s | %9s | %9s | %9s | %9s | %10s |\n", "workload", "loop ms", "vmap ms", "torch ms", "loop/vmap",
           "torch/vmap"
    printf "|%s|%s|%s|%s|%s|%s|\n", "--------------------------------", "-----------", "-----------", "-----------",
           "-----------", "------------"
    n = split(order, names, " ")
    for (i = 1; i <= n; i++) {
      w = names[i]; l = best[w "_loop"]; v = best[w "_vmap"]; t = best["torch." w]
      printf "| %-30s | %9.3f | %9.3f | %9.3f | %9.2f | %10.2f |\n", w, l, v, t, l / v, t / v
    }
  }'
if [[ " ${names[*]} " == *" per_sample_grads_gpt_tiny_b64 "* ]]; then
  echo
  "$bench" --threads "$threads" --profile per_sample_grads_gpt_tiny_b64 2>/dev/null
fi
