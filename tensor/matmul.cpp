// matmul: the one file that talks to OpenBLAS (and loads it: see below).
//
// PyTorch semantics: 1-D x 1-D is a dot product; a 1-D operand is treated as
// a row (left) or column (right) vector and that dim is removed afterwards;
// N-D operands are stacks of matrices whose batch dims broadcast.
//
// A matrix reaches BLAS without a copy when one of its strides is 1: a
// row-major view passes as "no transpose", a transposed view (column-major)
// passes with the transpose flag. Only other layouts are copied.
//
// Threads: OpenBLAS runs single-threaded; ember splits the products itself
// (run_gemms, below), so that every parallel op goes through parallel_for.
#include <cblas.h>  // the types and enums only: the functions come from the library ember loads
#include <dlfcn.h>

#include <atomic>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <type_traits>

#include <omp.h>

#include "tensor/blas.h"
#include "tensor/hooks.h"
#include "tensor/kernels.h"
#include "tensor/parallel.h"

// ---- loading OpenBLAS, and choosing its kernels first ----
//
// OpenBLAS picks its kernel set ("core") when it loads, from CPUID and a
// table of the CPU models its release knows; OPENBLAS_CORETYPE overrides it,
// and is read then, once. Linked normally, the library would load (and
// choose) before any of ember's code runs. So ember does not link it: this
// file loads it with dlopen at first use, after setting OPENBLAS_CORETYPE
// from this CPU's features when the user has not. That is the whole trick;
// everything else here is looking up the functions. (setenv runs once, inside
// a function-local static's initialiser, before OpenBLAS exists.)
#ifndef EMBER_OPENBLAS_PATH
#define EMBER_OPENBLAS_PATH "libopenblas.so.0"
#endif

namespace ember {

namespace {

// The kernels this CPU can run, best first, in OpenBLAS's names.
std::vector<std::string> cores_for_cpu() {
  std::vector<std::string> out;
#if defined(__x86_64__)
  __builtin_cpu_init();
  const bool amd = __builtin_cpu_is("amd");
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512vl")) {
    if (__builtin_cpu_supports("avx512bf16")) out.push_back("CooperLake");
    out.push_back("SkylakeX");
  }
  // Zen's kernels are Haswell's AVX2 code tuned for AMD's caches: both run on
  // either vendor's AVX2 CPUs; the vendor's own comes first.
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    out.push_back(amd ? "Zen" : "Haswell");
    out.push_back(amd ? "Haswell" : "Zen");
  }
  if (__builtin_cpu_supports("avx")) out.push_back("Sandybridge");
#endif
  return out;
}

using sgemm_t = void (*)(CBLAS_ORDER, CBLAS_TRANSPOSE, CBLAS_TRANSPOSE, blasint, blasint, blasint, float,
                         const float*, blasint, const float*, blasint, float, float*, blasint);
using dgemm_t = void (*)(CBLAS_ORDER, CBLAS_TRANSPOSE, CBLAS_TRANSPOSE, blasint, blasint, blasint, double,
                         const double*, blasint, const double*, blasint, double, double*, blasint);

struct Library {
  sgemm_t sgemm = nullptr;
  dgemm_t dgemm = nullptr;
  void (*set_num_threads)(int) = nullptr;
  int (*get_num_threads)() = nullptr;
  char* (*get_corename)() = nullptr;
  char* (*get_config)() = nullptr;
  std::string path;
  bool chosen_by_ember = false;
  std::string cpu_best;
  std::string user_core;  // OPENBLAS_CORETYPE as the user set it ("" if not)
};

bool same_core(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  return true;
}

template <typename F>
F symbol(void* handle, const char* name, const std::string& path) {
  void* p = ::dlsym(handle, name);
  EMBER_CHECK(p != nullptr, "blas", path << ": no symbol " << name << " (is this OpenBLAS?)");
  return reinterpret_cast<F>(p);
}

