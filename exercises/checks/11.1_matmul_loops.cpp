// Checks exercise 11.1: the loops against ember's matmul, on small and
// transposed inputs (a wrong product is compared with the usual mistakes':
// no sum over k, b or a indexed as if transposed, a view's memory read as if
// it lay row by row), the shape error, and (shown, not judged) the time.
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

// t's numbers in the order they lie in memory, read as a row-major matrix of
// t's shape: what data_ptr<float>() of a transposed view gives.
Tensor as_stored(const Tensor& t) { return t.is_contiguous() ? t : t.t().contiguous().reshape(t.shape()); }

std::string product_mistake(const Tensor& a, const Tensor& b, const Tensor& got) {
  const int64_t M = a.size(0), K = a.size(1), N = b.size(1);
  if (check::matches(got, matmul(as_stored(a), as_stored(b)), 1e-4) ||
      check::matches(got, matmul(as_stored(a), b), 1e-4) || check::matches(got, matmul(a, as_stored(b)), 1e-4))
    return "a transposed view's numbers were read as if they lay row by row: data_ptr<float>() gives them in the "
           "order of memory, which for a transposed view is column by column";
  if (check::matches(got, matmul(a.narrow(1, K - 1, 1), b.narrow(0, K - 1, 1)), 1e-4))
    return "only the last k's term is left in C[i, j]: each k's term must add to the sum, not replace it";
  if (check::matches(got, matmul(a, b.contiguous().reshape({N, K}).t()), 1e-4))
    return "b was read as if its rows had K numbers: b is (K, N), so a row of b has N of them";
  if (check::matches(got, matmul(a.contiguous().reshape({K, M}).t(), b), 1e-4))
    return "a was read as if its rows had M numbers: a is (M, K), so a row of a has K of them";
  return "C[i, j] is the sum over k of A[i, k] B[k, j], each read at its row times the row's length plus its column";
}

void expect_product(const Tensor& a, const Tensor& b, const std::string& what) {
  const Tensor got = ex11_1::matmul_loops(a, b), want = matmul(a, b);
  check::expect(got.defined() && got.shape() == want.shape(),
                what + " has shape " + (got.defined() ? check::show(got.shape()) : std::string("(undefined)")) +
                    ", but should have shape " + check::show(want.shape()),
                "C has a's rows and b's columns");
  if (check::max_diff(got, want, what) > 1e-4)
    check::fail(what + " is " + check::show(got) + ", but should be " + check::show(want), product_mistake(a, b, got));
}

}  // namespace

check::Exercise check::exercise() {
  return {"11.1", "A matrix product in three loops", "docs/book/11_speed.md", {
    {"(2, 3) @ (3, 2)", [] {
       Tensor a = tensor({1, 2, 3, 4, 5, 6}, {2, 3}, kFloat32), b = tensor({1, 0, 0, 1, 1, 1}, {3, 2}, kFloat32);
       expect_product(a, b, "the product");
     }},
    {"(37, 19) @ (19, 23), and transposed inputs", [] {
       Generator gen(91);
       Tensor a = randn({37, 19}, gen), b = randn({19, 23}, gen);
       expect_product(a, b, "matmul_loops(a, b)");
       Tensor at = randn({19, 37}, gen).t(), bt = randn({23, 19}, gen).t();
       expect_product(at, bt, "matmul_loops of transposed views");
     }},
    {"shapes that do not multiply are an ember::Error naming both", [] {
       expect_error([] { (void)ex11_1::matmul_loops(zeros({2, 3}), zeros({2, 3})); }, {"(2, 3)"},
                      "matmul_loops((2, 3), (2, 3))",
                      "a's rows have 3 numbers, b's columns 2: the loops would read past b's end. What does your "
                      "check compare?",
                      "the message names both shapes, so that whoever reads it sees which sizes disagree");
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
