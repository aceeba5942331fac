#!/usr/bin/env bash
# Re-measures what the book quotes as timings, and redraws its pictures:
#   bash scripts/measure_book.sh [STEP ...]     (no step: all of them, about an hour and a half)
# Steps:
#   pictures     the pictures that do not depend on time (docs/images/)
#   race         the full lesson_c_race (chapter 6; it takes many minutes)
#   gpt          train_gpt with its defaults (chapter 7), and its loss picture
#   inside       inside_a_step: the profile, the guided reading, the memory picture (chapter 8)
#   watch        what the instruments cost: bench_ember --watch (chapter 8)
#   distributed  bench_distributed, 1 process and 2 ranks (chapter 10)
#   bench        bench_ember, and bench/compare.sh against PyTorch when it is installed, and the
#                float32 GPT step under both frameworks' profilers (chapter 11)
#   blas         sgemm and a GPT step under every OpenBLAS core this CPU runs (chapter 11)
#   threads      a training step with a busy core beside it, adaptive threads on and off (chapter 11)
#   gemm         gemm_lesson at 1024^2: every GEMM step, OpenBLAS, the peaks, the roofline (chapter 13);
#                again under OpenBLAS's best kernels for this CPU when the environment sets others
#   bits         fewer_bits: the tiny GPT in float32 and in bfloat16 autocast, its loss curves (chapter 13)
#   int8         quantize_gpt: the tiny GPT trained, then its weights in int8 (each group size, both
#                activations) and bfloat16: validation loss, greedy tokens, checkpoint bytes; decoding
#                the tiny GPT and GPT-2's 124M shape with float32, bfloat16 and int8 weights beside
#                PyTorch's float32 and dynamic int8 (bench/int8_decode.sh) (chapter 13; about 15 minutes)
#   bf16bench    bench/compare.sh on the products and the GPT step, float32 then --bf16,
#                and that step under both frameworks' profilers (chapter 13)
#   forward      forward_vs_reverse: Jacobians by forward and by reverse mode, the crossover
#                and its picture; bench/compare.sh on the transforms (chapter 14)
#   memory       long_context: a block and the tiny GPT at T = 128..4096, stored / tiled /
#                checkpointed, its four pictures; train_gpt at a 1024-token context;
#                bench/compare.sh on the long-context block (chapter 15)
#   timelines    only chapter 15's two memory timelines (the tiny GPT at T = 1024; long_context
#                measures only T = 128 besides, one step each)
#   zeropicture  only chapter 10's picture of the model state (zero_memory at 1, 2 and 4 ranks)
#   zero         zero_memory at 1, 2 and 4 ranks and its picture; bench_distributed --zero
#                at 2 ranks: DataParallel against ZeRO stages 1 and 2, and PyTorch's DDP
#                against its ZeroRedundancyOptimizer (bench/torch_zero.py) (chapter 10)
#   generation   train_gpt --bpe 512 and its sample; decoding with and without the KV cache beside PyTorch,
#                the tiny GPT and GPT-2's 124M shape (bench/decode_compare.sh); BPE encoding
#                beside tiktoken and gpt-3-encoder (bench/bpe_speed.sh); the picture of time
#                per token; where a decode step spends its time (chapter 16; about 55 minutes)
#   decode       only the decoding measurements of generation and the picture
#   decodeprofile  only where a decode step of the 124M shape spends its time, in both
#                frameworks, and eight alternating runs of each (bench/decode_profile.sh)
#   compile      bench/compile_compare.sh: compile/'s workloads eager, compiled, in PyTorch (chapter 17)
#   vmap         bench/vmap_compare.sh: Jacobians, a Hessian and per-sample gradients as
#                ember's loop, ember's vmap and functorch's vmap (chapter 18)
#   python       bench/python_compare.sh: one small op's call from C++, from Python
#                and PyTorch's from Python (chapter 19)
#
# Each step writes docs/book/measured/<name>.txt: a header (the machine, the
# commit of the code measured, the date, the load average before and after,
# the command) and the program's output as it printed it. The chapters quote
# these files; tests/doc_test.py checks every quoted number against them and
# that each chapter names the file's machine and commit. After a run, the
# doc-test says which quoted numbers changed. Builds nothing: run
# bash scripts/test.sh first (and cmake --build build --target bench_ember).
# Run it on a machine that is otherwise idle; the header records how busy it was.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${EMBER_BUILD_DIR:-build}
out=docs/book/measured
images=docs/images
mkdir -p "$out" "$images"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export OMP_WAIT_POLICY=passive

