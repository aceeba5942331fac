// Stage 10, the reference solution: the modules of stages 7 and 9, put
// together.
#include "mini/gpt.h"

#include <string>

#include "mini/error.h"

namespace mini {

namespace {

const GPTConfig& checked(const GPTConfig& c) {
  MINI_CHECK(c.vocab_size >= 1 && c.context_length >= 1 && c.dim >= 1 && c.heads >= 1 && c.layers >= 0, "GPT",
             "vocab_size " << c.vocab_size << ", context_length " << c.context_length << ", dim " << c.dim << ", heads "
                           << c.heads << ", layers " << c.layers << ": each size at least 1 (layers at least 0)");
  MINI_CHECK(c.dim % c.heads == 0, "GPT", c.heads << " heads do not divide dim " << c.dim);
  return c;
}

}  // namespace

TokenAndPosition::TokenAndPosition(const GPTConfig& c, Generator& gen)
    : token(c.vocab_size, c.dim, gen), positional(c.context_length, c.dim, gen) {
  register_module("token", token);
  register_module("positional", positional);
}

Var TokenAndPosition::forward(const std::vector<int64_t>& ids, int64_t B, int64_t T) const {
  return add(token.forward(ids, {B, T}), positional.forward(T));  // (B, T, D) + (T, D)
}

GPT::GPT(const GPTConfig& c, Generator& gen)
    : config(checked(c)), embed(c, gen), ln_f(c.dim), head(c.dim, c.vocab_size, gen, false) {
  register_module("embed", embed);
  for (int64_t i = 0; i < c.layers; ++i) {
    blocks.push_back(std::make_unique<TransformerBlock>(c.dim, c.heads, gen));
    register_module("blocks." + std::to_string(i), *blocks.back());
  }
  register_module("ln_f", ln_f);
  head.weight = embed.token.weight;  // tied: one Var
  register_module("head", head);
}

Var GPT::forward(const std::vector<int64_t>& ids, int64_t B, int64_t T) const {
  MINI_CHECK(T >= 1 && T <= config.context_length, "GPT",
             "T = " << T << " tokens, for a context of " << config.context_length);
  Var x = embed.forward(ids, B, T);
  for (const auto& block : blocks) x = block->forward(x);
  return head.forward(ln_f.forward(x));
}

Var GPT::loss(const std::vector<int64_t>& ids, const std::vector<int64_t>& targets, int64_t B, int64_t T) const {
  return cross_entropy(reshape(forward(ids, B, T), {B * T, config.vocab_size}), targets);
}

}  // namespace mini
