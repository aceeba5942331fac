#!/usr/bin/env bash
# The shipped programs on bad input: each case must end with a failing exit
# status (1, or CLI11's code for a flag it rejects) and a message on stderr
# that names the offending value (a bad flag: exactly one line, status 1): never a crash (a signal), a hang (timeout)
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
# expect_line WANT_TEXT -- COMMAND...: exit status 1 and one line on stderr
# that holds WANT_TEXT (the README's promise for every failure of a flag).
expect_line() {
  local want=$1
  shift 2
  local err rc
  err=$(timeout 120 "$@" 2>&1 >/dev/null)
  rc=$?
  if [[ $rc -ne 1 || $(wc -l <<<"$err") -ne 1 || $err != *"$want"* ]]; then
    echo "FAIL (exit $rc, want 1 and one line with \"$want\"): $*"; echo "$err"; failures=$((failures + 1))
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
# Diverged before the first save: the message says that no checkpoint exists.
expect_line "training diverged (try a smaller --lr than 1e+06); stopped without saving, so no checkpoint is in $work/diverged" \
  -- "$train" --lr 1000000 --steps 40 --dim 16 --heads 2 --layers 1 --context 16 --eval-every 40 --out "$work/diverged"
# Flags out of range, in words, one line, status 1 (not CLI11's "Value 0 not
# in range 0.000000 to 1797693..." and status 105).
expect_line "train_gpt: --steps must be at least 1, got 0" -- "$train" --steps 0
expect_line "--steps must be an integer (at least 1), got \"abc\"" -- "$train" --steps abc
expect_line "--steps must be at least 1, got -5" -- "$train" --steps -5
expect_line "--lr must be positive, got 0" -- "$train" --lr 0
expect_line "--lr must be a number, got \"nan\"" -- "$train" --lr nan
# A subnormal learning rate is a positive number: read without an exception (the --steps refusal shows it got past)
expect_line "--steps must be at least 1, got 0" -- "$train" --lr 1e-310 --steps 0
expect_line "--seed must be a non-negative integer, got \"-1\"" -- "$train" --seed -1
expect_line "--dropout must be between 0 and 0.9, got 1.5" -- "$train" --dropout 1.5
expect_line "--bucket-kb must be between 1 and 1048576, got 0" -- "$train" --bucket-kb 0
expect_line "--steps must be at least 1, got 99999999999999999999" -- "$train" --steps 99999999999999999999
expect_line "sample_gpt: --temperature must be a number (at least 0), got \"nan\"" -- "$sample" --temperature nan
# --help says what a number may be, in words.
help=$("$train" --help)
for want in "--steps INT (at least 1; default 1000)" "--more-steps INT (at least 1)" "--lr FLOAT (positive; default 0.003)"; do
  grep -qF -- "$want" <<<"$help" || { echo "FAIL: no \"$want\" in train_gpt --help"; failures=$((failures + 1)); }
done
if grep -qE -- "--more-steps.*(default|=0|POSITIVE)" <<<"$help"; then echo "FAIL: --more-steps shows a default"; failures=$((failures + 1)); fi
# A flag that cannot take effect is refused (--profile beyond the last step)
# or named (--bucket-kb in one process).
expect_line "--profile 50 is not a step this run takes (it trains steps 1 to 3): nothing would be profiled" \
  -- "$train" --profile 50 "${small[@]}"
err=$("$train" --bucket-kb 16 "${small[@]}" --out "$work/bucket" 2>&1 >/dev/null) &&
  [[ $err == *"note: --bucket-kb has no effect in one process"* ]] || { echo "FAIL: --bucket-kb alone: $err"; failures=$((failures + 1)); }
err=$("$sample" --model "$work/bucket" --temperature 0 --seed 3 --chars 5 2>&1 >/dev/null) &&
  [[ $err == *"note: --seed has no effect with --temperature 0"* ]] || { echo "FAIL: sample_gpt --seed greedy: $err"; failures=$((failures + 1)); }
# One run per directory. A fresh run where a run is refuses, naming it;
# --resume continues it; --overwrite replaces every file of it.
"$train" "${small[@]}" --seed 1 >/dev/null 2>&1 || { echo "FAIL: the small run"; failures=$((failures + 1)); }
cp "$work/run/model.safetensors" "$work/first_model.safetensors"
expect_line "$work/run already holds a run saved at step 3 of 3, run " -- "$train" "${small[@]}"
expect_line "continue it with --resume $work/run, replace it with --overwrite, or give another --out" -- "$train" "${small[@]}"
cmp -s "$work/run/model.safetensors" "$work/first_model.safetensors" || { echo "FAIL: a refused run changed the model"; failures=$((failures + 1)); }
# --more-steps so large that the step count overflows int64.
expect_line "--more-steps beyond the checkpoint's step overflows int64: 3 + 9223372036854775807" \
  -- "$train" --resume "$work/run" --more-steps 9223372036854775807
"$train" "${small[@]}" --steps 4 --overwrite >/dev/null 2>&1 || { echo "FAIL: --overwrite"; failures=$((failures + 1)); }
[[ $(wc -l <"$work/run/loss.csv") -eq 6 && $(ls "$work/run/checkpoints") == step-00000004 ]] &&
  ! cmp -s "$work/run/model.safetensors" "$work/first_model.safetensors" ||
  { echo "FAIL: --overwrite left the first run's files: $(ls -R "$work/run")"; failures=$((failures + 1)); }
# A finished run resumed into another --out is refused as it is into its own
# directory (pointing at --more-steps), and writes nothing there.
expect_line "$work/run is at step 4 of 4: the run is finished; give --more-steps N to train it further" \
  -- "$train" --resume "$work/run" --out "$work/fork"
[[ ! -e $work/fork/model.safetensors ]] || { echo "FAIL: a refused resume wrote $work/fork"; failures=$((failures + 1)); }
# The lock file is a regular file ember wrote, or nothing: a symbolic link, a
# hard link to another file or a file of other bytes is refused, and the file
# it would have written through is left as it was.
printf 'precious\n' >"$work/victim"
mkdir -p "$work/linked" "$work/hard" "$work/foreign"
ln -s "$work/victim" "$work/linked/.lock"
ln "$work/victim" "$work/hard/.lock"
printf 'notes of mine\n' >"$work/foreign/.lock"
expect "$work/linked/.lock is a symbolic link" -- "$train" "${small[@]}" --out "$work/linked"
expect "(it has 2 names (a hard link to another file))" -- "$train" "${small[@]}" --out "$work/hard"
expect "$work/foreign/.lock is not a lock file ember wrote (its bytes are not a lock record" -- \
  "$train" "${small[@]}" --out "$work/foreign"
[[ $(cat "$work/victim") == precious && $(cat "$work/foreign/.lock") == "notes of mine" ]] ||
  { echo "FAIL: a refused lock file was written: $(cat "$work/victim" "$work/foreign/.lock")"; failures=$((failures + 1)); }
# The book's exercise script takes one exercise number.
expect "it takes one exercise number, and got 2 arguments (1.1 extra)" -- \
  bash "$(dirname "$0")/../../scripts/exercise.sh" 1.1 extra
# One process at a time: a second train_gpt on the directory is refused at
# once, naming the first; killed, the first leaves no lock behind.
"$train" --steps 100000 --dim 16 --heads 2 --layers 1 --context 16 --out "$work/held" >"$work/held.log" 2>&1 &
holder=$!
for _ in $(seq 1 600); do grep -q "^step" "$work/held.log" && break; sleep 0.1; done
grep -q "^step" "$work/held.log" ||
  { echo "FAIL: the first train_gpt printed no step in 60 s: $(tail -n 3 "$work/held.log")"; failures=$((failures + 1)); }
expect_line "$work/held is in use by process $holder (train_gpt)" -- "$train" "${small[@]}" --out "$work/held"
kill -KILL "$holder"; wait "$holder" 2>/dev/null
"$train" "${small[@]}" --out "$work/held" --overwrite >/dev/null 2>&1 || { echo "FAIL: the lock outlived its holder"; failures=$((failures + 1)); }
expect "temperature" -- "$sample" --model "$work/run" --temperature nan
expect "model.safetensors" -- "$sample" --model "$work/empty"
expect "not a regular file (a directory)" -- "$sample" --model "$work/dir_model"
# lesson_c_race fails before it trains: flags out of range, a text it cannot
# read or race on, a directory it cannot make.
race_out=(--out "$work/race")
expect_line "lesson_c_race: --threads must be between 1 and 64, got 0" -- "$race" --threads 0 "${race_out[@]}"
expect_line "--max-distance must be between 1 and 1000, got 100000" -- "$race" --max-distance 100000 "${race_out[@]}"
expect_line "--reverse-length must be between 2 and 200, got 1" -- "$race" --reverse-length 1 "${race_out[@]}"
expect_line "--text-steps must be between 1 and 10000000, got 0" -- "$race" --quick --text-steps 0 "${race_out[@]}"
expect_line "--seed must be a non-negative integer, got \"-1\"" -- "$race" --seed -1 "${race_out[@]}"
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
if ! out=$(timeout 120 "$train" --data "$work/a.txt" "${small[@]}" --out "$work/one_char" 2>&1); then
  echo "FAIL: a one-character text"; echo "$out"; failures=$((failures + 1))
fi
# A float32 run resumed with --bf16: the precision is the run's, refused by name.
expect "was trained in float32" -- "$train" --resume "$work/run" --bf16 --more-steps 1
exit $((failures > 0))
