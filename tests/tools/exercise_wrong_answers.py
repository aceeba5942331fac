#!/usr/bin/env python3
"""Typical wrong answers, run through the exercises' checkers: each must make
its checker say NOT YET with the words that name the mistake.

    python3 tests/tools/exercise_wrong_answers.py [--build DIR] [ID ...]

exercises/wrong/<id>.txt lists an exercise's typical wrong answers as edits of
its reference solution:

    mistake: the derivative of x^2 taken as x
    replace: g * x.get(*this) * 2.0
    with: g * x.get(*this)
    expect: d(x^2)/dx = 2x

Each `replace:` text must occur exactly once in the solution (several
replace/with pairs may make one wrong answer; `\\n` in them is a line break);
every `expect:` text must appear in what the checker prints. The wrong file
is written to the build tree (DIR/exercises/wrong/) and built as the target
exercise_<id>_wrong, so nothing of the source tree or of exercises/mine/
changes. Without IDs: every exercise that has a file. Prints, for each wrong
answer, the checker's complaint and hint: what a learner making that mistake
reads.

    python3 tests/tools/exercise_wrong_answers.py [--build DIR] --stages [N ...]

does the same for the build-your-own stages (exercises/yours/, no N: all of
them): exercises/yours/wrong/NN.txt holds stage NN's wrong answers as edits
of the reference framework, each edit after a line naming its file,

    mistake: gradients assigned instead of added
    file: mini/value.cpp
    replace: input.node->grad += node->grad * input.local;
    with: input.node->grad = node->grad * input.local;
    expect: assigns (grad = ...) where it should add

The solution's files of stages 1 ... N (exercises/yours/stages.txt) are
copied to DIR/exercises/yours/wrong_N/, edited there, and built as yours_N_wrong.
"""

import argparse
import pathlib
import shutil
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]


