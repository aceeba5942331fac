#!/usr/bin/env bash
# train_gpt as 2 ranks under mpirun, end to end:
#   1. the same flags give the same files, bit for bit (loss.csv, model),
#      also with other buckets (2 ranks: each element is the sum of two
#      numbers, however the message is cut);
#   2. a job stopped by SIGUSR1 (mpirun passes it to every rank) saves, and
#      --resume with the same 2 ranks ends with the files of a run that was
#      never stopped;
#   3. one process with the same flags follows the same loss curve, within
#      float round-off;
#   4. a rank that cannot start (its --data is missing) ends the whole job
#      with its message instead of leaving rank 0 waiting;
#   5. ranks given a different --lr or --seed are refused on every rank.
# Usage: train_gpt_mpi.sh MPIRUN TRAIN_GPT OUT_DIR
set -euo pipefail
mpirun=$1 train_gpt=$2 out=$3
rm -rf "$out"
mkdir -p "$out"
mpi=("$mpirun" --oversubscribe --bind-to none)
flags=(--dim 32 --layers 1 --context 32 --batch 8 --eval-every 50 --sample-chars 20)
small=(--bucket-kb 16)  # several buckets for this small model (the default makes one)

echo "--- 1. reproducible"
"${mpi[@]}" -np 2 "$train_gpt" "${flags[@]}" "${small[@]}" --steps 100 --out "$out/a" >"$out/a.log"
"${mpi[@]}" -np 2 "$train_gpt" "${flags[@]}" "${small[@]}" --steps 100 --out "$out/b" >"$out/b.log"
"${mpi[@]}" -np 2 "$train_gpt" "${flags[@]}" --steps 100 --out "$out/o" >"$out/o.log"  # one bucket
grep -q "^processes   2 (mpirun), 4 sequences of each batch per process" "$out/a.log"
for run in b o; do
  cmp "$out/a/loss.csv" "$out/$run/loss.csv"
  cmp "$out/a/model.safetensors" "$out/$run/model.safetensors"
done

echo "--- 2. stopped and resumed"
"${mpi[@]}" -np 2 "$train_gpt" "${flags[@]}" "${small[@]}" --steps 100 --out "$out/s" >"$out/s.log" &
job=$!
for _ in $(seq 1 600); do  # until the first progress line (step 5), at most a minute
  grep -q "^step" "$out/s.log" 2>/dev/null && break
  sleep 0.1
done
kill -USR1 "$job" 2>/dev/null || true
status=0
wait "$job" || status=$?
cat "$out/s.log" | grep -E "interrupted|trained"
if [ "$status" -ne 0 ]; then  # (0 if the run had already finished: then there is nothing to resume)
  grep -q "^interrupted: saved step" "$out/s.log"
  "${mpi[@]}" -np 2 "$train_gpt" --resume "$out/s" >"$out/s_resume.log"
  grep -q "^resumed at step" "$out/s_resume.log"
fi
cmp "$out/a/loss.csv" "$out/s/loss.csv"
cmp "$out/a/model.safetensors" "$out/s/model.safetensors"

echo "--- 3. one process, the same run"
"$train_gpt" "${flags[@]}" --steps 100 --threads 1 --out "$out/one" >"$out/one.log"
# loss.csv keeps 6 significant digits: values one float32 ulp apart can print
# one unit apart in the 6th digit, hence 2e-5 relative.
python3 - "$out/a/loss.csv" "$out/one/loss.csv" <<'PY'
import csv, sys
a, b = (list(csv.DictReader(open(p))) for p in sys.argv[1:3])
assert len(a) == len(b) == 101, (len(a), len(b))
worst = 0.0
for ra, rb in zip(a, b):
    for k in ("loss", "val_loss"):
        if ra[k] or rb[k]:
            x, y = float(ra[k]), float(rb[k])
            worst = max(worst, abs(x - y) / abs(y))
            assert abs(x - y) <= 2e-5 * abs(y), (ra["step"], k, x, y)
print(f"2 ranks vs 1 process: largest relative loss difference {worst:.2g} over {len(a) - 1} steps")
PY

echo "--- 4. a rank that cannot start"
status=0
log=$(timeout 60 "${mpi[@]}" -np 1 "$train_gpt" "${flags[@]}" --steps 20 --out "$out/f" : \
  -np 1 "$train_gpt" "${flags[@]}" --steps 20 --out "$out/f" --data "$out/no-such-corpus.txt" 2>&1) || status=$?
echo "$log"
test "$status" -ne 0 && test "$status" -ne 124  # failed, and not by the timeout
grep -q "train_gpt (rank 1 of 2): read_text_file.*no-such-corpus.txt" <<<"$log"
echo "--- 5. ranks given different settings"
# Every training option, the data and the model must agree on every rank:
# otherwise every rank stops, before the first step, naming each difference.
status=0
log=$(timeout 60 "${mpi[@]}" -np 1 "$train_gpt" "${flags[@]}" --steps 20 --out "$out/d" : \
  -np 1 "$train_gpt" "${flags[@]}" --steps 20 --out "$out/d" --lr 0.001 --seed 1 2>&1) || status=$?
echo "$log" | grep "disagree" | head -n 2
test "$status" -ne 0 && test "$status" -ne 124
grep -q "the ranks disagree: lr is 0.003 on rank 0 and 0.001 on rank 1; min_lr is .* seed is 0 on rank 0 and 1 on rank 1" <<<"$log"
! compgen -G "$out/d/checkpoints/step-*" >/dev/null  # nothing was trained or saved
# What train_gpt adds to the comparison: the precision of the products.
status=0
log=$(timeout 60 "${mpi[@]}" -np 1 "$train_gpt" "${flags[@]}" --steps 20 --out "$out/e" : \
  -np 1 "$train_gpt" "${flags[@]}" --steps 20 --out "$out/e" --bf16 2>&1) || status=$?
echo "$log" | grep "disagree" | head -n 1
test "$status" -ne 0 && test "$status" -ne 124
grep -q "the ranks disagree: precision is float32 on rank 0 and bfloat16 autocast on rank 1" <<<"$log"
echo "train_gpt_mpi: all passed"
