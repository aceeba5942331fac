#!/usr/bin/env bash
# Usage: run.sh CMAKE BUILD_DIR CONSUMER_SRC_DIR CXX_COMPILER
# Installs the already-built ember from BUILD_DIR into a temporary prefix,
# builds the consumer project against it, runs it and checks its output.
set -euo pipefail
cmake_bin=$1 build_dir=$2 consumer_src=$3 cxx=$4

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$cmake_bin" --install "$build_dir" --prefix "$tmp/prefix" >/dev/null
"$cmake_bin" -S "$consumer_src" -B "$tmp/build" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$tmp/prefix" -DCMAKE_CXX_COMPILER="$cxx"
"$cmake_bin" --build "$tmp/build"

out=$("$tmp/build/consumer" "$tmp/xor_loss.png")
echo "$out"
grep -q "consumer: training ok" <<<"$out"
test -s "$tmp/xor_loss.png"
