// Prints, one per line, best first, what this CPU can run:
//   blas_cores           the OpenBLAS cores (scripts/test_blas_cores.sh runs
//                        the matmul and training tests under each)
//   blas_cores --simd    the SIMD widths of ember's vector math (EMBER_SIMD)
#include <cstdio>
#include <cstring>

#include "tensor/machine/blas_library.h"
#include "tensor/machine/vec_math.h"

int main(int argc, char** argv) {
  const bool simd = argc > 1 && std::strcmp(argv[1], "--simd") == 0;
  for (const std::string& name : simd ? ember::detail::vec_math_isas_for_this_cpu() : ember::blas_cores_for_this_cpu())
    std::printf("%s\n", name.c_str());
}
