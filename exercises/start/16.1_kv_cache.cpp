// Exercise 16.1: A key-value cache (chapter 16, docs/book/16_generation.md)
//
// A causal GPT generating one token at a time would compute the keys and
// values of every earlier token again for every new one, although they cannot
// change: token i attends to tokens 0..i only. A cache keeps them.
//
// Write, for one attention head (plain rows of doubles, d wide):
//   append  adds the keys and values of T new tokens (k[t], v[t]) after the
//           rows the cache already holds;
//   attend  the outputs of those T new queries, after append: with n rows in
//           the cache, query t is the token at position n - T + t and sees
//           the keys 0 .. n - T + t (itself included, none after it):
//             out[t] = sum over j of softmax_j(q[t] . keys[j] / sqrt(d)) values[j]
//
// The checker decodes a sequence the way generate() does, a prompt of 3
// tokens at once and then one token at a time, and compares every output
// with causal attention over the whole sequence computed in one go.
//
// Think about:
//   * in the prompt (T = 3), which keys may the first query see?
//   * in a decode step (T = 1), which position is the new query at?
//   * what goes wrong if append replaces the rows instead of adding to them?
//
// Compare with, after you try: nn/kv_cache.h and MultiHeadAttention's cached
// forward (nn/attention.cpp), whose tiled kernel takes the offset n - T.
//
// Check it:  bash scripts/exercise.sh 16.1
#include <cmath>
#include <cstdint>
#include <vector>

#include "exercises/exercise.h"

namespace ex16_1 {

using Rows = std::vector<std::vector<double>>;

struct Cache {
  Rows keys, values;  // one row per cached position
};

void append(Cache& cache, const Rows& k, const Rows& v) {
  (void)cache;
  (void)k;
  (void)v;
  TODO("where do the new keys and values go?");
}

Rows attend(const Cache& cache, const Rows& q) {
  (void)cache;
  (void)q;
  TODO("which position is query t at, and which keys may it see?");
}

}  // namespace ex16_1
