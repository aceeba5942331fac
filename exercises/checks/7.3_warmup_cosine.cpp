// Checks exercise 7.3: lr_at against optim::WarmupCosineLR at every step of
// train_gpt's default schedule, and a few points by hand.
#include "exercises/checks/check.h"

namespace ex7_3 {
double lr_at(int64_t step, double max_lr, double min_lr, int64_t warmup, int64_t total);
}

check::Exercise check::exercise() {
  return {"7.3", "The learning-rate schedule", "docs/book/07_training_a_gpt.md", {
    {"the warmup: 1/50, 2/50, ... of the peak", [] {
       expect_near(ex7_3::lr_at(0, 3e-3, 3e-4, 50, 1000), 3e-3 / 50, "lr at step 0", 1e-15);
       expect_near(ex7_3::lr_at(49, 3e-3, 3e-4, 50, 1000), 3e-3, "lr at step 49 (the last warmup step)", 1e-15);
     }},
    {"the cosine: the peak at the end of the warmup, the middle halfway, min_lr at the end", [] {
       expect_near(ex7_3::lr_at(50, 3e-3, 3e-4, 50, 1050), 3e-3, "lr at step 50", 1e-15);
       expect_near(ex7_3::lr_at(550, 3e-3, 3e-4, 50, 1050), (3e-3 + 3e-4) / 2, "lr halfway", 1e-15);
       expect_near(ex7_3::lr_at(1050, 3e-3, 3e-4, 50, 1050), 3e-4, "lr at the last step", 1e-15);
       expect_near(ex7_3::lr_at(5000, 3e-3, 3e-4, 50, 1050), 3e-4, "lr after the last step", 1e-15);
     }},
    {"every step of train_gpt's schedule equals optim::WarmupCosineLR's", [] {
       ember::optim::WarmupCosineLR ref(3e-3, 3e-4, 50, 1000);
       for (int64_t s = 0; s < 1100; ++s)
         expect_near(ex7_3::lr_at(s, 3e-3, 3e-4, 50, 1000), ref.lr(s), "lr at step " + std::to_string(s), 1e-15);
     }},
  }};
}
