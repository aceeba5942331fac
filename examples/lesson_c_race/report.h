// lesson_c_race, part 7 of 7: the summary table and the facts. The facts are
// what the pictures should show, each checked against the measured numbers
// and printed with them (--check: a failed one makes the exit status 1).
#pragma once

#include <string>
#include <vector>

#include "lesson_c_race/races.h"

namespace lesson_c {

/// Facts the pictures should show; each is printed with its measured numbers.
struct Facts {
  std::vector<std::string> failed;
  int checked = 0;
  void check(bool ok, const std::string& what);
};

/// The table of summary.txt (without its last line, the total run time).
std::string summary_table(const Setup& s, const Races& races);

/// Checks every fact of the run; vocab: the text's vocabulary size V.
void check_facts(Facts& facts, const Setup& s, const Races& races, int64_t vocab);

}  // namespace lesson_c
