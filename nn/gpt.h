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
#include "nn/kv_cache.h"

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
  /// The MLP's GELU: exact (erf, the default), or the tanh form GPT-2 was
  /// trained with ("gelu=tanh" in the text; left out at the default).
  GeluApprox gelu = GeluApprox::None;

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

/// How generate() picks each next token from the logits, in this order (as
/// Hugging Face's generate applies them): divide by the temperature, keep
/// the top_k most likely, keep the smallest set of most likely tokens whose
/// probability sums to at least top_p (nucleus sampling), then draw one
/// token from what is left with the generator seeded by `seed`.
struct SampleOptions {
  double temperature = 1.0;  // 0: greedy, always the most likely token (the first on ties)
  int64_t top_k = 0;         // 0: no limit
  double top_p = 1.0;        // in (0, 1]; 1: no limit
  uint64_t seed = 0;
  std::vector<int64_t> stop = {};  // generation ends after any of these tokens (which is kept)
  bool cache = true;          // decode with a KV cache (false: recompute the context every token)
};

/// One token drawn from logits (V) as SampleOptions says; `step` only
/// names the step in an error (a NaN or +inf logit). Error naming the value
/// for a temperature, top_k or top_p out of range.
int64_t sample_next(const Tensor& logits, const SampleOptions& options, Generator& gen, int64_t step = 0);

class GPT : public Module {
 public:
  explicit GPT(const GPTConfig& config);
  /// ids (B, T) int64, T <= context_length -> logits (B, T, V)
  Tensor forward(const Tensor& ids);
  /// The logits (B, T, V) of the T tokens after the cache.length() that
  /// `cache` holds (prefill: the prompt into an empty cache; decode: one
  /// token at a time), appending their keys and values and moving the
  /// cache's length on by T. Equal to forward() of every token so far at
  /// those rows, within rounding (nn/kv_cache.h). Inference only (an error
  /// under grad mode); an error naming the lengths when cache.length() + T
  /// exceeds context_length, or for a cache made for another model.
  Tensor forward(const Tensor& ids, KVCache& cache);
  /// An empty cache for this model: capacity context_length, one buffer
  /// pair per block, in the model's dtype.
  KVCache make_cache(int64_t batch = 1) const;
  /// mean cross-entropy of forward(ids) against targets (B, T)
  Tensor loss(const Tensor& ids, const Tensor& targets);
  /// Appends up to max_new_tokens tokens to `prompt` (ids in [0, V)), each
  /// drawn by sample_next from the logits of the tokens before it, and
  /// returns prompt + the new tokens (ending at the first stop token).
  /// With options.cache, the prompt is prefilled once and each token then
  /// decoded with the cache while the text fits in context_length; past it,
  /// a sliding window: each token is conditioned on the last context_length
  /// tokens, recomputed (positions are absolute, so a window that slides
  /// changes every cached position). Deterministic for a given seed. Runs
  /// in eval mode without a graph, and restores the mode after.
  std::vector<int64_t> generate(const std::vector<int64_t>& prompt, int64_t max_new_tokens,
                                const SampleOptions& options);
  /// generate() with temperature, top_k and seed only.
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
