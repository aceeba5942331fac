#!/usr/bin/env bash
# Checks one exercise of the book:   bash scripts/exercise.sh 2.1
# (no argument: the list of exercises and which ones you have started).
#
# The first time, it copies the starting file exercises/start/<id>_<name>.cpp
# to exercises/mine/<id>_<name>.cpp: that copy is yours (git ignores
# exercises/mine/). Each time, it builds the checker against your copy and
# ember's build tree (build/, or $EMBER_BUILD_DIR; configured here if it does
# not exist yet), building only what the exercise needs, and runs it.
set -uo pipefail
cd "$(dirname "$0")/.."
build=${EMBER_BUILD_DIR:-build}

title_of() { sed -n '1s|^// Exercise [0-9.]*: *||; 1s| (chapter [0-9]*, \(.*\))$|   (\1)|p' "$1"; }

if [ $# -eq 0 ]; then
  echo "The exercises (bash scripts/exercise.sh ID checks one; 'started' = you have a copy in exercises/mine/,"
  echo "'passes' = its checker passed the last time it ran, on your file as it is now):"
  for f in $(printf '%s\n' exercises/start/*.cpp | sort -V); do
    name=$(basename "$f")
    id=${name%%_*}
    mark=""
    [ -f "exercises/mine/$name" ] && mark="  (started)"
    if [ -f "exercises/mine/.${id}.passed" ] && sha256sum --status -c "exercises/mine/.${id}.passed" 2>/dev/null; then
      mark="  (passes)"
    fi
    printf '  %-5s %s%s\n' "$id" "$(title_of "$f")" "$mark"
  done
  exit 0
fi

if [ $# -gt 1 ]; then
  echo "exercise.sh: it takes one exercise number, and got $# arguments ($*): 'bash scripts/exercise.sh $1' checks exercise $1" >&2
  exit 2
fi
id=$1
if ! [[ $id =~ ^[0-9]+\.[0-9]+$ ]]; then
  echo "exercise.sh: '$id' is not an exercise number; they look like 2.1 (run it without arguments for the list)" >&2
  exit 2
fi
shopt -s nullglob
starts=(exercises/start/"$id"_*.cpp)
if [ ${#starts[@]} -ne 1 ]; then
  echo "exercise.sh: there is no exercise $id (run it without arguments for the list)" >&2
  exit 2
fi
start=${starts[0]}
name=$(basename "$start")
mine=exercises/mine/$name
target=exercise_${id/./_}

if [ ! -f "$mine" ]; then
  mkdir -p exercises/mine
  cp "$start" "$mine"
  echo "Your file for exercise $id is $mine (a copy of the starting file)."
  echo "Open it, write what its TODO lines ask for, and run 'bash scripts/exercise.sh $id' again."
  echo "Here is what the checker says about it now:"
  echo
fi

if [ ! -f "$build/CMakeCache.txt" ]; then
  echo "(configuring ember's build tree in $build/ first: this happens once)"
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release > "$build.configure.log" 2>&1 ||
    { cat "$build.configure.log"; echo "exercise.sh: cmake could not configure $build/ (see above)" >&2; exit 2; }
  rm -f "$build.configure.log"
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT
echo "(building the checker for $id ...)"
build_it() { cmake --build "$build" --target "$target" -j"$(nproc)" > "$log" 2>&1; }
no_target() { grep -q "No rule to make target '$target'\|unknown target '$target'" "$log"; }
built=yes
build_it || built=no
if [ $built = no ] && no_target; then
  # A build tree configured before this exercise existed: configure it again.
  cmake -S . -B "$build" > "$log" 2>&1 || { cat "$log"; exit 2; }
  built=yes
  build_it || built=no
  if [ $built = no ] && no_target; then
    echo "exercise.sh: $build/ has no target $target (configured with EMBER_BUILD_TESTS=OFF or EMBER_SANITIZE=ON?)" >&2
    exit 2
  fi
fi
if [ $built = no ]; then
  echo
  if grep -q "mine/$name:[0-9]*:[0-9]*: error" "$log"; then
    echo "Your file does not compile yet. What the compiler says about it (the first errors):"
    grep -A3 "mine/$name:[0-9]*:[0-9]*: error" "$log" | grep -v '^g\?make\|^--$' |
      sed 's|^.*/exercises/mine/|exercises/mine/|' | head -n 24
    echo
    echo "The number after the file name is the line, then the column."
  elif grep -q "undefined reference" "$log"; then
    echo "Your file compiles, but the checker cannot find a function it calls:"
    grep -o "undefined reference to \`[^']*'" "$log" | sort -u | head -n 5
    echo "Keep every function of the starting file, with its name, its namespace and its parameters."
  else
    echo "The build failed, and not in your file. The end of the build log:"
    tail -n 30 "$log"
  fi
  exit 1
fi

"$build/exercises/$target" "$mine"
status=$?
if [ "$status" -gt 1 ]; then
  echo
  if [ "$status" -ge 128 ]; then
    echo "The checker crashed (signal $((status - 128))) in the step printed last above: your code most likely read"
    echo "memory it does not own (an index out of range, a pointer into a tensor that is gone)."
  else
    echo "The checker stopped with status $status in the step printed last above."
  fi
  exit 1
fi
# The list shows which exercises pass: the checker's verdict on your file as it was then.
if [ "$status" -eq 0 ]; then
  sha256sum "$mine" > "exercises/mine/.${id}.passed"
else
  rm -f "exercises/mine/.${id}.passed"
fi
exit "$status"
