// Checks exercise 12.1: outer's values and gradients (a wrong result is
// named: transposed, or a refusal of two good vectors), and its refusals,
// each with the op's name and the offending values in the message (a refusal
// that comes from an op inside outer is named as such).
#include "exercises/checks/check.h"

namespace ex12_1 {
ember::Tensor outer(const ember::Tensor& a, const ember::Tensor& b);
}

namespace {

using namespace ember;

const std::vector<std::pair<std::string, std::string>> kRefusals = {
    {"cannot be broadcast", "a * b multiplies element by element, and a (2) and a (3) do not line up: which shapes "
                            "would make broadcasting build the whole (n, m) table?"},
    {"outer:", "outer refused two good vectors of one dtype: what do its checks compare?"},
};

// The message of outer's refusal must name outer and the offending value.
void expect_named(const std::function<void()>& f, const std::string& value, const std::string& what,
                  const std::string& if_nothing) {
  const std::string msg = check::expect_error(f, {}, what, if_nothing);
  check::expect(msg.find("outer") != std::string::npos,
                what + ": the message \"" + msg + "\" should mention \"outer\"",
                "the refusal came from an op inside outer: outer's own check, before anything is computed, names "
                "the op that was called");
  check::expect(msg.find(value) != std::string::npos,
                what + ": the message \"" + msg + "\" should mention \"" + value + "\"",
                "the message names the offending value, so that whoever reads it sees what to change");
}

}  // namespace

check::Exercise check::exercise() {
  return {"12.1", "An op that refuses bad input", "docs/book/12_bad_input_and_faults.md", {
    {"the outer product of (1, 2) and (3, 4, 5)", [] {
       const Tensor a = tensor({1.0, 2.0}), b = tensor({3.0, 4.0, 5.0});
       const Tensor got = ex12_1::outer(a, b), want = tensor({3.0, 4.0, 5.0, 6.0, 8.0, 10.0}, {2, 3});
       expect(got.defined() && got.shape() == want.shape(),
              "outer((1, 2), (3, 4, 5)) has shape " + (got.defined() ? show(got.shape()) : std::string("(undefined)")) +
                  ", but should have shape (2, 3)",
              got.defined() && got.shape() == Shape{3, 2}
                  ? "yours is the transpose: a's elements go down the rows (dim 0), b's along the columns (dim 1)"
                  : "(n) and (m) give (n, m)");
       expect_close(got, want, "outer((1, 2), (3, 4, 5))");
     }, kRefusals},
    {"it is differentiable: gradcheck", [] {
       Generator gen(101);
       Tensor a = randn({3}, gen, kFloat64).requires_grad_(), b = randn({4}, gen, kFloat64).requires_grad_();
       GradcheckResult r = gradcheck([](const std::vector<Tensor>& in) { return ex12_1::outer(in[0], in[1]); }, {a, b});
       expect(r.ok, "gradcheck failed:\n" + r.report, "composed of ember ops, outer records their nodes");
     }, kRefusals},
    {"a 2-D argument is refused, naming outer and its shape", [] {
       const std::string computed = "broadcasting accepted it and computed something: only a check of outer's own, "
                                    "before computing, refuses what is not a vector";
       expect_named([] { (void)ex12_1::outer(zeros({2, 3}), zeros({3})); }, "(2, 3)", "outer of a (2, 3) matrix",
                    computed);
       expect_named([] { (void)ex12_1::outer(zeros({2}), zeros({})); }, "()", "outer with a 0-d b", computed);
     }},
    {"different dtypes are refused, naming both", [] {
       const auto f = [] { (void)ex12_1::outer(zeros({2}), zeros({2}, kFloat64)); };
       const std::string what = "outer of float32 and float64 vectors";
       expect_named(f, "float32", what, "outer computed something from a float32 and a float64 vector: refuse it");
       expect_named(f, "float64", what, "");
     }},
    {"the message starts with the op's name", [] {
       const std::string msg =
           expect_error([] { (void)ex12_1::outer(zeros({2, 2}), zeros({2})); }, {"outer"}, "outer of a matrix",
                         "a (2, 2) matrix is not a vector: refuse it");
       expect(msg.rfind("outer: ", 0) == 0, "the message \"" + msg + "\" should start with \"outer: \"",
              "every ember refusal starts with the op's name and a colon: the op you give EMBER_CHECK is what the "
              "message starts with");
     }},
  }};
}
