#include "nn/embedding.h"

#include <cmath>
#include <sstream>

#include "autograd/ops.h"
#include "nn/init.h"
#include "tensor/factory.h"
#include "tensor/kernels.h"

namespace ember::nn {

// ---- Embedding ----
Embedding::Embedding(int64_t V, int64_t D, const EmbeddingOptions& o)
    : num_embeddings_(V), embedding_dim_(D), padding_idx_(o.padding_idx), sparse_(o.sparse) {
  EMBER_CHECK(V > 0 && D > 0, "Embedding", "num_embeddings " << V << " and embedding_dim " << D << " must be positive");
  if (padding_idx_) padding_idx_ = padding_index(*padding_idx_, {V, D}, "Embedding");
  Tensor w = empty({V, D}, o.dtype, "Embedding");
  init::normal_(w, 0.0, 0.02, init::generator(o.generator));  // the lesson's init
  if (padding_idx_) kernel::fill_(kernel::select(w, 0, *padding_idx_), 0.0);
  weight = register_parameter("weight", w);
}

Embedding::Embedding(const Tensor& weights, bool freeze, std::optional<int64_t> padding_idx)
    : num_embeddings_(weights.size(0)), embedding_dim_(weights.size(1)), padding_idx_(padding_idx) {
  if (padding_idx_) padding_idx_ = padding_index(*padding_idx_, weights.shape(), "Embedding");
  Tensor w = kernel::to(weights, weights.dtype());  // an independent contiguous copy
  weight = register_parameter("weight", w, !freeze);
}

std::shared_ptr<Embedding> Embedding::from_pretrained(const Tensor& weights, bool freeze, std::optional<int64_t> padding_idx) {
  EMBER_CHECK(weights.dim() == 2 && weights.is_floating_point(), "Embedding::from_pretrained",
              "weights must be a floating (V, D) tensor, got " << dtype_name(weights.dtype()) << " of shape "
                                                               << shape_str(weights.shape()));
  return std::shared_ptr<Embedding>(new Embedding(weights, freeze, padding_idx));
}

Tensor Embedding::forward(const Tensor& ids) const {
  ModuleScope scope(*this);
  if (quantized) quantized->dequantized();  // follows the buffers (a load)
  return embedding(weight, ids, padding_idx_, sparse_);
}

void Embedding::quantize(const QuantizeOptions& options) {
  EMBER_CHECK(!quantized, "Embedding", "the table is quantized already (" << quantized->options().to_string() << ")");
  use_quantized(std::make_shared<QuantizedWeight>(weight, options, "Embedding"));
}

void Embedding::use_quantized(std::shared_ptr<QuantizedWeight> q) {
  EMBER_CHECK(!quantized, "Embedding", "the table is quantized already (" << quantized->options().to_string() << ")");
  EMBER_CHECK(q && q->values.shape() == weight.shape(), "Embedding",
              "a quantized table " << (q ? shape_str(q->values.shape()) : "(none)") << " for the table " << shape_str(weight.shape()));
  parameter_to_buffers("weight", q->buffers());
  weight = q->dequantized();
  quantized = std::move(q);
}

std::string Embedding::extra_repr() const {
  std::ostringstream os;
  os << num_embeddings_ << ", " << embedding_dim_;
  if (padding_idx_) os << ", padding_idx=" << *padding_idx_;
  if (sparse_) os << ", sparse=True";
  return os.str();
}

// ---- positional embeddings ----
Tensor PositionalEmbedding::forward(const Tensor& ids) const {
  EMBER_CHECK(ids.dim() == 2, type_name(), "ids must be (B, T), got shape " << shape_str(ids.shape()));
  return forward(ids.size(1));
}

void PositionalEmbedding::check_length(int64_t start, int64_t T) const {
  EMBER_CHECK(start >= 0 && T >= 0, type_name(), "start " << start << " and sequence length T = " << T << " must be >= 0");
  if (start == 0)
    EMBER_CHECK(T <= max_length(), type_name(),
                "sequence length T = " << T << " exceeds the maximum context length L = " << max_length()
                                       << " (the table has rows for positions 0.." << max_length() - 1 << ")");
  EMBER_CHECK(T <= max_length() - start, type_name(),
              "positions " << start << ".." << start + T - 1 << " (start " << start << ", T = " << T
                           << ") exceed the maximum context length L = " << max_length()
                           << " (the table has rows for positions 0.." << max_length() - 1 << ")");
}

LearnedPositionalEmbedding::LearnedPositionalEmbedding(int64_t L, int64_t D, const InitOptions& o)
    : max_length_(L), dim_(D) {
  EMBER_CHECK(L > 0 && D > 0, type_name(), "max_context_length " << L << " and embedding_dim " << D << " must be positive");
  Tensor w = empty({L, D}, o.dtype, "LearnedPositionalEmbedding");
  init::normal_(w, 0.0, 0.02, init::generator(o.generator));
  weight = register_parameter("weight", w);
}

// (T, D): rows 0..T-1 of the table, a view. Looking up positions 0..T-1 is a
// contiguous slice, so no index tensor is needed; the gradient lands in rows
// 0..T-1 only.
Tensor LearnedPositionalEmbedding::positions(int64_t start, int64_t T) const {
  ModuleScope scope(*this);
  check_length(start, T);
  return narrow(weight, 0, start, T);
}

std::string LearnedPositionalEmbedding::extra_repr() const {
  return std::to_string(max_length_) + ", " + std::to_string(dim_);
}

SinusoidalPositionalEmbedding::SinusoidalPositionalEmbedding(int64_t L, int64_t D, DType dtype)
    : max_length_(L), dim_(D) {
  EMBER_CHECK(L > 0 && D > 0, type_name(), "max_context_length " << L << " and embedding_dim " << D << " must be positive");
  EMBER_CHECK(is_floating(dtype), type_name(), "dtype must be floating, got " << dtype_name(dtype));
  Tensor t64 = empty({L, D}, kFloat64);
  double* p = t64.data_ptr<double>();
  for (int64_t pos = 0; pos < L; ++pos) {
    for (int64_t i = 0; i < D; ++i) {
      double angle = static_cast<double>(pos) / std::pow(10000.0, static_cast<double>(2 * (i / 2)) / static_cast<double>(D));
      p[pos * D + i] = i % 2 == 0 ? std::sin(angle) : std::cos(angle);
    }
  }
  table = register_buffer("table", ember::to(t64, dtype));
}

Tensor SinusoidalPositionalEmbedding::positions(int64_t start, int64_t T) const {
  ModuleScope scope(*this);
  check_length(start, T);
  return slice(table, 0, start, start + T);  // a constant: no graph (the table needs no grad)
}

std::string SinusoidalPositionalEmbedding::extra_repr() const {
  return std::to_string(max_length_) + ", " + std::to_string(dim_);
}

// ---- composer ----
EmbeddingComposer::EmbeddingComposer(std::shared_ptr<Embedding> tok, std::shared_ptr<PositionalEmbedding> pos)
    : token(std::move(tok)), positional(std::move(pos)) {
  EMBER_CHECK(token != nullptr, "EmbeddingComposer", "a token embedding is required");
  register_module("token", token);
  if (positional) {
    EMBER_CHECK(positional->dim() == token->embedding_dim(), "EmbeddingComposer",
                "token embedding dim " << token->embedding_dim() << " differs from the positional dim "
                                       << positional->dim() << "; they are added, so they must match");
    register_module("positional", positional);
  }
}

// ids (B, T) -> token (B, T, D) + positional (T, D) broadcast as (1, T, D)
Tensor EmbeddingComposer::forward(const Tensor& ids, int64_t start) const {
  ModuleScope scope(*this);
  EMBER_CHECK(ids.dim() == 2, "EmbeddingComposer", "ids must be (B, T), got shape " << shape_str(ids.shape()));
  Tensor x = token->forward(ids);
  if (!positional) return x;
  return x + positional->positions(start, ids.size(1));
}

// ---- LM head and weight tying ----
LMHead::LMHead(int64_t D, int64_t V, const InitOptions& o) {
  EMBER_CHECK(V > 0 && D > 0, "LMHead", "embedding_dim " << D << " and vocab_size " << V << " must be positive");
  Tensor w = empty({V, D}, o.dtype, "LMHead");
  init::normal_(w, 0.0, 0.02, init::generator(o.generator));
  weight = register_parameter("weight", w);
}

// hidden (*, D) @ weightᵀ (D, V) -> logits (*, V)
void LMHead::quantize(const QuantizeOptions& options, Embedding* tied_to) {
  EMBER_CHECK(!quantized, "LMHead", "the head is quantized already (" << quantized->options().to_string() << ")");
  EMBER_CHECK(tied_ == (tied_to != nullptr), "LMHead",
              (tied_ ? "the head is tied: quantize it with the embedding it shares" : "the head is not tied to an embedding"));
  if (tied_to) {
    EMBER_CHECK(tied_to->quantized, "LMHead", "quantize the tied embedding first");
    quantized = tied_to->quantized;
    parameter_to_buffers("weight", {});  // the table is registered (and saved) once, by the embedding
    weight = tied_to->weight;
    return;
  }
  use_quantized(std::make_shared<QuantizedWeight>(weight, options, "LMHead"));
}

void LMHead::use_quantized(std::shared_ptr<QuantizedWeight> q) {
  EMBER_CHECK(!quantized && !tied_, "LMHead", (tied_ ? "the head is tied: quantize it with the embedding it shares" : "the head is quantized already"));
  EMBER_CHECK(q && q->values.shape() == weight.shape(), "LMHead",
              "a quantized weight " << (q ? shape_str(q->values.shape()) : "(none)") << " for the weight " << shape_str(weight.shape()));
  parameter_to_buffers("weight", q->buffers());
  weight = q->dequantized();
  quantized = std::move(q);
}

Tensor LMHead::forward(const Tensor& hidden) const {
  ModuleScope scope(*this);
  if (quantized) return quantized->linear(hidden, Tensor(), "LMHead");
  EMBER_CHECK(hidden.dim() >= 1 && hidden.size(-1) == weight.size(1), "LMHead",
              "hidden has shape " << shape_str(hidden.shape()) << " but the head expects a last dim of "
                                  << weight.size(1) << " (weight " << shape_str(weight.shape()) << ")");
  return matmul(hidden, transpose(weight, 0, 1));
}

std::string LMHead::extra_repr() const {
  return "in=" + std::to_string(weight.size(1)) + ", out=" + std::to_string(weight.size(0)) + (tied_ ? ", tied" : "");
}

void tie_weights(LMHead& head, Embedding& embedding) {
  EMBER_CHECK(!head.tied_, "tie_weights", "the head is already tied");
  EMBER_CHECK(head.weight.shape() == embedding.weight.shape() && head.weight.dtype() == embedding.weight.dtype(),
              "tie_weights",
              "head weight " << shape_str(head.weight.shape()) << " " << dtype_name(head.weight.dtype())
                             << " and embedding weight " << shape_str(embedding.weight.shape()) << " "
                             << dtype_name(embedding.weight.dtype()) << " must match");
  head.replace_parameter("weight", embedding.weight);
  head.weight = embedding.weight;  // the same TensorImpl: one tensor, one .grad
  head.tied_ = true;
}

}  // namespace ember::nn
