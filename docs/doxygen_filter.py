#!/usr/bin/env python3
"""Doxygen's input filter for the book (docs/Doxyfile.in: FILTER_PATTERNS).

The chapters are written for GitHub: links are relative paths into the tree,
pictures live in docs/images/, and HTML comments carry the doc-test's checks.
For the API reference the same text needs Doxygen's forms, so this filter
rewrites, line by line (the line count stays the same, so Doxygen's
warnings point at the right line):

  * every HTML comment is dropped (Doxygen would eat the space after it);
  * `tensor/shape.h` in inline code, and a link to a header, become links to
    that header's page (@ref), so the book and the reference are one site;
  * a link to a source file or a folder, which the reference does not have,
    becomes its text;
  * a picture's path becomes its file name (IMAGE_PATH is docs/images);
  * a fence of a language Doxygen has no parser for (sh, text, formula,
    diagram) opens as ```{.unparsed}: Doxygen 1.9 would read it with its C++
    lexer, which reads past the end of some blocks' text (a formula block
    with `ᵀ` made it abort with a corrupted heap).

  doxygen_filter.py FILE.md   (the result goes to stdout)
"""

import pathlib
import re
import sys

SOURCE = pathlib.Path(__file__).resolve().parent.parent
HEADER_DIRS = ("tensor", "autograd", "nn", "train", "plot", "inspect", "distributed")


def header(path):
    """'tensor/shape.h' if path names a public header of the tree, else None."""
    p = path.split(":")[0]
    if p.endswith(".h") and p.split("/")[0] in HEADER_DIRS and (SOURCE / p).exists():
        return p
    return p if p == "ember.h" else None


def from_root(md, target):
    """A link target relative to md, as a path from the repository root."""
    try:
        return (md.parent / target).resolve().relative_to(SOURCE).as_posix()
    except ValueError:
        return None


def target_for(md, target):
    """What a link's target becomes: itself, a @ref, a picture's file name,
    or None (a file the reference does not have: the link's text stays)."""
    if target.startswith(("http", "#", "@ref")) or target.split("#")[0].endswith(".md"):
        return target
    path = from_root(md, target.split("#")[0])
    if path and path.startswith("docs/images/"):
        return pathlib.Path(path).name
    if path and header(path):
        return "@ref " + header(path)
    return None


def rewrite(md, line):
    line = re.sub(r"<!--.*?-->", "", line)

    def link(m):
        bang, text, target = m.group(1), m.group(2), m.group(3)
        new = target_for(md, target)
        if new is None:
            return m.group(0) if bang else text
        return f"{bang}[{text}]({new})"

    line = re.sub(r"(!?)\[([^\]]*)\]\(([^)\s]+)\)", link, line)

    def code(m):  # `tensor/shape.h` -> a link to the header's page
        h = header(m.group(1))
        return f"[`{m.group(1)}`](@ref {h})" if h else m.group(0)

    return re.sub(r"(?<!\[)`([\w./:-]+)`(?!\])", code, line)


# Fences Doxygen highlights with a parser of their own language.
DOXYGEN_CODE = {"cpp", "c++"}


def fence(line):
    """An opening fence as Doxygen gets it: C++ as written, any other (or
    none) unparsed: shown as written, without highlighting."""
    lang = line.strip()[3:].strip()
    if lang in DOXYGEN_CODE:
        return line
    return line[: line.index("```")] + "```{.unparsed}"


def main():
    md = pathlib.Path(sys.argv[1]).resolve()
    fenced = False
    for line in md.read_text().split("\n"):
        if line.strip().startswith("```"):
            print(line if fenced else fence(line))
            fenced = not fenced
            continue
        print(line if fenced else rewrite(md, line))


if __name__ == "__main__":
    main()
