#!/usr/bin/env bash
# The test suite under AddressSanitizer + UndefinedBehaviorSanitizer (and
# LeakSanitizer), in its own build dir build-asan. -O1 keeps it reasonably
# fast; NDEBUG is left undefined so internal asserts stay on.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh

# Exported for the build too: gtest_discover_tests runs ember_tests at build time.
# allocator_may_return_null: a request the machine cannot serve returns null,
# as glibc's does (ember turns that into an ember::Error; a test checks it).
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:allocator_may_return_null=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export LSAN_OPTIONS=suppressions=$PWD/.ci/lsan.supp  # third-party libraries only

# -g1 (line tables only) is enough for sanitizer stack traces and compiles
# much faster than -g. The examples, the book's exercises and the
# build-your-own stages run under the Release build's ctest only
# (tests/CMakeLists.txt leaves them out of sanitizer builds). The GoogleTest
# suite runs as 8 processes of shards (EMBER_TEST_SHARDS), not one process
# per test: under the sanitizers a process's start and its leak check at
# exit cost more than most tests.
cmake -S . -B build-asan -DEMBER_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1" -DEMBER_BUILD_BENCH=OFF -DEMBER_BUILD_EXAMPLES=OFF \
  -DEMBER_TEST_SHARDS=8
cmake --build build-asan -j"$(nproc)"
ctest --test-dir build-asan --output-on-failure -j2
