/// @file
/// The embedding lesson's modules.
///
///   ids (B, T) int64 ──Embedding──▶ (B, T, D) ─┐
///                                               (+) ──▶ (B, T, D)  the Transformer's input
///   positions 0..T-1 ──Positional──▶ (T, D) ───┘  broadcast as (1, T, D)
///
/// and, at the other end of a language model, LMHead: (B, T, D) -> (B, T, V),
/// whose (V, D) weight may be *tied* to the token embedding's (one matrix).
///
/// Legend: B batch, T sequence length, D embedding dim, V vocabulary size,
///         L maximum context length.
#pragma once

#include <optional>

#include "autograd/ops.h"
#include "nn/init.h"
#include "nn/module.h"
#include "nn/quantize.h"
#include "tensor/random.h"

namespace ember::nn {

struct EmbeddingOptions {
  std::optional<int64_t> padding_idx = std::nullopt;  // a row that stays zero and gets no gradient
  DType dtype = kFloat32;
  Generator* generator = nullptr;      // null: the default generator (nn/init.h)
  /// The table's gradient as the rows looked up (Tensor::row_grad()), as
  /// torch.nn.Embedding(sparse=True): an optimizer that understands rows
  /// (optim::SGD) then reads and writes only those rows; any other reader of
  /// .grad() gets the same dense gradient as without it.
  bool sparse = false;
};

/// A table of V learned D-vectors; forward is pure row lookup.
/// Backward scatter-adds grad_out into the rows that were used; other rows get
/// exactly zero, and the padding_idx row (if any) never receives gradient.
///   nn::Embedding tok(65, 128);                              // float32, default generator
///   nn::Embedding tok(65, 128, {.padding_idx = 0, .generator = &gen});
class Embedding : public Module {
 public:
  /// weight ~ normal(0, 0.02) (the padding row, if any, is zero).
  Embedding(int64_t num_embeddings, int64_t embedding_dim, const EmbeddingOptions& options = {});
  /// Wraps existing (V, D) weights (copied); freeze = true makes them untrainable.
  static std::shared_ptr<Embedding> from_pretrained(const Tensor& weights, bool freeze = true,
                                                    std::optional<int64_t> padding_idx = std::nullopt);

  /// ids (*) int64 -> (*, D). Error naming the id, its position and V if an id
  /// is outside [0, V); nothing is modified.
  Tensor forward(const Tensor& ids) const;

  std::string type_name() const override { return "Embedding"; }
  std::string extra_repr() const override;
  int64_t num_embeddings() const { return num_embeddings_; }
  int64_t embedding_dim() const { return embedding_dim_; }
  std::optional<int64_t> padding_idx() const { return padding_idx_; }
  bool sparse() const { return sparse_; }

  /// The table in fewer bits (nn/quantize.h): the parameter "weight"
  /// becomes the buffers "weight" (int8) and "weight_scale"; a lookup reads
  /// the float32 rows they stand for.
  void quantize(const QuantizeOptions& options = {});
  /// The same with a table quantized already (see Linear::use_quantized).
  void use_quantized(std::shared_ptr<QuantizedWeight> q);

  Tensor weight;  // (V, D)
  std::shared_ptr<QuantizedWeight> quantized;  // set by quantize()

 private:
  Embedding(const Tensor& weights, bool freeze, std::optional<int64_t> padding_idx);
  int64_t num_embeddings_, embedding_dim_;
  std::optional<int64_t> padding_idx_;
  bool sparse_ = false;
};

/// The functional form, weight (V, D), ids (*) -> (*, D), is the op
/// ember::embedding (autograd/ops/index.cpp): a row lookup whose backward is
/// index_select's scatter-add.
using ember::embedding;

/// What the composer needs from a positional module.
class PositionalEmbedding : public Module {
 public:
  /// (T, D) vectors for positions start..start+T-1 (a view of the table).
  /// Error naming start, T and L if start + T > L. Decoding with a KV cache
  /// asks for the positions after the cached ones (start = the cache's length).
  virtual Tensor positions(int64_t start, int64_t T) const = 0;
  /// positions(0, T).
  Tensor forward(int64_t T) const { return positions(0, T); }
  /// The same for ids (B, T): uses T = ids.size(1).
  Tensor forward(const Tensor& ids) const;
  virtual int64_t max_length() const = 0;
  virtual int64_t dim() const = 0;

