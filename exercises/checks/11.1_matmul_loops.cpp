// Checks exercise 11.1: the loops against ember's matmul, on small and
// transposed inputs, the shape error, and (shown, not judged) the time.
#include <chrono>

#include "exercises/checks/check.h"

namespace ex11_1 {
ember::Tensor matmul_loops(const ember::Tensor& a, const ember::Tensor& b);
}

namespace {

using namespace ember;

// The median of five runs of f, in milliseconds.
double ms(const std::function<void()>& f) {
  std::vector<double> t;
  for (int r = 0; r < 5; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[2];
}

}  // namespace

check::Exercise check::exercise() {
  return {"11.1", "A matrix product in three loops", "docs/book/11_speed.md", {
    {"(2, 3) @ (3, 2)", [] {
       Tensor a = tensor({1, 2, 3, 4, 5, 6}, {2, 3}, kFloat32), b = tensor({1, 0, 0, 1, 1, 1}, {3, 2}, kFloat32);
       expect_close(ex11_1::matmul_loops(a, b), tensor({4, 5, 10, 11}, {2, 2}, kFloat32), "the product", 1e-5);
     }},
    {"(37, 19) @ (19, 23), and transposed inputs", [] {
       Generator gen(91);
       Tensor a = randn({37, 19}, gen), b = randn({19, 23}, gen);
       expect_close(ex11_1::matmul_loops(a, b), matmul(a, b), "matmul_loops(a, b)", 1e-4);
       Tensor at = randn({19, 37}, gen).t(), bt = randn({23, 19}, gen).t();
       expect_close(ex11_1::matmul_loops(at, bt), matmul(at, bt), "matmul_loops of transposed views", 1e-4,
                    "read the numbers of a contiguous copy (a.contiguous()), not the view's storage");
     }},
    {"shapes that do not multiply are an ember::Error naming both", [] {
       expect_error([] { (void)ex11_1::matmul_loops(zeros({2, 3}), zeros({2, 3})); }, {"(2, 3)"},
                    "matmul_loops((2, 3), (2, 3))");
     }},
    {"256 x 256 x 256: your loops and OpenBLAS (a comparison, not a test)", [] {
       Generator gen(92);
       Tensor a = randn({256, 256}, gen), b = randn({256, 256}, gen);
       Tensor c1, c2;
       (void)matmul(a, b);  // loads OpenBLAS, outside the timing
       const double loops = ms([&] { c1 = ex11_1::matmul_loops(a, b); });
       const double blas = ms([&] { c2 = matmul(a, b); });
       expect_close(c1, c2, "the 256^3 product", 1e-3);
       const double gflop = 2.0 * 256 * 256 * 256 / 1e9;
       note("your loops: " + num(loops) + " ms (" + num(gflop / loops * 1e3) + " GFLOP/s); ember's matmul: " +
            num(blas) + " ms (" + num(gflop / blas * 1e3) + " GFLOP/s), the median of five runs each, on this "
            "machine as busy as it is now. Chapter 11 explains what decides the difference.");
     }},
  }};
}
