// Yours to edit: a place to poke at tensors. Change anything below, then
//   bash scripts/scratch.sh
// builds this one program and runs it. (git checkout examples/scratch.cpp
// gives back this starting file.)
#include <iostream>

#include "common/program.h"
#include "ember.h"

using namespace ember;

int program() {
  // a tensor, and a view of it that shares its memory
  Tensor x = arange(6, kFloat64).reshape({2, 3});
  Tensor xt = x.transpose(0, 1);
  std::cout << "x =\n" << x << "\nx.transpose(0, 1) has strides " << shape_str(xt.stride()) << "\n";

  // broadcasting: (2, 3) + (3) adds the row to each row
  Tensor row = tensor(std::vector<double>{10, 20, 30});
  std::cout << "x + row =\n" << x + row << "\n";

  // a gradient: d sum(w * w * 3) / dw = 6 w
  Tensor w = tensor(std::vector<double>{1, 2, 3}).requires_grad_();
  Tensor loss = sum(w * w * 3.0);
  loss.backward();
  std::cout << "loss " << loss.item() << ", d loss / d w = " << w.grad() << "\n";
  return 0;
}

int main(int argc, char** argv) {
  CLI::App app{"A program to edit: a few tensors, a view, a gradient (bash scripts/scratch.sh runs it)."};
  EMBER_PARSE("scratch", app, argc, argv);
  return ember::examples::run("scratch", program);
}
