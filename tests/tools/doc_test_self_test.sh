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
echo "good page accepted; bad page refused for its eleven faults"
