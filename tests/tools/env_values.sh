#!/usr/bin/env bash
# ember's environment variables: a value ember cannot honour is an error
# naming it (ember's own variables), or one line saying what runs instead
# (OPENBLAS_CORETYPE, OpenBLAS's). Usage: env_values.sh PATH_TO_env_probe
set -uo pipefail
probe=$1
fail=0
expect() {  # expect STATUS PATTERN ENV...
  local want=$1 pattern=$2
  shift 2
  out=$(env "$@" "$probe" 2>&1)
  status=$?
  if [[ $status -ne $want ]] || ! grep -qE -- "$pattern" <<<"$out"; then
    echo "FAIL: $* -> status $status (expected $want), output:"
    echo "$out"
    fail=1
  else
    echo "ok: $* -> $(head -1 <<<"$out")"
  fi
}
expect 1 'EMBER_SIMD: "garbage" is not a width ember has: AVX-512, AVX2 or SSE2' EMBER_SIMD=garbage
expect 1 'EMBER_SIMD: avx2 is not|EMBER_SIMD: "avx2" is not' EMBER_SIMD=avx2
expect 0 '^simd SSE2' EMBER_SIMD=SSE2
expect 1 'EMBER_ADAPTIVE_THREADS: "yes" is not a value it takes: 0 .* or 1' EMBER_ADAPTIVE_THREADS=yes
expect 0 '^adaptive 0' EMBER_ADAPTIVE_THREADS=0
expect 0 '^adaptive 1' EMBER_ADAPTIVE_THREADS=1
expect 0 'ember: OPENBLAS_CORETYPE=garbage is not a core this OpenBLAS knows; it runs its [A-Za-z0-9]+ kernels' \
  OPENBLAS_CORETYPE=garbage
expect 0 'OPENBLAS_CORETYPE=Sandybridge, set by the user' OPENBLAS_CORETYPE=Sandybridge
exit $fail
