/// @file
/// BLAS: which library and which kernels ember's matmul runs on.
///
/// ember loads OpenBLAS itself, at the first matmul (or set_num_threads), and
/// decides OpenBLAS's kernel set (its "core") before the library starts:
/// OpenBLAS reads OPENBLAS_CORETYPE once, when it loads, and on a CPU newer
/// than the OpenBLAS release it does not recognise, it falls back to old SSE3
/// kernels several times slower. So when OPENBLAS_CORETYPE is not set, ember
/// sets it from what this CPU supports (CPUID): AVX-512 F/BW/DQ/VL ->
/// SkylakeX (CooperLake with AVX-512 BF16), AVX2 and FMA -> Haswell (Zen on
/// AMD), AVX -> Sandybridge. A user's own OPENBLAS_CORETYPE always wins; one
/// that OpenBLAS does not know (it then picks its own) is reported on stderr.
///
/// OpenBLAS itself runs single-threaded: ember splits each product over its
/// own threads (tensor/parallel.h), so the bits do not depend on how many
/// threads happen to run, and the thread count adapts to the machine's load
/// for matmul as for every other op. tensor/matmul.cpp is the product itself;
/// this file, with tensor/machine/blas_library.cpp, only finds and starts the
/// library.
#pragma once

#include <string>
#include <vector>

namespace ember {

struct BlasInfo {
  std::string cpu;      // the CPU's model name (/proc/cpuinfo)
  std::string library;  // the file loaded
  std::string config;   // OpenBLAS's own description: version, build options
  std::string core;     // the kernels in use, as OpenBLAS names them ("SkylakeX")
  int threads = 0;      // ember's threads, over which each product is split
  int blas_threads = 0; // OpenBLAS's own count: 1 (ember does the splitting)
  bool chosen_by_ember = false;  // ember set OPENBLAS_CORETYPE (the user had not)
  std::string cpu_best;          // the best core this CPU supports, by CPUID ("" if none better than the default)
  std::string user_core;         // OPENBLAS_CORETYPE as the user set it ("" if ember chose)
  bool user_core_honoured = false;  // the user's core is the one running (false: OpenBLAS did not know it)
  /// "OpenBLAS 0.3.21, SkylakeX kernels (chosen by ember for this CPU), each product split over 2 threads"
  std::string summary() const;
};

/// Loads OpenBLAS if it is not loaded yet. Error naming the path if it cannot be.
BlasInfo blas_info();

/// The cores this CPU can run, best first, from the chooser's list
/// (e.g. {"SkylakeX", "Haswell", "Zen", "Sandybridge"} on an Intel AVX-512 CPU). The tests
/// run under each of them (scripts/test_blas_cores.sh).
std::vector<std::string> blas_cores_for_this_cpu();

namespace blas {
/// The raw calls, row-major, for code that must time or use BLAS directly
/// (bench/, inspect/'s machine peaks): C = alpha A B + beta C.
void sgemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a, int lda, const float* b,
           int ldb, float beta, float* c, int ldc);
void dgemm(bool trans_a, bool trans_b, int m, int n, int k, double alpha, const double* a, int lda, const double* b,
           int ldb, double beta, double* c, int ldc);
/// y = alpha op(A) x + beta y, A (m, n) row-major (op(A) = Aᵀ when trans):
/// the matrix-vector product, which reads A once as a stream where a gemm
/// of one row packs it first (3 to 6 times slower at the sizes of a decode step).
void sgemv(bool trans, int m, int n, float alpha, const float* a, int lda, const float* x, int incx, float beta,
           float* y, int incy);
void dgemv(bool trans, int m, int n, double alpha, const double* a, int lda, const double* x, int incx, double beta,
           double* y, int incy);
/// OpenBLAS's own thread count (1 unless changed here; bench/ uses it to time
/// OpenBLAS's own split against ember's).
void set_num_threads(int n);
}  // namespace blas

}  // namespace ember
