#!/usr/bin/env bash
# Where a cached decode step of GPT-2's 124M shape spends its time, in both
# frameworks, and how much one run differs from the next. Builds nothing:
#   cmake --build build --target bench_decode && bash bench/decode_profile.sh [--prompt 256] [--runs 8]
#
# First each framework's profile of 32 cached decode steps after the prompt
# (bench_decode --profile: inspect::Profiler; torch_decode.py --profile:
# torch.profiler). Then --runs runs of each, alternating (ember, PyTorch,
# ember, ...), each its own process decoding 64 tokens once, so that both
# meet the same moments of the machine; per framework the fastest, median
# and slowest time per token. Each framework in its configuration that
# decoded fastest in bench/decode_compare.sh's measured run: ember with
# OMP_WAIT_POLICY=active, PyTorch with passive and torch.mv; both with the
# same OpenBLAS kernels and glibc's malloc keeping freed memory.
set -euo pipefail
cd "$(dirname "$0")/.."
build=build prompt=256 runs=8
python=${PYTHON:-/usr/bin/python3}
while (($#)); do
  case $1 in
    --build) build=$2; shift 2 ;;
    --prompt) prompt=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    *) echo "decode_profile: unknown option $1" >&2; exit 2 ;;
  esac
done
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "decode_profile: --runs must be a positive integer, got '$runs'" >&2; exit 2; }
core=$("$build/bench/bench_ember" --blas-info | sed -n 's/^core //p')
keep_freed_memory=glibc.malloc.trim_threshold=1000000000:glibc.malloc.mmap_threshold=1000000000
ember=(env OPENBLAS_CORETYPE="$core" GLIBC_TUNABLES="$keep_freed_memory" OMP_WAIT_POLICY=active
  "$build/bench/bench_decode" --model gpt2 --prompts "$prompt" --no-uncached)
torch=(env OPENBLAS_CORETYPE="$core" GLIBC_TUNABLES="$keep_freed_memory" OMP_WAIT_POLICY=passive
  "$python" bench/torch_decode.py --model gpt2 --prompts "$prompt" --no-uncached --mv)
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg); OPENBLAS_CORETYPE=$core"
echo "== ember (OMP_WAIT_POLICY=active)"
"${ember[@]}" --new 64 --reps 1 --profile
echo "== PyTorch (OMP_WAIT_POLICY=passive, torch.mv)"
"${torch[@]}" --new 64 --reps 1 --profile
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
echo "== $runs runs of each, alternating: 64 tokens after a prompt of $prompt, ms per token"
for ((i = 1; i <= runs; i++)); do
  "${ember[@]}" --new 64 --reps 1 | sed -n 's/^decode .*cached_ms=\([0-9.]*\).*/ember \1/p' | tee -a "$tmp"
  "${torch[@]}" --new 64 --reps 1 | sed -n 's/^decode .*cached_ms=\([0-9.]*\).*/torch \1/p' | tee -a "$tmp"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
"$python" - "$tmp" <<'EOF'
import statistics
import sys
runs = {}
for line in open(sys.argv[1]):
    fw, ms = line.split()
    runs.setdefault(fw, []).append(float(ms))
for fw in ("ember", "torch"):
    v = runs[fw]
    print("%s fastest %.2f median %.2f slowest %.2f ms/token (%d runs; slowest/fastest %.2f)"
          % (fw, min(v), statistics.median(v), max(v), len(v), max(v) / min(v)))
print("median torch/ember %.2f" % (statistics.median(runs["torch"]) / statistics.median(runs["ember"])))
EOF
