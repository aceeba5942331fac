#!/usr/bin/env python3
"""The doc-test: no number in the docs that a program does not print, and no
file or function named in them that the tree does not have.

It reads README.md, docs/mainpage.md, exercises/README.md, docs/book/*.md and
docs/book/build_your_own/*.md (the build-your-own part) and understands a few
HTML comments (invisible on GitHub and in Doxygen):

  <!-- run: KEY [tol=T] [needs=P] [status=S] -->
                                   before a ```sh block: its commands are KEY;
                                   they run (once, in a scratch directory) if
                                   something refers to KEY, must end with exit
                                   status S (default 0; "any"), and are skipped
                                   when the program P is missing
  <!-- output: KEY [tol=T] -->     before a fenced block: every line of the
                                   block appears in KEY's output, in order
                                   (a line "..." skips any lines); the words
                                   must be equal, the numbers within tolerance
  <!-- measured: NAME today=KEY [timed="C|P #"] [tol=T] [bits] [slow] -->
  <!-- measured: NAME timings|reference -->
                                   before a fenced block: as output, against
                                   docs/book/measured/NAME.txt, which
                                   scripts/measure_book.sh wrote; and every
                                   line again, in any order, against KEY's
                                   output (today's program) but for its
                                   timings: a number with a unit of time or
                                   rate, an m:ss, a
                                   number in a column headed C (an earlier
                                   line of the block) or where # stands in a
                                   phrase P (each item of timed=). tol= is
                                   how far today's numbers may be from the
                                   record's on another machine (on the
                                   record's machine: to the last digit); with
                                   bits the block depends on the arithmetic's
                                   last bits and is compared only there;
                                   a slow one only with --slow.
                                   "timings": every number of the block is a
                                   time, a rate, a ratio of times, a resident
                                   size or an input the command gave;
                                   "reference": another framework's output
  <!-- prose -->                   above a fenced block: none of its numbers
                                   is a program's figure (a lesson's
                                   hand-worked input)

A paragraph's numbers are checked by one comment right under it (no blank
line between), never by a marker inside a sentence, where a reader of the
source would trip over it:

  The untrained model's loss is 4.19, next to the uniform guess 4.17,
  measured on an AMD EPYC with 2 cores at commit b896232 in 1994.
  <!-- numbers:
  4.19 = gpt200 "validation loss at step 0" 1
  4.17 = gpt200 "validation loss at step 0" > "ln 65 =" 1 tol=0.01
  on train_gpt
  1994 prose
  -->

One entry a line, in the order their numbers stand in the paragraph (its
lines up to a blank line, a heading or a fence: a list or a table too):

  VALUE = KEY "A" [> "B"] N [tol=T]
                                   the paragraph's next VALUE (after the entry
                                   before) is the N-th number (1-based; -1 is
                                   the last) of the first line of KEY's output
                                   that contains "A" (after "A", the first
                                   line containing "B"); a unit or a closing
                                   backtick may follow it
  VALUE = @NAME "A" N [tol=T]      ... of docs/book/measured/NAME.txt
  VALUE prose                      the next VALUE is not a program's figure
                                   (a year, a lesson's hand-worked input)
  on NAME                          the next "commit HASH" is that of
                                   docs/book/measured/NAME.txt, and the
                                   paragraph names the machine it records

A tolerance T is absolute (tol=0.01) or relative (tol=2%). Without one, a
number may differ by half a unit of its last written digit (the doc rounds
the program's value). The run's tol applies to every check of that KEY.

Every other number in prose or tables that looks like a program's figure (a
decimal fraction, an integer of 100 or more, a number with a unit of time,
size or rate) must have an entry. Numbers in inline code and in
sh/cpp/cmake/formula/diagram blocks are inputs, not figures; other fenced
blocks with such numbers must be checked (or marked prose). Headings and the
numbers of chapters, lessons, exercises and versions are not figures.

  <!-- packages: SCRIPT -->        before the README's install block: the
                                   packages must be SCRIPT's pkgs=(...) list

The README has at most 250 lines, and its test command is what .ci/run runs.

Paths: every `dir/file.ext`, `dir/`, `file.cpp:function` and
`file.h:Class::member` in inline code, every link and image target, and every
path in a sh block must exist (build/ and out/ are made by programs and not
checked); for `file:name`, the name must be defined or declared in the file.
Exercises: every `scripts/exercise.sh ID` names an exercise, and every
exercise is named in its chapter. Build your own: each stage of
exercises/yours/stages.txt has its chapter NN_name.md, headed "# Stage N:
TITLE" and ending with a "Next:" line that links the next stage (the last
one the part's README), the part's README lists them all in order, every
`scripts/build_your_own.sh N` names a stage and each stage's chapter names
its own; the book's README and the front README link the part. Pictures:
the line under each picture of the book names the command and the commit
that drew it, as docs/images/drawn_by.txt records them.

  doc_test.py --source DIR --build DIR [--jobs N] [--keep DIR [--reuse]] [--only FILE | --files F...]
              [--slow | --slow-only | --no-measured-runs]
"""

import argparse
import concurrent.futures
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

DOCS = ["README.md", "docs/mainpage.md", "exercises/README.md"]
BOOK = "docs/book"
YOURS = "docs/book/build_your_own"
MEASURED = "docs/book/measured"
README_MAX_LINES = 250

SUPERSCRIPT = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻", "0123456789-")
# A number as the docs write it: 1.5, -0.25, 1e-18, 1.3·10⁻¹⁸, 313344.
NUMBER_BODY = r"(?<![\w.])[-−]?\d+(?:\.\d+)?(?:(?:e[-+]?\d+)|(?:·10[⁻]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+))?"
DOC_NUMBER = re.compile(NUMBER_BODY + r"(?![\w])")
# A number as programs print them.
OUT_NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
UNIT = r"(?:%|×|x\b|\s?ms\b|\s?µs\b|\s?ns\b|\s?s\b|\s?MB\b|\s?KiB\b|\s?MiB\b|\s?GB/s\b|\s?GFLOP/s\b|\s?bytes\b)"
# A number as an entry names it and as prose is scanned for figures: a unit
# may follow it without a space (3.12x, 5ms).
ENTRY_NUMBER = re.compile(NUMBER_BODY + rf"(?=(?:{UNIT})|(?![\w]))")
COMMENT = re.compile(r"<!--(.*?)-->", re.S)
FENCE = re.compile(r"^(\s*)```(\w*)")
CODE_LANGS = {"sh", "bash", "cpp", "c++", "cmake", "diagram", "formula"}


class Problems:
    def __init__(self):
        self.items = []

    def add(self, where, message):
        self.items.append(f"{where}: {message}")


def parse_number(text):
    """The value of a number as written in the docs, or None."""
    t = text.replace("−", "-").strip()
    if "·10" in t:
        mant, exp = t.split("·10")
        return float(mant) * 10 ** int(exp.translate(SUPERSCRIPT))
    try:
        return float(t)
    except ValueError:
        return None