root=$PWD
bin() { echo "$root/$build/$1"; }
need() { [[ -x $(bin "$1") ]] || { echo "measure_book.sh: $build/$1 is missing: bash scripts/test.sh first" >&2; exit 2; }; }

# The code a measurement measures: the last commit that changed anything but
# the docs, marked when the work tree has uncommitted changes to it.
code_paths=(tensor autograd compile vmap nn train inspect distributed plot examples bench python CMakeLists.txt cmake)
commit() {
  local c
  c=$(git log -1 --format=%h -- "${code_paths[@]}")
  git diff --quiet HEAD -- "${code_paths[@]}" || c="$c+local-changes"
  echo "$c"
}
machine() {
  local cpu kernels
  cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
  kernels=$("$(bin examples/tensor_tour)" | sed -n 's/^machine: [^;]*; //p' | head -n 1)
  echo "$cpu with $(nproc) cores ($kernels)"
}
load() { cut -d' ' -f1 /proc/loadavg; }

# record NAME "the command, as a reader runs it" FUNCTION: runs FUNCTION in
# the scratch directory and writes its output, under the header, to $out/NAME.txt.
record() {
  local name=$1 what=$2 fn=$3 before body
  before=$(load)
  echo "--- $name: $what"
  body=$(cd "$scratch" && "$fn" 2>&1)
  {
    echo "# measured by scripts/measure_book.sh"
    echo "# machine: $(machine)"
    echo "# commit: $(commit)"
    echo "# date: $(date -u +%Y-%m-%d)"
    echo "# load: 1-minute load average $before before, $(load) after"
    echo "# command: $what"
    echo "$body" | sed "s|$root/||g; s|$scratch/||g"
  } > "$out/$name.txt"
  echo "    wrote $out/$name.txt"
}

# picture SRC NAME STEP "COMMAND": copies a picture a step drew into
# docs/images/NAME and records who drew it, at which commit, in
# docs/images/drawn_by.txt (one line per picture: name, commit, step,
# command); each picture's caption in the book names the two, and the
# doc-test holds the captions to this file.
picture() {
  local src=$1 name=$2 step=$3 what=$4 list=$images/drawn_by.txt
  [[ -s $src ]] || { echo "measure_book.sh: $src was not drawn" >&2; return 1; }
  cp "$src" "$images/$name" || return 1
  touch "$list"
  { grep -v "^$name	" "$list" || true; printf '%s\t%s\t%s\t%s\n' "$name" "$(commit)" "$step" "$what"; } |
    LC_ALL=C sort > "$list.new"
  mv "$list.new" "$list"
}

step_pictures() {
  need examples/embeddings_demo
  need examples/lesson_c_race
  (
    cd "$scratch"
    "$(bin examples/embeddings_demo)" --out pics > /dev/null
    "$(bin examples/embeddings_demo)" --out pics --dim 32 > /dev/null
    "$(bin examples/autograd_basics)" --out pics > /dev/null
    "$(bin examples/lesson_c_race)" --quick --out pics/lesson_c > /dev/null
  )
  picture "$scratch/pics/sinusoidal_table_D64.png" embeddings_sinusoidal_D64.png pictures "./build/examples/embeddings_demo"
  picture "$scratch/pics/sinusoidal_table_D32.png" embeddings_sinusoidal_D32.png pictures "./build/examples/embeddings_demo --dim 32"
  picture "$scratch/pics/adjacent_cosine_D64.png" embeddings_adjacent_cosine_D64.png pictures "./build/examples/embeddings_demo"
  picture "$scratch/pics/autograd_basics.png" autograd_basics_graph.png pictures "./build/examples/autograd_basics"
  for p in recall_accuracy recall_reach gradient_init gradient_trained attention step_ops; do
    picture "$scratch/pics/lesson_c/$p.png" "lesson_c_$p.png" pictures "./build/examples/lesson_c_race --quick"
  done
  echo "--- pictures: wrote $images/embeddings_*.png, autograd_basics_graph.png, lesson_c_*.png"
}

