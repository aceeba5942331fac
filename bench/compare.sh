#!/usr/bin/env bash
# Runs bench_ember and bench/torch_reference.py on the same workloads (one
# after the other, never at once) and prints them side by side, best against
# best. Builds nothing:
#   cmake --build build --target bench_ember && bash bench/compare.sh
#
# Usage: bench/compare.sh [--build DIR] [--threads N] [--bf16] [workload ...]
#   --bf16: both frameworks under their bfloat16 autocast (ember's
#   AutocastGuard, torch.autocast("cpu", dtype=torch.bfloat16)); run once
#   without and once with it to put fp32 and bf16 side by side.
#   DIR defaults to build; PYTHON (env) defaults to /usr/bin/python3, the
#   Debian interpreter that has python3-torch. No workload: all of them.
#
# Best against best: both frameworks run on the same OpenBLAS kernels (ember
# reports the core it chose; PyTorch's OpenBLAS gets OPENBLAS_CORETYPE set
# to it, since it would otherwise fall back like ember's would), and each
# runs every workload under three OpenMP wait policies (OMP_WAIT_POLICY unset,
# libgomp's default: spin a while, then sleep; active, which spins; passive,
# which sleeps): each framework's fastest time is kept, and the table says
# which policy won. The long_* workloads (the long-context block of
# docs/book/15_memory.md; only when named) also get a table of the memory
# each step adds, each in its own process. Both also run with glibc's malloc told to keep the memory
# a program frees (GLIBC_TUNABLES below, in both frameworks' environment):
# PyTorch's CPU allocator hands every block back to malloc, which by default
# returns large ones to the system, so the next step's tensors fault their
# pages in again; on a virtual machine, where a page fault is slow, that alone
# made PyTorch's bfloat16 product several times slower. (ember's tensors come
# from its own caching allocator, tensor/storage.h, which never gives memory
# back during a run.) Run it on an idle machine (it prints the load). The gpt_* workloads also get a
# table of tokens/s and peak resident memory (each in its own process).
set -euo pipefail
cd "$(dirname "$0")/.."

build=build threads=2 names=() precision=()
while (($#)); do
  case $1 in
    --build) build=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --bf16) precision=(--bf16); shift ;;
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
# matmul_1024 is also compared with the direct sgemm call.
if [[ " ${names[*]} " == *" matmul_1024 "* && " ${names[*]} " != *" cblas_sgemm_1024 "* ]]; then
  names+=(cblas_sgemm_1024)
fi
plain=() gpt=()
for n in "${names[@]}"; do
  if [[ $n == gpt_* || $n == long_* ]]; then gpt+=("$n"); else plain+=("$n"); fi
done
torch_plain=()
for n in "${plain[@]}"; do [[ $n == cblas_sgemm_1024 ]] || torch_plain+=("$n"); done

# The kernels ember runs on (its own choice unless OPENBLAS_CORETYPE is set).
blas_line=$("$bench" --blas-info)
core=$(sed -n 's/^core //p' <<<"$blas_line")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# malloc keeps freed memory: no trimming of the heap's top, no block served
# by its own mmap (which free would unmap)
keep_freed_memory=glibc.malloc.trim_threshold=1000000000:glibc.malloc.mmap_threshold=1000000000

