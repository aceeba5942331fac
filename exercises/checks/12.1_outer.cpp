// Checks exercise 12.1: outer's values and gradients, and its three refusals,
// each with the op's name and the offending values in the message.
#include "exercises/checks/check.h"

namespace ex12_1 {
ember::Tensor outer(const ember::Tensor& a, const ember::Tensor& b);
}

namespace {
using namespace ember;
}  // namespace

check::Exercise check::exercise() {
  return {"12.1", "An op that refuses bad input", "docs/book/12_bad_input_and_faults.md", {
    {"the outer product of (1, 2) and (3, 4, 5)", [] {
       expect_close(ex12_1::outer(tensor({1.0, 2.0}), tensor({3.0, 4.0, 5.0})),
                    tensor({3.0, 4.0, 5.0, 6.0, 8.0, 10.0}, {2, 3}), "outer((1, 2), (3, 4, 5))");
     }},
    {"it is differentiable: gradcheck", [] {
       Generator gen(101);
       Tensor a = randn({3}, gen, kFloat64).requires_grad_(), b = randn({4}, gen, kFloat64).requires_grad_();
       GradcheckResult r = gradcheck([](const std::vector<Tensor>& in) { return ex12_1::outer(in[0], in[1]); }, {a, b});
       expect(r.ok, "gradcheck failed:\n" + r.report);
     }},
    {"a 2-D argument is refused, naming outer and its shape", [] {
       expect_error([] { (void)ex12_1::outer(zeros({2, 3}), zeros({3})); }, {"outer", "(2, 3)"}, "outer of a (2, 3) matrix");
       expect_error([] { (void)ex12_1::outer(zeros({2}), zeros({})); }, {"outer", "()"}, "outer with a 0-d b");
     }},
    {"different dtypes are refused, naming both", [] {
       expect_error([] { (void)ex12_1::outer(zeros({2}), zeros({2}, kFloat64)); }, {"outer", "float32", "float64"},
                    "outer of float32 and float64 vectors");
     }},
    {"the message starts with the op's name", [] {
       const std::string msg =
           expect_error([] { (void)ex12_1::outer(zeros({2, 2}), zeros({2})); }, {"outer"}, "outer of a matrix");
       expect(msg.rfind("outer: ", 0) == 0, "the message \"" + msg + "\" should start with \"outer: \"",
              "EMBER_CHECK(cond, \"outer\", ...) writes \"outer: \" first");
     }},
  }};
}
