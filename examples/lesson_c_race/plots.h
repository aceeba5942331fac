// lesson_c_race, part 6 of 7: the pictures (ember::plot), one figure per
// question, each written as a PNG into the output directory.
#pragma once

#include <string>
#include <vector>

#include "lesson_c_race/races.h"

namespace lesson_c {

/// Every picture of the run: recall_loss, recall_accuracy, recall_reach,
/// gradient_init, gradient_trained, reverse_loss, reverse_accuracy,
/// attention, text_loss, step_time, step_ops (.png in dir). Returns what is
/// wrong with their layout (plot::layout_problems), one line each.
std::vector<std::string> write_pictures(const Setup& s, const Races& races, int64_t vocab, const std::string& dir);

}  // namespace lesson_c