const Library& library() {
  static const Library lib = [] {
    Library l;
    const std::vector<std::string> cores = cores_for_cpu();
    l.cpu_best = cores.empty() ? "" : cores.front();
    const char* user = std::getenv("OPENBLAS_CORETYPE");
    if (user && *user) l.user_core = user;
    if (l.user_core.empty() && !l.cpu_best.empty()) {
      ::setenv("OPENBLAS_CORETYPE", l.cpu_best.c_str(), 1);  // read by OpenBLAS as it loads, just below
      l.chosen_by_ember = true;
    }
    l.path = EMBER_OPENBLAS_PATH;
    // Already in the process (linked by the program, or loaded by another
    // library)? Then it chose its kernels long ago, and ember did not.
    if (void* loaded = ::dlopen(l.path.c_str(), RTLD_NOW | RTLD_NOLOAD)) {
      ::dlclose(loaded);
      if (l.chosen_by_ember) ::unsetenv("OPENBLAS_CORETYPE");
      l.chosen_by_ember = false;
    }
    void* h = ::dlopen(l.path.c_str(), RTLD_NOW | RTLD_LOCAL);
    EMBER_CHECK(h != nullptr, "blas", "cannot load OpenBLAS from " << l.path << ": " << ::dlerror());
    l.sgemm = symbol<sgemm_t>(h, "cblas_sgemm", l.path);
    l.dgemm = symbol<dgemm_t>(h, "cblas_dgemm", l.path);
    l.set_num_threads = symbol<void (*)(int)>(h, "openblas_set_num_threads", l.path);
    l.get_num_threads = symbol<int (*)()>(h, "openblas_get_num_threads", l.path);
    l.get_corename = symbol<char* (*)()>(h, "openblas_get_corename", l.path);
    l.get_config = symbol<char* (*)()>(h, "openblas_get_config", l.path);
    // OpenBLAS runs single-threaded: ember splits each product over its own
    // threads (run_gemms below). In the OpenMP build, setting OpenBLAS's
    // count also sets this thread's OpenMP default: put that one back.
    const int omp_default = omp_get_max_threads();
    l.set_num_threads(1);
    omp_set_num_threads(omp_default);
    // A core OpenBLAS does not know is ignored by it without a word (it then
    // picks its own): say once which kernels run instead.
    if (!l.user_core.empty() && !same_core(l.user_core, l.get_corename()))
      std::fprintf(stderr, "ember: OPENBLAS_CORETYPE=%s is not a core this OpenBLAS knows; it runs its %s kernels\n",
                   l.user_core.c_str(), l.get_corename());
    return l;
  }();
  return lib;
}

CBLAS_TRANSPOSE flag(bool t) { return t ? CblasTrans : CblasNoTrans; }

std::string cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos) {
      const size_t v = line.find_first_not_of(" \t", line.find(':') + 1);
      return v == std::string::npos ? "unknown CPU" : line.substr(v);
    }
  return "unknown CPU";
}

}  // namespace

std::string BlasInfo::summary() const {
  std::string version = config;
  if (size_t sp = version.find(' ', version.find(' ') + 1); sp != std::string::npos) version = version.substr(0, sp);
  std::string why;
  if (chosen_by_ember) why = " (chosen by ember for this CPU)";
  else if (!user_core.empty()) why = " (OPENBLAS_CORETYPE=" + user_core + ", set by the user)";
  return version + ", " + core + " kernels" + why +
         ", each product split over " + std::to_string(threads) + (threads == 1 ? " thread" : " threads");
}

BlasInfo blas_info() {
  const Library& l = library();
  BlasInfo i;
  static const std::string cpu = cpu_model();
  i.cpu = cpu;
  i.library = l.path;
  i.config = l.get_config();
  i.core = l.get_corename();
  i.threads = get_num_threads();
  i.blas_threads = l.get_num_threads();
  i.chosen_by_ember = l.chosen_by_ember;
  i.cpu_best = l.cpu_best;
  i.user_core = l.user_core;
  i.user_core_honoured = !l.user_core.empty() && same_core(l.user_core, i.core);
  return i;
}

