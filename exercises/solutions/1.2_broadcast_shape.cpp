// Exercise 1.2: The broadcasting rule, a reference solution.
#include "exercises/exercise.h"

using namespace ember;

namespace ex1_2 {

Shape broadcast_shape(const Shape& a, const Shape& b) {
  const size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t k = 0; k < n; ++k) {  // k counts dims from the right
    const int64_t sa = k < a.size() ? a[a.size() - 1 - k] : 1;
    const int64_t sb = k < b.size() ? b[b.size() - 1 - k] : 1;
    EMBER_CHECK(sa == sb || sa == 1 || sb == 1, "broadcast_shape",
                "shapes " << shape_str(a) << " and " << shape_str(b) << " do not broadcast: sizes " << sa << " and "
                          << sb << " at dim " << -static_cast<int64_t>(k) - 1);
    out[n - 1 - k] = sa == 1 ? sb : sa;
  }
  return out;
}

}  // namespace ex1_2
