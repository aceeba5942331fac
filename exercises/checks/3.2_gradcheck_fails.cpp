// Checks exercise 3.2: the learner's input makes gradcheck fail on an op
// whose forward ignores strides; the report is shown for reading. An input
// that is not a leaf, or on which the bug hides, is named as such.
#include "exercises/checks/check.h"

namespace ex3_2 {
ember::Tensor input_that_exposes_the_bug();
}

namespace {

using namespace ember;

// y[j] = (j + 1) x[j] in row-major order: the rule.
struct ScaleByPositionBackward final : Node {
  EMBER_NODE_NAME(ScaleByPositionBackward)
  Tensor scale;  // (1, 2, ..., n) in x's shape
  explicit ScaleByPositionBackward(Tensor s) : scale(std::move(s)) {}
  std::vector<Tensor> apply(const Tensor& g) override { return {g * scale}; }
};

// The bug: the loop walks x's memory from its first element as if it were
// contiguous, instead of following its strides.
Tensor scale_by_position(const Tensor& x) {
  OpScope scope("scale_by_position", x);
  Tensor out = empty(x.shape(), kFloat64);
  const double* in = x.data_ptr<double>();
  double* o = out.data_ptr<double>();
  for (int64_t j = 0; j < x.numel(); ++j) o[j] = static_cast<double>(j + 1) * in[j];
  Tensor scale = arange(1, static_cast<double>(x.numel()) + 1, 1, kFloat64).reshape(x.shape());
  if (needs_grad({x})) record(out, std::make_shared<ScaleByPositionBackward>(scale), {x});
  return out;
}

GradcheckResult check_op(const Tensor& x) {
  return gradcheck([](const std::vector<Tensor>& in) { return scale_by_position(in[0]); }, {x});
}

}  // namespace

check::Exercise check::exercise() {
  return {"3.2", "Make gradcheck fail on purpose", "docs/book/03_checking_gradients.md", {
    {"on a plain randn() tensor gradcheck passes (the bug hides)", [] {
       Generator gen(0);
       expect(check_op(randn({3, 4}, gen, kFloat64).requires_grad_()).ok, "gradcheck failed on a contiguous input");
     }},
    {"your input is a float64 leaf that requires grad", [] {
       Tensor x = ex3_2::input_that_exposes_the_bug();
       expect(x.defined() && x.dtype() == kFloat64, "your input is not a float64 tensor",
              "gradcheck works in float64: central differences in float32 keep too few digits");
       expect(x.requires_grad(), "your input does not require grad", "gradcheck differentiates with respect to "
              "its inputs: each one must require grad");
       expect(x.is_leaf(), "your input requires grad but is not a leaf: it is the output of an op (" +
                               std::string(x.grad_fn() ? x.grad_fn()->name() : "?") + ")",
              "a view of a tensor that requires grad is an op's output, with a grad_fn of its own; a view of a "
              "tensor that does not, made to require grad afterwards, is a leaf");
       expect(x.numel() >= 2, "your input needs at least two elements for the order of its elements to matter");
     }},
    {"gradcheck fails on your input", [] {
       Tensor x = ex3_2::input_that_exposes_the_bug();
       GradcheckResult r = check_op(x);
       expect(!r.ok, "gradcheck passes on your input (shape " + show(x.shape()) + ", strides " + show(x.stride()) +
                         "): the bug still hides",
              x.is_contiguous() ? "your input is contiguous: its memory holds its elements in row-major order, "
                                  "which is all the forward assumes (a copy made contiguous is again such a "
                                  "tensor); which views are not?"
                                : "your input is not contiguous, but its memory order still gives the forward the "
                                  "right numbers here; which view puts its elements out of row-major order?");
       note("gradcheck's report on your input (shape " + show(x.shape()) + ", strides " + show(x.stride()) +
            "):\n  " + r.report + "\nThe analytic number is what the rule says; the numeric one is what the forward "
            "really does.");
     }},
  }};
}
