#!/usr/bin/env bash
# The kill-and-resume soak: train_gpt is SIGKILLed at random moments (while
# it starts, steps, evaluates, saves, samples, writes loss.csv and loss.png)
# again and again, each time resumed from what it left; at the end its run
# directory must hold, byte for byte, the model, train_state and loss.csv of
# a run that was never interrupted.
#   1. one process, at least KILLS kills (default 30);
#   2. with MPIRUN given: 2 ranks under mpirun, one rank killed each time
#      (mpirun then ends the job), at least MPI_KILLS kills (default 8).
#      Each start takes the next of --zero 0, 1, 2 in turn (every rank
#      keeps everything, or ZeRO's shards): with 2 ranks all three train the
#      same bits and save the same files, so the uninterrupted DataParallel
#      run is the reference, and a killed sharded save must leave the last
#      complete checkpoint like any other.
# The delays are drawn uniformly over the length of an uninterrupted run,
# from a fixed seed; where each kill lands depends on the machine's speed,
# so the script reports what the kills left behind.
# Usage: kill_resume_soak.sh TRAIN_GPT OUT_DIR [MPIRUN]   (env: KILLS, MPI_KILLS, SOAK_SEED)
set -euo pipefail
train_gpt=$1 out=$2 mpirun=${3:-}
kills_wanted=${KILLS:-30} mpi_kills_wanted=${MPI_KILLS:-8}
max_starts=$((10 * (kills_wanted > mpi_kills_wanted ? kills_wanted : mpi_kills_wanted) + 20))  # a bound, not a target
RANDOM=${SOAK_SEED:-2026}
rm -rf "$out"
mkdir -p "$out"
# A small corpus and model: an uninterrupted run takes a fraction of a
# second, so that kills land everywhere in it and the soak stays short.
for i in $(seq 1 200); do echo "line $i: the kill-and-resume soak trains, saves, resumes."; done >"$out/corpus.txt"
flags=(--data "$out/corpus.txt" --dim 16 --heads 2 --layers 1 --context 16 --batch 4 --steps 40 --eval-every 8
       --threads 1 --sample-chars 8)
again=(--save-every 2 --sample-every 10 --sample-chars 8 --threads 1)  # the flags a resume repeats (not the run's)
compared=(model.safetensors train_state.safetensors loss.csv loss.png)

now_ms() { date +%s%3N; }

# same REFERENCE RUN: every compared file equal, byte for byte.
same() {
  local f
  for f in "${compared[@]}"; do
    cmp "$1/$f" "$2/$f" || { echo "kill_resume_soak: $2/$f differs from the uninterrupted run's"; return 1; }
  done
}

# What a killed run left: a save cut short (a staging directory or a
# temporary file), or nothing to see.
during_save=0 before_first=0 finished_unwritten=0
classify() {
  local dir=$1
  if compgen -G "$dir/checkpoints/.step-*" >/dev/null || compgen -G "$dir/.*.tmp*" >/dev/null ||
     compgen -G "$dir/checkpoints/*/.*tmp*" >/dev/null; then
    during_save=$((during_save + 1))
  fi
  compgen -G "$dir/checkpoints/step-*" >/dev/null || before_first=$((before_first + 1))
  if [[ -e $dir/checkpoints/step-00000040 && ! -e $dir/loss.png ]]; then finished_unwritten=$((finished_unwritten + 1)); fi
}

# DIR holds the whole run: its last checkpoint and loss.png, the last file a
# run writes (a kill after it, while the program ends, leaves a run that
# --resume rightly calls finished).
finished() { [[ -e $1/checkpoints/step-00000040 && -e $1/loss.png ]]; }

# The command that goes on with the run in DIR: a resume once a checkpoint
# is complete (a step-N directory exists only complete), else a fresh start.
next_command() {
  local dir=$1
  if compgen -G "$dir/checkpoints/step-*" >/dev/null; then
    echo --resume "$dir" "${again[@]}"
  else
    echo "${flags[@]}" --save-every 2 --sample-every 10 --out "$dir"
  fi
}

