// Checks exercise 2.4: three steps of gradient descent end at 1.464.
#include "exercises/checks/check.h"

namespace ex2_4 {
double descend();
}

check::Exercise check::exercise() {
  return {"2.4", "The forgotten zero_grad", "docs/book/02_the_autograd_engine.md", {
    {"three steps from w = 0 end at w = 1.464", [] {
       const double w = ex2_4::descend();
       std::string hint = "";
       if (std::abs(w - 3.024) < 1e-9)
         hint = "3.024 is what you get when each step's gradient is added to all the earlier ones: "
                "backward() accumulates into .grad";
       expect_near(w, 1.464, "w after three steps", 1e-12, hint);
     }},
  }};
}
