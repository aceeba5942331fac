// Stage 10 of your framework: a character GPT
// (docs/book/build_your_own/10_gpt.md).
//
//   ids (B, T) -> embed: token + position (B, T, D) -> blocks -> ln_f -> head -> logits (B, T, V)
//
// The head's weight is the token table itself (tied, stage 7), and the
// names of the members are ember's (embed.token, embed.positional,
// blocks.0, ..., ln_f, head), so that named_parameters() match ember's GPT
// one for one: the checker starts your model from ember's own starting
// numbers, trains both the same way, and compares the losses.
#pragma once

#include <memory>
#include <vector>

#include "mini/attention.h"

namespace mini {

struct GPTConfig {
  int64_t vocab_size = 65;
  int64_t context_length = 16;
  int64_t dim = 32;
  int64_t heads = 4;
  int64_t layers = 2;
};

/// token(ids) + positional(T): (B, T, D).
class TokenAndPosition : public Module {
 public:
  TokenAndPosition(const GPTConfig& c, Generator& gen);
  Var forward(const std::vector<int64_t>& ids, int64_t B, int64_t T) const;
  Embedding token;
  LearnedPositions positional;
};

class GPT : public Module {
 public:
  /// Refuses a configuration with a size below 1 or heads that do not divide dim.
  GPT(const GPTConfig& config, Generator& gen);
  /// ids: B·T token ids, row by row (B rows of T); T <= context_length.
  /// The logits (B, T, V).
  Var forward(const std::vector<int64_t>& ids, int64_t B, int64_t T) const;
  /// The mean cross-entropy of forward(ids) against targets (B·T ids: the
  /// token after each one).
  Var loss(const std::vector<int64_t>& ids, const std::vector<int64_t>& targets, int64_t B, int64_t T) const;

  GPTConfig config;
  TokenAndPosition embed;
  std::vector<std::unique_ptr<TransformerBlock>> blocks;
  LayerNorm ln_f;
  Linear head;  // no bias; its weight is embed.token.weight
};

}  // namespace mini
