#!/usr/bin/env python3
"""The rooms of the library, from its includes: a room is a source file and
its header (tensor/storage.h with tensor/storage.cpp). Inside each layer the
rooms' includes must run one way, with no loop through two or more rooms,
and tensor/machine/, the room of what adapts to the CPU, includes nothing of
ember but base/ and itself. (Between layers the build itself refuses an
upward include: tests/layering/.)

Prints each loop and each include out of tensor/machine/; exits 1 if there
is one.

Usage: check_rooms.py SOURCE_DIR
"""
import os
import re
import sys

LAYERS = ["base", "tensor", "autograd", "compile", "vmap", "nn", "train", "plot", "inspect", "distributed"]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def rooms(root):
    """room -> the rooms it includes (of the same layer), and every include by file."""
    graph, includes = {}, {}
    for layer in LAYERS:
        for folder, _, files in os.walk(os.path.join(root, layer)):
            for name in files:
                if not name.endswith((".h", ".cpp")):
                    continue
                rel = os.path.relpath(os.path.join(folder, name), root)
                found = INCLUDE.findall(open(os.path.join(root, rel), encoding="utf-8").read())
                includes[rel] = found
                room = os.path.splitext(rel)[0]
                graph.setdefault(room, set())
                for inc in found:
                    target = os.path.splitext(inc)[0]
                    if inc.split("/")[0] == layer and target != room and os.path.exists(os.path.join(root, inc)):
                        graph[room].add(target)
    return graph, includes


def loops(graph):
    """The strongly connected components of more than one room (Tarjan)."""
    index, low, on, stack, out, n = {}, {}, set(), [], [], [0]

    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def problems(root):
    graph, includes = rooms(root)
    out = []
    for comp in loops(graph):
        ties = [f"{a} -> {b}" for a in comp for b in sorted(graph[a]) if b in comp]
        out.append("rooms that include each other: " + ", ".join(comp) + " (" + "; ".join(ties) + ")")
    for path, found in sorted(includes.items()):
        if path.startswith("tensor/machine/"):
            for inc in found:
                if inc.startswith(("tensor/", "autograd/", "nn/", "train/", "plot/", "inspect/", "distributed/")) \
                        and not inc.startswith("tensor/machine/"):
                    out.append(f"{path} includes {inc}: tensor/machine/ sees only base/ and itself")
    return out


if __name__ == "__main__":
    found = problems(sys.argv[1] if len(sys.argv) > 1 else ".")
    for p in found:
        print(p)
    print(f"rooms: {len(found)} problem(s)")
    sys.exit(1 if found else 0)
