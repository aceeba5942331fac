// Loading OpenBLAS, choosing its kernels for this CPU first, and the raw
// calls into it (tensor/machine/blas_library.h).
#include <cblas.h>  // the types and enums only: the functions come from the library loaded here
#include <dlfcn.h>

#include <atomic>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include <omp.h>

#include "base/error.h"
#include "tensor/machine/blas_library.h"
#include "tensor/machine/threads.h"

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
using sgemv_t = void (*)(CBLAS_ORDER, CBLAS_TRANSPOSE, blasint, blasint, float, const float*, blasint, const float*,
                         blasint, float, float*, blasint);
using dgemv_t = void (*)(CBLAS_ORDER, CBLAS_TRANSPOSE, blasint, blasint, double, const double*, blasint, const double*,
                         blasint, double, double*, blasint);

struct Library {
  sgemm_t sgemm = nullptr;
  dgemm_t dgemm = nullptr;
  sgemv_t sgemv = nullptr;
  dgemv_t dgemv = nullptr;
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
    l.sgemv = symbol<sgemv_t>(h, "cblas_sgemv", l.path);
    l.dgemv = symbol<dgemv_t>(h, "cblas_dgemv", l.path);
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
void sgemv(bool t, int m, int n, float alpha, const float* a, int lda, const float* x, int incx, float beta, float* y,
           int incy) {
  const Library& l = library();
  call([&] { l.sgemv(CblasRowMajor, flag(t), m, n, alpha, a, lda, x, incx, beta, y, incy); });
}
void dgemv(bool t, int m, int n, double alpha, const double* a, int lda, const double* x, int incx, double beta,
           double* y, int incy) {
  const Library& l = library();
  call([&] { l.dgemv(CblasRowMajor, flag(t), m, n, alpha, a, lda, x, incx, beta, y, incy); });
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