def allowed_error(doc_text, value, tol):
    """How far a program's number may be from the docs' `doc_text`."""
    rounding = 0.0
    t = doc_text.replace("−", "-")
    if "e" not in t and "·" not in t and "." in t:
        rounding = 0.5 * 10 ** -len(t.split(".")[1])
    elif "e" in t or "·" in t:  # 1.3e-18: half a unit of the mantissa's last digit
        mant = t.split("e")[0].split("·")[0]
        digits = len(mant.split(".")[1]) if "." in mant else 0
        rounding = 0.5 * 10 ** -digits * abs(value) / max(abs(float(mant)), 1e-300)
    extra = 0.0
    if tol:
        extra = abs(value) * float(tol[:-1]) / 100 if tol.endswith("%") else float(tol)
    return max(rounding, extra) * (1 + 1e-9) + 1e-15


def options(words):
    """key=value words of an annotation."""
    return dict(w.split("=", 1) for w in words if "=" in w)


# ---- reading the markdown ----

class Block:
    def __init__(self, lang, lines, line, annotation):
        self.lang, self.lines, self.line, self.annotation = lang, lines, line, annotation


def split_markdown(text):
    """(prose lines with their numbers, fenced blocks). An annotation is the
    HTML comment on the line right above a block (blank lines allowed)."""
    prose, blocks = [], []
    lines = text.split("\n")
    i = 0
    pending = None
    in_comment = False
    while i < len(lines):
        line = lines[i]
        m = FENCE.match(line)
        if m and not in_comment:
            lang, body, start = m.group(2), [], i + 1
            i += 1
            while i < len(lines) and not lines[i].strip().startswith("```"):
                body.append(lines[i])
                i += 1
            blocks.append(Block(lang, body, start, pending))
            pending = None
            i += 1
            continue
        stripped = line.strip()
        c = re.fullmatch(r"<!--(.*?)-->", stripped)
        if c and re.match(r"\s*(run:|output:|measured:|packages:|prose\s*$)", c.group(1)):
            pending = c.group(1).strip()
        elif stripped:
            pending = None
        if "<!--" in line and "-->" not in line.split("<!--", 1)[1]:
            in_comment = True
        if in_comment and "-->" in line:
            in_comment = "<!--" in line.rsplit("-->", 1)[1]
        prose.append((i + 1, line))
        i += 1
    return prose, blocks


def quoted(spec):
    """'"A" > "B" 3 tol=1%' -> (["A", "B"], 3, {"tol": "1%"})"""
    parts = re.findall(r'"([^"]*)"', spec)
    rest = re.sub(r'"[^"]*"', " ", spec).replace(">", " ").split()
    index = None
    for w in rest:
        if re.fullmatch(r"-?\d+", w):
            index = int(w)
    return parts, index, options(rest)


# ---- the numbers blocks: a paragraph's checks, under it ----
#
# A reader of the Markdown source should not trip over a marker in the middle
# of a sentence, so a paragraph's checks stand in one comment under it:
#
#     Two ranks end at a validation loss of 2.92127, one process at 2.92127.
#     <!-- numbers:
#     2.92127 = ddp2 "final validation loss" 1
#     2.92127 = ddp1 "final validation loss" 1
#     -->
#
# Before anything else reads a file, expand_numbers puts each entry back as
# the comment it stands for, right after its number (2.92127<!-- = ddp2 ... -->),
# and blanks the block: the lines keep their numbers, so every later check
# and its message point at the line the number is on.

NUMBERS_START = re.compile(r"^\s*<!--\s*numbers:\s*$")
COMMIT = re.compile(r"\bcommit\s+([0-9a-f]{7,40})\b")
ENTRY_FORMS = 'VALUE = KEY "A" N, VALUE = @NAME "A" N, VALUE prose or on NAME'


class Entry:
    """One line of a numbers block: 'VALUE = SPEC' (kind "="), 'VALUE prose'
    or 'on NAME' (kind "on", VALUE the commit it finds). Once placed, `at`
    is (line, start, end) of its number (or commit) in the paragraph."""

    def __init__(self, line, kind, value, spec):
        self.line, self.kind, self.value, self.spec = line, kind, value, spec
        self.at = None

    def marker(self):
        """The comment check_prose reads after the number."""
        return {"=": f"<!-- = {self.spec} -->", "prose": "<!-- prose -->",
                "on": f"<!-- measured-on: {self.spec} -->"}[self.kind]


def parse_entry(index, text):
    """An Entry of the block's line `index`, or None if the line is no entry."""
    m = re.fullmatch(r"(\S+)\s*=\s*(\S.*)", text.strip())
    if m and DOC_NUMBER.fullmatch(m.group(1)):
        return Entry(index, "=", m.group(1), m.group(2).strip())
    m = re.fullmatch(r"(\S+)\s+prose", text.strip())
    if m and DOC_NUMBER.fullmatch(m.group(1)):
        return Entry(index, "prose", m.group(1), "")
    m = re.fullmatch(r"on\s+([\w.-]+)", text.strip())
    if m:
        return Entry(index, "on", None, m.group(1))
    return None


def outside_fences(lines):
    """The indices of the lines that are not in a fenced block (nor its fences)."""
    fenced = False
    for i, line in enumerate(lines):
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced:
            yield i


def numbers_blocks(lines):
    """(first, last) line index of each numbers block; last is None when no
    line "-->" closes it."""
    after = -1
    for i in outside_fences(lines):
        if i <= after or not NUMBERS_START.match(lines[i]):
            continue
        after = next((j for j in range(i + 1, len(lines)) if lines[j].strip() == "-->"), None)
        yield i, after
        if after is None:
            return


def is_paragraph_line(line):
    """Part of a paragraph, a list or a table: not blank, a heading, a fence
    or a comment of its own (an annotation, the end of another block)."""
    s = line.strip()
    return bool(s) and not s.startswith(("#", "<!--", "-->", "```", "~~~"))


def paragraph_above(lines, block):
    """The index of the first line of the paragraph right above line
    `block`, or None when there is none (a blank line comes first)."""
    first = block
    while first > 0 and is_paragraph_line(lines[first - 1]):
        first -= 1
    return first if first < block else None


def searchable(text):
    """A paragraph as the entries' numbers are looked up in it: comments,
    link targets and addresses blanked (a number there is no figure), inline
    code kept (a figure may be written in code)."""
    for pattern in (r"<!--.*?-->", r"\]\([^)]*\)", r"https?://\S+"):
        text = mask(text, pattern)
    return text


def place_entries(md, lines, first, block, entries, problems):
    """Finds each entry's number in the paragraph lines[first:block], each
    after the one before, and sets its `at`."""
    text = searchable("\n".join(lines[first:block]))
    starts = [0]
    for line in lines[first:block]:
        starts.append(starts[-1] + len(line) + 1)

    def line_col(offset):
        k = max(i for i, s in enumerate(starts) if s <= offset)
        return first + k, offset - starts[k]

    pos, before = 0, "its start"
    for e in entries:
        if e.kind == "on":
            m = COMMIT.search(text, pos)
            if m is None:
                problems.add(f"{md}:{e.line + 1}", f"on {e.spec}: the paragraph above names no commit "
                                                   f"('at commit 1a2b3c4') after {before}")
                continue
            span, e.value = m.span(1), m.group(1)
        else:
            m = next((n for n in ENTRY_NUMBER.finditer(text, pos) if n.group(0) == e.value), None)
            if m is None:
                problems.add(f"{md}:{e.line + 1}", f"the paragraph above has no {e.value} after {before} "
                                                   "(the entries go in the order their numbers stand)")
                continue
            span = m.span()
        line, col = line_col(span[0])
        e.at = (line, col, col + span[1] - span[0])
        pos, before = span[1], e.value


