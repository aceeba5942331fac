#!/usr/bin/env bash
# Runs bench_ember and bench/torch_reference.py on the same workloads (one
# after the other, never at once) and prints them side by side. Builds nothing:
#   cmake --build build --target bench_ember && bash bench/compare.sh
#
# Usage: bench/compare.sh [--build DIR] [--threads N] [workload ...]
#   DIR defaults to build; PYTHON (env) defaults to /usr/bin/python3, the
#   Debian interpreter that has python3-torch.
set -euo pipefail
cd "$(dirname "$0")/.."

build=build threads=2 names=()
while (($#)); do
  case $1 in
    --build) build=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    *) names+=("$1"); shift ;;
  esac
done
python=${PYTHON:-/usr/bin/python3}
[[ -x $python ]] || python=python3

bench=$build/bench/bench_ember
if [[ ! -x $bench ]]; then
  echo "compare.sh: $bench not found; build it first: cmake --build $build --target bench_ember" >&2
  exit 1
fi

# matmul_1024 is also compared with the direct cblas_sgemm call.
ember_names=("${names[@]}")
if ((${#names[@]})) && [[ " ${names[*]} " == *" matmul_1024 "* && " ${names[*]} " != *" cblas_sgemm_1024 "* ]]; then
  ember_names+=(cblas_sgemm_1024)
fi
torch_names=()
for n in "${names[@]}"; do [[ $n == cblas_sgemm_1024 ]] || torch_names+=("$n"); done

ember_out=$("$bench" --threads "$threads" "${ember_names[@]}")
torch_out=
if ((${#names[@]} == 0 || ${#torch_names[@]} > 0)); then
  torch_out=$("$python" bench/torch_reference.py --threads "$threads" "${torch_names[@]}")
fi

echo "threads: $threads"
awk -v torch_out="$torch_out" '
  BEGIN {
    n = split(torch_out, lines, "\n")
    for (i = 1; i <= n; i++) { split(lines[i], f, " "); if (f[1] != "") torch[f[1]] = f[2] }
    printf "| %-28s | %10s | %10s | %17s |\n", "workload", "ember ms", "torch ms", "ratio ember/torch"
    printf "|%s|%s|%s|%s|\n", "------------------------------", "------------", "------------", "-------------------"
  }
  {
    ember[$1] = $2
    if (($1 in torch) && torch[$1] > 0) printf "| %-28s | %10s | %10s | %17.2f |\n", $1, $2, torch[$1], ($2 / torch[$1])
    else             printf "| %-28s | %10s | %10s | %17s |\n", $1, $2, "-", "-"
  }
  END {
    if (("matmul_1024" in ember) && ("cblas_sgemm_1024" in ember) && ember["cblas_sgemm_1024"] > 0)
      printf "\nmatmul_1024 / cblas_sgemm_1024 (ember overhead over raw OpenBLAS): %.2f\n",
             ember["matmul_1024"] / ember["cblas_sgemm_1024"]
  }' <<<"$ember_out"
