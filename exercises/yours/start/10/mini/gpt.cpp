// Stage 10: a character GPT (docs/book/build_your_own/10_gpt.md).
// Each MINI_TODO asks a question; replace it with your code, then run
//   bash scripts/build_your_own.sh 10
#include "mini/gpt.h"

#include <string>

#include "mini/error.h"

namespace mini {

TokenAndPosition::TokenAndPosition(const GPTConfig& c, Generator& gen)
    : token(c.vocab_size, c.dim, gen), positional(c.context_length, c.dim, gen) {
  MINI_TODO("what must the module be told about its two tables, under which names?");
}

Var TokenAndPosition::forward(const std::vector<int64_t>& ids, int64_t B, int64_t T) const {
  (void)ids;
  (void)B;
  (void)T;
  MINI_TODO("a (B, T, D) and a (T, D): how do they add?");
}

GPT::GPT(const GPTConfig& c, Generator& gen)
    : config(c), embed(c, gen), ln_f(c.dim), head(c.dim, c.vocab_size, gen, false) {
  MINI_TODO("which configurations make no model? Then: the blocks, each registered under its number (ember's names: "
            "the header says), the final norm, and a head whose weight is the token table itself");
}

Var GPT::forward(const std::vector<int64_t>& ids, int64_t B, int64_t T) const {
  (void)ids;
  (void)B;
  (void)T;
  MINI_TODO("the diagram in the header, one line each; what T can a learned position table take?");
}

Var GPT::loss(const std::vector<int64_t>& ids, const std::vector<int64_t>& targets, int64_t B, int64_t T) const {
  (void)ids;
  (void)targets;
  (void)B;
  (void)T;
  MINI_TODO("stage 6's cross_entropy takes (N, C) logits: which N and C?");
}

}  // namespace mini
