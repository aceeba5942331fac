/// @file
/// A tiny GPT: the embedding composer (token + positional), a stack of pre-LN
/// Transformer blocks, a final LayerNorm and the LM head (tied to the token
/// embedding by default).
///
///   ids (B, T) -> composer (B, T, D) -> blocks -> ln_f -> head -> logits (B, T, V)
///
/// Legend: B batch, T sequence length (<= L, the context length), D model
/// dim, V vocabulary size.
#pragma once

#include <string>
#include <vector>

#include "nn/attention.h"
#include "nn/embedding.h"

namespace ember::nn {

enum class Positional { Learned, Sinusoidal };

struct GPTConfig {
  int64_t vocab_size = 65;
  int64_t context_length = 64;
  int64_t dim = 64;
  int64_t heads = 4;
  int64_t layers = 2;
  double dropout = 0.0;
  Positional positional = Positional::Learned;
  bool tie_weights = true;
  uint64_t seed = 0;
  DType dtype = kFloat32;

  /// "vocab_size=65 context_length=64 ..." and back (stored in checkpoints).
  std::string to_string() const;
  /// Parses and validate()s.
  static GPTConfig from_string(const std::string& s);
  /// The number of parameters this configuration has, before the model is
  /// built: validate() needs it to refuse a model too large for the machine
  /// before allocating a weight. Exact: it equals the built model's
  /// Module::num_parameters() (tested over every option that changes it);
  /// an error naming the sizes if it does not fit int64.
  int64_t parameter_count() const;
  /// Every size positive (layers >= 0), heads divides dim, dropout in [0, 1),
  /// dtype float32 or float64, and the parameters fit in this machine's
  /// memory: an error naming the value otherwise, before anything is
  /// allocated.
  void validate() const;
};

class GPT : public Module {
 public:
  explicit GPT(const GPTConfig& config);
  /// ids (B, T) int64, T <= context_length -> logits (B, T, V)
  Tensor forward(const Tensor& ids);
  /// mean cross-entropy of forward(ids) against targets (B, T)
  Tensor loss(const Tensor& ids, const Tensor& targets);
  /// Appends max_new_tokens sampled tokens to `prompt` (ids in [0, V)), each
  /// conditioned on at most the last context_length tokens. temperature > 0
  /// scales the logits (temperature 0: always the most likely token, the
  /// first on ties); top_k > 0 keeps only the k most likely tokens.
  /// Deterministic for a given seed. Runs in eval mode without a graph.
  std::vector<int64_t> generate(const std::vector<int64_t>& prompt, int64_t max_new_tokens, double temperature = 1.0,
                                int64_t top_k = 0, uint64_t seed = 0);

  std::string type_name() const override { return "GPT"; }
  std::string extra_repr() const override { return config_.to_string(); }
  const GPTConfig& config() const { return config_; }
  /// Two choices that change how a step runs, not the model (nor its
  /// checkpoints or its numbers beyond rounding): every block's attention
  /// kernel (tiled by default), and whether each block's activations are
  /// recomputed in backward instead of kept (nn/checkpoint.h; the gradients
  /// are bitwise the same).
  void set_attention(AttentionKernel kernel);
  AttentionKernel attention() const;
  bool checkpoint_activations = false;

  std::shared_ptr<EmbeddingComposer> embed;
  std::shared_ptr<ModuleList<TransformerBlock>> blocks;  // parameters "blocks.0.attn.w_q.weight", ...
  std::shared_ptr<LayerNorm> ln_f;
  std::shared_ptr<LMHead> head;
  std::shared_ptr<Dropout> drop;

 private:
  GPTConfig config_;
};

}  // namespace ember::nn
