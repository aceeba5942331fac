// The two ends of a language model, for exercise 4.3 (as in
// examples/weight_tying.cpp): a token embedding and an LM head, registered
// as "embed" and "head", tied (one (V, D) matrix) or not.
#pragma once

#include <memory>

#include "ember.h"

namespace exercise {

class TinyLM : public ember::nn::Module {
 public:
  TinyLM(int64_t V, int64_t D, bool tied) {
    ember::Generator gen(0);
    embed = register_module("embed", std::make_shared<ember::nn::Embedding>(
                                         V, D, ember::nn::EmbeddingOptions{.dtype = ember::kFloat64, .generator = &gen}));
    head = register_module("head", std::make_shared<ember::nn::LMHead>(
                                       D, V, ember::nn::InitOptions{.dtype = ember::kFloat64, .generator = &gen}));
    if (tied) ember::nn::tie_weights(*head, *embed);
  }
  std::string type_name() const override { return "TinyLM"; }
  /// ids (B, T) -> logits (B, T, V)
  ember::Tensor forward(const ember::Tensor& ids) const { return head->forward(embed->forward(ids)); }

  std::shared_ptr<ember::nn::Embedding> embed;
  std::shared_ptr<ember::nn::LMHead> head;
};

}  // namespace exercise
