// Step 6: threads over blocks of C.
//
// One core runs step 5 near its FMA peak; the other cores get their share
// by splitting C. Each element of C is computed by exactly one thread, in
// the same order as on one thread, so the split changes no bit: the result
// depends only on the blocking constants below (fixed, whatever the thread
// count or the SIMD width) and on the data.
//
// Per (jc, pc) block, as in step 4:
//   1. pack the B block (kc x nc) once, shared: its NR-column panels are
//      split among the threads;
//   2. the tasks are tiles of C, mc rows x 256 columns; each thread takes a
//      contiguous run of them (detail::parallel_for: one run per configured
//      thread), packs the A block of each new row band into its own buffer,
//      and runs the macro-kernel. A 256-column slice of the B block (256
//      KiB) and the A block (144 KiB) fit one core's L2 together.
// A product too small to repay waking threads (2 M N K below 2^21) runs on
// the calling thread, as does one called with parallel = false (a product
// that is one of a batch already split among the threads).
//
// This is ember's float32 GEMM (EMBER_GEMM=ember; tensor/machine/gemm_kernels.h
// says why OpenBLAS is the default), and with bfloat16 panels step 7's.
#include "tensor/gemm/panels.h"
#include "tensor/machine/gemm_kernels.h"
#include "tensor/parallel.h"

namespace ember::gemm {

namespace {
constexpr int64_t kMc = 144;      // rows of an A block: a multiple of every kernel's MR (4, 6, 12)
constexpr int64_t kNc = 2048;     // columns of a packed B block
constexpr int64_t kChunk = 256;   // columns of a task
constexpr int64_t kKcF32 = 256;   // depth of a block: the same as step 5's, so steps 5 and 6 agree bit for bit
constexpr double kGrainFlops = double(1 << 21);

void pack_b_shared(const Product& p, int64_t pc, int64_t kc, int64_t jc, int64_t nc, char* dst, bool parallel) {
  const Kernel& k = p.kernel;
  const int64_t panels = (nc + k.nr - 1) / k.nr, step = panel_bytes(k, k.nr, k.nr, kc);
  const int64_t grain = parallel ? std::max<int64_t>(1, 16384 / (kc * k.nr)) : panels + 1;
  detail::parallel_for(panels, grain, [&](int64_t s0, int64_t s1) {
    const int64_t j0 = s0 * k.nr, j1 = std::min(nc, s1 * k.nr);
    p.pack_b(pc, kc, jc + j0, j1 - j0, dst + s0 * step);
  });
}
}  // namespace

void run_threaded(const Product& p, Out c, bool parallel) {
  const Kernel& k = p.kernel;
  const int64_t bands = (p.M + kMc - 1) / kMc;
  PanelBuffer b_block(panel_bytes(k, std::min(kNc, p.N), k.nr, p.kc));
  for (int64_t jc = 0; jc < p.N; jc += kNc) {
    const int64_t nc = std::min(kNc, p.N - jc), chunks = (nc + kChunk - 1) / kChunk;
    const double task_flops = 2.0 * double(std::min(kMc, p.M)) * double(std::min(kChunk, nc)) * double(p.K);
    const int64_t grain = parallel ? std::max<int64_t>(1, static_cast<int64_t>(kGrainFlops / task_flops)) : bands * chunks + 1;
    for (int64_t pc = 0; pc < p.K; pc += p.kc) {
      const int64_t kc = std::min(p.kc, p.K - pc);
      pack_b_shared(p, pc, kc, jc, nc, b_block.as<char>(), parallel && bands * chunks >= grain);
      detail::parallel_for(bands * chunks, grain, [&](int64_t t0, int64_t t1) {
        PanelBuffer a_block(panel_bytes(k, kMc, k.mr, kc));
        int64_t packed_band = -1;
        for (int64_t t = t0; t < t1; ++t) {
          const int64_t band = t / chunks, chunk = t % chunks;
          const int64_t ic = band * kMc, mc = std::min(kMc, p.M - ic);
          if (band != packed_band) p.pack_a(ic, mc, pc, kc, a_block.as<char>());
          packed_band = band;
          const int64_t j0 = chunk * kChunk, cols = std::min(kChunk, nc - j0);
          const char* b_panels = b_block.as<char>() + (j0 / k.nr) * panel_bytes(k, k.nr, k.nr, kc);
          macro_kernel(k, mc, cols, kc, a_block.as<char>(), b_panels, c, ic, jc + j0, /*accumulate=*/pc > 0);
        }
      });
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
  p.pack_a = [=](int64_t i0, int64_t mc, int64_t p0, int64_t kc, void* dst) {
    pack_a(a, i0, mc, p0, kc, mr, dst);
  };
  p.pack_b = [=](int64_t p0, int64_t kc, int64_t j0, int64_t nc, void* dst) {
    pack_b(b, p0, kc, j0, nc, nr, dst);
  };
  run_threaded(p, c, parallel);
}

}  // namespace ember::gemm
