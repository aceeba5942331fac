#!/usr/bin/env bash
# The doc-test on pages made to pass and to fail (tests/fixtures/doc_test/):
# it must accept the good page and refuse the bad one for each of its eleven
# faults, naming them.
#   doc_test_self_test.sh PYTHON
set -u
python=$1
here=$(cd "$(dirname "$0")/.." && pwd)
fixture=$here/fixtures/doc_test
run() { "$python" "$here/doc_test.py" --source "$fixture" --build "$fixture" --files "$@" 2>&1; }

out=$(run good.md) || { echo "the doc-test refused the good page:"; echo "$out"; exit 1; }
out=$(run bad.md) && { echo "the doc-test accepted the bad page:"; echo "$out"; exit 1; }
failures=0
for want in "the docs say 41.5, but" "the number 3.14 looks like a program's figure" \
            "there is no lib/missing.h" "lib/thing.h defines no nothing" "answer 42.5 after 1300 steps" \
            "is not what today's 'echo" "a measured block names today=KEY" \
            "bad.md:13: a doc-test marker inside a sentence" "the paragraph above has no 1200 after 42.5" \
            "the number 2.75 looks like a program's figure" "'42.5 is hello' is not an entry"; do
  grep -qF "$want" <<<"$out" || { echo "the doc-test's report lacks: $want"; failures=$((failures + 1)); }
done
((failures == 0)) || { echo "$out"; exit 1; }

# --refresh rewrites a table of sizes row by row: the row of n = 16, m = 256
# takes that row's new numbers, not those of the first row whose words are
# alike (n = 16, m = 2).
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/docs/book/measured"
{
  head -n 5 "$fixture/docs/book/measured/step.txt"
  echo "# command: the sizes"
  printf '     n      m    ms\n     1     16   0.20\n    16     16   0.30\n    16      2   0.40\n    16    256   0.90\n'
} >"$scratch/docs/book/measured/sizes.txt"
cat >"$scratch/sizes.md" <<'PAGE'
Measured on a test machine with 2 cores at commit 0000000.
<!-- numbers:
on sizes
-->

<!-- measured: sizes timings -->
```text
     n      m    ms
     1     16   0.10
...
    16    256   0.80
```
PAGE
"$python" "$here/doc_test.py" --source "$scratch" --build "$scratch" --files sizes.md --refresh --no-measured-runs >/dev/null 2>&1
grep -q '^    16    256   0.90$' "$scratch/sizes.md" && grep -q '^     1     16   0.20$' "$scratch/sizes.md" ||
  { echo "--refresh did not rewrite the table row by row:"; cat "$scratch/sizes.md"; exit 1; }
echo "good page accepted; bad page refused for its eleven faults; a table refreshed row by row"
