// Prints the OpenBLAS cores this CPU can run, best first, one per line:
// scripts/test_blas_cores.sh runs the matmul and training tests under each.
#include <cstdio>

#include "tensor/blas.h"

int main() {
  for (const std::string& core : ember::blas_cores_for_this_cpu()) std::printf("%s\n", core.c_str());
}