race_full() { "$(bin examples/lesson_c_race)" --out race_full; }
step_race() {  # (the --quick race is the doc-test's, run live; its pictures are the pictures step's)
  need examples/lesson_c_race
  record lesson_c_race_full "./build/examples/lesson_c_race" race_full
}

gpt() { "$(bin examples/train_gpt)" --out gpt; }
step_gpt() {
  need examples/train_gpt
  record train_gpt "./build/examples/train_gpt" gpt
  picture "$scratch/gpt/loss.png" gpt_loss.png gpt "./build/examples/train_gpt"
}

inside() { "$(bin examples/inside_a_step)" --out inside; }
step_inside() {
  need examples/inside_a_step
  record inside_a_step "./build/examples/inside_a_step" inside
  picture "$scratch/inside/memory.png" memory_step.png inside "./build/examples/inside_a_step"
  if command -v chromium > /dev/null; then  # the step-through page at step 60, as a browser shows it
    timeout 120 chromium --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$scratch/chromium" \
      --window-size=1400,900 --screenshot="$scratch/backward_page.png" \
      "file://$scratch/inside/backward.html?step=60" > /dev/null 2>&1 || true
    if [[ -s $scratch/backward_page.png ]]; then
      picture "$scratch/backward_page.png" backward_page.png inside \
        "./build/examples/inside_a_step, out/inside_a_step/backward.html?step=60 in chromium"
    else
      echo "    (no screenshot: chromium failed)"
    fi
  fi
}

watched=(gpt_tiny_train_step chain_2000_small_ops small_op_overhead)
watch() {
  echo "## no instrument"
  "$(bin bench/bench_ember)" "${watched[@]}"
  for m in trace profile memory; do
    echo "## --watch $m"
    "$(bin bench/bench_ember)" --watch "$m" "${watched[@]}"
  done
}
step_watch() {
  need bench/bench_ember
  record bench_watch "./build/bench/bench_ember [--watch trace|profile|memory] ${watched[*]}" watch
}

mpi() { OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun --oversubscribe -np 2 --bind-to none "$@"; }
distributed() {
  echo "## 1 process, 2 threads"
  "$(bin bench/bench_distributed)" --threads 2
  echo "## 1 process, 1 thread"
  "$(bin bench/bench_distributed)" --threads 1
  if command -v mpirun > /dev/null; then
    echo "## 2 ranks, 1 thread each"
    mpi "$(bin bench/bench_distributed)"
    echo "## MPI_Allreduce by message size, 2 ranks"
    mpi "$(bin bench/bench_distributed)" --allreduce
  fi
}
step_distributed() {
  need bench/bench_distributed
  record distributed "./build/bench/bench_distributed --threads 2|1; mpirun -np 2 --bind-to none ./build/bench/bench_distributed [--allreduce]" distributed
}