def read_mistakes(path):
    """The wrong answers of one file: [{mistake, edits [(old, new)], expect [..]}]."""
    mistakes, current = [], None
    for n, raw in enumerate(path.read_text().splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        key, sep, value = line.partition(":")
        value = value.strip().replace("\\n", "\n")
        if not sep or key not in ("mistake", "replace", "with", "expect"):
            sys.exit(f"{path}:{n}: a line is 'mistake:', 'replace:', 'with:' or 'expect:', not '{line}'")
        if key == "mistake":
            current = {"mistake": value, "edits": [], "expect": []}
            mistakes.append(current)
        elif current is None:
            sys.exit(f"{path}:{n}: '{key}:' before the first 'mistake:'")
        elif key == "replace":
            current["edits"].append([value, None])
        elif key == "with":
            if not current["edits"] or current["edits"][-1][1] is not None:
                sys.exit(f"{path}:{n}: 'with:' must follow a 'replace:'")
            current["edits"][-1][1] = value
        else:
            current["expect"].append(value)
    for m in mistakes:
        if not m["edits"] or any(new is None for _, new in m["edits"]) or not m["expect"]:
            sys.exit(f"{path}: '{m['mistake']}' needs replace:/with: pairs and at least one expect:")
    return mistakes


def wrong_source(solution, mistake):
    text = solution.read_text()
    for old, new in mistake["edits"]:
        if text.count(old) != 1:
            return None, f"'{old}' occurs {text.count(old)} times in {solution.relative_to(ROOT)}, not once"
        text = text.replace(old, new)
    return text, None


def complaint(output):
    """The lines a learner reads about the failing step."""
    lines = output.splitlines()
    for i, line in enumerate(lines):
        if line.rstrip().endswith(("not yet", "still TODO", "crashed")) or "... not yet" in line:
            return "\n".join(lines[i:i + 8])
    return "\n".join(lines[-8:])


def build_and_judge(build, target, program, mistake):
    """Builds target (a checker on a wrong answer), runs it, and says whether
    it said NOT YET with every expected phrase: (ok, what it said)."""
    made = subprocess.run(["cmake", "--build", str(build), "--target", target, "-j2"],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if made.returncode != 0:
        return False, "the wrong answer does not compile:\n" + made.stdout[-2000:]
    ran = subprocess.run([str(program)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
    said = complaint(ran.stdout)
    if ran.returncode != 1 or "NOT YET" not in ran.stdout:
        return False, f"the checker should say NOT YET (status 1), it exited with {ran.returncode}:\n{said}"
    missing = [e for e in mistake["expect"] if e not in ran.stdout]
    if missing:
        return False, f"the checker did not say {missing}; it said:\n{said}"
    return True, said


def try_one(build, eid, mistake):
    solution = next((ROOT / "exercises/solutions").glob(f"{eid}_*.cpp"))
    text, problem = wrong_source(solution, mistake)
    if problem:
        return False, problem
    out_dir = build / "exercises/wrong"
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / solution.name).write_text(text)
    target = f"exercise_{eid.replace('.', '_')}_wrong"
    return build_and_judge(build, target, build / "exercises" / target, mistake)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=str(ROOT / "build"))
    ap.add_argument("ids", nargs="*")
    ap.add_argument("--stages", nargs="*", type=int, help="the build-your-own stages' wrong answers (none: all)")
    args = ap.parse_args()
    build = pathlib.Path(args.build).resolve()
    if args.stages is not None:
        return main_stages(build, args.stages)
    files = sorted((ROOT / "exercises/wrong").glob("*.txt"),
                   key=lambda p: [int(x) for x in p.stem.split(".")])
    if args.ids:
        files = [f for f in files if f.stem in args.ids]
        missing = set(args.ids) - {f.stem for f in files}
        if missing:
            sys.exit(f"no exercises/wrong/ID.txt for {sorted(missing)}")
    failed = tried = 0
    for f in files:
        for mistake in read_mistakes(f):
            tried += 1
            ok, said = try_one(build, f.stem, mistake)
            failed += not ok
            print(f"{'ok  ' if ok else 'FAIL'} {f.stem}: {mistake['mistake']}")
            print("      " + said.replace("\n", "\n      "))
    print(f"{tried - failed} passed, {failed} failed")
    return 1 if failed else 0


# ---- the build-your-own stages (exercises/yours/) ----

YOURS = ROOT / "exercises/yours"


def read_stages():
    """[(n, name, [files])] from exercises/yours/stages.txt."""
    stages = []
    for line in (YOURS / "stages.txt").read_text().splitlines():
        words = line.split()
        if words and words[0].isdigit():
            stages.append((int(words[0]), words[1], words[2:]))
    return stages


def read_stage_mistakes(path):
    """As read_mistakes, with a 'file:' line naming the file of the edits after it:
    [{mistake, edits [(file, old, new)], expect [..]}]."""
    mistakes, current, file = [], None, None
    for n, raw in enumerate(path.read_text().splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        key, sep, value = line.partition(":")
        value = value.strip().replace("\\n", "\n")
        if not sep or key not in ("mistake", "file", "replace", "with", "expect"):
            sys.exit(f"{path}:{n}: a line is 'mistake:', 'file:', 'replace:', 'with:' or 'expect:', not '{line}'")
        if key == "mistake":
            current, file = {"mistake": value, "edits": [], "expect": []}, None
            mistakes.append(current)
        elif current is None:
            sys.exit(f"{path}:{n}: '{key}:' before the first 'mistake:'")
        elif key == "file":
            file = value
        elif key == "replace":
            if file is None:
                sys.exit(f"{path}:{n}: 'replace:' needs a 'file:' line before it (file: mini/value.cpp)")
            current["edits"].append([file, value, None])
        elif key == "with":
            if not current["edits"] or current["edits"][-1][2] is not None:
                sys.exit(f"{path}:{n}: 'with:' must follow a 'replace:'")
            current["edits"][-1][2] = value
        else:
            current["expect"].append(value)
    for m in mistakes:
        if not m["edits"] or any(new is None for *_, new in m["edits"]) or not m["expect"]:
            sys.exit(f"{path}: '{m['mistake']}' needs file:, replace:/with: pairs and at least one expect:")
    return mistakes


def try_stage(build, n, files, mistake):
    """Stage n's checker on the solution with the mistake's edits (files: those of stages 1 ... n)."""
    tree = build / f"exercises/yours/wrong_{n}"  # a folder a stage: two stages can be tried at once
    shutil.rmtree(tree, ignore_errors=True)
    for f in files:
        (tree / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(YOURS / "solution" / f, tree / f)
    for f, old, new in mistake["edits"]:
        if f not in files:
            return False, f"{f} is not a file of stages 1 to {n} (exercises/yours/stages.txt)"
        text = (tree / f).read_text()
        if text.count(old) != 1:
            return False, f"'{old}' occurs {text.count(old)} times in exercises/yours/solution/{f}, not once"
        (tree / f).write_text(text.replace(old, new))
    target = f"yours_{n}_wrong"
    return build_and_judge(build, target, build / "exercises/yours" / target, mistake)


def main_stages(build, wanted):
    stages = read_stages()
    known = {n for n, _, _ in stages}
    if set(wanted) - known:
        sys.exit(f"no stage {sorted(set(wanted) - known)} in exercises/yours/stages.txt")
    failed = tried = 0
    files = []
    for n, _, own in stages:
        files += own
        path = YOURS / f"wrong/{n:02d}.txt"
        if (wanted and n not in wanted) or not path.exists():
            continue
        for mistake in read_stage_mistakes(path):
            tried += 1
            ok, said = try_stage(build, n, list(files), mistake)
            failed += not ok
            print(f"{'ok  ' if ok else 'FAIL'} stage {n}: {mistake['mistake']}")
            print("      " + said.replace("\n", "\n      "))
    print(f"{tried - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
