#include "tensor/parallel.h"

#include <cblas.h>

#include "tensor/error.h"

namespace ember {

namespace {
int& thread_count() {
  static int n = [] {
    int max = omp_get_max_threads();
    return max > 0 ? max : 1;
  }();
  return n;
}
}  // namespace

void set_num_threads(int n) {
  EMBER_CHECK(n >= 1, "set_num_threads", "thread count must be >= 1, got " << n);
  thread_count() = n;
  openblas_set_num_threads(n);
}

int get_num_threads() { return thread_count(); }

}  // namespace ember
