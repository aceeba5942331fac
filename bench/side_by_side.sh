# What bench/compile_compare.sh and bench/vmap_compare.sh share; sourced,
# not run (they `source bench/side_by_side.sh` from the repository's root).
#
#   side_by_side_setup PROGRAM "$@"
#       reads --build DIR, --threads N and workload names from the script's
#       arguments; sets build, threads, names (none given: every workload
#       PROGRAM knows), bench (PROGRAM's path), python (Debian's, which has
#       python3-torch) and tmp (a scratch directory, removed on exit); and, as
#       bench/compare.sh does for both frameworks, exports the malloc setting
#       (GLIBC_TUNABLES=$keep_freed_memory) and the OpenBLAS core ember runs
#       on (OPENBLAS_CORETYPE), so that PyTorch's OpenBLAS runs the same kernels.
#   policy_env POLICY
#       sets the array `env` to the command prefix that runs a program under
#       that OpenMP wait policy (default: OMP_WAIT_POLICY unset; active; passive).
keep_freed_memory=glibc.malloc.trim_threshold=1000000000:glibc.malloc.mmap_threshold=1000000000

side_by_side_setup() {
  local program=$1
  shift
  build=build threads=2 names=()
  while (($#)); do
    case $1 in
      --build) build=$2; shift 2 ;;
      --threads) threads=$2; shift 2 ;;
      *) names+=("$1"); shift ;;
    esac
  done
  python=${PYTHON:-/usr/bin/python3}
  [[ -x $python ]] || python=python3
  bench=$build/bench/$program
  if [[ ! -x $bench ]]; then
    echo "$(basename "$0"): $bench not found; build it first: cmake --build $build --target $program" >&2
    exit 1
  fi
  if ((${#names[@]} == 0)); then
    read -ra names <<<"$("$bench" --help | sed -n 's/^workloads: *//p')"
  fi
  local core
  core=$("$build/bench/bench_ember" --blas-info 2>/dev/null | sed -n 's/^core //p' || true)
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  export GLIBC_TUNABLES=$keep_freed_memory
  [[ -n $core ]] && export OPENBLAS_CORETYPE=$core
  return 0
}

policy_env() {
  env=(env)
  if [[ $1 == default ]]; then env+=(-u OMP_WAIT_POLICY); else env+=(OMP_WAIT_POLICY="$1"); fi
}
