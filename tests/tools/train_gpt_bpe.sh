#!/usr/bin/env bash
# train_gpt --bpe end to end:
#   1. it learns a BPE on the corpus, says so, trains on its tokens, prints
#      the loss per byte, and records the tokenizer in the checkpoint
#      (ember.tokenizer = bpe);
#   2. the same flags give the same files, bit for bit;
#   3. stopped by SIGUSR1 and resumed (the tokenizer read from the
#      checkpoint, not learned again), it ends with the files of the run
#      that was never stopped;
#   4. sample_gpt reads the model and its tokenizer: a prompt of any text,
#      the same seed the same text, --stop one token;
#   5. --bpe out of range and --bpe with --resume are refused by name.
# Usage: train_gpt_bpe.sh TRAIN_GPT SAMPLE_GPT OUT_DIR
set -euo pipefail
train=$1 sample=$2 out=$3
rm -rf "$out"
mkdir -p "$out"
flags=(--bpe 320 --dim 32 --layers 1 --heads 2 --context 32 --batch 8 --steps 20 --save-every 10 --eval-every 10
       --sample-chars 12 --threads 1)

echo "--- 1. trained on BPE tokens"
"$train" "${flags[@]}" --out "$out/a" >"$out/a.log"
cat "$out/a.log"
grep -q "^tokenizer   a byte-level BPE of 320 tokens (64 merges), learned on .*tinyshakespeare.txt.gz in " "$out/a.log"
grep -qE "^data        .*: 1115394 bytes, [0-9]+ tokens \([0-9.]+ bytes per token\)$" "$out/a.log"
grep -q "(a uniform guess: ln 320 = 5.768" "$out/a.log"
# the loss per byte: the loss per token over the validation text's bytes per token
python3 - "$out/a.log" <<'PY'
import re, sys
log = open(sys.argv[1], errors="replace").read()  # (a sample may end inside a character)
val = float(re.search(r"final validation loss ([0-9.]+)", log).group(1))
per_byte, bytes_per = map(float, re.search(r"^per byte    ([0-9.]+) nats \(([0-9.]+) bytes per token in the validation text\)$", log, re.M).groups())
assert 1.2 < bytes_per < 2.0 and abs(per_byte - val / bytes_per) < 1e-4 * val, (val, per_byte, bytes_per)
PY
python3 - "$out/a/model.safetensors" <<'PY'
import json, struct, sys
with open(sys.argv[1], "rb") as f:
    n = struct.unpack("<Q", f.read(8))[0]
    meta = json.loads(f.read(n))["__metadata__"]
assert meta["ember.tokenizer"] == "bpe", meta.get("ember.tokenizer")
assert "vocab_size=320" in meta["ember.config"], meta["ember.config"]
merges = meta["ember.bpe.merges"].splitlines()
assert merges[0] == "#version: 0.2" and len(merges) == 65, len(merges)
assert len(json.loads(meta["ember.bpe.encoder"])) == 320
print("checkpoint: ember.tokenizer = bpe,", len(merges) - 1, "merges; first:", merges[1])
PY

echo "--- 2. reproducible"
"$train" "${flags[@]}" --out "$out/b" >"$out/b.log"
cmp "$out/a/loss.csv" "$out/b/loss.csv"
cmp "$out/a/model.safetensors" "$out/b/model.safetensors"

echo "--- 3. stopped and resumed"
# (a model large enough that its 200 steps take a few seconds: the signal
# comes after the validation of step 10, long before the end)
long=(--bpe 320 --dim 64 --layers 2 --heads 2 --context 64 --batch 16 --steps 200 --save-every 100 --eval-every 10
      --sample-chars 0 --threads 1)
"$train" "${long[@]}" --out "$out/full" >"$out/full.log"
"$train" "${long[@]}" --out "$out/s" >"$out/s.log" &
job=$!
for _ in $(seq 1 600); do  # until the validation loss of step 10, at most a minute
  grep -q "^  validation loss" "$out/s.log" 2>/dev/null && break
  sleep 0.1
done
kill -USR1 "$job" 2>/dev/null || true
status=0
wait "$job" || status=$?
grep -E "^(interrupted|trained)" "$out/s.log"
if [ "$status" -ne 0 ]; then  # (0 if the run had already finished: then there is nothing to resume)
  test "$status" -eq 130
  "$train" --resume "$out/s" --threads 1 >"$out/s_resume.log"
  grep -q "^resumed at step" "$out/s_resume.log"
  grep -q "^tokenizer   a byte-level BPE of 320 tokens (64 merges)$" "$out/s_resume.log"
fi
cmp "$out/full/loss.csv" "$out/s/loss.csv"
cmp "$out/full/model.safetensors" "$out/s/model.safetensors"

echo "--- 4. sampled"
s1=$("$sample" --model "$out/a" --prompt "ROMEO: héllo 🔥" --chars 16 --seed 3 2>/dev/null)
s2=$("$sample" --model "$out/a" --prompt "ROMEO: héllo 🔥" --chars 16 --seed 3 2>/dev/null)
test "$s1" = "$s2"
[[ $s1 == "ROMEO: héllo 🔥"* ]]
# --stop of one token: generation ends at that token, or runs to --chars
"$sample" --model "$out/full" --prompt "ROMEO:" --chars 100 --seed 3 --stop $'\n' >"$out/stop.txt" 2>"$out/stop.log"
grep -q "tokens/s, KV cache" "$out/stop.log"
new=$(sed -n 's/^sample_gpt: \([0-9]*\) new tokens.*/\1/p' "$out/stop.log")
if [ "$new" -lt 100 ]; then test "$(tail -c 2 "$out/stop.txt" | od -An -c | tr -d ' ')" = '\n\n'; fi

echo "--- 5. refused"
status=0
err=$("$train" "${flags[@]}" --bpe 200 --out "$out/c" 2>&1) || status=$?
test "$status" -eq 1
grep -q "^train_gpt: --bpe must be 0 (characters) or at least 256 (one token per byte), got 200" <<<"$err"
status=0
err=$("$train" --resume "$out/a" --bpe 320 --more-steps 2 2>&1) || status=$?
test "$status" -eq 1
grep -q "^train_gpt: --bpe describes the model, which --resume" <<<"$err"
status=0
err=$("$sample" --model "$out/a" --prompt "ROMEO:" --stop "ROMEO" 2>&1) || status=$?
test "$status" -eq 1
grep -q "BPE tokens; give the text of one token" <<<"$err"
test ! -e "$out/c"
echo "train_gpt --bpe: all checks passed"
