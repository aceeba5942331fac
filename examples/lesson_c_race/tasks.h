// lesson_c_race, part 1 of 7: the tasks. Read this first (after main.cpp's
// header), then models.h, training.h, measure.h, races.h, plots.h, report.h.
//
// A batch is a stream of symbol ids (B, T) with the answer at the scored
// positions of targets (B, T) and kIgnore elsewhere; the reverse task also
// carries the same examples split into source and decoder input for the
// encoder-decoder.
//
// Legend: B batch, T stream length, C symbols of the synthetic tasks,
//         K longest recall distance, L reverse length.
#pragma once

#include <cstdint>

#include "ember.h"

namespace lesson_c {

using namespace ember;

constexpr int64_t kSymbols = 8;    // C: the synthetic tasks' alphabet
constexpr int64_t kIgnore = -100;  // cross_entropy's ignore_index: a position that is not scored

// Generator streams, one per purpose: a part of the program that draws more
// or fewer numbers never shifts the numbers another part draws.
enum Stream : uint64_t {
  kInitStream = 1,     // + the entrant's index: each model's initial weights
  kRecallData = 100,   // the training batches of race 1 (the same for every model)
  kRecallProbe,        // the batch the gradients are measured on
  kRecallEval,         // the test batches at each distance
  kRecallReach,        // the streams that measure the reach during training
  kReverseData,
  kReverseEval,
  kTextData,
  kTextVal,
  kTiming,
};

struct Batch {
  Tensor ids, targets;              // (B, T) each
  Tensor src, dec_in, dec_targets;  // reverse only: (B, L) each
};

/// Recall. Ids 0..C-1 are the symbols, C..2C-1 the same symbols marked;
/// one position per stream is marked. The first `prefix` positions never
/// are, so the marked symbol is never the first input (where a recurrent
/// state is still zero). fixed_k = 0 draws a distance per row, log-uniform
/// in 1..K.
///   T = prefix + K + 1; scored: the last position; answer: the marked symbol
Batch recall_batch(int64_t B, int64_t K, int64_t prefix, Generator& gen, int64_t fixed_k = 0);

/// Reverse, symbols 0..C-1 and a separator C. One stream for the stream
/// models, the same example split for the encoder-decoder:
///   stream   s_0 .. s_{L-1} SEP r_0 .. r_{L-2}   scored at L..2L-1 with r_0..r_{L-1}
///   src      s_0 .. s_{L-1}
///   dec_in   SEP r_0 .. r_{L-2}                  dec_targets r_0 .. r_{L-1},  r_i = s_{L-1-i}
/// Both read 2L symbols per example. In the stream, r_i is due at position
/// L+i and its source s_{L-1-i} is 2i+1 steps back.
Batch reverse_batch(int64_t B, int64_t L, Generator& gen);

/// What a model needs to know about a task.
struct TaskShape {
  int64_t vocab;    // ids are in [0, vocab)
  int64_t classes;  // the head's outputs
  int64_t context;  // the longest stream (the Transformer's positional table)
};

}  // namespace lesson_c