std::vector<std::string> blas_cores_for_this_cpu() { return cores_for_cpu(); }

namespace blas {
namespace {
std::atomic<int> own_threads{1};  // OpenBLAS's own split; 1 unless bench/ asks

// The OpenMP build of OpenBLAS does not keep the count it is given: outside
// a parallel region, each call uses the calling thread's OpenMP default
// (omp_get_max_threads()). So each call runs with that default set to
// OpenBLAS's count, and puts it back after (it is per thread: nothing else
// sees it). Inside ember's parallel regions OpenBLAS runs on one thread anyway.
template <typename F>
void call(const F& f) {
  if (omp_in_parallel()) return f();
  const int saved = omp_get_max_threads(), wanted = own_threads.load(std::memory_order_relaxed);
  if (saved != wanted) omp_set_num_threads(wanted);
  f();
  if (saved != wanted) omp_set_num_threads(saved);
}
}  // namespace

void sgemm(bool ta, bool tb, int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb,
           float beta, float* c, int ldc) {
  const Library& l = library();
  call([&] { l.sgemm(CblasRowMajor, flag(ta), flag(tb), m, n, k, alpha, a, lda, b, ldb, beta, c, ldc); });
}
void dgemm(bool ta, bool tb, int m, int n, int k, double alpha, const double* a, int lda, const double* b, int ldb,
           double beta, double* c, int ldc) {
  const Library& l = library();
  call([&] { l.dgemm(CblasRowMajor, flag(ta), flag(tb), m, n, k, alpha, a, lda, b, ldb, beta, c, ldc); });
}
void set_num_threads(int n) {
  EMBER_CHECK(n >= 1 && n <= kMaxThreads, "blas::set_num_threads", "thread count must be in [1, " << kMaxThreads << "], got " << n);
  const Library& l = library();
  own_threads.store(n, std::memory_order_relaxed);
  const int omp_default = omp_get_max_threads();
  l.set_num_threads(n);
  omp_set_num_threads(omp_default);
}
}  // namespace blas

}  // namespace ember

