#!/usr/bin/env bash
# Installs the Debian 12 packages ember needs, and only the missing ones:
# when everything is present this just runs `dpkg -s` and exits.
#   bash scripts/deps.sh           build + test dependencies
#   bash scripts/deps.sh --bench   also python3-torch/numpy for bench/compare.sh
set -euo pipefail

# Beyond the compiler, BLAS and GoogleTest: nlohmann-json (checkpoint headers,
# trace JSON), zlib (the gzipped corpus), stb (PNG encoding), CLI11 (example
# flags), graphviz (graph pictures, the step-through page's SVG), PLplot with
# its Cairo driver and a font (every plot), doxygen (the API docs test),
# chromium (the step-through page tested in a real, headless browser), and
# clang with its sanitizer runtimes and OpenMP (the libFuzzer phase of CI),
# SLEEF (float32 exp at the CPU's SIMD width),
# Open MPI (distributed/: training on several processes, and mpirun for its tests),
# utf8proc (Unicode categories for GPT-2's pre-tokenization), pybind11 with
# Python's headers, NumPy and pytest (the Python package, python/), PyTorch
# (the parity scripts run the same code on both: python/parity/), nbconvert and
# the IPython kernel (the notebook's cells run in the tests), and Node.js with
# npm for the two reference GPT-2 tokenizers the BPE is tested against
# (tests/bpe_reference: gpt-3-encoder and @dqbd/tiktoken, from the npm registry,
# the versions its package-lock.json pins).
pkgs=(cmake g++ make pkg-config libopenblas-dev libopenblas-openmp-dev libgtest-dev libbenchmark-dev python3
      nlohmann-json3-dev zlib1g-dev libstb-dev libcli11-dev graphviz
      libplplot-dev plplot-driver-cairo fonts-dejavu-core doxygen chromium
      clang libclang-rt-14-dev libomp-dev libsleef-dev libopenmpi-dev openmpi-bin libutf8proc-dev
      pybind11-dev python3-dev python3-numpy python3-pytest python3-torch
      jupyter-nbconvert python3-ipykernel)
for arg in "$@"; do
  case $arg in
    --bench) pkgs+=(python3 python3-torch python3-numpy) ;;
    *) echo "deps.sh: unknown option $arg (known: --bench)" >&2; exit 2 ;;
  esac
done

# Node.js: Debian's, unless a node and npm are already on the PATH.
command -v node >/dev/null && command -v npm >/dev/null || pkgs+=(nodejs npm)

missing=()
for p in "${pkgs[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
npm_packages() {
  local dir
  dir="$(cd "$(dirname "$0")/.." && pwd)/tests/bpe_reference"
  [ -d "$dir/node_modules/gpt-3-encoder" ] && [ -d "$dir/node_modules/@dqbd/tiktoken" ] && return 0
  echo "deps.sh: installing the npm packages of $dir"
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
}
if ((${#missing[@]} == 0)); then
  npm_packages
  exit 0
fi

echo "deps.sh: installing ${missing[*]}"
sudo=()
if ((EUID != 0)); then
  command -v sudo >/dev/null || { echo "deps.sh: run as root (or install sudo) to install: ${missing[*]}" >&2; exit 1; }
  sudo=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
npm_packages
