#!/usr/bin/env bash
# Runs bench_ember and bench/torch_reference.py on the same workloads (one
# after the other, never at once) and prints them side by side. Builds nothing:
#   cmake --build build --target bench_ember && bash bench/compare.sh
#
# Usage: bench/compare.sh [--build DIR] [--threads N] [workload ...]
#   DIR defaults to build; PYTHON (env) defaults to /usr/bin/python3, the
#   Debian interpreter that has python3-torch. No workload: all of them.
# The gpt_* workloads (e.g. bench/compare.sh gpt_tiny_train_step
# gpt_small_train_step) also get a table of tokens/s and peak resident memory.
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

# No names: every workload bench_ember knows.
if ((${#names[@]} == 0)); then
  read -ra names <<<"$("$bench" --help | sed -n 's/^workloads: *//p')"
fi
# matmul_1024 is also compared with the direct cblas_sgemm call.
if [[ " ${names[*]} " == *" matmul_1024 "* && " ${names[*]} " != *" cblas_sgemm_1024 "* ]]; then
  names+=(cblas_sgemm_1024)
fi
# The GPT workloads run one per process (for each framework): peak RSS is a
# per-process number, and this way it is that workload's own.
plain=() gpt=()
for n in "${names[@]}"; do
  if [[ $n == gpt_* ]]; then gpt+=("$n"); else plain+=("$n"); fi
done
torch_plain=()
for n in "${plain[@]}"; do [[ $n == cblas_sgemm_1024 ]] || torch_plain+=("$n"); done

ember_out= torch_out=
if ((${#plain[@]})); then
  ember_out=$("$bench" --threads "$threads" "${plain[@]}" | grep -v '^peak_rss_mb ')
fi
if ((${#torch_plain[@]})); then
  torch_out=$("$python" bench/torch_reference.py --threads "$threads" "${torch_plain[@]}" | grep -v '^peak_rss_mb ')
fi
for n in "${gpt[@]}"; do
  ember_out+=$'\n'$("$bench" --threads "$threads" "$n" | sed "s/^peak_rss_mb /${n}_peak_rss_mb /")
  torch_out+=$'\n'$("$python" bench/torch_reference.py --threads "$threads" "$n" | sed "s/^peak_rss_mb /${n}_peak_rss_mb /")
done

echo "threads: $threads"
awk -v torch_out="$torch_out" '
  BEGIN {
    n = split(torch_out, lines, "\n")
    for (i = 1; i <= n; i++) { split(lines[i], f, " "); if (f[1] != "") torch[f[1]] = f[2] }
    printf "| %-28s | %10s | %10s | %17s |\n", "workload", "ember ms", "torch ms", "ratio ember/torch"
    printf "|%s|%s|%s|%s|\n", "------------------------------", "------------", "------------", "-------------------"
  }
  $1 == "" { next }
  { ember[$1] = $2 }
  # tokens/s and peak RSS go to the GPT table below
  $1 ~ /_tokens_per_s$/ || $1 ~ /_peak_rss_mb$/ { next }
  {
    names[++count] = $1
    if (($1 in torch) && torch[$1] > 0) printf "| %-28s | %10s | %10s | %17.2f |\n", $1, $2, torch[$1], ($2 / torch[$1])
    else             printf "| %-28s | %10s | %10s | %17s |\n", $1, $2, "-", "-"
  }
  END {
    if (("matmul_1024" in ember) && ("cblas_sgemm_1024" in ember) && ember["cblas_sgemm_1024"] > 0)
      printf "\nmatmul_1024 / cblas_sgemm_1024 (ember overhead over raw OpenBLAS): %.2f\n",
             ember["matmul_1024"] / ember["cblas_sgemm_1024"]
    header = 0
    for (i = 1; i <= count; i++) {
      w = names[i]
      if (!((w "_tokens_per_s") in ember)) continue
      if (!header) {
        printf "\n| %-22s | %12s | %12s | %14s | %14s |\n", "GPT training", "ember tok/s", "torch tok/s",
               "ember RSS MB", "torch RSS MB"
        printf "|%s|%s|%s|%s|%s|\n", "------------------------", "--------------", "--------------",
               "----------------", "----------------"
        header = 1
      }
      printf "| %-22s | %12s | %12s | %14s | %14s |\n", w, ember[w "_tokens_per_s"],
             ((w "_tokens_per_s") in torch) ? torch[w "_tokens_per_s"] : "-",
             ((w "_peak_rss_mb") in ember) ? ember[w "_peak_rss_mb"] : "-",
             ((w "_peak_rss_mb") in torch) ? torch[w "_peak_rss_mb"] : "-"
    }
    if (header) print "(peak RSS: each GPT workload in its own process; torch'"'"'s includes the Python interpreter and libtorch)"
  }' <<<"$ember_out"
