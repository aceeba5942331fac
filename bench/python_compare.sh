#!/usr/bin/env bash
# The cost of one small op called from Python, side by side in one run:
# ember from C++ (bench_ember's call_* workloads), ember from Python (its
# binding, python/) and PyTorch from Python (Debian's python3-torch), the
# same calls on a 4 x 4 float32 tensor (bench/python_calls.py).
#
#   bash bench/python_compare.sh [--build DIR] [--threads N] [workload ...]
#
# Each framework runs under the three OpenMP wait policies and keeps its
# fastest (PyTorch at its best), with bench/compare.sh's malloc setting and
# OpenBLAS core for both. Quoted by docs/book/19_python.md.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/side_by_side.sh
args=() picked=()
while (($#)); do
  case $1 in
    --build|--threads) args+=("$1" "$2"); shift 2 ;;
    *) picked+=("$1"); shift ;;
  esac
done
((${#picked[@]})) || picked=(call_add call_exp call_sum_dim call_matmul call_slice)
side_by_side_setup bench_ember "${args[@]}" "${picked[@]}"
if [[ ! -f $build/python/ember/__init__.py ]]; then
  echo "python_compare.sh: $build/python/ember not found: build with -DEMBER_BUILD_PYTHON=ON" >&2
  exit 1
fi

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for policy in default active passive; do
  policy_env "$policy"
  "${env[@]}" "$bench" --threads "$threads" "${names[@]}" | grep -v '^#' >"$tmp/cpp.$policy"
  "${env[@]}" PYTHONPATH="$build/python" "$python" bench/python_calls.py --framework ember --threads "$threads" "${names[@]}" |
    grep -v '^#' >"$tmp/python.$policy"
  "${env[@]}" "$python" bench/python_calls.py --framework torch --threads "$threads" "${names[@]}" | grep -v '^#' >"$tmp/torch.$policy"
done

echo "cpu: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), threads: $threads"
echo "torch: $("$python" -c 'import torch; print("PyTorch", torch.__version__)')"
echo "each: the fastest of OMP_WAIT_POLICY unset, =active and =passive (median of 20 runs of 10 000 calls); GLIBC_TUNABLES=$keep_freed_memory${OPENBLAS_CORETYPE:+, OPENBLAS_CORETYPE=$OPENBLAS_CORETYPE}"
echo "load average before: $load_before, after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
awk '
  $1 ~ /_ns_per_op$/ {
    split(FILENAME, p, "/"); split(p[length(p)], fp, ".")
    fw = fp[1]; key = $1; sub(/_ns_per_op$/, "", key)
    if (!(key in seen)) { order[++n] = key; seen[key] = 1 }
    if (!((fw, key) in best) || $2 < best[fw, key]) best[fw, key] = $2
  }
  END {
    printf "| %-13s | %9s | %12s | %13s | %15s | %14s |\n", "one call of", "C++ ns", "ember.py ns", "PyTorch.py ns", "ember / PyTorch", "Python adds ns"
    printf "|%s|%s|%s|%s|%s|%s|\n", "---------------", "-----------", "--------------", "---------------", "-----------------", "----------------"
    for (i = 1; i <= n; i++) {
      k = order[i]; c = best["cpp", k]; e = best["python", k]; t = best["torch", k]
      printf "| %-13s | %9.0f | %12.0f | %13.0f | %15.2f | %14.0f |\n", k, c, e, t, e / t, e - c
    }
  }' "$tmp"/cpp.* "$tmp"/python.* "$tmp"/torch.*
