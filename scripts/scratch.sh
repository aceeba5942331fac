#!/usr/bin/env bash
# Builds examples/scratch.cpp, the program for you to edit, and runs it:
#   bash scripts/scratch.sh [ARGS...]
# (build/, or $EMBER_BUILD_DIR; configured here if it does not exist yet).
set -uo pipefail
cd "$(dirname "$0")/.."
build=${EMBER_BUILD_DIR:-build}
if [ ! -f "$build/CMakeCache.txt" ]; then
  echo "(configuring ember's build tree in $build/ first: this happens once)"
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release > /dev/null || { echo "scratch.sh: cmake could not configure $build/" >&2; exit 2; }
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! cmake --build "$build" --target scratch -j"$(nproc)" > "$log" 2>&1; then
  if grep -q "examples/scratch.cpp:[0-9]*:[0-9]*: error" "$log"; then
    echo "examples/scratch.cpp does not compile; what the compiler says (the first errors):" >&2
    grep -A3 "examples/scratch.cpp:[0-9]*:[0-9]*: error" "$log" | head -n 30 >&2
  else
    cat "$log" >&2
  fi
  exit 1
fi
exec "$build/examples/scratch" "$@"
