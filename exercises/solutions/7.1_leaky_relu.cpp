// Exercise 7.1: A LeakyReLU module, a reference solution.
#include <sstream>

#include "exercises/exercise.h"

using namespace ember;

namespace ex7_1 {

class LeakyReLU : public nn::UnaryModule {
 public:
  explicit LeakyReLU(double negative_slope = 0.01) : slope(negative_slope) {}
  Tensor forward(const Tensor& x) override {
    nn::ModuleScope scope(*this);
    return where(gt(x, 0.0), x, x * slope);
  }
  std::string type_name() const override { return "LeakyReLU"; }
  std::string extra_repr() const override {
    std::ostringstream os;
    os << "negative_slope=" << slope;
    return os.str();
  }
  double slope;
};

std::shared_ptr<nn::UnaryModule> make_leaky_relu(double negative_slope) {
  return std::make_shared<LeakyReLU>(negative_slope);
}

}  // namespace ex7_1