def refuse_inline_markers(md, lines, blocked, problems):
    """A check written into a sentence: the form the numbers blocks replace."""
    for i in outside_fences(lines):
        if i in blocked or lines[i].strip() == "<!-- prose -->":  # a whole block's mark stays
            continue
        code_masked = mask(lines[i], r"`[^`]*`")
        for m in COMMENT.finditer(code_masked):
            body = m.group(1).strip()
            if body.startswith(("=", "measured-on:")) or body == "prose":
                problems.add(f"{md}:{i + 1}", f"a doc-test marker inside a sentence (<!-- {body} -->): list it "
                                              "in a <!-- numbers: --> block after the paragraph")


def insert_markers(lines, entries):
    """Each entry's comment right after its number, as check_prose reads it."""
    for e in sorted(entries, key=lambda e: e.at, reverse=True):  # from the right: the columns hold
        i, _, end = e.at
        lines[i] = lines[i][:end] + e.marker() + lines[i][end:]


def expand_numbers(md, text, problems):
    """The file as the checks read it: every numbers block's entries put back
    as comments after their numbers and the block blanked. Returns that text
    and the entries that were placed (--refresh rewrites their numbers)."""
    lines = text.split("\n")
    placed, blocked = [], set()
    for start, end in numbers_blocks(lines):
        if end is None:
            problems.add(f"{md}:{start + 1}", "this <!-- numbers: block has no line '-->' to end it")
            break
        blocked.update(range(start, end + 1))
        entries = []
        for k in range(start + 1, end):
            e = parse_entry(k, lines[k])
            if e:
                entries.append(e)
            elif lines[k].strip():
                problems.add(f"{md}:{k + 1}", f"'{lines[k].strip()}' is not an entry: {ENTRY_FORMS}")
        first = paragraph_above(lines, start)
        if first is None:
            problems.add(f"{md}:{start + 1}", "a <!-- numbers: --> block goes right under its paragraph, "
                                              "with no blank line between")
            continue
        place_entries(md, lines, first, start, entries, problems)
        placed += [e for e in entries if e.at]
    refuse_inline_markers(md, lines, blocked, problems)
    for i in blocked:
        lines[i] = ""
    insert_markers(lines, placed)
    return "\n".join(lines), placed


# ---- running the programs ----

class Runner:
    def __init__(self, source, build, jobs, keep, reuse):
        self.source, self.build, self.jobs, self.keep, self.reuse = source, build, jobs, keep, reuse
        self.commands = {}  # key -> (command, tol, where)
        self.needs = {}     # key -> a program the command needs (skipped without it)
        self.status = {}    # key -> the exit status it must end with ("any": whatever)
        self.skipped = []
        self.wanted = set()
        self.outputs = {}   # key -> (status, text)

    def define(self, key, command, tol, where, problems):
        if key in self.commands and self.commands[key][0] != command:
            problems.add(where, f"run key '{key}' is already the command '{self.commands[key][0]}'")
        self.commands.setdefault(key, (command, tol, where))

    def run_one(self, key):
        command = self.commands[key][0]
        saved = pathlib.Path(self.keep or "") / key / "doc_test_output.txt"
        if self.keep and self.reuse and saved.exists():
            return key, int(self.status.get(key, "0").replace("any", "0")), saved.read_text()
        # The docs write commands as a reader runs them from the repository root.
        shell = command.replace("./build/", str(self.build) + "/")
        shell = re.sub(r"(?<![\w/.])(scripts|bench|data|python)/", str(self.source) + r"/\1/", shell)
        scratch = pathlib.Path(self.keep) / key if self.keep else pathlib.Path(tempfile.mkdtemp(prefix="doc_test_"))
        scratch.mkdir(parents=True, exist_ok=True)
        try:
            return self.run_in(key, shell, scratch, saved)
        finally:
            if not self.keep:  # what the programs wrote (checkpoints, pictures) goes
                shutil.rmtree(scratch, ignore_errors=True)

    def run_in(self, key, shell, scratch, saved):
        # Open MPI refuses root unless told; CI runs as root.
        env = dict(os.environ, OMP_WAIT_POLICY="passive", OMPI_ALLOW_RUN_AS_ROOT="1",
                   OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_btl="self,vader")
        try:
            p = subprocess.run(["bash", "-c", shell], cwd=scratch, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, timeout=900, text=True)
            if self.keep:
                saved.write_text(p.stdout)
            return key, p.returncode, p.stdout
        except subprocess.TimeoutExpired:
            return key, -1, "(timed out after 900 s)"

    def run_wanted(self, problems):
        todo = [k for k in sorted(self.wanted) if k in self.commands]
        for k in list(todo):
            need = self.needs.get(k)
            if need and not shutil.which(need):
                self.skipped.append(f"{k} (no {need})")
                todo.remove(k)
        for k in sorted(self.wanted - set(self.commands)):
            problems.add("docs", f"a check refers to the command '{k}', but no <!-- run: {k} --> block defines it")
        # The long runs first, so that the short ones fill in beside them.
        todo.sort(key=lambda k: not re.search(r"lesson_c_race|train_gpt|mpirun", self.commands[k][0]))
        with concurrent.futures.ThreadPoolExecutor(max_workers=self.jobs) as pool:
            for key, status, text in pool.map(self.run_one, todo):
                want = self.status.get(key, "0")
                ok = want == "any" or status == int(want)
                self.outputs[key] = (0 if ok else status, text)
                if not ok:
                    problems.add(self.commands[key][2], f"the command '{self.commands[key][0]}' ended with status "
                                 f"{status}, not {want}; its output ends:\n" + "\n".join(text.splitlines()[-15:]))

    def text(self, key):
        return self.outputs.get(key, (1, ""))[1]


def measured_file(source, name):
    path = source / MEASURED / f"{name}.txt"
    return path.read_text() if path.exists() else None


def header_field(text, field):
    m = re.search(rf"^# {field}: (.*)$", text, re.M)
    return m.group(1).strip() if m else ""


# ---- comparing ----

def tokens(line):
    """A line as words and numbers: ("words", [numbers as text])."""
    nums = OUT_NUMBER.findall(line)
    words = " ".join(OUT_NUMBER.sub("#", line).split())
    return words, nums


def line_matches(doc_line, out_line, tol):
    dw, dn = tokens(doc_line)
    ow, on = tokens(out_line)
    if dw != ow or len(dn) != len(on):
        return False
    for d, o in zip(dn, on):
        dv, ov = parse_number(d), float(o)
        if abs(dv - ov) > allowed_error(d, ov, tol):
            return False
    return True