 protected:
  void check_length(int64_t start, int64_t T) const;
};

/// A trainable (L, D) table; row p is the vector of position p. Adds L*D parameters.
class LearnedPositionalEmbedding : public PositionalEmbedding {
 public:
  /// weight ~ normal(0, 0.02)
  LearnedPositionalEmbedding(int64_t max_context_length, int64_t embedding_dim, const InitOptions& options = {});
  Tensor positions(int64_t start, int64_t T) const override;
  int64_t max_length() const override { return max_length_; }
  int64_t dim() const override { return dim_; }
  std::string type_name() const override { return "LearnedPositionalEmbedding"; }
  std::string extra_repr() const override;

  Tensor weight;  // (L, D)

 private:
  int64_t max_length_, dim_;
};

/// The fixed sin/cos table of "Attention Is All You Need", precomputed once
/// (in double, then stored) as a buffer — no parameters:
///   angle(p, i) = p / 10000^(2*(i/2)/D)   (i/2 rounds down)
///   table[p, 2k] = sin(angle), table[p, 2k+1] = cos(angle)
/// With odd D the last column is a sin.
class SinusoidalPositionalEmbedding : public PositionalEmbedding {
 public:
  SinusoidalPositionalEmbedding(int64_t max_context_length, int64_t embedding_dim, DType dtype = kFloat32);
  Tensor positions(int64_t start, int64_t T) const override;
  int64_t max_length() const override { return max_length_; }
  int64_t dim() const override { return dim_; }
  std::string type_name() const override { return "SinusoidalPositionalEmbedding"; }
  std::string extra_repr() const override;

  Tensor table;  // (L, D) buffer

 private:
  int64_t max_length_, dim_;
};

/// token(ids) + positional(T), the positional (T, D) broadcast over the batch.
/// positional may be null (token embedding only).
class EmbeddingComposer : public Module {
 public:
  EmbeddingComposer(std::shared_ptr<Embedding> token, std::shared_ptr<PositionalEmbedding> positional);
  /// ids (B, T) int64 -> (B, T, D). start: the position of ids[:, 0] (0,
  /// or the length of a KV cache the ids continue).
  Tensor forward(const Tensor& ids, int64_t start = 0) const;
  std::string type_name() const override { return "EmbeddingComposer"; }

  std::shared_ptr<Embedding> token;
  std::shared_ptr<PositionalEmbedding> positional;
};

/// The output projection of a language model: hidden (*, D) -> logits (*, V),
/// logits = hidden @ weightᵀ. It either owns its (V, D) weight or shares the
/// token embedding's (weight tying): see tie_weights.
class LMHead : public Module {
 public:
  /// An untied head with its own weight ~ normal(0, 0.02).
  LMHead(int64_t embedding_dim, int64_t vocab_size, const InitOptions& options = {});
  Tensor forward(const Tensor& hidden) const;
  bool is_tied() const { return tied_; }
  /// The head in fewer bits (nn/quantize.h): its own weight quantized into
  /// buffers, or, tied, the embedding's quantized table shared (nothing
  /// registered twice: the table is saved once, with the embedding).
  void quantize(const QuantizeOptions& options, Embedding* tied_to);
  /// An untied head's weight quantized already (see Linear::use_quantized).
  void use_quantized(std::shared_ptr<QuantizedWeight> q);
  std::shared_ptr<QuantizedWeight> quantized;
  std::string type_name() const override { return "LMHead"; }
  std::string extra_repr() const override;

  Tensor weight;  // (V, D): its own, or the embedding's after tie_weights

 private:
  friend void tie_weights(LMHead& head, Embedding& embedding);
  bool tied_ = false;
};

/// Makes head use the embedding's weight tensor itself (one tensor, one .grad).
/// The head's own weight is dropped. Error if the shapes differ or the head is
/// already tied. After tying, a module containing both lists the matrix once.
void tie_weights(LMHead& head, Embedding& embedding);

}  // namespace ember::nn
