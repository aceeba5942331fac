// lesson_c_race, part 4 of 7: what is measured on a model, trained or not:
// accuracy by position, the gradient that reaches each hidden state, whether
// a stream model is causal, and the wall time and op calls of one step.
#pragma once

#include <vector>

#include "lesson_c_race/models.h"

namespace lesson_c {

/// Fraction of scored positions whose argmax is the target, by the order of
/// the scored position in its row (recall: one per row; reverse: L per row).
std::vector<double> accuracy_by_position(RaceModel& m, const Batch& b);

/// ‖∂loss/∂h_t‖ (mean over the batch's rows) at each distance d = T-1-t from
/// the scored last position, divided by its value at d = 0. The loss reads
/// only the last position, so this is how much of the output's error signal
/// backpropagation through time delivers d steps back. c_ratio: the same for
/// the LSTM's cell state (left empty for the other cells).
void gradient_profile(RecurrentLM& m, const Batch& b, std::vector<double>& h_ratio, std::vector<double>& c_ratio);

/// A stream model must not see its answers: change every input after
/// position t and the logits at 0..t must stay bit for bit the same.
bool is_causal(RaceModel& m, const Batch& b, int64_t t);

/// The median wall time of one training step (forward, backward, clipping,
/// Adam) over `reps` steps, after two untimed ones.
double ms_per_step(RaceModel& m, const Batch& b, int reps);

/// The op calls of one training step, forward ops and backward nodes (the
/// profiler's top-level events): how many pieces, one after the other, the
/// step's work is cut into.
double ops_per_step(RaceModel& m, const Batch& b);

}  // namespace lesson_c