def match_block(block_lines, out_text, same, prefer=None):
    """Matches a block's lines to the output, in order: (None, [the output line
    each block line matched, or None for "..." and blank lines]) or, on the
    first line that does not match, (that line, the nearest output line).
    A line after "..." goes to the first output line that is `same`, or with
    `prefer` (a score) to the one that scores highest (the same row of a
    table of sizes), the first of those."""
    out = [l.rstrip() for l in out_text.splitlines()]
    matched = []
    pos = 0
    anchored = False  # after the first line, lines must follow one another unless "..." intervenes
    for line in (l.rstrip() for l in block_lines):
        if line.strip() in ("...", "…"):
            anchored = False
            matched.append(None)
            continue
        if not line.strip():
            matched.append(None)
            continue
        if anchored:
            while pos < len(out) and not out[pos].strip():
                pos += 1
            if pos < len(out) and same(line, out[pos]):
                matched.append(out[pos])
                pos += 1
                continue
            return (line, out[pos] if pos < len(out) else "(end of output)"), None
        candidates = [j for j in range(pos, len(out)) if same(line, out[j])]
        found = max(candidates, key=lambda j: (prefer(line, out[j]) if prefer else 0, -j), default=None)
        if found is None:
            near = next((o for o in out if tokens(o)[0] == tokens(line)[0]), None)
            return (line, near or "(no line with these words)"), None
        matched.append(out[found])
        pos, anchored = found + 1, True
    return None, matched


def compare_block(block_lines, out_text, tol):
    """None when every line appears in order, else the first line that does not."""
    bad, _ = match_block(block_lines, out_text, lambda d, o: line_matches(d, o, tol))
    return bad


def same_words(doc_line, out_line):
    """The same line but for its numbers (what --refresh replaces)."""
    dw, dn = tokens(doc_line)
    ow, on = tokens(out_line)
    return dw == ow and len(dn) == len(on)


def leading_equal_numbers(doc_line, out_line):
    """How many of the two lines' first numbers are equal: a table's row for
    the same sizes has the most (the row of T = 256 is not the row of
    T = 128, nor n = 16, m = 2 the row of n = 16, m = 256, though their words
    are alike)."""
    count = 0
    for d, o in zip(tokens(doc_line)[1], tokens(out_line)[1]):
        if d != o:
            break
        count += 1
    return count


# ---- a measured block against today's program ----

TIMED_UNIT = re.compile(r"^\s?(?:ms|µs|us|ns|s|min|tok/s|tokens/s|GFLOP/s|GB/s)\b")
CLOCK = re.compile(r"(?<![\w.:])\d+(?::\d\d)+(?![\w:])")


def header_columns(line):
    """A table's header as (name, start, end) columns: names apart by two spaces or more."""
    return [(m.group(0), m.start(), m.end()) for m in re.finditer(r"\S+(?: \S+)*", line)]


def timed_numbers(line, earlier, items):
    """Which numbers of a measured block's line (their indices among
    OUT_NUMBER's matches) are timings: the ones today's run may change."""
    spans = [m.span() for m in OUT_NUMBER.finditer(line)]
    timed = set()
    clocks = [m.span() for m in CLOCK.finditer(line)]
    for i, (a, b) in enumerate(spans):
        if TIMED_UNIT.match(line[b:]) or any(ca <= a and b <= cb for ca, cb in clocks):
            timed.add(i)
    columns = [x for x in items if "#" not in x]
    for item in items:
        if "#" in item:  # a phrase: the number where # stands
            before, after = (re.escape(x.strip()) for x in item.split("#", 1))
            pattern = (before + r"\s*" if before else "") + f"({OUT_NUMBER.pattern})" + (r"\s*" + after if after else "")
            for m in re.finditer(pattern, line):
                timed |= {i for i, (a, b) in enumerate(spans) if (a, b) == m.span(1)}
    # A table: the last earlier line with a timed column heads the rows
    # after it, up to a blank line, a "## " heading or a line much wider than
    # the header (prose, not a row). A number belongs to the column whose
    # stretch of the header (after the column before it, up to its own end)
    # holds the number's end — a "16.3%" ends at its "%" — and a number past
    # the last column (a wide value pushed the row right) to the last column.
    header = None
    for h in reversed(earlier):
        if not h.strip() or h.startswith("## "):
            break
        if any(n in columns for n, _, _ in header_columns(h)):
            header = h
            break
    if header is not None and len(line.rstrip()) <= len(header.rstrip()) + 12:
        cols = header_columns(header)
        for i, (a, b) in enumerate(spans):
            end = b + len(re.match(r"\S*", line[b:]).group(0))
            name = next((c[0] for k, c in enumerate(cols) if (cols[k - 1][2] if k else -1) < end <= c[2] + 1),
                        cols[-1][0] if end > cols[-1][2] else None)
            if name in columns:
                timed.add(i)
    return timed


def compare_today(block_lines, out_text, opts, tol):
    """None when every line of a measured block appears in today's output,
    in any order (a profile's rows are sorted by time, and close ones swap),
    with the same words and every number but its timings within tol; else
    (the first line that does not, the nearest output line)."""
    items = [x for x in str(opts.get("timed") or "").split("|") if x.strip()]
    lines = [l.rstrip() for l in block_lines]
    out = [l.rstrip() for l in out_text.splitlines()]

    def same(k, out_line):
        # Whether the machine's peaks came from the cache says how the machine
        # was when the program ran (a fresh machine measures them), not what it computed.
        unc = lambda l: l.replace(", measured before and cached", "")
        (dw, dn), (ow, on) = tokens(unc(lines[k])), tokens(unc(out_line))
        if dw != ow or len(dn) != len(on):
            return False
        skip = timed_numbers(lines[k], lines[:k], items)
        return all(i in skip or abs(parse_number(d) - float(o)) <= allowed_error(d, float(o), tol)
                   for i, (d, o) in enumerate(zip(dn, on)))

    for k, line in enumerate(lines):
        if not line.strip() or line.strip() in ("...", "…") or line.startswith("## "):
            continue  # (a "## " line is the record's own heading of a part)
        if not any(same(k, o) for o in out):
            near = next((o for o in out if tokens(o)[0] == tokens(line)[0]), None)
            return line, near or "(no line with these words)"
    return None


def machine_of(text):
    """A record's machine without who chose its kernels: what the bits depend on."""
    return re.sub(r"\s*\((?:OPENBLAS_CORETYPE=[^)]*|chosen by [^)]*)\)", "", header_field(text, "machine")).strip()


def this_machine(build):
    """This machine as scripts/measure_book.sh's header writes it."""
    cpu = ""
    for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    try:
        out = subprocess.run([str(build / "examples/tensor_tour")], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True, timeout=120).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    m = re.search(r"^machine: [^;]*; (.*)$", out, re.M)
    if not m or os.environ.get("EMBER_SIMD"):
        return None  # a SIMD width set by hand: not the record's arithmetic
    text = f"# machine: {cpu} with {len(os.sched_getaffinity(0))} cores ({m.group(1).strip()})\n"
    return machine_of(text)


