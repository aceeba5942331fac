#!/usr/bin/env bash
# Fresh clone -> full test run: installs missing Debian packages, builds
# everything (Release) and runs every test with CTest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j"$(nproc)"
ctest --test-dir build --output-on-failure -j2
