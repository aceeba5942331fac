// Exercise 15.2: Softmax one tile at a time (chapter 15, docs/book/15_memory.md)
//
// Tiled attention never has a whole row of scores: it sees them one tile of
// keys at a time, and keeps per query row only
//   m    the largest score seen so far,
//   l    the sum of exp(s - m) over the scores seen so far,
//   acc  the sum of exp(s - m) v over their value rows (width dv).
// At the end, the attention's output is acc / l: exactly softmax(s) · V, as
// if the whole row had been there at once.
//
// Write fold() (one tile into the running state) and finish(). The checker
// splits rows of scores into tiles of many sizes, some with scores that rise
// tile after tile, some near 1000, and compares with the softmax of the
// whole row.
//
// Think about:
//   * when a tile brings a score larger than m, m rises to m'. What were l
//     and acc summed with, and what turns each of their terms exp(s - m)
//     into exp(s - m')?
//   * what is exp(1000) in a double, and why does subtracting the max keep
//     every exp at most 1?
//   * before the first tile m is -infinity: what does your rescaling do
//     then?
//
// Compare with, after you try: the tiled attention in tensor/attention.cpp.
//
// Check it:  bash scripts/exercise.sh 15.2
#include <cmath>
#include <limits>
#include <vector>

#include "exercises/exercise.h"

namespace ex15_2 {

struct Running {
  double m = -std::numeric_limits<double>::infinity();
  double l = 0;
  std::vector<double> acc;  // dv values, all 0 at the start
};

// scores[j] is the score of key j of the tile, values[j] its value row.
void fold(Running& r, const std::vector<double>& scores, const std::vector<std::vector<double>>& values) {
  (void)r;
  (void)scores;
  (void)values;
  TODO("when a tile raises the running max, what must happen to l and acc before its own terms are added?");
}

std::vector<double> finish(const Running& r) {
  (void)r;
  TODO("once every tile is folded in, what is the weighted sum of the values?");
}

}  // namespace ex15_2
