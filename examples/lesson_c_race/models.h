// lesson_c_race, part 2 of 7: the models. Every one is input vectors -> a
// core -> a Linear head; only the core differs. They compose ember's modules
// and define no backward rule. models.cpp has their forward passes; then each
// model gets the width that gives it the race's parameter budget.
//
// Legend: B batch, T stream length, V the vocabulary, E input vector size,
//         H hidden width, D model dim, w the MLP's window, S source length,
//         U decoder steps.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ember.h"
#include "lesson_c_race/tasks.h"

namespace lesson_c {

enum class Kind { Window, RNN, LSTM, GRU, Seq2seq, Transformer };

/// ids (B, T) -> (B, T, E): a lookup table, drawn from N(0, std²). The
/// race uses std = 1 where ember's Embedding draws N(0, 0.02²) (GPT-2's
/// convention): inputs of unit scale, as a one-hot vector through W_x gives
/// (and PyTorch's nn.Embedding's default), so that a tanh RNN works in the
/// nonlinear range it was made for. Race 1 also runs an RNN with ember's
/// 0.02, to show what the scale changes.
class Input final : public nn::Module {
 public:
  Input(const TaskShape& task, int64_t E, double std, Generator& gen);
  Tensor forward(const Tensor& ids) const;
  std::string type_name() const override { return "Input"; }
  std::shared_ptr<nn::Embedding> table;
};

/// What the training loop needs from every model.
class RaceModel : public nn::Module {
 public:
  /// Logits for every position of the batch's targets: (B, T, classes).
  virtual Tensor logits(const Batch& b) = 0;
  /// The targets those logits answer (the stream's, or the decoder's).
  virtual const Tensor& targets(const Batch& b) const { return b.targets; }
};

/// Position t sees the input vectors of t-w+1 .. t (zeros before the start),
/// concatenated: the fixed window of an MLP. Nothing outside it exists.
class WindowMLP final : public RaceModel {
 public:
  WindowMLP(const TaskShape& task, int64_t w, int64_t E, int64_t H, double std, Generator& gen);
  Tensor logits(const Batch& b) override;
  std::string type_name() const override { return "WindowMLP"; }
  std::shared_ptr<Input> input;
  std::shared_ptr<nn::Linear> fc1, head;

 private:
  int64_t w_;
};

/// input -> an RNN, LSTM or GRU cell over time -> head at every step.
class RecurrentLM final : public RaceModel {
 public:
  RecurrentLM(Kind kind, const TaskShape& task, int64_t E, int64_t H, double std, Generator& gen);
  Tensor logits(const Batch& b) override { return run(b, nullptr); }

  /// The loop of nn::RNN / LSTM / GRU::forward written out, so that every
  /// h_t (and the LSTM's c_t) can be kept with retain_grad() on: after
  /// backward, their .grad() is ∂loss/∂h_t (∂loss/∂c_t).
  Tensor run(const Batch& b, std::vector<Tensor>* keep_h, std::vector<Tensor>* keep_c = nullptr);
  std::string type_name() const override { return "RecurrentLM"; }
  std::shared_ptr<Input> input;
  std::shared_ptr<nn::RNN> rnn;
  std::shared_ptr<nn::LSTM> lstm;
  std::shared_ptr<nn::GRU> gru;
  std::shared_ptr<nn::Linear> head;

 private:
  Kind kind_;
  int64_t H_;
};

/// input + learned positions -> causal pre-LN Transformer blocks ->
/// LayerNorm -> head: nn::GPT's layout with this race's input, an untied head,
/// and positions drawn at the same unit scale as the input.
class TransformerLM final : public RaceModel {
 public:
  TransformerLM(const TaskShape& task, int64_t D, int64_t heads, int64_t layers, double std, Generator& gen);
  Tensor logits(const Batch& b) override;
  std::string type_name() const override { return "TransformerLM"; }
  std::shared_ptr<Input> input;
  std::shared_ptr<nn::LearnedPositionalEmbedding> pos;
  std::shared_ptr<nn::ModuleList<nn::TransformerBlock>> blocks;
  std::shared_ptr<nn::LayerNorm> ln;
  std::shared_ptr<nn::Linear> head;
};

/// Bahdanau's encoder-decoder: a bidirectional GRU encoder gives h_j =
/// [forward state, backward state] for every source position j; the decoder
/// state s, which has read everything written so far, asks AdditiveAttention
/// (Bahdanau's additive score) which h_j to read for the next output:
///   s_i = GRUCell(y_{i-1}, s_{i-1})                      y_{-1} = SEP
///   α_i = softmax_j(vᵀ tanh(W s_i + U h_j)),  context_i = Σ_j α_ij h_j
///   logits_i = head([s_i, context_i])
/// with s_{-1} the backward encoder's last state (it has read the whole
/// source). The context goes to the output only, as in Luong et al. (2015).
/// feedback = true is Bahdanau et al.'s order, the context fed back into the
/// decoder's GRU too (--attention-feedback):
///   α_i from s_{i-1},  s_i = GRUCell([y_{i-1}, context_i], s_{i-1})
/// It reverses as well, but its alignment comes later and softer: the GRU
/// can carry part of what it read, so the decoder need not look as sharply
/// (docs/book/06_sequence_models.md has the numbers).
class Seq2seqAttention final : public RaceModel {
 public:
  Seq2seqAttention(const TaskShape& task, int64_t E, int64_t H, double std, bool feedback, Generator& gen);
  Tensor logits(const Batch& b) override { return run(b).first; }
  const Tensor& targets(const Batch& b) const override { return b.dec_targets; }

  /// -> logits (B, U, classes) and the attention weights α (B, U, S)
  std::pair<Tensor, Tensor> run(const Batch& b);
  std::string type_name() const override { return "Seq2seqAttention"; }
  std::shared_ptr<Input> input;
  std::shared_ptr<nn::GRU> enc_fwd, enc_bwd;
  std::shared_ptr<nn::GRUCell> dec;
  std::shared_ptr<nn::AdditiveAttention> attn;
  std::shared_ptr<nn::Linear> head;

 private:
  bool feedback_;
};

// ---- the budget: one parameter count per task; each model gets the width
//      (H, or D for the Transformer) whose count is nearest to it ----

struct Architecture {               // what does not change with the budget
  int64_t input_dim = 16;           // E of the window, recurrent and encoder-decoder models
  int64_t window = 8;               // w
  int64_t heads = 2, layers = 2;    // the Transformer's
  bool attention_feedback = false;  // the encoder-decoder in Bahdanau's order (see Seq2seqAttention)
};

/// A model kind and the scale of its input table (see Input).
struct Entrant {
  Kind kind;
  double input_std = 1.0;
};

/// "LSTM", "MLP, window of 8", "RNN, inputs x0.02", ...
std::string label(const Entrant& e, const Architecture& a);

/// The model of kind e.kind at the given width (H, or D for the Transformer).
std::shared_ptr<RaceModel> build(const Entrant& e, const TaskShape& task, const Architecture& a, int64_t width,
                                 Generator& gen);

/// The width whose parameter count is nearest to `budget`, counted on a built
/// model (so the count is the modules' own); an error if even the nearest is
/// more than 10% off.
int64_t fit_width(const Entrant& e, const TaskShape& task, const Architecture& a, int64_t budget);

}  // namespace lesson_c
