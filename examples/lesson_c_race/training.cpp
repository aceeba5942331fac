// lesson_c_race, part 3 of 7: the training step, the training loop and the
// thread pool (training.h says what each does).
#include "lesson_c_race/training.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <exception>
#include <mutex>
#include <thread>

namespace lesson_c {

const Result& find(const std::vector<Result>& rs, Kind k, double input_std) {
  for (const Result& r : rs)
    if (r.entrant.kind == k && r.entrant.input_std == input_std) return r;
  EMBER_FAIL("lesson_c_race", "no result for " << static_cast<int>(k));
}

int64_t step_reaching(const Result& r, int64_t K) {
  for (const auto& [step, reach] : r.reach)
    if (reach >= static_cast<double>(K)) return step;
  return -1;
}

double train_step(RaceModel& m, optim::Optimizer& opt, const Batch& b, double clip) {
  Tensor loss = cross_entropy(m.logits(b), m.targets(b), Reduction::Mean, kIgnore);
  opt.zero_grad();
  loss.backward();
  optim::clip_grad_norm_(m.parameters(), clip);
  opt.step();
  return loss.item<double>();
}

void train_model(RaceModel& m, Result& r, const Schedule& s, const std::function<Batch(Generator&)>& next,
                 Generator data, const std::function<void(int64_t)>& every, int64_t every_n) {
  optim::Adam opt(m.parameters(), s.lr);
  if (every) every(0);
  const auto t0 = std::chrono::steady_clock::now();
  double paused = 0;
  for (int64_t step = 1; step <= s.steps; ++step) {
    r.loss.push_back(train_step(m, opt, next(data), s.clip));
    EMBER_CHECK(std::isfinite(r.loss.back()), "lesson_c_race",
                r.label << ": the loss became " << r.loss.back() << " at step " << step);
    if (every && (step % every_n == 0 || step == s.steps)) {
      const auto p0 = std::chrono::steady_clock::now();
      every(step);
      paused += std::chrono::duration<double>(std::chrono::steady_clock::now() - p0).count();
    }
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() - paused;
}

void run_jobs(const std::vector<std::function<void()>>& jobs, int threads) {
  std::atomic<size_t> next{0};
  std::mutex failed_mutex;
  std::exception_ptr failed;
  auto worker = [&] {
    // OpenBLAS (Debian's OpenMP build) takes its thread count from the
    // calling thread's OpenMP setting, which a new thread does not inherit:
    // without this, each worker's matrix products would start OpenMP teams
    // of their own (measured: the RNN's steps 6x slower).
    set_num_threads(1);
    for (size_t i; (i = next++) < jobs.size();) {
      try {
        jobs[i]();
      } catch (...) {
        std::lock_guard<std::mutex> lock(failed_mutex);
        if (!failed) failed = std::current_exception();
      }
    }
  };
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back(worker);
  for (auto& t : pool) t.join();
  if (failed) std::rethrow_exception(failed);
}

void report(const Result& r, const std::string& extra) {
  static std::mutex print_mutex;
  std::lock_guard<std::mutex> lock(print_mutex);
  std::printf("  %-28s %6lld params  %5lld steps in %6.1f s  %s\n", r.label.c_str(), static_cast<long long>(r.params),
              static_cast<long long>(r.loss.size()), r.seconds, extra.c_str());
  std::fflush(stdout);
}

}  // namespace lesson_c
