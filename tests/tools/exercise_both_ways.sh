#!/usr/bin/env bash
# An exercise's checker, both ways: on the starting file it must say NOT YET
# (exit status 1, no crash), on the reference solution PASS (status 0).
#   exercise_both_ways.sh <checker built on start/> <checker built on solutions/>
set -uo pipefail
start=$1 solution=$2

out=$("$start" 2>&1)
status=$?
if [ "$status" -ne 1 ] || ! grep -q '^NOT YET' <<<"$out"; then
  echo "the checker should say NOT YET (exit status 1) on the starting file; it exited with $status:"
  echo "$out"
  exit 1
fi
out=$("$solution" 2>&1)
status=$?
if [ "$status" -ne 0 ] || ! grep -q '^PASS' <<<"$out"; then
  echo "the checker should PASS (exit status 0) on the reference solution; it exited with $status:"
  echo "$out"
  exit 1
fi
echo "starting file: NOT YET; solution: PASS"