# ZeRO (chapter 10): each rank's model state at 1, 2 and 4 ranks, then the
# step time of DataParallel and the two stages at 2 ranks; the picture of
# the model state from the rows the three runs left.
mpin() { local n=$1; shift; OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun --oversubscribe -np "$n" --bind-to none "$@"; }
zero() {
  rm -f zero_rows.tsv
  if command -v mpirun > /dev/null; then
    for n in 1 2 4; do
      echo "## $n ranks"
      mpin "$n" "$(bin examples/zero_memory)" --rows zero_rows.tsv
    done
    echo "## step time, 2 ranks, 1 thread each"
    mpi "$(bin bench/bench_distributed)" --zero
    if /usr/bin/python3 -c 'import torch' 2> /dev/null; then
      echo "## PyTorch, step time, 2 ranks, 1 thread each"
      mpi /usr/bin/python3 "$root/bench/torch_zero.py"
    fi
    "$(bin examples/zero_memory)" --plot zero_rows.tsv --png zero_memory.png
  fi
}
step_zero() {
  need examples/zero_memory
  need bench/bench_distributed
  record zero "mpirun -np 1|2|4 --bind-to none ./build/examples/zero_memory; mpirun -np 2 --bind-to none ./build/bench/bench_distributed --zero; mpirun -np 2 python3 bench/torch_zero.py" zero
  picture "$scratch/zero_memory.png" zero_memory.png zero "./build/examples/zero_memory --plot (after mpirun -np 1, 2 and 4 of it)"
}

bench() { "$(bin bench/bench_ember)"; }
compare() { bash "$root/bench/compare.sh" --build "$root/$build"; }
step_bench() {
  need bench/bench_ember
  record bench_ember "./build/bench/bench_ember" bench
  if /usr/bin/python3 -c 'import torch' 2> /dev/null; then
    record bench_compare "bash bench/compare.sh" compare
    record step_profile "bench_ember --profile; torch_reference.py --profile" f32profile
  else
    echo "--- bench_compare: skipped (no PyTorch: bash scripts/deps.sh --bench)"
  fi
}

cores() {
  for core in $("$(bin tests/blas_cores)") Prescott; do
    echo "## OPENBLAS_CORETYPE=$core"
    OPENBLAS_CORETYPE=$core "$(bin bench/bench_ember)" matmul_1024 gpt_small_train_step
  done
}
step_blas() {
  need bench/bench_ember
  need tests/blas_cores
  record blas_cores "OPENBLAS_CORETYPE=<core> ./build/bench/bench_ember matmul_1024 gpt_small_train_step" cores
}

threads() {
  local busy_pid=""
  trap '[ -n "$busy_pid" ] && kill "$busy_pid" 2> /dev/null' RETURN
  for busy in no yes; do
    if [ "$busy" = yes ]; then
      yes > /dev/null &
      busy_pid=$!
      sleep 1
    fi
    for adaptive in 1 0; do
      echo "## another program busy on one core: $busy; EMBER_ADAPTIVE_THREADS=$adaptive, 2 threads"
      EMBER_ADAPTIVE_THREADS=$adaptive "$(bin bench/bench_ember)" gpt_tiny_train_step
    done
    echo "## another program busy on one core: $busy; 1 thread"
    "$(bin bench/bench_ember)" --threads 1 gpt_tiny_train_step
  done
}
step_threads() {
  need bench/bench_ember
  record threads "[yes > /dev/null &] EMBER_ADAPTIVE_THREADS=1|0 ./build/bench/bench_ember [--threads 1] gpt_tiny_train_step" threads
}

gemm_lesson() { "$(bin examples/gemm_lesson)" --out gemm; }
gemm_lesson_other() { "$(bin examples/gemm_lesson)" --out gemm_other; }
step_gemm() {
  need examples/gemm_lesson
  need tests/blas_cores
  record gemm_lesson "./build/examples/gemm_lesson" gemm_lesson
  picture "$scratch/gemm/roofline.png" gemm_roofline.png gemm "./build/examples/gemm_lesson"
  # Once more against OpenBLAS's best kernels for this CPU (the first core
  # tests/blas_cores lists: ember's own choice when the environment names
  # none), when the environment holds OpenBLAS to other ones.
  local best
  best=$("$(bin tests/blas_cores)" | head -n 1)
  if [ -n "$best" ] && [ "${OPENBLAS_CORETYPE:-}" != "$best" ]; then
    OPENBLAS_CORETYPE=$best record gemm_lesson_best_blas "OPENBLAS_CORETYPE=$best ./build/examples/gemm_lesson" gemm_lesson_other
  fi
}

