#!/usr/bin/env python3
"""check_lesson_c_params.py LOG SUMMARY: the params column of lesson_c_race's
summary.txt holds, for each model, the parameter counts of the models the
recall, reverse and text races built ("recall / reverse / text", "-" where a
race had no such model), as each race printed them when it trained them
(LOG: the program's output). Exits 1, naming the row, when one differs."""
import re
import sys

RACES = [("recall", "1. Recall"), ("reverse", "2. Reverse"), ("text", "3. Next character")]


def printed_counts(log):
    """{race: {label: count}} from the lines '  LSTM   20028 params  300 steps ...'."""
    counts, race = {name: {} for name, _ in RACES}, None
    for line in log.splitlines():
        for name, head in RACES:
            if line.startswith(head):
                race = name
        if line.startswith("4. "):
            race = None
        m = re.match(r"^  (\S.*?)\s+(\d+) params ", line)
        if race and m:
            counts[race][m.group(1)] = m.group(2)
    return counts


def main():
    log, summary = open(sys.argv[1]).read(), open(sys.argv[2]).read().splitlines()
    counts = printed_counts(log)
    if not all(counts.values()):
        sys.exit("check_lesson_c_params: %s lacks a race's models: %s" % (sys.argv[1], counts))
    head = next(i for i, line in enumerate(summary) if line.startswith("model"))
    rows = 0
    for line in summary[head + 1:]:
        if line.startswith("params"):
            break
        label = line[:27].rstrip()
        m = re.match(r"^\s*(\S+) / (\S+) / (\S+)\s", line[29:])
        if not m:
            sys.exit("check_lesson_c_params: the params column of '%s' does not read recall / reverse / text" % label)
        for (race, _), got in zip(RACES, m.groups()):
            want = counts[race].get(label, "-")
            if got != want:
                sys.exit("check_lesson_c_params: %s: the %s race built %s parameters, the summary says %s"
                         % (label, race, want, got))
        rows += 1
    if rows < 6:
        sys.exit("check_lesson_c_params: %d rows in the summary, expected every model's" % rows)
    print("check_lesson_c_params: the params of %d models match what each race built" % rows)


if __name__ == "__main__":
    main()