# collect FRAMEWORK POLICY: every workload's lines, "name value", into $tmp/FRAMEWORK.POLICY
collect() {
  local fw=$1 policy=$2 out=$tmp/$1.$2
  : >"$out"
  local -a run
  if [[ $fw == ember ]]; then run=("$bench" --threads "$threads" "${precision[@]}"); else run=("$python" bench/torch_reference.py --threads "$threads" "${precision[@]}"); fi
  local -a list=("${plain[@]}")
  [[ $fw == torch ]] && list=("${torch_plain[@]}")
  local -a env=(env)
  if [[ $policy == default ]]; then env+=(-u OMP_WAIT_POLICY); else env+=(OMP_WAIT_POLICY="$policy"); fi
  env+=(OPENBLAS_CORETYPE="$core" GLIBC_TUNABLES="$keep_freed_memory")
  if ((${#list[@]})); then
    "${env[@]}" "${run[@]}" "${list[@]}" | grep -v -e '^peak_rss_mb ' -e '^#' >>"$out"
  fi
  for n in "${gpt[@]}"; do  # one process each: peak RSS is that workload's own
    # PyTorch 1.13 has no attention that drops its weights on the CPU
    [[ $fw == torch && $n == long_*_tiled ]] && continue
    "${env[@]}" "${run[@]}" "$n" | grep -v '^#' | sed "s/^peak_rss_mb /${n}_peak_rss_mb /" >>"$out"
  done
}
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for policy in default active passive; do
  collect ember $policy
  collect torch $policy
done

echo "cpu: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), threads: $threads"
echo "ember: $(sed -n 's/^summary //p' <<<"$blas_line")"
echo "torch: $("$python" -c 'import torch; print("PyTorch", torch.__version__)') on Debian's OpenBLAS with OPENBLAS_CORETYPE=$core"
((${#precision[@]})) && echo "precision: bfloat16 autocast in both (products in bfloat16, float32 sums; the rest float32)"
echo "each framework: the fastest of OMP_WAIT_POLICY unset (default), =active and =passive, per workload (the policy column); both with GLIBC_TUNABLES=$keep_freed_memory"
echo "load average before: $load_before, after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
awk '
  # file name: <framework>.<policy>
  {
    split(FILENAME, p, "/"); split(p[length(p)], fp, ".")
    fw = fp[1]; pol = fp[2]; key = $1; v = $2
    if (key !~ /_tokens_per_s$/ && key !~ /_peak_rss_mb$/ && key !~ /_ns_per_op$/ && key !~ /_step_mb$/) {
      if (fw == "ember" && !(key in seen)) { order[++count] = key; seen[key] = 1 }
      if (!((fw, key) in best) || v < best[fw, key]) { best[fw, key] = v; won[fw, key] = pol }
    }
    val[fw, pol, key] = v
  }
  END {
    printf "| %-26s | %10s | %-7s | %10s | %-7s | %17s |\n", "workload", "ember ms", "policy", "torch ms", "policy", "ratio ember/torch"
    printf "|%s|%s|%s|%s|%s|%s|\n", "----------------------------", "------------", "---------", "------------", "---------", "-------------------"
    for (i = 1; i <= count; i++) {
      k = order[i]
      e = best["ember", k]; ep = won["ember", k]
      if (("torch", k) in best) {
        t = best["torch", k]; tp = won["torch", k]
        printf "| %-26s | %10.3f | %-7s | %10.3f | %-7s | %17.2f |\n", k, e, ep, t, tp, (t > 0 ? e / t : 0)
      } else {
        printf "| %-26s | %10.3f | %-7s | %10s | %-7s | %17s |\n", k, e, ep, "-", "", "-"
      }
    }
    if ((("ember", "matmul_1024") in best) && (("ember", "cblas_sgemm_1024") in best))
      printf "\nmatmul_1024 / cblas_sgemm_1024 (ember overhead over a direct sgemm): %.2f\n",
             best["ember", "matmul_1024"] / best["ember", "cblas_sgemm_1024"]
    header = 0
    for (i = 1; i <= count; i++) {
      k = order[i]
      if (!(("ember", won["ember", k], k "_tokens_per_s") in val)) continue
      if (!header) {
        printf "\n| %-22s | %12s | %12s | %14s | %14s |\n", "GPT training", "ember tok/s", "torch tok/s", "ember RSS MB", "torch RSS MB"
        printf "|%s|%s|%s|%s|%s|\n", "------------------------", "--------------", "--------------", "----------------", "----------------"
        header = 1
      }
      ep = won["ember", k]; tp = won["torch", k]
      printf "| %-22s | %12s | %12s | %14s | %14s |\n", k, val["ember", ep, k "_tokens_per_s"],
             (("torch", tp, k "_tokens_per_s") in val) ? val["torch", tp, k "_tokens_per_s"] : "-",
             val["ember", ep, k "_peak_rss_mb"], (("torch", tp, k "_peak_rss_mb") in val) ? val["torch", tp, k "_peak_rss_mb"] : "-"
    }
    if (header) print "(from the faster policy of each; peak RSS: each GPT workload in its own process; torch'"'"'s includes Python and libtorch)"
    header = 0
    for (i = 1; i <= count; i++) {
      k = order[i]
      if (!(("ember", won["ember", k], k "_step_mb") in val)) continue
      if (!header) {
        printf "\n| %-26s | %14s | %14s |\n", "long context", "ember step MB", "torch step MB"
        printf "|%s|%s|%s|\n", "----------------------------", "----------------", "----------------"
        header = 1
      }
      ep = won["ember", k]; tp = won["torch", k]
      printf "| %-26s | %14s | %14s |\n", k, val["ember", ep, k "_step_mb"],
             (("torch", tp, k "_step_mb") in val) ? val["torch", tp, k "_step_mb"] : "-"
    }
    if (header) print "(step MB: the resident memory the step added to what its setup had made, ru_maxrss, each workload in its own process, at the faster policy)"
  }' "$tmp"/ember.default "$tmp"/ember.active "$tmp"/ember.passive "$tmp"/torch.default "$tmp"/torch.active "$tmp"/torch.passive
