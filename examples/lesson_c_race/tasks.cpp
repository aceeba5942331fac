// lesson_c_race, part 1 of 7: the two synthetic tasks' batches (tasks.h says
// what each holds). The text task's batches come from train::BatchSampler.
#include "lesson_c_race/tasks.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace lesson_c {

Batch recall_batch(int64_t B, int64_t K, int64_t prefix, Generator& gen, int64_t fixed_k) {
  const int64_t T = prefix + K + 1;
  std::vector<int64_t> ids(B * T), targets(B * T, kIgnore);
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t t = 0; t < T; ++t) ids[b * T + t] = static_cast<int64_t>(gen.next_below(kSymbols));
    // floor(exp(u ln(K + 1))) for u uniform in [0, 1): P(k) ~ log((k+1)/k), every octave equally likely
    const int64_t k = fixed_k > 0 ? fixed_k
                                  : std::clamp<int64_t>(static_cast<int64_t>(std::exp(gen.next_double() * std::log(K + 1.0))), 1, K);
    targets[b * T + T - 1] = ids[b * T + T - 1 - k];
    ids[b * T + T - 1 - k] += kSymbols;  // the mark
  }
  return {tensor(ids, {B, T}), tensor(targets, {B, T}), {}, {}, {}};
}

Batch reverse_batch(int64_t B, int64_t L, Generator& gen) {
  const int64_t sep = kSymbols, T = 2 * L;
  std::vector<int64_t> ids(B * T), targets(B * T, kIgnore), src(B * L), dec_in(B * L), dec_targets(B * L);
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t j = 0; j < L; ++j) src[b * L + j] = ids[b * T + j] = static_cast<int64_t>(gen.next_below(kSymbols));
    ids[b * T + L] = sep;
    for (int64_t i = 0; i < L; ++i) {
      const int64_t r = src[b * L + L - 1 - i];
      targets[b * T + L + i] = dec_targets[b * L + i] = r;
      if (i + 1 < L) ids[b * T + L + 1 + i] = r;  // the stream reads what it wrote (teacher forcing)
      dec_in[b * L + i] = i == 0 ? sep : src[b * L + L - i];
    }
  }
  return {tensor(ids, {B, T}), tensor(targets, {B, T}), tensor(src, {B, L}), tensor(dec_in, {B, L}),
          tensor(dec_targets, {B, L})};
}

}  // namespace lesson_c
