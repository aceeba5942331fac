#!/usr/bin/env python3
"""The library's sizes: no file over 500 lines, no function over 80.

Reads the C++ of every layer (base, tensor, autograd, compile, nn, train, plot,
inspect, distributed) and prints each file and function over its limit with
its place; exits 1 if there is one. A function is a brace block opened after
a closing parenthesis, outside another function (control statements and
initializers excluded); its length runs from the line of its opening brace
to the line of its closing one. Comments, strings and raw strings are
skipped before braces are counted.

Usage: check_sizes.py SOURCE_DIR [--self-test]
"""
import os
import re
import sys

LAYERS = ["base", "tensor", "autograd", "compile", "vmap", "nn", "train", "plot", "inspect", "distributed"]
MAX_FILE, MAX_FUNCTION = 500, 80
CONTROL = re.compile(r"^\s*(\}\s*)?(if|for|while|switch|else|do|try|catch)\b")
SCOPE = re.compile(r"\b(namespace|struct|class|union|enum)\b[^()]*$")


def code_only(text):
    """text with comments and the contents of strings and characters blanked (newlines kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'R"([^(\s]*)\(', text[i:])
            end = text.find(")" + m.group(1) + '"', i) if m else -1
            end = n if end < 0 else end + len(m.group(1)) + 2
            out.append('""' + "\n" * text.count("\n", i, end))
            i = end
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def functions(text):
    """(first line, lines, head) of every function body in text."""
    found, stack, head, line = [], [], "", 1
    for c in code_only(text):
        if c == "\n":
            line += 1
            head += " "
        elif c == "{":
            h = head.strip()
            if any(entry[0] == "fn" for entry in stack):
                kind = "inner"
            elif SCOPE.search(h) or h.endswith('extern ""'):
                kind = "scope"
            elif ")" in h and not CONTROL.match(h) and not h.endswith("="):
                kind = "fn"
            else:
                kind = "other"
            stack.append((kind, line, h[-80:]))
            head = ""
        elif c == "}":
            if stack:
                top = stack.pop()
                if top[0] == "fn":
                    found.append((top[1], line - top[1] + 1, top[2]))
            head = ""
        elif c == ";":
            head = ""
        else:
            head += c
    return found


def problems(root):
    out = []
    for layer in LAYERS:
        for folder, _, files in sorted(os.walk(os.path.join(root, layer))):
            for name in sorted(files):
                if not name.endswith((".h", ".cpp")):
                    continue
                path = os.path.join(folder, name)
                rel = os.path.relpath(path, root)
                text = open(path, encoding="utf-8").read()
                lines = text.count("\n") + (0 if text.endswith("\n") else 1)
                if lines > MAX_FILE:
                    out.append(f"{rel}: {lines} lines (at most {MAX_FILE})")
                for start, length, head in functions(text):
                    if length > MAX_FUNCTION:
                        out.append(f"{rel}:{start}: a function of {length} lines (at most {MAX_FUNCTION}): {head}")
    return out


def self_test():
    body = "\n".join(["  x += 1;"] * 85)
    text = ('namespace a {\nint f(int x) {\n' + body + '\n  return x;\n}\n'
            'struct S { void g() { const char* s = "}{"; } };\n'
            'int h() {\n  if (true) {\n  }\n  return 0; // }\n}\n}\n')
    fns = functions(text)
    assert [(s, n) for s, n, _ in fns] == [(2, 88), (90, 1), (91, 5)], fns
    print("check_sizes self-test: ok")


if __name__ == "__main__":
    if "--self-test" in sys.argv:
        self_test()
        sys.exit(0)
    found = problems(sys.argv[1] if len(sys.argv) > 1 else ".")
    for p in found:
        print(p)
    print(f"sizes: {len(found)} over the limits (files {MAX_FILE} lines, functions {MAX_FUNCTION})")
    sys.exit(1 if found else 0)
