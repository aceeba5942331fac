#!/usr/bin/env bash
# The thread tests (tests/tensor_threads_test.cpp) under ThreadSanitizer, in
# their own build dir build-tsan: several of the caller's threads drawing
# from the shared default generator, set_num_threads while others compute.
# See EMBER_TSAN in CMakeLists.txt for what this build leaves out (OpenMP).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh

export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$PWD/.ci/tsan.supp"
cmake -S . -B build-tsan -DEMBER_TSAN=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1" \
  -DEMBER_BUILD_BENCH=OFF -DEMBER_BUILD_EXAMPLES=OFF
cmake --build build-tsan -j"$(nproc)" --target ember_thread_tests
ctest --test-dir build-tsan --output-on-failure -j2
