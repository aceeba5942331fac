#!/usr/bin/env bash
# Build your own framework, stage by stage (docs/book/build_your_own/):
#   bash scripts/build_your_own.sh       the stages, which pass, how far you have come
#   bash scripts/build_your_own.sh 2     checks stage 2 (and again 1, which it builds on)
#
# Your framework lives in exercises/mine/yours/mini/ (git ignores
# exercises/mine/). Checking stage N first copies the starting files of
# stages 1 ... N that you do not have yet there (it never overwrites a file),
# then builds the checker of stages 1 ... N against your files and ember's
# build tree (build/, or $EMBER_BUILD_DIR; configured here if it does not
# exist yet), building only that, and runs it.
set -uo pipefail
cd "$(dirname "$0")/.."
build=${EMBER_BUILD_DIR:-build}
mine=exercises/mine/yours
stages_file=exercises/yours/stages.txt

# stages.txt: "NN name file ..." a line.
mapfile -t lines < <(grep -E '^[0-9]{2} ' "$stages_file")
number_of() { echo $((10#${1%% *})); }
files_of() { local words=($1); echo "${words[@]:2}"; }
title_of() {  # the heading of the stage's chapter, "# Stage 1: Values" -> "Values"
  local words=($1)
  sed -n '1s/^# Stage [0-9]*: *//p' "docs/book/build_your_own/${words[0]}_${words[1]}.md" 2>/dev/null
}
# The files of stages 1 ... n (your copies), for the stamp of a pass.
files_upto() {
  local n=$1 line out=()
  for line in "${lines[@]}"; do
    (($(number_of "$line") <= n)) || break
    for f in $(files_of "$line"); do out+=("$mine/$f"); done
  done
  echo "${out[@]}"
}
passes() { [ -f "$mine/.$1.passed" ] && sha256sum --status -c "$mine/.$1.passed" 2>/dev/null; }

if [ $# -eq 0 ]; then
  echo "Build your own: the stages (bash scripts/build_your_own.sh N checks stage N; your framework is in $mine/;"
  echo "'started' = you have its files, 'passes' = its checker passed the last time it ran, on your files as they are now):"
  next=""
  for line in "${lines[@]}"; do
    n=$(number_of "$line")
    mark=""
    started=yes
    for f in $(files_of "$line"); do [ -f "$mine/$f" ] || started=no; done
    [ $started = yes ] && mark="  (started)"
    if passes "$n"; then mark="  (passes)"; elif [ -z "$next" ]; then next=$n; fi
    printf '  %-3s %s%s\n' "$n" "$(title_of "$line")" "$mark"
  done
  if [ -z "$next" ]; then
    echo "How far you have come: every stage passes."
  elif [ "$next" = "$(number_of "${lines[0]}")" ] && ! [ -d "$mine" ]; then
    echo "How far you have come: not started yet; begin with 'bash scripts/build_your_own.sh $next'."
  else
    echo "How far you have come: stage $next is next ('bash scripts/build_your_own.sh $next')."
  fi
  exit 0
fi

if [ $# -gt 1 ]; then
  echo "build_your_own.sh: it takes one stage number, and got $# arguments ($*): 'bash scripts/build_your_own.sh $1' checks stage $1" >&2
  exit 2
fi
if ! [[ $1 =~ ^[0-9]+$ ]]; then
  echo "build_your_own.sh: '$1' is not a stage number; they are 1, 2, ... (run it without arguments for the list)" >&2
  exit 2
fi
n=$((10#$1))
stage_line=""
for line in "${lines[@]}"; do [ "$(number_of "$line")" = "$n" ] && stage_line=$line; done
if [ -z "$stage_line" ]; then
  echo "build_your_own.sh: there is no stage $n; the stages are 1 to $(number_of "${lines[-1]}") (run it without arguments for the list)" >&2
  exit 2
fi

# Your files: the starting ones of stages 1 ... n that you do not have yet.
new=()
for line in "${lines[@]}"; do
  k=$(number_of "$line")
  ((k <= n)) || break
  words=($line)
  for f in $(files_of "$line"); do
    if [ ! -f "$mine/$f" ]; then
      mkdir -p "$(dirname "$mine/$f")"
      cp "exercises/yours/start/${words[0]}/$f" "$mine/$f"
      new+=("$mine/$f (stage $k)")
    fi
  done
done
if [ ${#new[@]} -gt 0 ]; then
  echo "New files of your framework, copied from the starting files (yours to edit; nothing was overwritten):"
  printf '  %s\n' "${new[@]}"
  echo "Write what their MINI_TODO lines ask for, and run 'bash scripts/build_your_own.sh $n' again."
  echo "Here is what the checker says about them now:"
  echo
fi

if [ ! -f "$build/CMakeCache.txt" ]; then
  echo "(configuring ember's build tree in $build/ first: this happens once)"
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release > "$build.configure.log" 2>&1 ||
    { cat "$build.configure.log"; echo "build_your_own.sh: cmake could not configure $build/ (see above)" >&2; exit 2; }
  rm -f "$build.configure.log"
fi

target=yours_$n
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if [ "$n" -eq 1 ]; then echo "(building the checker of stage 1 with your files ...)"; else echo "(building the checker of stages 1 to $n with your files ...)"; fi
build_it() { cmake --build "$build" --target "$target" -j"$(nproc)" > "$log" 2>&1; }
no_target() { grep -q "No rule to make target '$target'\|unknown target '$target'" "$log"; }
built=yes
build_it || built=no
if [ $built = no ] && no_target; then
  # A build tree configured before this stage existed: configure it again.
  cmake -S . -B "$build" > "$log" 2>&1 || { cat "$log"; exit 2; }
  built=yes
  build_it || built=no
  if [ $built = no ] && no_target; then
    echo "build_your_own.sh: $build/ has no target $target (configured with EMBER_BUILD_TESTS=OFF or EMBER_SANITIZE=ON?)" >&2
    exit 2
  fi
fi
if [ $built = no ]; then
  echo
  if grep -q "mine/yours/mini/[^:]*:[0-9]*:[0-9]*: error" "$log"; then
    echo "Your framework does not compile yet. What the compiler says about your files (the first errors):"
    grep -A3 "mine/yours/mini/[^:]*:[0-9]*:[0-9]*: error" "$log" | grep -v '^g\?make\|^--$' |
      sed 's|^.*/exercises/mine/yours/|exercises/mine/yours/|' | head -n 24
    echo
    echo "The number after the file name is the line, then the column."
  elif grep -q "undefined reference" "$log"; then
    echo "Your files compile, but the checker cannot find a function it calls:"
    grep -o "undefined reference to \`[^']*'" "$log" | sort -u | head -n 5
    echo "Keep every function the starting headers declare (mini/*.h), with its name, namespace and parameters,"
    echo "and define it in the stage's .cpp file."
  elif grep -q "fatal error: .*mini/.*: No such file" "$log"; then
    echo "A file of your framework is missing:"
    grep -o "fatal error: .*" "$log" | sort -u | head -n 3
    echo "The starting files are in exercises/yours/start/NN/; this command copies the missing ones."
  else
    echo "The build failed, and not in your files. The end of the build log:"
    tail -n 30 "$log"
  fi
  exit 1
fi

out=$(mktemp)
trap 'rm -f "$log" "$out"' EXIT
"$build/exercises/yours/$target" "$mine/" | tee "$out"
status=${PIPESTATUS[0]}
if [ "$status" -gt 1 ]; then
  echo
  if [ "$status" -ge 128 ]; then
    echo "The checker crashed (signal $((status - 128))) in the step printed last above: your code most likely read"
    echo "memory it does not own (a position outside the storage, an index out of range, a recursion too deep)."
  else
    echo "The checker stopped with status $status in the step printed last above."
  fi
  exit 1
fi
# The list shows which stages pass: the checker's verdict on your files as they were then.
# A NOT YET names the stage that failed; those before it passed.
failed=$(sed -n 's/^NOT YET: stage \([0-9]*\),.*/\1/p' "$out")
[ "$status" -eq 0 ] && failed=$((n + 1))
[ -n "$failed" ] || failed=$n
for line in "${lines[@]}"; do
  k=$(number_of "$line")
  ((k <= n)) || break
  if ((k < failed)); then
    # shellcheck disable=SC2046
    sha256sum $(files_upto "$k") > "$mine/.$k.passed"
  else
    rm -f "$mine/.$k.passed"
  fi
done
exit "$status"
