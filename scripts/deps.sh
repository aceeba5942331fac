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
# SLEEF (float32 exp at the CPU's SIMD width), and
# Open MPI (distributed/: training on several processes, and mpirun for its tests).
pkgs=(cmake g++ make pkg-config libopenblas-dev libopenblas-openmp-dev libgtest-dev libbenchmark-dev python3
      nlohmann-json3-dev zlib1g-dev libstb-dev libcli11-dev graphviz
      libplplot-dev plplot-driver-cairo fonts-dejavu-core doxygen chromium
      clang libclang-rt-14-dev libomp-dev libsleef-dev libopenmpi-dev openmpi-bin)
for arg in "$@"; do
  case $arg in
    --bench) pkgs+=(python3 python3-torch python3-numpy) ;;
    *) echo "deps.sh: unknown option $arg (known: --bench)" >&2; exit 2 ;;
  esac
done

missing=()
for p in "${pkgs[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
((${#missing[@]} == 0)) && exit 0

echo "deps.sh: installing ${missing[*]}"
sudo=()
if ((EUID != 0)); then
  command -v sudo >/dev/null || { echo "deps.sh: run as root (or install sudo) to install: ${missing[*]}" >&2; exit 1; }
  sudo=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