fewer_bits() { "$(bin examples/fewer_bits)" --out bits; }
step_bits() {
  need examples/fewer_bits
  record fewer_bits "./build/examples/fewer_bits" fewer_bits
  picture "$scratch/bits/loss_curves.png" bf16_loss_curves.png bits "./build/examples/fewer_bits"
}

bf16_workloads=(matmul_1024 matmul_fwd_bwd_1024 attention_block_fwd_bwd gpt_small_train_step)
bf16bench() {
  echo "## float32"
  bash "$root/bench/compare.sh" --build "$root/$build" "${bf16_workloads[@]}"
  echo "## bfloat16 autocast"
  bash "$root/bench/compare.sh" --build "$root/$build" --bf16 "${bf16_workloads[@]}"
}
step_bf16bench() {
  need bench/bench_ember
  record bench_bf16 "bash bench/compare.sh [--bf16] ${bf16_workloads[*]}" bf16bench
  record bf16_profile "bench_ember --bf16 --profile; torch_reference.py --bf16 --profile" bf16profile
}

# Where the GPT step's time goes in each framework: one run under each one's
# profiler, in the environment bench/compare.sh gives both (its malloc
# setting, the wait policy both were fastest under: $1); then "--bf16" for
# autocast.
stepprofile() {
  local keep policy=$1
  shift
  keep=$(sed -n 's/^keep_freed_memory=//p' "$root/bench/compare.sh")
  echo "## ember"
  GLIBC_TUNABLES=$keep OMP_WAIT_POLICY=$policy "$(bin bench/bench_ember)" "$@" --profile gpt_small_train_step
  echo "## torch"
  GLIBC_TUNABLES=$keep OMP_WAIT_POLICY=$policy "${PYTHON:-/usr/bin/python3}" "$root/bench/torch_reference.py" "$@" --profile \
    gpt_small_train_step
}
bf16profile() { stepprofile active --bf16; }
f32profile() { stepprofile passive; }

fvr() { "$(bin examples/forward_vs_reverse)" --out fvr; }
forward_workloads=(jacfwd_64_to_16 jacrev_64_to_16 hvp_4096_params)
forward_compare() { bash "$root/bench/compare.sh" --build "$root/$build" "${forward_workloads[@]}"; }
step_forward() {
  need examples/forward_vs_reverse
  record forward_vs_reverse "./build/examples/forward_vs_reverse" fvr
  picture "$scratch/fvr/crossover.png" forward_vs_reverse_crossover.png forward "./build/examples/forward_vs_reverse"
  picture "$scratch/fvr/crossover_vmap.png" forward_vs_reverse_crossover_vmap.png forward "./build/examples/forward_vs_reverse"
  if /usr/bin/python3 -c 'import torch' 2> /dev/null; then
    need bench/bench_ember
    record forward_compare "bash bench/compare.sh ${forward_workloads[*]}" forward_compare
  else
    echo "--- forward_compare: skipped (no PyTorch: bash scripts/deps.sh --bench)"
  fi
}

