// lesson_c_race, part 3 of 7: training. One optimizer update, a whole
// training run with a hook that measures as it goes, and the pool that
// trains several models at once. Result holds everything a race measures
// about one model; measure.h fills most of it.
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "ember.h"
#include "lesson_c_race/models.h"

namespace lesson_c {

struct Schedule {
  int64_t steps, batch;
  double lr, clip = 1.0;
};

struct Result {
  Entrant entrant{Kind::RNN};
  std::string label;
  int64_t width = 0, params = 0;
  std::vector<double> loss;                         // the training loss of every step's batch (fresh data)
  std::vector<std::pair<int64_t, double>> val;      // text: (step, validation loss), from step 0
  double seconds = 0;                               // wall time of the training (validation left out)
  std::vector<double> accuracy;                     // recall: [k - 1]; reverse: [output position i]
  std::vector<std::pair<int64_t, double>> reach;    // recall: (step, the distance it recalls up to)
  double alignment = NAN;                           // reverse, attention: fraction of argmax_j α_ij = L-1-i
  std::vector<double> heat;                         // reverse, attention: α of one example, (L, L)
  std::vector<int64_t> heat_src;                    // ... and its source symbols
  std::vector<double> grad_init, grad_trained;      // recall, recurrent: [distance d] ‖∂ℓ/∂h‖ / value at d = 0
  std::vector<double> grad_c_init, grad_c_trained;  // the same for the LSTM's cell state c_t
  std::vector<double> ms_per_step, ops_per_step;    // timing: [index of T]
  bool causal = true;                               // no output changed when later inputs did
};

/// The result of kind k (with inputs at scale input_std); an error if there is none.
const Result& find(const std::vector<Result>& rs, Kind k, double input_std = 1.0);

/// The first step at which r recalled every distance up to K, or -1.
int64_t step_reaching(const Result& r, int64_t K);

/// One optimizer update on one batch; returns the batch's loss.
double train_step(RaceModel& m, optim::Optimizer& opt, const Batch& b, double clip);

/// Trains on next(data) for every step; `every` (if given) runs at step 0,
/// every `every_n` steps and at the end (text: the validation loss). Fills
/// r.loss and r.seconds (the time of `every` left out).
void train_model(RaceModel& m, Result& r, const Schedule& s, const std::function<Batch(Generator&)>& next,
                 Generator data, const std::function<void(int64_t)>& every = nullptr, int64_t every_n = 0);

/// Runs the jobs on `threads` threads, each taking the next job not yet
/// taken; the first exception thrown is rethrown here once all have ended.
void run_jobs(const std::vector<std::function<void()>>& jobs, int threads);

/// Prints one line about a trained model (the models of a race finish on
/// different threads: one line at a time).
void report(const Result& r, const std::string& extra);

}  // namespace lesson_c
