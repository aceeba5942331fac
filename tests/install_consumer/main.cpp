// Built against an installed ember: proves the headers, the library and the
// CMake package config are complete. Prints the product and checks it.
#include <cmath>
#include <iostream>
#include <vector>

#include "ember.h"

int main() {
  // [[1, 2], [3, 4]] @ [[5, 6], [7, 8]] = [[19, 22], [43, 50]]
  ember::Tensor a = ember::tensor(std::vector<float>{1, 2, 3, 4}, {2, 2});
  ember::Tensor b = ember::tensor(std::vector<float>{5, 6, 7, 8}, {2, 2});
  ember::Tensor c = ember::matmul(a, b);
  std::cout << c << "\n";

  const std::vector<float> expected{19, 22, 43, 50};
  std::vector<float> got = c.to_vector<float>();
  if (c.shape() != ember::Shape{2, 2} || got.size() != expected.size()) {
    std::cerr << "consumer: wrong shape " << ember::shape_str(c.shape()) << "\n";
    return 1;
  }
  for (size_t i = 0; i < expected.size(); ++i) {
    if (std::fabs(got[i] - expected[i]) > 1e-5f) {
      std::cerr << "consumer: element " << i << " is " << got[i] << ", expected " << expected[i] << "\n";
      return 1;
    }
  }
  std::cout << "consumer: matmul ok\n";
  return 0;
}