namespace ember::kernel {

namespace {

// How a (rows, cols) matrix view is handed to BLAS.
struct BlasOperand {
  CBLAS_TRANSPOSE trans;
  int64_t ld;
};

bool blas_layout(int64_t rows, int64_t cols, int64_t s_row, int64_t s_col, BlasOperand& op) {
  if (s_col == 1 && (rows == 1 || s_row >= std::max<int64_t>(cols, 1))) {
    op = {CblasNoTrans, rows == 1 ? std::max<int64_t>(cols, 1) : s_row};
    return true;
  }
  if (s_row == 1 && (cols == 1 || s_col >= std::max<int64_t>(rows, 1))) {
    op = {CblasTrans, cols == 1 ? std::max<int64_t>(rows, 1) : s_col};
    return true;
  }
  return false;
}

// One product (or a block of its rows or columns), on the calling thread.
template <typename T>
void gemm(BlasOperand A, BlasOperand B, int64_t M, int64_t N, int64_t K, const T* a, const T* b, T* c, int64_t ldc) {
  const int m = static_cast<int>(M), n = static_cast<int>(N), k = static_cast<int>(K);
  const int lda = static_cast<int>(A.ld), ldb = static_cast<int>(B.ld), ldcc = static_cast<int>(ldc);
  if constexpr (std::is_same_v<T, float>)
    blas::sgemm(A.trans == CblasTrans, B.trans == CblasTrans, m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c, ldcc);
  else
    blas::dgemm(A.trans == CblasTrans, B.trans == CblasTrans, m, n, k, 1.0, a, lda, b, ldb, 0.0, c, ldcc);
}

// Below this many operations (2 M N K) a piece of a product stays on one
// thread: starting a parallel region costs a few microseconds, and one core
// does about 2 million operations in 20 of them.
constexpr double kGemmGrain = double(1 << 21);

// The threads: OpenBLAS runs single-threaded (see library()); ember splits the
// work itself with detail::parallel_for, whose pieces depend only on the
// shapes and the configured thread count, so the bits are the same however
// many threads run them (OpenBLAS's own split gives different bits at 1 and
// 2 threads on some shapes). A stack of products is split by whole products;
// one product by blocks of 16 rows of C (or columns, when it has more), each
// block a smaller gemm that packs its own copy of the other operand.
template <typename T>
void run_gemms(BlasOperand A, BlasOperand B, int64_t M, int64_t N, int64_t K, const T* a, const T* b, T* c,
               const Tensor& ta, const Tensor& tb, const Shape& batch) {
  const int64_t nb = numel_of(batch);
  const int64_t nbd = static_cast<int64_t>(batch.size());
  const double flops = 2.0 * static_cast<double>(M) * static_cast<double>(N) * static_cast<double>(K);
  if (nb > 1) {
    auto offsets = [&](int64_t i, int64_t& oa, int64_t& ob) {
      oa = ob = 0;
      for (int64_t d = nbd - 1; d >= 0; --d) {
        const int64_t id = i % batch[d];
        i /= batch[d];
        oa += id * ta.stride()[d];
        ob += id * tb.stride()[d];
      }
    };
    const int64_t grain = static_cast<int64_t>(std::max(1.0, kGemmGrain / flops));
    detail::parallel_for(nb, grain, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) {
        int64_t oa, ob;
        offsets(i, oa, ob);
        gemm(A, B, M, N, K, a + oa, b + ob, c + i * M * N, N);
      }
    });
    return;
  }
  constexpr int64_t kBlock = 16;
  const bool by_rows = M >= N;
  const int64_t L = by_rows ? M : N;
  const int64_t blocks = (L + kBlock - 1) / kBlock;
  const int64_t grain = static_cast<int64_t>(std::max(1.0, kGemmGrain / (flops / static_cast<double>(blocks))));
  detail::parallel_for(blocks, grain, [&](int64_t b0, int64_t b1) {
    const int64_t r0 = b0 * kBlock, r1 = std::min(L, b1 * kBlock);
    if (by_rows) {  // rows r0..r1 of A and C
      const T* pa = a + (A.trans == CblasTrans ? r0 : r0 * A.ld);
      gemm(A, B, r1 - r0, N, K, pa, b, c + r0 * N, N);
    } else {  // columns r0..r1 of B and C
      const T* pb = b + (B.trans == CblasTrans ? r0 * B.ld : r0);
      gemm(A, B, M, r1 - r0, K, a, pb, c + r0, N);
    }
  });
}

