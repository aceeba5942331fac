#!/usr/bin/env bash
# The BLAS, matmul, thread and training tests under ember's own choice of
# OpenBLAS core (OPENBLAS_CORETYPE unset, whatever the caller's environment
# says), then once per core this CPU can run, forced with OPENBLAS_CORETYPE
# as a user would (it always wins over the chooser), and once with a name
# OpenBLAS does not know; then the vector-math tests and the ops on them at
# each narrower SIMD width (EMBER_SIMD). Uses the Release build of
# scripts/test.sh.
#   bash scripts/test_blas_cores.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
[[ -x $build/tests/blas_cores ]] || { echo "test_blas_cores.sh: build first (bash scripts/test.sh)"; exit 2; }
mapfile -t cores < <("$build/tests/blas_cores")
if ((${#cores[@]} == 0)); then
  echo "test_blas_cores.sh: this CPU has no AVX: OpenBLAS's own choice is the only one"
  exit 0
fi
tests='Blas|Matmul|TensorThreads|AdaptiveThreads|NnGpt|NnKvCache|TrainGpt2|Trainer|Optim|Attention|Registry|KernelsAgree'
echo "--- OPENBLAS_CORETYPE unset (ember chooses)"
log=$build/blas_core_ember.log
if env -u OPENBLAS_CORETYPE ctest --test-dir "$build" --output-on-failure -j2 -R "$tests" >"$log" 2>&1; then
  grep -E "tests passed" "$log"
else
  cat "$log"
  echo "test_blas_cores.sh: tests failed with ember's own choice of core"
  exit 1
fi
echo "--- OPENBLAS_CORETYPE=NoSuchCore (OpenBLAS picks its own; ember says so)"
log=$build/blas_core_unknown.log
if OPENBLAS_CORETYPE=NoSuchCore ctest --test-dir "$build" --output-on-failure -j2 -R 'Blas|Matmul' >"$log" 2>&1; then
  grep -E "tests passed" "$log"
else
  cat "$log"
  echo "test_blas_cores.sh: tests failed with an unknown OPENBLAS_CORETYPE"
  exit 1
fi
for core in "${cores[@]}"; do
  echo "--- OPENBLAS_CORETYPE=$core"
  log=$build/blas_core_$core.log
  if OPENBLAS_CORETYPE=$core EMBER_EXPECT_BLAS_CORE=$core ctest --test-dir "$build" --output-on-failure -j2 -R "$tests" \
    >"$log" 2>&1; then
    grep -E "tests passed" "$log"
  else
    cat "$log"
    echo "test_blas_cores.sh: tests failed with OPENBLAS_CORETYPE=$core"
    exit 1
  fi
done

simd_tests='VecMath|LayerNorm|TensorReduce|Gelu|Softmax|Sigmoid|Exp|Erf|CrossEntropy|NnGpt|NnKvCache|TrainGpt2|Gemm|BFloat16|Autocast|KernelsAgree|TensorElementwise|TrainOptim'
mapfile -t widths < <("$build/tests/blas_cores" --simd)
for simd in "${widths[@]:1}"; do  # the widest is what every other run used
  echo "--- EMBER_SIMD=$simd"
  log=$build/simd_$simd.log
  if EMBER_SIMD=$simd ctest --test-dir "$build" --output-on-failure -j2 -R "$simd_tests" >"$log" 2>&1; then
    grep -E "tests passed" "$log"
  else
    cat "$log"
    echo "test_blas_cores.sh: tests failed with EMBER_SIMD=$simd"
    exit 1
  fi
done
