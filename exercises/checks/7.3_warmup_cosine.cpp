// Checks exercise 7.3: lr_at against optim::WarmupCosineLR at every step of
// train_gpt's default schedule, and a few points by hand. A wrong schedule is
// compared, step by step, with the usual mistakes' (a warmup that starts at
// 0, an integer division, a decay that does not start at the warmup's end,
// a cosine that rises again) to name the one it is.
#include <cmath>
#include <functional>
#include <numbers>

#include "exercises/checks/check.h"

namespace ex7_3 {
double lr_at(int64_t step, double max_lr, double min_lr, int64_t warmup, int64_t total);
}

namespace {

struct Schedule {
  double max_lr, min_lr;
  int64_t warmup, total;
};

using Lr = std::function<double(int64_t step, const Schedule&)>;

double ratio(int64_t a, int64_t b) { return static_cast<double>(a) / static_cast<double>(b); }

double decay(double progress, const Schedule& c) {
  return c.min_lr + (c.max_lr - c.min_lr) * (1 + std::cos(std::numbers::pi * progress)) / 2;
}

double right(int64_t s, const Schedule& c) {
  if (s < c.warmup) return c.max_lr * ratio(s + 1, c.warmup);
  if (s >= c.total) return c.min_lr;
  return decay(ratio(s - c.warmup, c.total - c.warmup), c);
}

// A schedule that is right except in one part.
Lr with_warmup(std::function<double(int64_t, const Schedule&)> warm) {
  return [warm](int64_t s, const Schedule& c) { return s < c.warmup ? warm(s, c) : right(s, c); };
}
Lr with_decay(std::function<double(int64_t, const Schedule&)> dec) {
  return [dec](int64_t s, const Schedule& c) { return s < c.warmup || s >= c.total ? right(s, c) : dec(s, c); };
}

const std::vector<std::pair<Lr, std::string>>& mistakes() {
  static const std::vector<std::pair<Lr, std::string>> list = {
      {with_warmup([](int64_t s, const Schedule& c) { return c.max_lr * ratio(s, c.warmup); }),
       "step 0 gets lr 0, so it trains nothing: step 0 is the warmup's first step and already gets max_lr / warmup"},
      {with_warmup([](int64_t s, const Schedule& c) { return c.max_lr * static_cast<double>((s + 1) / c.warmup); }),
       "the warmup's lr is 0 until its last step: the fraction of the warmup done is a division of two integers, "
       "which drops everything after the point"},
      {with_decay([](int64_t s, const Schedule& c) { return decay(double((s - c.warmup) / (c.total - c.warmup)), c); }),
       "the lr stays at max_lr for the whole decay: its progress is a division of two integers, 0 until the end"},
      {with_decay([](int64_t s, const Schedule& c) { return decay(ratio(s, c.total), c); }),
       "the decay's progress counts from step 0: it starts at the end of the warmup (0 at step warmup, 1 at step "
       "total)"},
      {with_decay([](int64_t s, const Schedule& c) { return decay(ratio(s - c.warmup, c.total), c); }),
       "the decay's progress is measured over all total steps: the decay itself lasts total - warmup steps"},
      {with_decay([](int64_t s, const Schedule& c) {
         const double progress = ratio(s - c.warmup, c.total - c.warmup);
         return c.min_lr + (c.max_lr - c.min_lr) * std::cos(std::numbers::pi / 2 * progress);
       }),
       "that is a quarter of a cosine period: the decay follows half a period, cos from 1 to -1, turned into a "
       "factor from 1 to 0"},
      {[](int64_t s, const Schedule& c) {
         return s < c.warmup ? right(s, c) : decay(ratio(s - c.warmup, c.total - c.warmup), c);
       },
       "after step total the lr rises again along the cosine: from there on it stays at min_lr"},
      {[](int64_t s, const Schedule& c) { return s <= c.warmup ? c.max_lr * ratio(s + 1, c.warmup) : right(s, c); },
       "step warmup is the decay's first step (at max_lr): the warmup is steps 0 .. warmup-1"},
  };
  return list;
}

// Which mistake gives the learner's lr at every step of c, or what part is wrong.
std::string hint_for(const Schedule& c) {
  for (const auto& [lr, hint] : mistakes()) {
    bool all = true;
    for (int64_t s = 0; s < c.total + 100 && all; ++s)
      all = std::abs(ex7_3::lr_at(s, c.max_lr, c.min_lr, c.warmup, c.total) - lr(s, c)) <= 1e-15;
    if (all) return hint;
  }
  for (int64_t s = 0; s < c.total + 100; ++s)
    if (std::abs(ex7_3::lr_at(s, c.max_lr, c.min_lr, c.warmup, c.total) - right(s, c)) > 1e-15)
      return s < c.warmup ? "the warmup is wrong first (step " + std::to_string(s) +
                                "): it rises in equal steps, and its step 0 already trains"
             : s < c.total ? "the decay is wrong first (step " + std::to_string(s) +
                                 "): how far along it is a step, from 0 to 1, and what does the cosine make of that?"
                           : "after the last step the lr is min_lr";
  return "";
}

void expect_lr(int64_t s, const Schedule& c, double want, const std::string& what) {
  const double got = ex7_3::lr_at(s, c.max_lr, c.min_lr, c.warmup, c.total);
  if (std::abs(got - want) > 1e-15)
    check::fail(what + " is " + check::num(got) + ", but should be " + check::num(want), hint_for(c));
}

}  // namespace

check::Exercise check::exercise() {
  return {"7.3", "The learning-rate schedule", "docs/book/07_training_a_gpt.md", {
    {"the warmup: 1/50, 2/50, ... of the peak", [] {
       const Schedule c{3e-3, 3e-4, 50, 1000};
       expect_lr(0, c, 3e-3 / 50, "lr at step 0");
       expect_lr(49, c, 3e-3, "lr at step 49 (the last warmup step)");
     }},
    {"the cosine: the peak at the end of the warmup, the middle halfway, min_lr at the end", [] {
       const Schedule c{3e-3, 3e-4, 50, 1050};
       expect_lr(50, c, 3e-3, "lr at step 50");
       expect_lr(550, c, (3e-3 + 3e-4) / 2, "lr halfway");
       expect_lr(1050, c, 3e-4, "lr at the last step");
       expect_lr(5000, c, 3e-4, "lr after the last step");
     }},
    {"every step of train_gpt's schedule equals optim::WarmupCosineLR's", [] {
       ember::optim::WarmupCosineLR ref(3e-3, 3e-4, 50, 1000);
       for (int64_t s = 0; s < 1100; ++s)
         expect_lr(s, {3e-3, 3e-4, 50, 1000}, ref.lr(s), "lr at step " + std::to_string(s));
     }},
  }};
}