// a: (..., M, K) b: (..., K, N) with equal batch shapes (already broadcast) -> (..., M, N)
Tensor batched_matmul(Tensor a, Tensor b, const Shape& batch) {
  const int64_t M = a.size(-2), K = a.size(-1), N = b.size(-1);
  constexpr int64_t kBlasInt = 2147483647;  // OpenBLAS's int is 32 bits (an LP64 build)
  EMBER_CHECK(M <= kBlasInt && N <= kBlasInt && K <= kBlasInt, "matmul",
              "a product of (" << M << ", " << K << ") and (" << K << ", " << N << ") exceeds BLAS's 32-bit sizes");
  Shape out_shape = batch;
  out_shape.push_back(M);
  out_shape.push_back(N);
  Tensor out = empty(out_shape, a.dtype());
  if (out.numel() == 0) return out;
  if (K == 0) {
    fill_(out, 0.0);
    return out;
  }
  BlasOperand opa{CblasNoTrans, 1}, opb{CblasNoTrans, 1};
  if (!blas_layout(M, K, a.stride()[a.dim() - 2], a.stride()[a.dim() - 1], opa)) {
    a = contiguous(a);
    blas_layout(M, K, a.stride()[a.dim() - 2], a.stride()[a.dim() - 1], opa);
  }
  if (!blas_layout(K, N, b.stride()[b.dim() - 2], b.stride()[b.dim() - 1], opb)) {
    b = contiguous(b);
    blas_layout(K, N, b.stride()[b.dim() - 2], b.stride()[b.dim() - 1], opb);
  }
  const int64_t nb = numel_of(batch);
  // 2 M N K per product: a multiply and an add for every (m, n, k).
  const double item = static_cast<double>(dtype_size(a.dtype()));
  note_work(2.0 * nb * M * N * K, item * nb * (M * K + K * N), item * nb * M * N);
  EMBER_DISPATCH_FLOAT(a.dtype(), "matmul", [&]<typename T>() {
    run_gemms<T>(opa, opb, M, N, K, a.data_ptr<T>(), b.data_ptr<T>(), out.data_ptr<T>(), a, b, batch);
  });
  return out;
}

}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b) {
  EMBER_CHECK(a.dim() >= 1 && b.dim() >= 1, "matmul",
              "both arguments need at least 1 dim, got shapes " << shape_str(a.shape()) << " and " << shape_str(b.shape()));
  EMBER_CHECK(a.dtype() == b.dtype(), "matmul",
              "dtype mismatch: " << dtype_name(a.dtype()) << " " << shape_str(a.shape()) << " vs "
                                 << dtype_name(b.dtype()) << " " << shape_str(b.shape()));
  EMBER_CHECK(is_floating(a.dtype()), "matmul",
              "expected floating tensors, got " << dtype_name(a.dtype()) << " of shapes " << shape_str(a.shape())
                                                << " and " << shape_str(b.shape()));
  const int64_t ka = a.size(-1), kb = b.dim() == 1 ? b.size(0) : b.size(-2);
  EMBER_CHECK(ka == kb, "matmul",
              "a has shape " << shape_str(a.shape()) << " but b has shape " << shape_str(b.shape())
                             << "; a.shape[-1] (" << ka << ") must equal b.shape[" << (b.dim() == 1 ? "0" : "-2")
                             << "] (" << kb << ")");
  // (…, M, K) @ (K, N): fold the batch into M for one large gemm when a's
  // layout allows it without a copy.
  if (a.dim() > 2 && b.dim() == 2) {
    Shape rows_strides;
    if (view_strides(a.shape(), a.stride(), {a.numel() / std::max<int64_t>(ka, 1), ka}, rows_strides) && ka > 0) {
      Tensor flat = as_strided(a, {a.numel() / ka, ka}, rows_strides, a.storage_offset());
      Shape out_shape(a.shape().begin(), a.shape().end() - 1);
      out_shape.push_back(b.size(1));
      return reshape(batched_matmul(flat, b, {}), out_shape);
    }
  }
  // Promote 1-D operands to matrices, remember to drop the dim at the end.
  Tensor A = a.dim() == 1 ? unsqueeze(a, 0) : a;
  Tensor B = b.dim() == 1 ? unsqueeze(b, 1) : b;
  Shape ba(A.shape().begin(), A.shape().end() - 2), bb(B.shape().begin(), B.shape().end() - 2);
  Shape batch;
  try {
    batch = broadcast_shapes(ba, bb, "matmul");
  } catch (const Error&) {
    EMBER_FAIL("matmul", "batch dims of a " << shape_str(a.shape()) << " and b " << shape_str(b.shape())
                                            << " cannot be broadcast: " << shape_str(ba) << " vs " << shape_str(bb));
  }
  Shape ta = batch, tb = batch;
  ta.push_back(A.size(-2));
  ta.push_back(A.size(-1));
  tb.push_back(B.size(-2));
  tb.push_back(B.size(-1));
  Tensor out = batched_matmul(expand(A, ta), expand(B, tb), batch);
  if (a.dim() == 1) out = squeeze(out, out.dim() - 2);
  if (b.dim() == 1) out = squeeze(out, out.dim() - 1);
  return out;
}

}  // namespace ember::kernel