long_context() { "$(bin examples/long_context)" --png lc; }
long_workloads=()
for T in 128 256 512 1024 2048 4096; do long_workloads+=("long_block_T${T}_stored" "long_block_T${T}_tiled" "long_block_T${T}_ckpt"); done
long_compare() { bash "$root/bench/compare.sh" --build "$root/$build" "${long_workloads[@]}"; }
train_long() {
  "$(bin examples/train_gpt)" --context 1024 --steps 40 --eval-every 20 --checkpoint-activations --sample-chars 0 --out gpt_long
  "$(bin examples/train_gpt)" --context 1024 --steps 4 --eval-every 4 --sample-chars 0 --out gpt_long_plain
  "$(bin examples/train_gpt)" --context 1024 --steps 4 --eval-every 4 --attention stored --sample-chars 0 --out gpt_long_stored
}
step_memory() {
  need examples/long_context
  need examples/train_gpt
  record long_context "./build/examples/long_context" long_context
  for p in memory time timeline_plain timeline_checkpointed; do
    picture "$scratch/lc/long_context_$p.png" "long_context_$p.png" memory "./build/examples/long_context"
  done
  record train_gpt_long "train_gpt --context 1024 [--checkpoint-activations | --attention stored]" train_long
  if /usr/bin/python3 -c 'import torch' 2> /dev/null; then
    need bench/bench_ember
    record long_context_compare "bash bench/compare.sh long_block_T{128..4096}_{stored,tiled,ckpt}" long_compare
  else
    echo "--- long_context_compare: skipped (no PyTorch: bash scripts/deps.sh --bench)"
  fi
}

# Only the two memory timelines of chapter 15 (the step of one tiny GPT at
# T = 1024, without and with checkpointing), without the minutes of the
# memory step's measurements at every context length.
step_timelines() {
  need examples/long_context
  (cd "$scratch" && "$(bin examples/long_context)" --T 128 --reps 1 --png lc > /dev/null)
  for p in timeline_plain timeline_checkpointed; do
    picture "$scratch/lc/long_context_$p.png" "long_context_$p.png" timelines \
      "./build/examples/long_context --T 128 --reps 1 --png DIR"
  done
}

# Only chapter 10's picture of the model state, from the rows of 1, 2 and 4 ranks.
step_zeropicture() {
  need examples/zero_memory
  command -v mpirun > /dev/null || { echo "measure_book.sh: zeropicture needs mpirun (bash scripts/deps.sh)" >&2; exit 2; }
  (
    cd "$scratch"
    rm -f zero_rows.tsv
    for n in 1 2 4; do mpin "$n" "$(bin examples/zero_memory)" --rows zero_rows.tsv > /dev/null; done
    "$(bin examples/zero_memory)" --plot zero_rows.tsv --png zero_memory.png > /dev/null
  )
  picture "$scratch/zero_memory.png" zero_memory.png zeropicture \
    "./build/examples/zero_memory --plot (after mpirun -np 1, 2 and 4 of it)"
}

gpt_bpe() { "$(bin examples/train_gpt)" --bpe 512 --out gpt_bpe; }
decode_tiny() { bash "$root/bench/decode_compare.sh" --build "$root/$build" --model tiny --prompts 16,256 --reps 3; }
decode_gpt2() { bash "$root/bench/decode_compare.sh" --build "$root/$build" --model gpt2 --reps 3; }
bpe_speed() { bash "$root/bench/bpe_speed.sh" --build "$root/$build" --reps 3; }
step_generation() {
  need examples/train_gpt
  need examples/bpe
  record train_gpt_bpe "./build/examples/train_gpt --bpe 512 --out out/gpt_bpe" gpt_bpe
  record bpe_speed "bash bench/bpe_speed.sh --reps 3" bpe_speed
  step_decode
  step_decodeprofile
}
# Only the decoding measurements (about 45 minutes: the 124M shape, each
# prompt under three wait policies in both frameworks), and the picture.
step_decode() {
  need bench/bench_decode
  need bench/bench_ember
  (cd "$scratch" && "$(bin bench/bench_decode)" --model gpt2 --prompts 16 --new 16 --reps 1 --plot decode.png > /dev/null)
  picture "$scratch/decode.png" decode_gpt2.png generation "./build/bench/bench_decode --model gpt2 --plot FILE"
  if /usr/bin/python3 -c 'import torch' 2> /dev/null; then
    record decode_tiny "bash bench/decode_compare.sh --model tiny --prompts 16,256 --reps 3" decode_tiny
    record decode_gpt2 "bash bench/decode_compare.sh --model gpt2 --reps 3" decode_gpt2
  else
    echo "--- decode_tiny, decode_gpt2: skipped (no PyTorch: bash scripts/deps.sh --bench)"
  fi
}

