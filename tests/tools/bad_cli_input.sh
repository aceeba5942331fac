#!/usr/bin/env bash
# The shipped programs on bad input: each case must end with a failing exit
# status (1, or CLI11's code for a flag it rejects) and a message on stderr
# that names the offending value: never a crash (a signal), a hang (timeout)
# or an uncaught exception.
#   bad_cli_input.sh TRAIN_GPT SAMPLE_GPT LESSON_C_RACE WORKDIR
set -u
train=$1 sample=$2 race=$3 work=$4
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
# lesson_c_race fails before it trains: flags out of range, a text it cannot
# read or race on, a directory it cannot make.
race_out=(--out "$work/race")
expect "--threads: Value 0" -- "$race" --threads 0 "${race_out[@]}"
expect "--max-distance: Value 100000" -- "$race" --max-distance 100000 "${race_out[@]}"
expect "--reverse-length: Value 1" -- "$race" --reverse-length 1 "${race_out[@]}"
expect "--text-steps: Value 0" -- "$race" --quick --text-steps 0 "${race_out[@]}"
expect "a seed is a non-negative integer, got -1" -- "$race" --seed -1 "${race_out[@]}"
expect "not a regular file (a FIFO)" -- "$race" --data "$work/fifo" "${race_out[@]}"
: >"$work/empty.txt"
expect "the text is empty" -- "$race" --data "$work/empty.txt" "${race_out[@]}"
printf 'to be or not to be\n' >"$work/short.txt"
expect "short.txt has 19 characters; race 3 needs at least 1300" -- "$race" --data "$work/short.txt" "${race_out[@]}"
printf 'x' >"$work/a_file"
expect "$work/a_file/out" -- "$race" --quick --out "$work/a_file/out"
# Not bad, only extreme: a one-character text (loss 0 throughout, no newline
# to start a sample from) trains, plots and samples.
head -c 2000 /dev/zero | tr '\0' 'a' >"$work/a.txt"
if ! out=$(timeout 120 "$train" --data "$work/a.txt" "${small[@]}" 2>&1); then
  echo "FAIL: a one-character text"; echo "$out"; failures=$((failures + 1))
fi
# A float32 run resumed with --bf16: the precision is the run's, refused by name.
expect "was trained in float32" -- "$train" --resume "$work/run" --bf16 --more-steps 1
exit $((failures > 0))
