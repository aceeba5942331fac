#!/usr/bin/env python3
"""docs/doxygen_filter.py on every Markdown page Doxygen reads (the book,
docs/mainpage.md, exercises/README.md): each page keeps its line count (so
Doxygen's warnings point at the right line), and every fenced block reaches
Doxygen as C++ or unparsed. Doxygen 1.9's C++ lexer is what it uses for a
language it does not know, and on some of the book's formula blocks it read
past the end of the block's text and aborted with a corrupted heap, at some
build paths and not others.

Usage: check_doxygen_filter.py SOURCE_DIR    (exits 1 on a failure)
"""
import pathlib
import subprocess
import sys

ALLOWED = {"```cpp", "```c++", "```{.unparsed}"}


def pages(root):
    yield from sorted((root / "docs" / "book").rglob("*.md"))
    yield root / "docs" / "mainpage.md"
    yield root / "exercises" / "README.md"


def check(root, md):
    """The failures of one page, as lines of text, and its number of fences."""
    filtered = subprocess.run([sys.executable, str(root / "docs" / "doxygen_filter.py"), str(md)],
                              capture_output=True, text=True, check=True).stdout
    source = md.read_text().split("\n")
    out = filtered.split("\n")[:-1]  # print() ends the last line too
    name = md.relative_to(root)
    if len(out) != len(source):
        return [f"{name}: {len(source)} lines become {len(out)}"], 0
    failures, fenced, fences = [], False, 0
    for number, line in enumerate(out, 1):
        if not line.strip().startswith("```"):
            continue
        if not fenced:
            fences += 1
            if line.strip() not in ALLOWED:
                failures.append(f"{name}:{number}: a fence reaches Doxygen as {line.strip()!r}")
        fenced = not fenced
    if fenced:
        failures.append(f"{name}: a fence is never closed")
    return failures, fences


def main():
    root = pathlib.Path(sys.argv[1]).resolve()
    failures, fences, count = [], 0, 0
    for md in pages(root):
        page_failures, page_fences = check(root, md)
        failures += page_failures
        fences += page_fences
        count += 1
    for f in failures:
        print(f)
    print(f"{count} pages, {fences} fenced blocks, {len(failures)} failures")
    # The book has fences of other languages (sh, text, formula, diagram):
    # a filter that passed them all through untouched would fail above.
    return 1 if failures or fences == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
