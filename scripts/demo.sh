#!/usr/bin/env bash
# Fresh clone -> running demo: installs missing Debian packages, builds
# (Release) and runs the main example.
set -euo pipefail
DEMO=embeddings_demo  # the program in examples/ that this script runs (lesson A)

cd "$(dirname "$0")/.."
bash scripts/deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j"$(nproc)" --target "$DEMO"
./build/examples/"$DEMO"
