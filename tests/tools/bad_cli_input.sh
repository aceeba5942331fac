#!/usr/bin/env bash
# The shipped programs on bad input: each case must end with a failing exit
# status (1, or CLI11's code for a flag it rejects) and a message on stderr
# that names the offending value: never a crash (a signal), a hang (timeout)
# or an uncaught exception.
#   bad_cli_input.sh TRAIN_GPT SAMPLE_GPT WORKDIR
set -u
train=$1 sample=$2 work=$3
rm -rf "$work" && mkdir -p "$work/empty"
mkfifo "$work/fifo"
mkdir -p "$work/dir_model/model.safetensors"
failures=0
# expect WANT_TEXT -- COMMAND...
expect() {
  local want=$1
  shift 2
  local err rc
  err=$(timeout 120 "$@" 2>&1 >/dev/null)
  rc=$?
  if [[ $rc -eq 0 || $rc -ge 124 ]]; then
    echo "FAIL (exit $rc): $*"; echo "$err"; failures=$((failures + 1))
  elif [[ $err != *"$want"* ]]; then
    echo "FAIL (no \"$want\" in the message): $*"; echo "$err"; failures=$((failures + 1))
  fi
}
small=(--steps 3 --dim 16 --heads 2 --layers 1 --context 16 --eval-every 3 --out "$work/run")
expect "dim 1000000000000" -- "$train" --dim 1000000000000 --heads 1 --out "$work/run"
expect "batch 1000000000000" -- "$train" --batch 1000000000000 --out "$work/run"
expect "context_length 1000000000000" -- "$train" --context 1000000000000 --out "$work/run"
expect "not a regular file (a FIFO)" -- "$train" --data "$work/fifo" --out "$work/run"
expect "not a regular file (a directory)" -- "$train" --data "$work/empty" --out "$work/run"
expect "got 100000" -- "$train" --threads 100000 "${small[@]}"
expect "$work/empty" -- "$train" --resume "$work/empty"
expect "training diverged" -- "$train" --lr 1000000 --steps 40 --dim 16 --heads 2 --layers 1 --context 16 \
  --eval-every 40 --out "$work/diverged"
expect "temperature" -- "$sample" --model "$work/run" --temperature nan
expect "model.safetensors" -- "$sample" --model "$work/empty"
expect "not a regular file (a directory)" -- "$sample" --model "$work/dir_model"
# Not bad, only extreme: a one-character text (loss 0 throughout, no newline
# to start a sample from) trains, plots and samples.
head -c 2000 /dev/zero | tr '\0' 'a' >"$work/a.txt"
if ! out=$(timeout 120 "$train" --data "$work/a.txt" "${small[@]}" 2>&1); then
  echo "FAIL: a one-character text"; echo "$out"; failures=$((failures + 1))
fi
exit $((failures > 0))
