// Step 6: threads over blocks of C.
//
// One core runs step 5 near its FMA peak; the other cores get their share
// by splitting the work. Each element of C is computed by exactly one
// thread, in the same order as on one thread, so the split changes no bit:
// the result depends only on the blocking constants below (fixed, whatever
// the thread count or the SIMD width) and on the data. That leaves the
// split free to follow the machine: threads take the next task from a
// shared counter, so a thread that the operating system stops for a while
// (another program wants the core) does not hold the others up; they take
// its share.
//
// Per (jc, pc) block, as in step 4, two phases:
//   1. pack, shared: the B block (kc x nc) as NR-column panels, and the A
//      rows (kc deep, mc rows per task) as MR-row panels. Each value is
//      packed once, by one thread, for all of them.
//   2. the tiles of C, mc rows x 256 columns each: the macro-kernel on the
//      packed panels. A 256-column slice of the B block (256 KiB) and one
//      A block (144 KiB) fit one core's L2 together.
// A product too small to repay waking threads (2 M N K below 2^21) runs on
// the calling thread, as does one called with parallel = false (a product
// that is one of a batch already split among the threads).
//
// This is ember's float32 GEMM (EMBER_GEMM=ember; tensor/gemm/microkernels.h
// says why OpenBLAS is the default), and with bfloat16 panels step 7's.
#include <atomic>

#include "tensor/gemm/microkernels.h"
#include "tensor/gemm/panels.h"
#include "tensor/parallel.h"

namespace ember::gemm {

namespace {
constexpr int64_t kMc = 144;      // rows of an A block: a multiple of every kernel's MR (4, 6, 12)
constexpr int64_t kMcAll = 4032;  // rows of A packed at once (28 blocks: at most 8 MiB of panels)
constexpr int64_t kNc = 2048;     // columns of a packed B block
constexpr int64_t kChunk = 256;   // columns of a task
constexpr int64_t kPanelsPerTask = 8;  // B panels packed per packing task
constexpr int64_t kKcF32 = 256;   // depth of a block: the same as step 5's, so steps 5 and 6 agree bit for bit
constexpr double kGrainFlops = double(1 << 21);

// body(t) for every t < tasks, each exactly once: on the calling thread, or
// on ember's threads, each taking the next t from a shared counter.
template <typename F>
void for_each_task(int64_t tasks, bool parallel, const F& body) {
  if (!parallel || tasks <= 1) {
    for (int64_t t = 0; t < tasks; ++t) body(t);
    return;
  }
  std::atomic<int64_t> next{0};
  const int64_t pieces = std::min<int64_t>(get_num_threads(), tasks);
  detail::parallel_for(pieces, 1, [&](int64_t, int64_t) {
    for (int64_t t = next.fetch_add(1, std::memory_order_relaxed); t < tasks; t = next.fetch_add(1, std::memory_order_relaxed))
      body(t);
  });
}
}  // namespace

void run_threaded(const Product& p, Out c, bool parallel) {
  const Kernel& k = p.kernel;
  parallel = parallel && 2.0 * double(p.M) * double(p.N) * double(p.K) >= kGrainFlops;
  PanelBuffer b_packed(panel_bytes(k, std::min(kNc, p.N), k.nr, p.kc));
  PanelBuffer a_packed(panel_bytes(k, kMc, k.mr, p.kc) * ((std::min(kMcAll, p.M) + kMc - 1) / kMc));
  for (int64_t jc = 0; jc < p.N; jc += kNc) {
    const int64_t nc = std::min(kNc, p.N - jc), chunks = (nc + kChunk - 1) / kChunk;
    const int64_t b_tasks = ((nc + k.nr - 1) / k.nr + kPanelsPerTask - 1) / kPanelsPerTask;
    for (int64_t pc = 0; pc < p.K; pc += p.kc) {
      const int64_t kc = std::min(p.kc, p.K - pc);
      // (the last block may be shallower: its panels are smaller, and packed that way)
      const int64_t a_block = panel_bytes(k, kMc, k.mr, kc), b_panel = panel_bytes(k, k.nr, k.nr, kc);
      for (int64_t i0 = 0; i0 < p.M; i0 += kMcAll) {
        const int64_t rows = std::min(kMcAll, p.M - i0), bands = (rows + kMc - 1) / kMc;
        // 1. pack: the B block (once per i0 block: the first) and these rows of A
        const int64_t packing = (i0 == 0 ? b_tasks : 0) + bands;
        for_each_task(packing, parallel, [&](int64_t t) {
          if (i0 == 0 && t < b_tasks) {
            const int64_t j0 = t * kPanelsPerTask * k.nr, cols = std::min(kPanelsPerTask * k.nr, nc - j0);
            p.pack_b(pc, kc, jc + j0, cols, b_packed.as<char>() + (j0 / k.nr) * b_panel);
          } else {
            const int64_t band = t - (i0 == 0 ? b_tasks : 0), ic = i0 + band * kMc;
            p.pack_a(ic, std::min(kMc, p.M - ic), pc, kc, a_packed.as<char>() + band * a_block);
          }
        });
        // 2. the tiles
        for_each_task(bands * chunks, parallel, [&](int64_t t) {
          const int64_t band = t / chunks, j0 = (t % chunks) * kChunk, ic = i0 + band * kMc;
          macro_kernel(k, std::min(kMc, p.M - ic), std::min(kChunk, nc - j0), kc, a_packed.as<char>() + band * a_block,
                       b_packed.as<char>() + (j0 / k.nr) * b_panel, c, ic, jc + j0, /*accumulate=*/pc > 0);
        });
      }
    }
  }
}

void threaded(View<float> a, View<float> b, Out c, Isa isa, bool parallel) {
  if (a.cols == 0) return fill_zero(c);
  Product p;
  p.M = a.rows;
  p.N = b.cols;
  p.K = a.cols;
  p.kernel = f32_kernel(isa);
  p.kc = kKcF32;
  const int mr = p.kernel.mr, nr = p.kernel.nr;
  p.pack_a = [=](int64_t i0, int64_t mc, int64_t p0, int64_t kc, void* dst) { pack_a(a, i0, mc, p0, kc, mr, dst); };
  p.pack_b = [=](int64_t p0, int64_t kc, int64_t j0, int64_t nc, void* dst) { pack_b(b, p0, kc, j0, nc, nr, dst); };
  run_threaded(p, c, parallel);
}

}  // namespace ember::gemm