def find_number(text, parts, index):
    lines = text.splitlines()
    pos = 0
    for p in parts:
        while pos < len(lines) and p not in lines[pos]:
            pos += 1
        if pos == len(lines):
            return None, f'no line contains "{p}"'
    line = lines[pos]
    tail = line.split(parts[-1], 1)[1] if len(parts) > 0 else line
    nums = OUT_NUMBER.findall(tail)
    if index is None or not nums or index == 0 or abs(index) > len(nums):
        return None, f'the line "{line.strip()}" has no number {index} after "{parts[-1]}"'
    return nums[index - 1 if index > 0 else index], line.strip()


# ---- the checks ----

TIME_OR_SIZE = re.compile(r"^\s?(ms|µs|ns|s|min|MB|MiB|KiB|GB|GiB|GB/s|GFLOP/s|MFLOP|tok/s|tokens/s)\b")


def figure_like(text, before, after=""):
    """Does a number in prose look like a program's figure?"""
    t = text.replace("−", "-")
    if re.search(r"(?i)(exercise|exercises|chapter|chapters|§|lesson|version|C\+\+|OpenBLAS|PyTorch|Debian|CMake)\s*$",
                 before) or before.endswith("**"):  # "**2.1 Title.**" heads an exercise
        return False
    if re.search(r"[A-Za-z]-$", before):  # a name: AVX-512, UTF-8
        return False
    if "." in t or "e" in t or "·" in t or TIME_OR_SIZE.match(after):
        return True
    return abs(float(t)) >= 100


