#!/usr/bin/env python3
"""Compiles each include probe of tests/layering/CMakeLists.txt with the exact
command CMake wrote for it (compile_commands.json), syntax only:

  probe_<L>_sees_<L>            a header of L's own: must compile
  probe_<L>_must_not_see_<U>    a header of a layer L must not see: must fail,
                                because that header is not found

Usage: check_includes.py BUILD_DIR
"""
import json
import shlex
import subprocess
import sys
from pathlib import Path

build = Path(sys.argv[1])
commands = json.loads((build / "compile_commands.json").read_text())
probes = [c for c in commands if Path(c["file"]).name.startswith("probe_")]
if not probes:
    sys.exit("layering: no probes in compile_commands.json (configure with CMAKE_EXPORT_COMPILE_COMMANDS)")

failed = 0
for c in sorted(probes, key=lambda c: c["file"]):
    name = Path(c["file"]).stem
    header = Path(c["file"]).read_text().split('"')[1]
    argv = shlex.split(c["command"])
    # Syntax only, no object file: drop "-o <file>" and "-c".
    out = []
    skip = False
    for a in argv:
        if skip:
            skip = False
            continue
        if a == "-o":
            skip = True
            continue
        if a == "-c":
            continue
        out.append(a)
    run = subprocess.run(out + ["-fsyntax-only"], cwd=c["directory"], capture_output=True, text=True)
    if "_must_not_see_" in name:
        if run.returncode == 0:
            print(f"FAIL {name}: {header} was found: an include that runs upward compiled")
            failed += 1
        elif f"{header}: No such file or directory" not in run.stderr:
            print(f"FAIL {name} failed, but not because {header} is missing:\n{run.stderr[-2000:]}")
            failed += 1
    elif run.returncode != 0:
        print(f"FAIL {name}: the layer's own {header} did not compile:\n{run.stderr[-2000:]}")
        failed += 1
if failed:
    sys.exit(f"layering: {failed} of {len(probes)} include probes failed")
print(f"layering: {len(probes)} include probes behave (every upward include fails, each layer's own header compiles)")
