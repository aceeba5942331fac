#!/usr/bin/env bash
# Usage: install.sh CMAKE BUILD_DIR PYTHON
# `cmake --install` puts the package under the prefix; imported from there
# (not from the build tree), it computes, and its module is the installed one.
set -euo pipefail
cmake_bin=$1 build_dir=$2 python=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$cmake_bin" --install "$build_dir" --prefix "$tmp/prefix" >/dev/null
init=$(find "$tmp/prefix" -path '*/ember/__init__.py' | head -n 1)
[[ -n $init ]] || { echo "install.sh: no ember/__init__.py under the prefix"; exit 1; }
site=$(dirname "$(dirname "$init")")
cd "$tmp"
PYTHONPATH=$site "$python" -c "
import ember
assert ember.__file__.startswith('$tmp/prefix'), ember.__file__
x = ember.tensor([1.0, 2.0, 3.0], requires_grad=True)
(x * x).sum().backward()
assert x.grad.tolist() == [2.0, 4.0, 6.0]
print('installed package:', ember.__file__)
"
