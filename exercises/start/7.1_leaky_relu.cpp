// Exercise 7.1: A LeakyReLU module (chapter 7, docs/book/07_training_a_gpt.md)
//
// LeakyReLU(x) = x where x > 0, slope * x elsewhere (at 0 too). Write it as a
// module of ember ops: autograd differentiates them with no rule of your own.
// where(cond, a, b) picks a where cond holds and b elsewhere; gt, ge, lt ...
// compare a tensor with a number and give the bool condition.
//
// Think about:
//   * which side does x = 0 belong to? (its gradient there is the slope)
//   * the instruments of chapter 8 label every op with the module it ran in:
//     how does a module tell them "my forward starts now" and "it ended",
//     however forward is left? (chapter 8 names what does it)
//   * to_string() shows the type name with extra_repr() inside its
//     parentheses; PyTorch prints this one as LeakyReLU(negative_slope=0.1).
//
// Compare with, after you try: ReLU and GELU in nn/layers.h.
//
// Check it:  bash scripts/exercise.sh 7.1
#include <sstream>

#include "exercises/exercise.h"

using namespace ember;

namespace ex7_1 {

class LeakyReLU : public nn::UnaryModule {
 public:
  explicit LeakyReLU(double negative_slope = 0.01) : slope(negative_slope) {}
  Tensor forward(const Tensor& x) override {
    (void)x;
    TODO("what tells the instruments that this module runs, and which ops pick x or slope * x?");
  }
  std::string type_name() const override { return "LeakyReLU"; }
  std::string extra_repr() const override {
    TODO("what goes inside the parentheses, with the slope written as PyTorch writes it?");
  }
  double slope;
};

// How the checker makes one (keep this function as it is).
std::shared_ptr<nn::UnaryModule> make_leaky_relu(double negative_slope) {
  return std::make_shared<LeakyReLU>(negative_slope);
}

}  // namespace ex7_1
