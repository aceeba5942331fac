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

# The same program without CMake: only the flags pkg-config gives.
pc=$(find "$tmp/prefix" -name ember.pc)
export PKG_CONFIG_PATH="$(dirname "$pc")${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
flags=$(pkg-config --cflags --libs ember)
"$cxx" -std=c++20 -O1 "$consumer_src/main.cpp" -o "$tmp/consumer_pc" $flags
out=$("$tmp/consumer_pc")
grep -q "consumer: training ok" <<<"$out" || { echo "$out"; echo "the pkg-config build did not train"; exit 1; }
echo "consumer (pkg-config --cflags --libs ember): training ok"
