#!/usr/bin/env bash
# Fuzzes the safetensors reader (train::parse_safetensors) with libFuzzer under
# AddressSanitizer + UndefinedBehaviorSanitizer, for a bounded time.
#
#   bash fuzz/run.sh                  # 60 s
#   FUZZ_SECONDS=600 bash fuzz/run.sh
#
# Builds build-fuzz/ with clang (ember itself instrumented, tests/examples/
# bench off), starts from the committed seed corpus fuzz/corpus/ (read only;
# new inputs go to build-fuzz/corpus/), prints the number of executions and
# fails if libFuzzer finds a crash, a sanitizer report or an exception other
# than ember::Error; the input is then in build-fuzz/artifacts/.
# Regenerate the seeds with build-fuzz/fuzz/fuzz_make_corpus fuzz/corpus.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh  # clang, its sanitizer runtimes and libomp are among them

seconds=${FUZZ_SECONDS:-60}
build=build-fuzz
cc=${FUZZ_CC:-clang}
cxx=${FUZZ_CXX:-clang++}
command -v "$cxx" >/dev/null || { echo "fuzz/run.sh: $cxx not found (apt-get install clang libclang-rt-14-dev libomp-dev)" >&2; exit 1; }

sanitize="-fsanitize=address,undefined,fuzzer-no-link -fno-sanitize-recover=all -fno-omit-frame-pointer"
CC=$cc CXX=$cxx cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_CXX_FLAGS="$sanitize -O1" \
  -DEMBER_FUZZ=ON -DEMBER_BUILD_TESTS=OFF -DEMBER_BUILD_EXAMPLES=OFF -DEMBER_BUILD_BENCH=OFF >/dev/null
cmake --build "$build" -j"${FUZZ_BUILD_JOBS:-2}" --target fuzz_safetensors fuzz_make_corpus

mkdir -p "$build/corpus" "$build/artifacts"
log=$build/fuzz.log
export OMP_NUM_THREADS=1 OMP_WAIT_POLICY=passive
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
echo "fuzz/run.sh: fuzzing parse_safetensors for $seconds s"
set +e
"$build/fuzz/fuzz_safetensors" "$build/corpus" fuzz/corpus \
  -max_total_time="$seconds" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
  -artifact_prefix="$build/artifacts/" -print_final_stats=1 >"$log" 2>&1
status=$?
set -e
runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || true)
if ((status != 0)); then
  tail -n 60 "$log"
  echo "fuzz/run.sh: FAILED (exit $status) after ${runs:-?} executions; the input is in $build/artifacts/:" >&2
  ls -l "$build/artifacts/" >&2
  exit 1
fi
grep -E '^(Done|stat::)' "$log" || true
echo "fuzz/run.sh: ${runs:-?} executions in $seconds s, no findings (corpus: $(ls "$build/corpus" | wc -l) new inputs)"
