#!/usr/bin/env bash
# train_gpt --zero under mpirun, end to end:
#   1. --zero 1 and --zero 2 as 2 ranks write DataParallel's files, bit for
#      bit (loss.csv, model.safetensors, train_state.safetensors): the same
#      training, and a checkpoint that does not say how it was made;
#   2. a --zero 2 job stopped by SIGUSR1 saves (the shards gathered on rank
#      0) and resumes: as 2 ranks at --zero 2 into the uninterrupted run's
#      files; as 3 ranks at --zero 1 (uneven shards), as 2 ranks without
#      --zero and as one process, on the same loss curve within round-off;
#   3. ranks given different --zero are refused on every rank.
# Usage: train_gpt_zero.sh MPIRUN TRAIN_GPT OUT_DIR
set -euo pipefail
mpirun=$1 train_gpt=$2 out=$3
rm -rf "$out"
mkdir -p "$out"
mpi=("$mpirun" --oversubscribe --bind-to none)
flags=(--dim 32 --layers 1 --context 32 --batch 12 --eval-every 20 --sample-chars 20 --bucket-kb 16 --steps 300)
files=(loss.csv model.safetensors train_state.safetensors)

echo "--- 1. the same training as DataParallel"
"${mpi[@]}" -np 2 "$train_gpt" "${flags[@]}" --out "$out/ddp" >"$out/ddp.log"
for stage in 1 2; do
  "${mpi[@]}" -np 2 "$train_gpt" "${flags[@]}" --zero $stage --out "$out/z$stage" >"$out/z$stage.log"
  grep -q "^sharding    ZeRO stage $stage: " "$out/z$stage.log"
  for f in "${files[@]}"; do cmp "$out/ddp/$f" "$out/z$stage/$f"; done
done
grep -q "reduce-scattered" "$out/z2.log"

echo "--- 2. stopped, resumed at any number of ranks and stage"
"${mpi[@]}" -np 2 "$train_gpt" "${flags[@]}" --zero 2 --save-every 1000 --out "$out/s" >"$out/s.log" &
job=$!
for _ in $(seq 1 600); do  # until the first progress line, at most a minute
  grep -q "^step" "$out/s.log" 2>/dev/null && break
  sleep 0.1
done
kill -USR1 "$job" 2>/dev/null || true
status=0
wait "$job" || status=$?
if [ "$status" -eq 0 ]; then
  echo "train_gpt_zero: the run finished before the signal reached it: nothing was stopped or resumed"
  exit 1
fi
grep -q "^interrupted: saved step" "$out/s.log"
stopped_at=$(sed -n 's/^interrupted: saved step \([0-9]*\).*/\1/p' "$out/s.log")
echo "stopped at step $stopped_at"
for way in same three ddp one; do cp -r "$out/s" "$out/s_$way"; done
"${mpi[@]}" -np 2 "$train_gpt" --resume "$out/s_same" --zero 2 >"$out/s_same.log"
for f in "${files[@]}"; do cmp "$out/ddp/$f" "$out/s_same/$f"; done
"${mpi[@]}" -np 3 "$train_gpt" --resume "$out/s_three" --zero 1 >"$out/s_three.log"
grep -q "checkpoint was trained on 2 process(es), this run has 3" "$out/s_three.log"
"${mpi[@]}" -np 2 "$train_gpt" --resume "$out/s_ddp" >"$out/s_ddp.log"
"$train_gpt" --resume "$out/s_one" --threads 1 >"$out/s_one.log"
# loss.csv keeps 6 significant digits: values a few float32 ulps apart can
# print a unit apart in the 6th digit, hence 2e-5 relative.
python3 - "$out/ddp/loss.csv" "$out/s_three/loss.csv" "$out/s_ddp/loss.csv" "$out/s_one/loss.csv" "$stopped_at" <<'PY'
import csv, sys
ref = list(csv.DictReader(open(sys.argv[1])))
stopped = int(sys.argv[5])
for path in sys.argv[2:5]:
    rows = list(csv.DictReader(open(path)))
    assert len(rows) == len(ref) == 301, (path, len(rows))
    worst = 0.0
    for ra, rb in zip(ref, rows):
        for k in ("loss", "val_loss"):
            if ra[k] or rb[k]:
                x, y = float(ra[k]), float(rb[k])
                if int(ra["step"]) <= stopped:
                    assert x == y, (path, ra["step"], k, x, y)  # the steps before the save are the saved history
                worst = max(worst, abs(x - y) / abs(x))
                assert abs(x - y) <= 2e-5 * abs(x), (path, ra["step"], k, x, y)
    print(f"{path}: largest relative loss difference {worst:.2g} from the uninterrupted 2-rank run")
PY

echo "--- 3. ranks given different --zero"
status=0
log=$(timeout 60 "${mpi[@]}" -np 1 "$train_gpt" "${flags[@]}" --zero 1 --out "$out/d" : \
  -np 1 "$train_gpt" "${flags[@]}" --zero 2 --out "$out/d" 2>&1) || status=$?
test "$status" -ne 0 && test "$status" -ne 124
grep -q "the ranks disagree: ZeRO stage is 1 on rank 0 and 2 on rank 1" <<<"$log"
echo "train_gpt_zero: all passed"
