/// @file
/// One loop compiled for each SIMD width, run at the width vec_math chose
/// (tensor/machine/vec_math.h: the widest this CPU has, or EMBER_SIMD's).
///
/// ember builds for baseline x86-64, where the compiler vectorizes a loop
/// with 128-bit SSE2: two doubles at a time. A kernel whose time goes to a
/// few such loops (float32 values summed in double: layer norm's backward,
/// a sum over the batch) runs its rows through AtEachWidth instead, which
/// compiles the same body three times: baseline, AVX2 and AVX-512. No
/// multiply-add is fused into one FMA (AVX-512 has FMA instructions, and
/// would otherwise round once where the baseline rounds twice), so every
/// width does the same operations in the same order and gives the same bits;
/// only the speed changes.
///
/// @code
///   struct Rows { template <typename T> [[gnu::always_inline]] static void run(...) { the loops } };
///   detail::AtEachWidth<Rows>::run<T>(args...);
/// @endcode
///
/// K::run must be always_inline: it is compiled into each of the three
/// callers below, at their width.
#pragma once

#include <cstring>

#include "tensor/machine/vec_math.h"

namespace ember::detail {

template <typename K>
struct AtEachWidth {
  template <typename T, typename... A>
  static void baseline(A... a) {
    K::template run<T>(a...);
  }
  template <typename T, typename... A>
  [[gnu::target("avx2"), gnu::optimize("fp-contract=off")]] static void avx2(A... a) {
    K::template run<T>(a...);
  }
  template <typename T, typename... A>
  [[gnu::target("avx512f"), gnu::optimize("fp-contract=off")]] static void avx512(A... a) {
    K::template run<T>(a...);
  }
  template <typename T, typename... A>
  static void run(A... a) {
    static const int width = std::strcmp(vec_math_isa(), "AVX-512") == 0 ? 2 : std::strcmp(vec_math_isa(), "AVX2") == 0 ? 1 : 0;
    if (width == 2) avx512<T>(a...);
    else if (width == 1) avx2<T>(a...);
    else baseline<T>(a...);
  }
};

}  // namespace ember::detail
