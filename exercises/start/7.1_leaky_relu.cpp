// Exercise 7.1: A LeakyReLU module (chapter 7, docs/book/07_training_a_gpt.md)
//
// LeakyReLU(x) = x where x > 0, slope * x elsewhere (at 0 too). Write its
// forward like the activations of nn/layers.h (ReLU, GELU): the first line is
// a ModuleScope (so that the instruments of chapter 8 label the ops inside it
// with the module), then ember ops, which autograd differentiates with no
// rule of your own: where(cond, a, b) picks a where cond holds, gt(x, 0.0)
// is the bool condition. extra_repr() is what to_string() shows inside the
// parentheses: "negative_slope=0.1", as PyTorch prints it.
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
    TODO("a ModuleScope, then where(x > 0, x, slope * x)");
  }
  std::string type_name() const override { return "LeakyReLU"; }
  std::string extra_repr() const override { TODO("\"negative_slope=\" and the slope"); }
  double slope;
};

// How the checker makes one (keep this function as it is).
std::shared_ptr<nn::UnaryModule> make_leaky_relu(double negative_slope) {
  return std::make_shared<LeakyReLU>(negative_slope);
}

}  // namespace ex7_1