def mask(text, pattern):
    """text with every match of pattern blanked (newlines kept, so lines stay lines)."""
    return re.sub(pattern, lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def check_prose(md, prose, runner, source, problems, inline_checks):
    lines = [line for _, line in prose]
    numbers = [n for n, _ in prose]
    # Inline code may run over a line break (never over a blank line).
    masked = mask("\n".join(lines), r"`[^`\n]*(?:\n[^`\n]+)*`").split("\n")
    paragraph = ""
    on_checks = []  # this paragraph's measured-on checks: the machine and commit may stand anywhere in it

    def end_paragraph():
        for k in on_checks:
            inline_checks[k] = inline_checks[k][:3] + (" ".join(paragraph.split()),)
        on_checks.clear()

    for lineno, line, plain in zip(numbers, lines, masked):
        where = f"{md}:{lineno}"
        if not line.strip():
            end_paragraph()
        paragraph = "" if not line.strip() else paragraph + " "
        if line.lstrip().startswith("#") or line.strip() == "<!-- prose -->":  # headings; a block's mark
            continue
        # Annotations after numbers, then the numbers that carry none.
        covered = set()
        for m in COMMENT.finditer(line):
            body = m.group(1).strip()
            before = line[:m.start()]
            if body.startswith("measured-on:"):
                on_checks.append(len(inline_checks))
                inline_checks.append(("on", where, body.split(":", 1)[1].strip(), ""))
                # the commit just before it is a hash, not a figure (303e203 reads like a number)
                commit = re.search(r"\b[0-9a-f]{7,40}$", before)
                if commit:
                    covered.add(commit.start())
                continue
            if not (body.startswith("=") or body == "prose"):
                continue
            nm = re.search(rf"({DOC_NUMBER.pattern}){UNIT}?`?$", before)
            if not nm:
                problems.add(where, f"<!-- {body} --> must follow a number directly")
                continue
            covered.add(nm.start(1))
            if body.startswith("="):
                inline_checks.append(("num", where, body[1:].strip(), nm.group(1)))
        paragraph += line
        text = mask(plain, r"<!--.*?-->")
        text = mask(text, r"\]\([^)]*\)")  # link targets
        text = mask(text, r"https?://\S+")
        for m in ENTRY_NUMBER.finditer(text):  # 1.75x too, which an entry may name
            if m.start() in covered or not figure_like(m.group(0), text[:m.start()], text[m.end():]):
                continue
            problems.add(where, f"the number {m.group(0)} looks like a program's figure but has no entry in "
                                f"a <!-- numbers: --> block under its paragraph ({m.group(0)} = KEY \"line\" N, "
                                f"or {m.group(0)} prose)")
    end_paragraph()


def check_blocks(md, blocks, runner, source, problems, block_checks):
    for b in blocks:
        where = f"{md}:{b.line}"
        ann = b.annotation or ""
        kind, _, spec = ann.partition(":")
        words = spec.split()
        if kind == "run":
            if b.lang not in ("sh", "bash"):
                problems.add(where, "<!-- run: --> belongs above a ```sh block")
                continue
            cmds = [l.split(" #")[0].strip() for l in b.lines if l.strip() and not l.strip().startswith("#")]
            runner.define(words[0], "\n".join(cmds), options(words[1:]).get("tol"), where, problems)
            runner.status[words[0]] = options(words[1:]).get("status", "0")
            if "needs" in options(words[1:]):
                runner.needs[words[0]] = options(words[1:])["needs"]
        elif kind == "output":
            block_checks.append((kind, where, words[0], options(words[1:]).get("tol"), b.lines, (md, b.line), {}))
        elif kind == "measured":
            try:
                words = shlex.split(spec)
            except ValueError as e:
                problems.add(where, f"<!-- measured: {spec} -->: {e}")
                continue
            opts = options(words[1:])
            opts.update({w: True for w in words[1:] if "=" not in w})
            if sum(1 for k in ("today", "timings", "reference") if opts.get(k)) != 1:
                problems.add(where, "a measured block names today=KEY, the command whose output its deterministic "
                                    "lines must match today, or says 'timings' (every number in it a time, a rate, "
                                    "a ratio of times, a resident size or an input of the command) or 'reference' "
                                    "(another framework's output, recorded where it is installed): one of the three")
            block_checks.append((kind, where, words[0], None, b.lines, (md, b.line), opts))
        elif kind == "packages":
            check_packages(source, where, words[0], b.lines, problems)
        elif kind.strip() == "prose":
            continue  # a lesson's hand-worked numbers, checked by the example that prints them
        elif b.lang not in CODE_LANGS:
            nums = [m.group(0) for line in b.lines for m in DOC_NUMBER.finditer(line)
                    if figure_like(m.group(0), line[:m.start()], line[m.end():])]
            if nums:
                problems.add(where, f"this ```{b.lang} block has figures ({', '.join(nums[:4])}, ...) but no "
                                    "<!-- output: KEY --> or <!-- measured: NAME --> above it")


def check_packages(source, where, script, lines, problems):
    """The packages a block installs must be those the script installs."""
    text = (source / script).read_text()
    m = re.search(r"^pkgs=\((.*?)\)", text, re.S | re.M)
    want = set(m.group(1).split()) if m else set()
    got = set()
    for line in lines:
        if line.strip().startswith(("cmake", "ctest", "(")):  # the build, and a subshell's own install (npm)
            continue
        got |= {w for w in line.replace("\\", " ").split() if w not in ("sudo", "apt-get", "install", "-y")}
    if got != want:
        problems.add(where, f"the packages differ from {script}'s: missing {sorted(want - got)}, "
                            f"not there {sorted(got - want)}")


PATH_TOKEN = re.compile(r"^[\w.+-]+(?:/[\w.+*{},-]+)*/?(?::[\w:~]+)?$")


def path_exists(source, md_dir, token, problems, where):
    token = token.rstrip(".,;")
    if token.startswith(("build/", "out/", "./build/", "./out/", "exercises/mine/", "/", "http", "~", "$")) or "*" in token or "{" in token:
        return
    if re.fullmatch(r"\.\w+", token):  # an extension: ".cpp"
        return
    path, _, name = token.partition(":")
    has_ext = re.search(r"\.(h|cpp|md|py|sh|txt|in|cmake|png|json|gz|supp)$", path)
    top = path.split("/")[0]
    if not has_ext and not (top and (source / top).is_dir() and "/" in path):
        return  # "df/dx", "(B, T)/2": not a path
    for base in (source, md_dir):
        p = base / path
        if p.exists():
            break
    else:
        problems.add(where, f"`{token}`: there is no {path} in the tree")
        return
    if name:
        if p.is_dir():
            problems.add(where, f"`{token}`: {path} is a folder")
            return
        text = p.read_text(errors="replace")
        last = name.split("::")[-1]
        owner = name.split("::")[-2] if "::" in name else None
        pattern = rf"(\b(struct|class|enum(\s+class)?)\s+{re.escape(last)}\b|\b{re.escape(last)}\s*\(|#define\s+{re.escape(last)}\b|\b{re.escape(last)}\s*=)"
        if owner:
            pattern = rf"({re.escape(owner)}::{re.escape(last)}\s*\(|{pattern})"
            if not re.search(rf"\b{re.escape(owner)}\b", text):
                problems.add(where, f"`{token}`: {path} does not mention {owner}")
                return
        if not re.search(pattern, text):
            problems.add(where, f"`{token}`: {path} defines no {name}")


def check_paths(source, md, text, blocks, problems):
    md_dir = (source / md).parent
    for lineno, line in enumerate(text.split("\n"), 1):
        where = f"{md}:{lineno}"
        for span in re.findall(r"`([^`\n]+)`", line):
            for tok in span.split():
                if PATH_TOKEN.match(tok) and not tok.startswith("-"):
                    path_exists(source, md_dir, tok, problems, where)
        for target in re.findall(r"\]\(([^)\s]+)\)", line):
            if target.startswith(("http", "#", "mailto:")):
                continue
            target = target.split("#")[0]
            if target and not (md_dir / target).exists():
                problems.add(where, f"the link target {target} does not exist")
    for b in blocks:
        if b.lang not in ("sh", "bash"):
            continue
        for k, line in enumerate(b.lines):
            where = f"{md}:{b.line + k + 1}"
            code = line.split(" #")[0]
            try:
                words = shlex.split(code)
            except ValueError:
                words = code.split()
            for w in words:
                m = re.match(r"^\./build/(examples|bench|tests)/(\w+)$", w)
                if m:
                    src = source / m.group(1)
                    cmake = (src / "CMakeLists.txt").read_text() if (src / "CMakeLists.txt").exists() else ""
                    if not ((src / f"{m.group(2)}.cpp").exists() or (src / m.group(2)).is_dir()
                            or re.search(rf"add_executable\({m.group(2)}\b", cmake)):
                        problems.add(where, f"{w}: there is no {m.group(1)}/{m.group(2)}.cpp (or folder)")
                elif re.match(r"^(scripts|bench|tests|docs|data|examples|exercises|\.ci)/", w):
                    path_exists(source, md_dir, w, problems, where)


def check_exercises(source, book_files, problems):
    starts = sorted((source / "exercises/start").glob("*.cpp"))
    ids = {p.name.split("_")[0]: p for p in starts}
    named = {}
    for md in book_files:
        for m in re.finditer(r"exercise\.sh (\d+\.\d+)", (source / md).read_text()):
            named.setdefault(m.group(1), set()).add(md)
    for i in sorted(named):
        if i not in ids:
            problems.add(sorted(named[i])[0], f"exercise {i} is named but exercises/start/{i}_*.cpp does not exist")
    for i, p in ids.items():
        chapter = f"{int(i.split('.')[0]):02d}_"
        if not any(pathlib.Path(md).name.startswith(chapter) for md in named.get(i, ())):
            problems.add(f"exercises/start/{p.name}", f"exercise {i} is not named (bash scripts/exercise.sh {i}) "
                                                     f"in its chapter docs/book/{chapter}*.md")


NUMBER_WORDS = {10: "ten", 11: "eleven", 12: "twelve", 13: "thirteen", 14: "fourteen", 15: "fifteen",
                16: "sixteen", 17: "seventeen", 18: "eighteen", 19: "nineteen", 20: "twenty"}


DRAWN_BY = "docs/images/drawn_by.txt"


def check_pictures(source, book, problems):
    """Every picture of the book says, in the line under it, which command
    drew it and at which commit: "*Drawn by `COMMAND` at commit C (...)*",
    as docs/images/drawn_by.txt (written by scripts/measure_book.sh) has them."""
    drawn = {}
    path = source / DRAWN_BY
    for line in (path.read_text().splitlines() if path.exists() else []):
        parts = line.split("\t")
        if len(parts) == 4:
            drawn[parts[0]] = parts
    for md in book:
        text = (source / md).read_text()
        lines = text.split("\n")
        for m in re.finditer(r"!\[[^\]]*\]\((?:\.\./images/)?([\w.-]+\.png)\)", text):
            name = m.group(1)
            lineno = text.count("\n", 0, m.end())  # the picture's last line, 0-based
            where = f"{md}:{text.count(chr(10), 0, m.start()) + 1}"
            caption = next((l for l in lines[lineno + 1:lineno + 4] if l.strip()), "")
            if name not in drawn:
                problems.add(where, f"{name} is not in {DRAWN_BY}: scripts/measure_book.sh records each picture it draws")
                continue
            _, commit, step, command = drawn[name]
            if not caption.startswith("*Drawn by ") or f"`{command}`" not in caption or commit not in caption:
                problems.add(where, f"the line under {name} should say who drew it: *Drawn by `{command}` at commit "
                                    f"{commit} (`bash scripts/measure_book.sh {step}`).*")


def check_navigation(source, problems):
    """The chapters as a reader walks them: each headed "# Chapter N: ...",
    each ending with a "Next:" line that links the next chapter (the last one
    the glossary), every list of the chapters complete and in order, their
    count in words right, and every program of the README's table listed
    for each chapter that runs it."""
    chapters = sorted((source / BOOK).glob("[0-9][0-9]_*.md"))
    names = [p.name for p in chapters]
    for i, p in enumerate(chapters):
        where = str(p.relative_to(source))
        lines = [l for l in p.read_text().splitlines() if l.strip()]
        n = int(p.name[:2])
        if n != i + 1:
            problems.add(where, f"chapter files must be numbered 01, 02, ... in order; this is the {i + 1}th")
        if not lines or not lines[0].startswith(f"# Chapter {n}: "):
            problems.add(where, f"the first line must be '# Chapter {n}: TITLE', not '{lines[0] if lines else ''}'")
        following = names[i + 1] if i + 1 < len(names) else "glossary.md"
        if not lines or not lines[-1].startswith("Next: ") or f"({following})" not in lines[-1]:
            problems.add(where, f"the last line must be 'Next: ...' linking ({following})")
    for doc, prefix in ((f"{BOOK}/README.md", ""), ("README.md", f"{BOOK}/")):
        listed = re.findall(r"^\d+\. \[[^\]]*\]\(" + re.escape(prefix) + r"(\d\d_[^)]+\.md)\)",
                            (source / doc).read_text(), re.M)
        if listed != names:
            problems.add(doc, f"the chapter list must name every chapter in order: missing "
                              f"{sorted(set(names) - set(listed))}")
    word = NUMBER_WORDS.get(len(names), str(len(names)))
    for doc in ("README.md", f"{BOOK}/README.md"):
        text = (source / doc).read_text()
        for m in re.finditer(r"\b(\w+) chapters\b", text):
            if m.group(1) in NUMBER_WORDS.values() and m.group(1) != word:
                problems.add(doc, f"'{m.group(0)}': the book has {word} chapters")
    # the README's programs table: | `a`, `b` | what | 7, 10 |
    runs = {}
    for p in chapters:
        for prog in set(re.findall(r"\./build/examples/(\w+)", p.read_text())):
            runs.setdefault(prog, set()).add(int(p.name[:2]))
    for line in (source / "README.md").read_text().splitlines():
        m = re.match(r"\| (`[^|]+`) \| [^|]+ \| ([\d, ]+) \|$", line)
        if not m:
            continue
        listed_in = {int(x) for x in m.group(2).split(",") if x.strip()}
        for prog in re.findall(r"`(\w+)`", m.group(1)):
            missing = sorted(runs.get(prog, set()) - listed_in)
            if missing:
                problems.add("README.md", f"the programs table lists {prog} for chapters {sorted(listed_in)}, but "
                                          f"chapters {missing} run it too")


def check_build_your_own(source, problems):
    """The build-your-own part as a reader walks it: a chapter for each stage
    of exercises/yours/stages.txt, headed "# Stage N: TITLE", ending with a
    "Next:" line that links the next stage (the last one the part's README),
    all listed in order by the part's README, which the book's README and
    the front README link; every `scripts/build_your_own.sh N` names a stage,
    and each stage's chapter names its own."""
    stages_txt = source / "exercises/yours/stages.txt"
    if not stages_txt.exists():
        return
    stages = [line.split()[:2] for line in stages_txt.read_text().splitlines() if re.match(r"^\d\d ", line)]
    names = [f"{nn}_{name}.md" for nn, name in stages]
    present = sorted(p.name for p in (source / YOURS).glob("[0-9][0-9]_*.md"))
    for extra in sorted(set(present) - set(names)):
        problems.add(f"{YOURS}/{extra}", "a stage's chapter, but exercises/yours/stages.txt has no such stage")
    numbered = {}
    for i, ((nn, _), name) in enumerate(zip(stages, names)):
        where = f"{YOURS}/{name}"
        if not (source / where).exists():
            problems.add("exercises/yours/stages.txt", f"stage {int(nn)} has no chapter {where}")
            continue
        text = (source / where).read_text()
        lines = [l for l in text.splitlines() if l.strip()]
        if not lines or not lines[0].startswith(f"# Stage {int(nn)}: "):
            problems.add(where, f"the first line must be '# Stage {int(nn)}: TITLE', not '{lines[0] if lines else ''}'")
        following = names[i + 1] if i + 1 < len(names) else "README.md"
        if not lines or not lines[-1].startswith("Next: ") or f"({following})" not in lines[-1]:
            problems.add(where, f"the last line must be 'Next: ...' linking ({following})")
        if f"scripts/build_your_own.sh {int(nn)}" not in text:
            problems.add(where, f"the chapter should give its command, bash scripts/build_your_own.sh {int(nn)}")
        numbered[int(nn)] = where
    listed = re.findall(r"^\d+\. \[[^\]]*\]\((\d\d_[^)]+\.md)\)", (source / YOURS / "README.md").read_text(), re.M)
    if listed != names:
        problems.add(f"{YOURS}/README.md", f"the list of stages must name every stage's chapter in order: {names}")
    for doc, link in ((f"{BOOK}/README.md", "build_your_own/README.md"), ("README.md", f"{YOURS}/README.md")):
        if f"]({link})" not in (source / doc).read_text():
            problems.add(doc, f"it should link the build-your-own part, ({link})")
    docs = [f"{BOOK}/README.md", "README.md", "exercises/README.md"]
    docs += [f"{YOURS}/{p.name}" for p in sorted((source / YOURS).glob("*.md"))]
    for md in docs:
        if not (source / md).exists():
            continue
        for m in re.finditer(r"build_your_own\.sh (\d+)", (source / md).read_text()):
            if int(m.group(1)) not in numbered:
                problems.add(md, f"build_your_own.sh {m.group(1)}: there is no stage {int(m.group(1))}")


def refresh(source, block_checks, entries):
    """Rewrites what the docs quote from docs/book/measured/ with the files'
    current numbers (the words must still match): the lines of measured
    blocks, and each @NAME number both in its paragraph and in its entry."""
    edits = {}  # md -> its lines
    changed = 0

    def lines_of(md):
        return edits.setdefault(md, (source / md).read_text().split("\n"))

    for kind, where, key, tol, block, (md, start), _ in block_checks:
        text = measured_file(source, key) if kind == "measured" else None
        if text is None:
            continue
        bad, matched = match_block(block, text, same_words, prefer=leading_equal_numbers)
        if bad:
            print(f"{where}: not refreshed, no line in {MEASURED}/{key}.txt has the words of\n    {bad[0].strip()}")
            continue
        lines = lines_of(md)
        for k, new in enumerate(matched):
            if new is not None and lines[start + k].rstrip() != new:
                lines[start + k] = new
                changed += 1
    # From the right, so that a number's columns hold when one after it on its line changes length.
    for md, e in sorted(entries, key=lambda me: (me[0], me[1].at), reverse=True):
        if e.kind != "=" or not e.spec.startswith("@"):
            continue
        key = e.spec.split()[0]
        parts, index, _ = quoted(e.spec[len(key):])
        text = measured_file(source, key[1:])
        found = find_number(text, parts, index)[0] if text else None
        if found is None or found == e.value:
            continue
        lines = lines_of(md)
        i, start, end = e.at
        lines[i] = lines[i][:start] + found + lines[i][end:]
        lines[e.line] = lines[e.line].replace(e.value, found, 1)
        changed += 1
        print(f"{md}:{i + 1}: {e.value} -> {found}")
    for md, lines in edits.items():
        (source / md).write_text("\n".join(lines))
    print(f"refresh: {changed} quoted measurement(s) rewritten; read the prose around them again")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--source", required=True)
    ap.add_argument("--build", required=True)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--keep", help="run the programs in DIR/KEY and keep what they write and print")
    ap.add_argument("--reuse", action="store_true", help="with --keep: reuse what an earlier run printed")
    ap.add_argument("--only", help="check only this markdown file (its paths and numbers)")
    ap.add_argument("--refresh", action="store_true",
                    help="after scripts/measure_book.sh: rewrite the quoted measurements (measured blocks, and "
                         "@NAME numbers in their paragraphs and numbers blocks) from docs/book/measured/, and say "
                         "what changed")
    ap.add_argument("--slow", action="store_true",
                    help="also run the measured blocks' slow programs (marked slow: minutes each)")
    ap.add_argument("--slow-only", action="store_true",
                    help="check only the measured blocks marked slow, against today's programs and their records")
    ap.add_argument("--no-measured-runs", action="store_true",
                    help="check measured blocks against their records only, not against today's programs")
    ap.add_argument("--files", nargs="+", help="check these markdown files (relative to --source) and nothing "
                                               "else of the tree (the doc-test's own test)")
    args = ap.parse_args()
    source, build = pathlib.Path(args.source).resolve(), pathlib.Path(args.build).resolve()
    problems = Problems()

    book = sorted(str(p.relative_to(source)) for p in (source / BOOK).glob("*.md"))
    book += sorted(str(p.relative_to(source)) for p in (source / YOURS).glob("*.md"))
    files = args.files or [f for f in DOCS + book if (source / f).exists()]
    if args.only:
        files = [f for f in files if f == args.only or f.endswith("/" + args.only)]
    runner = Runner(source, build, args.jobs, args.keep, args.reuse)
    inline_checks, block_checks, entries = [], [], []
    for md in files:
        text, placed = expand_numbers(md, (source / md).read_text(), problems)
        entries += [(md, e) for e in placed]
        prose, blocks = split_markdown(text)
        check_blocks(md, blocks, runner, source, problems, block_checks)
        check_prose(md, prose, runner, source, problems, inline_checks)
        check_paths(source, md, text, blocks, problems)
    if not args.only and not args.files:
        check_exercises(source, book, problems)
        check_navigation(source, problems)
        check_build_your_own(source, problems)
        check_pictures(source, book, problems)
        readme = (source / "README.md").read_text().splitlines()
        if len(readme) > README_MAX_LINES:
            problems.add("README.md", f"{len(readme)} lines; the front door has at most {README_MAX_LINES}")
        ci = (source / ".ci/run").read_text()
        if "bash scripts/test.sh" not in "\n".join(readme) or "bash scripts/test.sh" not in ci:
            problems.add("README.md", "the README's test command (bash scripts/test.sh) must be what .ci/run calls")

    if args.slow_only:
        args.slow = True
        block_checks = [b for b in block_checks if b[0] == "measured" and b[6].get("slow")]
        inline_checks = []
    # Which programs must run: the output blocks', and today's run of each
    # measured block (one that depends on the last bits only on the record's machine).
    here = None
    today_skipped = []
    for kind, where, key, tol, lines, _, opts in block_checks:
        if kind == "output":
            runner.wanted.add(key)
        elif opts.get("today") and not args.no_measured_runs:
            if opts.get("slow") and not args.slow:
                opts["skip"] = True
                today_skipped.append(f"{where} ({key}: a slow run, compared with --slow)")
                continue
            # On the record's machine today's numbers must be the record's to
            # the last digit; elsewhere within the block's tol, or not at all (bits).
            record = measured_file(source, key)
            here = here if here is not None else (this_machine(build) or "")
            opts["exact"] = record is not None and machine_of(record) == here
            if opts.get("bits") and not opts["exact"]:
                opts["skip"] = True
                today_skipped.append(f"{where} ({key}: recorded on {machine_of(record or '') or '?'})")
                continue
            runner.wanted.add(opts["today"])
    for kind, where, spec, number in inline_checks:
        if kind == "num" and not spec.startswith("@"):
            runner.wanted.add(spec.split()[0])
    if not args.refresh:
        runner.run_wanted(problems)

    if args.refresh:
        return refresh(source, block_checks, entries)

    for kind, where, key, tol, lines, _, opts in block_checks:
        if kind == "output":
            if key not in runner.outputs or runner.outputs[key][0] != 0:
                continue
            text = runner.text(key)
            tol = tol or runner.commands[key][1]
            what = f"the output of '{runner.commands[key][0]}'"
        else:
            text = measured_file(source, key)
            if text is None:
                problems.add(where, f"{MEASURED}/{key}.txt does not exist (scripts/measure_book.sh writes it)")
                continue
            what = f"{MEASURED}/{key}.txt"
        bad = compare_block(lines, text, tol)
        if bad:
            problems.add(where, f"this block's line\n    {bad[0].strip()}\n  is not in {what}; nearest:\n    {bad[1].strip()}")
        today = opts.get("today")
        if kind != "measured" or not today or opts.get("skip") or args.no_measured_runs:
            continue
        if today not in runner.outputs or runner.outputs[today][0] != 0:
            continue  # its run failed, was skipped or is undefined: said above
        tol = opts.get("tol") or runner.commands[today][1]
        bad = compare_today(lines, runner.text(today), opts, None if opts["exact"] else tol)
        if bad:
            problems.add(where, f"this measured block's line\n    {bad[0].strip()}\n  is not what today's "
                                f"'{runner.commands[today][0]}' prints (its timings aside); nearest:\n    {bad[1].strip()}"
                                "\n  (scripts/measure_book.sh records it again)")

    for kind, where, spec, number in inline_checks:
        if kind == "on":
            text = measured_file(source, spec)
            if text is None:
                problems.add(where, f"{MEASURED}/{spec}.txt does not exist")
                continue
            for field in ("machine", "commit"):
                value = header_field(text, field)
                if not value or value.split(" (")[0] not in number:
                    problems.add(where, f"the paragraph should name the {field} of {MEASURED}/{spec}.txt: {value}")
            continue
        key = spec.split()[0]
        parts, index, opts = quoted(spec[len(key):])
        if key.startswith("@"):
            text = measured_file(source, key[1:])
            if text is None:
                problems.add(where, f"{MEASURED}/{key[1:]}.txt does not exist")
                continue
            tol, what = opts.get("tol"), f"{MEASURED}/{key[1:]}.txt"
        else:
            if key not in runner.outputs or runner.outputs[key][0] != 0:
                continue
            text = runner.text(key)
            tol, what = opts.get("tol") or runner.commands[key][1], f"'{runner.commands[key][0]}'"
        found, line = find_number(text, parts, index)
        if found is None:
            problems.add(where, f"{number}: in {what}, {line}")
            continue
        dv, ov = parse_number(number), float(found)
        if dv is None or abs(dv - ov) > allowed_error(number, ov, tol):
            problems.add(where, f"the docs say {number}, but {what} prints {found}:\n    {line}")

    checked = len(inline_checks) + len(block_checks)
    if problems.items:
        print(f"doc-test: {len(problems.items)} problem(s) in {len(files)} files:")
        for p in problems.items:
            print("  " + p.replace("\n", "\n  "))
        return 1
    skipped = f"; skipped (a program is missing): {', '.join(runner.skipped)}" if runner.skipped else ""
    if today_skipped:
        skipped += f"; measured blocks not compared with today's programs here: {', '.join(today_skipped)}"
    print(f"doc-test: {len(files)} files, {checked} checks against {len(runner.outputs)} program runs, "
          f"every path and function found: ok{skipped}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
