#!/usr/bin/env bash
# compile/ measured: bench_compile's workloads eager, compiled, and in
# PyTorch (eager: PyTorch 1.13 has no torch.compile), side by side. Builds
# nothing:
#   cmake --build build --target bench_compile && bash bench/compile_compare.sh
#
# Usage: bench/compile_compare.sh [--build DIR] [--threads N] [workload ...]
#
# First one run with an empty kernel cache (a fresh EMBER_KERNEL_CACHE):
# its first calls compile every kernel ("cold"). Then, as bench/compare.sh
# does, each framework under OMP_WAIT_POLICY unset, active and passive, with
# the malloc setting compare.sh gives both, keeping each one's fastest; these
# ember runs find their kernels in the cache ("cached": the first call then
# captures, generates and loads, but compiles nothing). Prints the table.
set -euo pipefail
cd "$(dirname "$0")/.."

source bench/side_by_side.sh
side_by_side_setup bench_compile "$@"
export EMBER_KERNEL_CACHE=$tmp/kernels

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
"$bench" --threads "$threads" "${names[@]}" | grep -v '^#' | sed 's/^\([^ ]*\) /cold.\1 /' >"$tmp/cold"
for policy in default active passive; do
  policy_env "$policy"
  "${env[@]}" "$bench" --threads "$threads" "${names[@]}" | grep -v '^#' >"$tmp/ember.$policy"
  "${env[@]}" "$python" bench/torch_reference.py --threads "$threads" "${names[@]}" |
    grep -v -e '^#' -e '^peak_rss_mb' | sed 's/^\([^ ]*\) /torch.\1 /' >"$tmp/torch.$policy"
done

echo "cpu: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), threads: $threads"
echo "torch: $("$python" -c 'import torch; print("PyTorch", torch.__version__)') (eager; 1.13 has no torch.compile)"
echo "each: the fastest of OMP_WAIT_POLICY unset, =active and =passive; GLIBC_TUNABLES=$keep_freed_memory"
echo "compiler: ${EMBER_CXX:-the one ember was built with}; load average before: $load_before, after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
cat "$tmp"/ember.* "$tmp"/torch.* "$tmp/cold" | awk -v order="${names[*]}" '
  { k = $1; v = $2; if (!(k in best) || v < best[k]) best[k] = v }
  END {
    printf "| %-24s | %9s | %9s | %9s | %13s | %13s | %7s | %14s | %16s |\n", "workload", "eager ms", "compiled", "torch ms",
           "eager/compiled", "torch/compiled", "kernels", "first call cold", "first call cached"
    printf "|%s|%s|%s|%s|%s|%s|%s|%s|%s|\n", "--------------------------", "-----------", "-----------", "-----------",
           "---------------", "---------------", "---------", "----------------", "------------------"
    n = split(order, names, " ")
    for (i = 1; i <= n; i++) {
      w = names[i]; e = best[w]; c = best[w "_compiled"]; t = best["torch." w]
      printf "| %-24s | %9.3f | %9.3f | %9.3f | %13.2f | %13.2f | %7d | %11.1f ms | %13.1f ms |\n", w, e, c, t, e / c, t / c,
             best[w "_compiled_kernels"], best["cold." w "_compiled_first_call_ms"], best[w "_compiled_first_call_ms"]
    }
  }'

# Where an eager training step's time goes (bench_ember --profile, one run):
# fusion joins only the elementwise ops, so their share bounds its gain.
for w in gpt_tiny_train_step gpt_small_train_step; do
  [[ " ${names[*]} " == *" $w "* ]] || continue
  echo
  "$build/bench/bench_ember" --threads "$threads" --profile "$w" | awk -v w="$w" '
    /^-+$/ { table = 1; next }
    table && / events in / { table = 0 }
    table && NF >= 6 {
      name = $1; self = $0; sub(/%.*/, "", self); n = split(self, f, " "); ms = f[n - 1]
      if (name ~ /atmul/) kind = "products"
      else if (name ~ /ttention/) kind = "attention"
      else if (name ~ /^(layer_norm|LayerNormBackward|gelu|GeluBackward|cross_entropy|CrossEntropyBackward|AdamW.step|embedding|IndexSelectBackward)$/) kind = "fused"
      else kind = "rest"
      t[kind] += ms; all += ms
    }
    END {
      printf "%s, eager, one run under the profiler: %.0f%% products (matmul), %.0f%% attention, %.0f%% eager'"'"'s fused kernels (layer norm, GELU, cross-entropy, embedding, AdamW), %.0f%% the rest (elementwise ops and views): fusing all of the rest away would make the step at most %.2fx faster\n",
        w, 100 * t["products"] / all, 100 * t["attention"] / all, 100 * t["fused"] / all, 100 * t["rest"] / all, all / (all - t["rest"])
    }'
done