echo "--- 1. one process"
start=$(now_ms)
"$train_gpt" "${flags[@]}" --save-every 2 --sample-every 10 --out "$out/ref" >"$out/ref.log"
run_ms=$(($(now_ms) - start))
echo "an uninterrupted run: $run_ms ms"
kills=0 runs=0
soak_start=$SECONDS
while :; do
  # shellcheck disable=SC2207
  cmd=($(next_command "$out/soak"))
  runs=$((runs + 1))
  ((runs <= max_starts)) || { echo "kill_resume_soak: $kills kills in $max_starts starts: the kills do not land (is the run too short?)"; exit 1; }
  if ((kills >= kills_wanted)); then
    "$train_gpt" "${cmd[@]}" >>"$out/soak.log" 2>&1
    break
  fi
  "$train_gpt" "${cmd[@]}" >>"$out/soak.log" 2>&1 &
  pid=$!
  delay_ms=$((RANDOM % (run_ms + run_ms / 10 + 1)))
  sleep "$(printf '%d.%03d' $((delay_ms / 1000)) $((delay_ms % 1000)))"
  kill -KILL "$pid" 2>/dev/null || true
  status=0
  wait "$pid" 2>/dev/null || status=$?
  if ((status == 137)); then
    kills=$((kills + 1))
    classify "$out/soak"
    if finished "$out/soak"; then
      ((kills < kills_wanted)) || break
      rm -rf "$out/soak"  # killed while it ended: start the same run again
    fi
  elif ((status == 0)); then
    rm -rf "$out/soak"  # it finished before the kill: start the same run again
  else
    echo "kill_resume_soak: train_gpt ${cmd[*]} failed with status $status"; tail -n 5 "$out/soak.log"; exit 1
  fi
done
same "$out/ref" "$out/soak"
echo "one process: $kills SIGKILLs survived in $runs starts ($during_save during a save, $before_first before the first checkpoint," \
     "$finished_unwritten after the last save but before loss.png) in $((SECONDS - soak_start)) s; the run directory equals the uninterrupted one"

[[ -n $mpirun ]] || exit 0
echo "--- 2. two ranks under mpirun, one rank killed"
mpi=("$mpirun" --oversubscribe --bind-to none -np 2)
start=$(now_ms)
"${mpi[@]}" "$train_gpt" "${flags[@]}" --save-every 2 --sample-every 10 --out "$out/mpi_ref" >"$out/mpi_ref.log"
run_ms=$(($(now_ms) - start))
echo "an uninterrupted 2-rank run: $run_ms ms"
kills=0 runs=0 during_save=0 before_first=0 finished_unwritten=0
soak_start=$SECONDS
while :; do
  # shellcheck disable=SC2207
  cmd=($(next_command "$out/mpi_soak") --zero $((runs % 3)))
  runs=$((runs + 1))
  ((runs <= max_starts)) || { echo "kill_resume_soak: $kills rank kills in $max_starts starts: the kills do not land"; exit 1; }
  if ((kills >= mpi_kills_wanted)); then
    "${mpi[@]}" "$train_gpt" "${cmd[@]}" >>"$out/mpi_soak.log" 2>&1
    break
  fi
  "${mpi[@]}" "$train_gpt" "${cmd[@]}" >"$out/attempt.log" 2>&1 &
  job=$!
  delay_ms=$((RANDOM % (run_ms + 1)))
  sleep "$(printf '%d.%03d' $((delay_ms / 1000)) $((delay_ms % 1000)))"
  # The ranks are mpirun's children: kill one of them (mpirun then ends the other).
  mapfile -t ranks < <(pgrep -P "$job" -x train_gpt || true)
  killed=0
  ((${#ranks[@]} == 0)) || { kill -KILL "${ranks[$((RANDOM % ${#ranks[@]}))]}" 2>/dev/null && killed=1; } || true
  # After a rank is killed, Open MPI's mpirun can hang in its own teardown
  # ("PMIX ERROR: UNREACHABLE", the other rank gone): a job still there a
  # minute later (a whole run takes about a second) is ended here, as killed.
  for _ in $(seq 600); do kill -0 "$job" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$job" 2>/dev/null; then
    echo "(mpirun still there a minute after the kill: ended)"
    pkill -KILL -P "$job" 2>/dev/null || true
    kill -KILL "$job" 2>/dev/null || true
  fi
  status=0
  wait "$job" 2>/dev/null || status=$?
  cat "$out/attempt.log" >>"$out/mpi_soak.log"
  if ((status == 0)); then
    rm -rf "$out/mpi_soak"  # no rank was killed in time, the run finished: start it again
  elif ((killed)); then  # the job failed because this script killed one of its ranks
    kills=$((kills + 1))
    classify "$out/mpi_soak"
    if finished "$out/mpi_soak"; then
      ((kills < mpi_kills_wanted)) || break
      rm -rf "$out/mpi_soak"
    fi
  else
    echo "kill_resume_soak: mpirun ... train_gpt ${cmd[*]} failed with status $status"; tail -n 5 "$out/attempt.log"; exit 1
  fi
done
same "$out/mpi_ref" "$out/mpi_soak"
echo "2 ranks: $kills SIGKILLs of one rank survived in $runs starts ($during_save during a save, $before_first before the" \
     "first checkpoint) in $((SECONDS - soak_start)) s; the run directory equals the uninterrupted one"
echo "kill_resume_soak: all passed"