# Weights in fewer bits (chapter 13): what they cost a trained model, what they buy decoding.
quantize_gpt() { "$(bin examples/quantize_gpt)" --out quantize; }
int8_decode_tiny() { bash "$root/bench/int8_decode.sh" --build "$root/$build" --model tiny --reps 3; }
int8_decode_gpt2() { bash "$root/bench/int8_decode.sh" --build "$root/$build" --model gpt2 --reps 3; }
step_int8() {
  need examples/quantize_gpt
  need bench/bench_decode
  need bench/bench_ember
  record quantize_gpt "./build/examples/quantize_gpt" quantize_gpt
  record int8_decode_tiny "bash bench/int8_decode.sh --model tiny --reps 3" int8_decode_tiny
  record int8_decode_gpt2 "bash bench/int8_decode.sh --model gpt2 --reps 3" int8_decode_gpt2
}

decode_profile() { bash "$root/bench/decode_profile.sh" --build "$root/$build" --runs 8; }
step_decodeprofile() {
  need bench/bench_decode
  need bench/bench_ember
  if /usr/bin/python3 -c 'import torch' 2> /dev/null; then
    record decode_profile "bash bench/decode_profile.sh --runs 8" decode_profile
  else
    echo "--- decode_profile: skipped (no PyTorch: bash scripts/deps.sh --bench)"
  fi
}

# compile/: its workloads eager, compiled and in PyTorch (chapter 17).
compile_measure() { bash "$root/bench/compile_compare.sh" --build "$root/$build"; }
step_compile() {
  need bench/bench_compile
  need bench/bench_ember
  if /usr/bin/python3 -c 'import torch' 2> /dev/null; then
    record compile "bash bench/compile_compare.sh" compile_measure
  else
    echo "--- compile: skipped (no PyTorch: bash scripts/deps.sh --bench)"
  fi
}

# vmap/: Jacobians and per-sample gradients, loop, vmap and functorch (chapter 18).
vmap_measure() { bash "$root/bench/vmap_compare.sh" --build "$root/$build"; }
step_vmap() {
  need bench/bench_vmap
  need bench/bench_ember
  if /usr/bin/python3 -c 'import torch' 2> /dev/null; then
    record vmap_compare "bash bench/vmap_compare.sh" vmap_measure
  else
    echo "--- vmap_compare: skipped (no PyTorch: bash scripts/deps.sh --bench)"
  fi
}

# python/: the cost of one small op's call, from C++, from Python, and PyTorch's from Python (chapter 19).
python_measure() { bash "$root/bench/python_compare.sh" --build "$root/$build"; }
step_python() {
  need bench/bench_ember
  [[ -f $root/$build/python/ember-python ]] || { echo "measure_book.sh: $build/python is missing: bash scripts/test.sh first" >&2; exit 2; }
  if /usr/bin/python3 -c 'import torch' 2> /dev/null; then
    record python_calls "bash bench/python_compare.sh" python_measure
  else
    echo "--- python_calls: skipped (no PyTorch: bash scripts/deps.sh)"
  fi
}

steps=("$@")
((${#steps[@]})) || steps=(pictures race gpt inside watch distributed bench blas threads gemm bits int8 bf16bench forward memory zero generation compile vmap python)
for s in "${steps[@]}"; do
  if ! declare -F "step_$s" > /dev/null; then
    echo "measure_book.sh: no step '$s' (pictures race gpt inside watch distributed bench blas threads gemm bits int8 bf16bench forward memory zero generation compile vmap python decode decodeprofile timelines zeropicture)" >&2
    exit 2
  fi
  "step_$s"
done
echo "done: now run python3 tests/doc_test.py --source . --build $build to see which quoted numbers changed"
