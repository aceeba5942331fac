// lesson_c_race, part 4 of 7: the measurements (measure.h says what each
// one means).
#include "lesson_c_race/measure.h"

#include <algorithm>
#include <chrono>

#include "inspect/inspect.h"
#include "lesson_c_race/training.h"

namespace lesson_c {

std::vector<double> accuracy_by_position(RaceModel& m, const Batch& b) {
  NoGradGuard no_grad;
  const Tensor& tg = m.targets(b);
  const std::vector<int64_t> pred = argmax(m.logits(b), -1).contiguous().to_vector<int64_t>();
  const std::vector<int64_t> want = tg.contiguous().to_vector<int64_t>();
  const int64_t B = tg.size(0), T = tg.size(1);
  std::vector<double> right, seen;
  for (int64_t row = 0; row < B; ++row) {
    size_t n = 0;
    for (int64_t t = 0; t < T; ++t) {
      if (want[row * T + t] == kIgnore) continue;
      if (right.size() <= n) right.resize(n + 1), seen.resize(n + 1);
      right[n] += pred[row * T + t] == want[row * T + t];
      seen[n] += 1;
      ++n;
    }
  }
  for (size_t i = 0; i < right.size(); ++i) right[i] /= seen[i];
  return right;
}

void gradient_profile(RecurrentLM& m, const Batch& b, std::vector<double>& h_ratio, std::vector<double>& c_ratio) {
  std::vector<Tensor> hs, cs;
  cross_entropy(m.run(b, &hs, &cs), b.targets, Reduction::Mean, kIgnore).backward();
  m.zero_grad();  // the parameters' gradients are not wanted here
  auto profile = [](const std::vector<Tensor>& states) {
    NoGradGuard no_grad;
    std::vector<double> out;
    const int64_t T = static_cast<int64_t>(states.size());
    for (int64_t d = 0; d < T; ++d) out.push_back(norm(states[T - 1 - d].grad(), 2.0, {1}).mean().item<double>());
    for (size_t d = out.size(); d-- > 0;) out[d] /= out[0];
    return out;
  };
  h_ratio = profile(hs);
  if (!cs.empty()) c_ratio = profile(cs);
}

bool is_causal(RaceModel& m, const Batch& b, int64_t t) {
  NoGradGuard no_grad;
  Batch changed = b;
  std::vector<int64_t> ids = b.ids.contiguous().to_vector<int64_t>();
  const int64_t B = b.ids.size(0), T = b.ids.size(1);
  for (int64_t row = 0; row < B; ++row)
    for (int64_t u = t + 1; u < T; ++u) ids[row * T + u] = (ids[row * T + u] + 1) % kSymbols;
  changed.ids = tensor(ids, {B, T});
  const Tensor before = m.logits(b).narrow(1, 0, t + 1), after = m.logits(changed).narrow(1, 0, t + 1);
  return max(abs(before - after)).item<double>() == 0.0;
}

double ms_per_step(RaceModel& m, const Batch& b, int reps) {
  optim::Adam opt(m.parameters(), 1e-3);
  for (int i = 0; i < 2; ++i) train_step(m, opt, b, 1.0);
  std::vector<double> ms;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    train_step(m, opt, b, 1.0);
    ms.push_back(1e3 * std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::nth_element(ms.begin(), ms.begin() + reps / 2, ms.end());
  return ms[reps / 2];
}

double ops_per_step(RaceModel& m, const Batch& b) {
  optim::Adam opt(m.parameters(), 1e-3);
  inspect::Profiler prof;
  train_step(m, opt, b, 1.0);
  prof.stop_watching();
  int64_t n = 0;
  for (const inspect::Profiler::Event& e : prof.events()) n += e.depth == 0;
  return static_cast<double>(n);
}

}  // namespace lesson_c
