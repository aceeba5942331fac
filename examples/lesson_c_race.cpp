// Lesson C, measured: a fixed window, an RNN, an LSTM, a GRU, an
// encoder-decoder with attention and a small Transformer race on the same
// tasks with the same budget, and the pictures show who remembers what.
//
//   lesson_c_race                  # the full race: pictures and summary.txt in out/lesson_c/
//   lesson_c_race --quick --check  # the short race of the test suite, its facts checked
//
// Three races. Every model is built from ember's modules with ember's own
// initialisation (only the input lookup tables are drawn at unit scale, see
// Input), gets the same number of parameters (within 10%), and is trained
// with Adam at one learning rate on the very same batches (the same tokens):
//
//   recall   a stream of symbols, one of them marked; at the end, name the
//            marked symbol. It sits k steps back, k = 1..K drawn log-uniform
//            (every scale of distance equally common). The answer is known,
//            so accuracy can be measured at each k.
//   reverse  read L symbols, write them backwards: a sequence-to-sequence
//            task, where the encoder-decoder's attention should learn to look
//            at source position L-1-i when it writes output i.
//   text     next-character prediction on tinyshakespeare.
//
// and three measurements: the gradient ‖∂loss/∂h_t‖ that reaches each
// hidden state of the recurrent models (backward() with retain_grad), at
// initialisation and after training; the wall time of one training step
// against the sequence length T, one model at a time; and the op calls of
// that step (the inspect/ profiler), which is what "one after another"
// means. Then it checks the facts the pictures should show (--check: exit
// status 1 if one did not happen) and prints the summary table.
//
// Legend: B batch, T stream length, C symbols of the synthetic tasks, V the
//         vocabulary, E input vector size, H hidden width, D model dim,
//         K longest recall distance, L reverse length, w the MLP's window.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "common/program.h"
#include "ember.h"
#include "inspect/inspect.h"
#include "plot/plot.h"

using namespace ember;

namespace {

constexpr int64_t kSymbols = 8;    // C: the synthetic tasks' alphabet
constexpr int64_t kIgnore = -100;  // cross_entropy's ignore_index: a position that is not scored

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

// s and spaces up to `width` characters (at least one).
std::string padded(const std::string& s, size_t width) { return s + std::string(s.size() < width ? width - s.size() : 1, ' '); }

// Generator streams, one per purpose: a part of the program that draws more
// or fewer numbers never shifts the numbers another part draws.
enum Stream : uint64_t {
  kInitStream = 1,     // + the entrant's index: each model's initial weights
  kRecallData = 100,   // the training batches of race 1 (the same for every model)
  kRecallProbe,        // the batch the gradients are measured on
  kRecallEval,         // the test batches at each distance
  kRecallReach,        // the streams that measure the reach during training
  kReverseData,
  kReverseEval,
  kTextData,
  kTextVal,
  kTiming,
};

// =====================================================================
// 1. The tasks. A batch is a stream of symbols ids (B, T) with the answer
//    at the scored positions of targets (B, T) and kIgnore elsewhere; the
//    reverse task also carries the same examples split into source and
//    decoder input for the encoder-decoder.
// =====================================================================

struct Batch {
  Tensor ids, targets;              // (B, T) each
  Tensor src, dec_in, dec_targets;  // reverse only: (B, L) each
};

// Recall. Ids 0..C-1 are the symbols, C..2C-1 the same symbols marked;
// one position per stream is marked. The first `prefix` positions never
// are, so the marked symbol is never the first input (where a recurrent
// state is still zero). fixed_k = 0 draws a distance per row, log-uniform
// in 1..K.
//   T = prefix + K + 1; scored: the last position; answer: the marked symbol
Batch recall_batch(int64_t B, int64_t K, int64_t prefix, Generator& gen, int64_t fixed_k = 0) {
  const int64_t T = prefix + K + 1;
  std::vector<int64_t> ids(B * T), targets(B * T, kIgnore);
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t t = 0; t < T; ++t) ids[b * T + t] = static_cast<int64_t>(gen.next_below(kSymbols));
    // floor(exp(u ln(K + 1))) for u uniform in [0, 1): P(k) ~ log((k+1)/k), every octave equally likely
    const int64_t k = fixed_k > 0 ? fixed_k
                                  : std::clamp<int64_t>(static_cast<int64_t>(std::exp(gen.next_double() * std::log(K + 1.0))), 1, K);
    targets[b * T + T - 1] = ids[b * T + T - 1 - k];
    ids[b * T + T - 1 - k] += kSymbols;  // the mark
  }
  return {tensor(ids, {B, T}), tensor(targets, {B, T}), {}, {}, {}};
}

// Reverse, symbols 0..C-1 and a separator C. One stream for the stream
// models, the same example split for the encoder-decoder:
//   stream   s_0 .. s_{L-1} SEP r_0 .. r_{L-2}   scored at L..2L-1 with r_0..r_{L-1}
//   src      s_0 .. s_{L-1}
//   dec_in   SEP r_0 .. r_{L-2}                  dec_targets r_0 .. r_{L-1},  r_i = s_{L-1-i}
// Both read 2L symbols per example. In the stream, r_i is due at position
// L+i and its source s_{L-1-i} is 2i+1 steps back.
Batch reverse_batch(int64_t B, int64_t L, Generator& gen) {
  const int64_t sep = kSymbols, T = 2 * L;
  std::vector<int64_t> ids(B * T), targets(B * T, kIgnore), src(B * L), dec_in(B * L), dec_targets(B * L);
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t j = 0; j < L; ++j) src[b * L + j] = ids[b * T + j] = static_cast<int64_t>(gen.next_below(kSymbols));
    ids[b * T + L] = sep;
    for (int64_t i = 0; i < L; ++i) {
      const int64_t r = src[b * L + L - 1 - i];
      targets[b * T + L + i] = dec_targets[b * L + i] = r;
      if (i + 1 < L) ids[b * T + L + 1 + i] = r;  // the stream reads what it wrote (teacher forcing)
      dec_in[b * L + i] = i == 0 ? sep : src[b * L + L - i];
    }
  }
  return {tensor(ids, {B, T}), tensor(targets, {B, T}), tensor(src, {B, L}), tensor(dec_in, {B, L}),
          tensor(dec_targets, {B, L})};
}

// What a model needs to know about a task.
struct TaskShape {
  int64_t vocab;    // ids are in [0, vocab)
  int64_t classes;  // the head's outputs
  int64_t context;  // the longest stream (the Transformer's positional table)
};

// =====================================================================
// 2. The models: input vectors -> a core -> a Linear head; only the core
//    differs. They compose ember's modules and define no backward rule.
// =====================================================================

enum class Kind { Window, RNN, LSTM, GRU, Seq2seq, Transformer };

// ids (B, T) -> (B, T, E): a lookup table, drawn from N(0, std²). The
// race uses std = 1 where ember's Embedding draws N(0, 0.02²) (GPT-2's
// convention): inputs of unit scale, as a one-hot vector through W_x gives
// (and PyTorch's nn.Embedding's default), so that a tanh RNN works in the
// nonlinear range it was made for. Race 1 also runs an RNN with ember's
// 0.02, to show what the scale changes.
class Input final : public nn::Module {
 public:
  Input(const TaskShape& task, int64_t E, double std, Generator& gen) {
    table = register_module("table", std::make_shared<nn::Embedding>(task.vocab, E, nn::EmbeddingOptions{.generator = &gen}));
    nn::init::normal_(table->weight, 0.0, std, gen);
  }
  Tensor forward(const Tensor& ids) const {
    nn::ModuleScope scope(*this);
    return table->forward(ids);
  }
  std::string type_name() const override { return "Input"; }
  std::shared_ptr<nn::Embedding> table;
};

// What the training loop needs from every model.
class RaceModel : public nn::Module {
 public:
  /// Logits for every position of the batch's targets: (B, T, classes).
  virtual Tensor logits(const Batch& b) = 0;
  /// The targets those logits answer (the stream's, or the decoder's).
  virtual const Tensor& targets(const Batch& b) const { return b.targets; }
};

// Position t sees the input vectors of t-w+1 .. t (zeros before the start),
// concatenated: the fixed window of an MLP. Nothing outside it exists.
class WindowMLP final : public RaceModel {
 public:
  WindowMLP(const TaskShape& task, int64_t w, int64_t E, int64_t H, double std, Generator& gen) : w_(w) {
    const nn::LinearOptions o{.generator = &gen};
    input = register_module("input", std::make_shared<Input>(task, E, std, gen));
    fc1 = register_module("fc1", std::make_shared<nn::Linear>(w * E, H, o));
    head = register_module("head", std::make_shared<nn::Linear>(H, task.classes, o));
  }
  Tensor logits(const Batch& b) override {
    nn::ModuleScope scope(*this);
    Tensor x = input->forward(b.ids);  // (B, T, E)
    const int64_t B = x.size(0), T = x.size(1), E = x.size(2);
    Tensor padded = cat({zeros({B, w_ - 1, E}), x}, 1);  // (B, w-1+T, E)
    std::vector<Tensor> views;                           // view j: the input w-1-j steps back
    for (int64_t j = 0; j < w_; ++j) views.push_back(padded.narrow(1, j, T));
    return head->forward(tanh(fc1->forward(cat(views, 2))));  // (B, T, w*E) -> (B, T, H) -> (B, T, classes)
  }
  std::string type_name() const override { return "WindowMLP"; }
  std::shared_ptr<Input> input;
  std::shared_ptr<nn::Linear> fc1, head;

 private:
  int64_t w_;
};

// input -> an RNN, LSTM or GRU cell over time -> head at every step.
class RecurrentLM final : public RaceModel {
 public:
  RecurrentLM(Kind kind, const TaskShape& task, int64_t E, int64_t H, double std, Generator& gen) : kind_(kind), H_(H) {
    const nn::InitOptions o{.generator = &gen};
    input = register_module("input", std::make_shared<Input>(task, E, std, gen));
    if (kind == Kind::RNN) rnn = register_module("rnn", std::make_shared<nn::RNN>(E, H, o));
    if (kind == Kind::LSTM) lstm = register_module("lstm", std::make_shared<nn::LSTM>(E, H, o));
    if (kind == Kind::GRU) gru = register_module("gru", std::make_shared<nn::GRU>(E, H, o));
    head = register_module("head", std::make_shared<nn::Linear>(H, task.classes, nn::LinearOptions{.generator = &gen}));
  }
  Tensor logits(const Batch& b) override { return run(b, nullptr); }

  /// The loop of nn::RNN / LSTM / GRU::forward written out, so that every
  /// h_t (and the LSTM's c_t) can be kept with retain_grad() on: after
  /// backward, their .grad() is ∂loss/∂h_t (∂loss/∂c_t).
  Tensor run(const Batch& b, std::vector<Tensor>* keep_h, std::vector<Tensor>* keep_c = nullptr) {
    nn::ModuleScope scope(*this);
    Tensor x = input->forward(b.ids);  // (B, T, E)
    const int64_t B = x.size(0), T = x.size(1);
    Tensor h = zeros({B, H_}), c = zeros({B, H_});
    std::vector<Tensor> hs;
    for (int64_t t = 0; t < T; ++t) {
      const Tensor x_t = x.select(1, t);
      if (kind_ == Kind::RNN) h = rnn->cell->forward(x_t, h);
      if (kind_ == Kind::GRU) h = gru->cell->forward(x_t, h);
      if (kind_ == Kind::LSTM) {
        const nn::LSTMState s = lstm->cell->forward(x_t, {h, c});
        h = s.h;
        c = s.c;
      }
      if (keep_h) {
        h.retain_grad();
        keep_h->push_back(h);
      }
      if (keep_c && kind_ == Kind::LSTM) {
        c.retain_grad();
        keep_c->push_back(c);
      }
      hs.push_back(h);
    }
    return head->forward(stack(hs, 1));  // (B, T, H) -> (B, T, classes)
  }
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

// input + learned positions -> causal pre-LN Transformer blocks ->
// LayerNorm -> head: nn::GPT's layout with this race's input, an untied head,
// and positions drawn at the same unit scale as the input.
class TransformerLM final : public RaceModel {
 public:
  TransformerLM(const TaskShape& task, int64_t D, int64_t heads, int64_t layers, double std, Generator& gen) {
    input = register_module("input", std::make_shared<Input>(task, D, std, gen));
    pos = register_module("pos", std::make_shared<nn::LearnedPositionalEmbedding>(task.context, D, nn::InitOptions{.generator = &gen}));
    nn::init::normal_(pos->weight, 0.0, std, gen);
    blocks = register_module("blocks", std::make_shared<nn::ModuleList<nn::TransformerBlock>>());
    for (int64_t l = 0; l < layers; ++l)
      blocks->push_back(std::make_shared<nn::TransformerBlock>(D, heads, nn::TransformerBlockOptions{.causal = true, .generator = &gen}));
    ln = register_module("ln", std::make_shared<nn::LayerNorm>(D));
    head = register_module("head", std::make_shared<nn::Linear>(D, task.classes, nn::LinearOptions{.generator = &gen}));
  }
  Tensor logits(const Batch& b) override {
    nn::ModuleScope scope(*this);
    Tensor x = input->forward(b.ids) + pos->forward(b.ids.size(1));  // (B, T, D) + (T, D)
    for (auto& block : *blocks) x = block->forward(x);
    return head->forward(ln->forward(x));
  }
  std::string type_name() const override { return "TransformerLM"; }
  std::shared_ptr<Input> input;
  std::shared_ptr<nn::LearnedPositionalEmbedding> pos;
  std::shared_ptr<nn::ModuleList<nn::TransformerBlock>> blocks;
  std::shared_ptr<nn::LayerNorm> ln;
  std::shared_ptr<nn::Linear> head;
};

// Bahdanau's encoder-decoder: a bidirectional GRU encoder gives h_j =
// [forward state, backward state] for every source position j; the decoder
// state s, which has read everything written so far, asks AdditiveAttention
// (Bahdanau's additive score) which h_j to read for the next output:
//   s_i = GRUCell(y_{i-1}, s_{i-1})                      y_{-1} = SEP
//   α_i = softmax_j(vᵀ tanh(W s_i + U h_j)),  context_i = Σ_j α_ij h_j
//   logits_i = head([s_i, context_i])
// with s_{-1} the backward encoder's last state (it has read the whole
// source). The context goes to the output only, as in Luong et al. (2015).
// feedback = true is Bahdanau et al.'s order, the context fed back into the
// decoder's GRU too (--attention-feedback):
//   α_i from s_{i-1},  s_i = GRUCell([y_{i-1}, context_i], s_{i-1})
// It reverses as well, but its alignment comes later and softer: the GRU
// can carry part of what it read, so the decoder need not look as sharply
// (the README has the numbers).
class Seq2seqAttention final : public RaceModel {
 public:
  Seq2seqAttention(const TaskShape& task, int64_t E, int64_t H, double std, bool feedback, Generator& gen)
      : feedback_(feedback) {
    const nn::InitOptions o{.generator = &gen};
    input = register_module("input", std::make_shared<Input>(task, E, std, gen));  // shared by source and decoder
    enc_fwd = register_module("enc_fwd", std::make_shared<nn::GRU>(E, H, o));
    enc_bwd = register_module("enc_bwd", std::make_shared<nn::GRU>(E, H, o));
    dec = register_module("dec", std::make_shared<nn::GRUCell>(feedback ? E + 2 * H : E, H, o));
    attn = register_module("attn", std::make_shared<nn::AdditiveAttention>(H, 2 * H, H, o));
    head = register_module("head", std::make_shared<nn::Linear>(3 * H, task.classes, nn::LinearOptions{.generator = &gen}));
  }
  Tensor logits(const Batch& b) override { return run(b).first; }
  const Tensor& targets(const Batch& b) const override { return b.dec_targets; }

  /// -> logits (B, U, classes) and the attention weights α (B, U, S)
  std::pair<Tensor, Tensor> run(const Batch& b) {
    nn::ModuleScope scope(*this);
    const int64_t S = b.src.size(1), U = b.dec_in.size(1);
    Tensor xs = input->forward(b.src);  // (B, S, E)
    std::vector<int64_t> backwards(S);
    for (int64_t j = 0; j < S; ++j) backwards[j] = S - 1 - j;
    const Tensor flip = tensor(backwards);
    Tensor h_fwd = enc_fwd->forward(xs).first;                                     // (B, S, H)
    auto [h_bwd_flipped, last_bwd] = enc_bwd->forward(index_select(xs, 1, flip));  // read from the end
    Tensor h = cat({h_fwd, index_select(h_bwd_flipped, 1, flip)}, 2);              // (B, S, 2H), in source order
    Tensor s = last_bwd;                                                           // (B, H)
    Tensor y = input->forward(b.dec_in);                                           // (B, U, E): SEP r_0 .. r_{U-2}
    std::vector<Tensor> logits, weights;
    for (int64_t i = 0; i < U; ++i) {
      if (!feedback_) s = dec->forward(y.select(1, i), s);
      nn::Attention a = attn->forward(s, h);  // context (B, 2H), α (B, S)
      if (feedback_) s = dec->forward(cat({y.select(1, i), a.output}, 1), s);
      logits.push_back(head->forward(cat({s, a.output}, 1)));
      weights.push_back(a.weights);
    }
    return {stack(logits, 1), stack(weights, 1)};
  }
  std::string type_name() const override { return "Seq2seqAttention"; }
  std::shared_ptr<Input> input;
  std::shared_ptr<nn::GRU> enc_fwd, enc_bwd;
  std::shared_ptr<nn::GRUCell> dec;
  std::shared_ptr<nn::AdditiveAttention> attn;
  std::shared_ptr<nn::Linear> head;

 private:
  bool feedback_;
};

// =====================================================================
// 3. The budget: one parameter count per task; each model gets the width
//    (H, or D for the Transformer) whose count is nearest to it.
// =====================================================================

struct Architecture {  // what does not change with the budget
  int64_t input_dim = 16;         // E of the window, recurrent and encoder-decoder models
  int64_t window = 8;             // w
  int64_t heads = 2, layers = 2;  // the Transformer's
  bool attention_feedback = false;  // the encoder-decoder in Bahdanau's order (see Seq2seqAttention)
};

// A model kind and the scale of its input table (see Input).
struct Entrant {
  Kind kind;
  double input_std = 1.0;
};

std::string label(const Entrant& e, const Architecture& a) {
  std::string s = "?";
  switch (e.kind) {
    case Kind::Window: s = "MLP, window of " + std::to_string(a.window); break;
    case Kind::RNN: s = "RNN"; break;
    case Kind::LSTM: s = "LSTM"; break;
    case Kind::GRU: s = "GRU"; break;
    case Kind::Seq2seq: s = a.attention_feedback ? "encoder-decoder, context fed back" : "encoder-decoder + attention"; break;
    case Kind::Transformer: s = "Transformer"; break;
  }
  return e.input_std == 1.0 ? s : s + ", inputs x" + fmt("%g", e.input_std);
}

std::shared_ptr<RaceModel> build(const Entrant& e, const TaskShape& task, const Architecture& a, int64_t width,
                                 Generator& gen) {
  switch (e.kind) {
    case Kind::Window: return std::make_shared<WindowMLP>(task, a.window, a.input_dim, width, e.input_std, gen);
    case Kind::RNN:
    case Kind::LSTM:
    case Kind::GRU: return std::make_shared<RecurrentLM>(e.kind, task, a.input_dim, width, e.input_std, gen);
    case Kind::Seq2seq:
      return std::make_shared<Seq2seqAttention>(task, a.input_dim, width, e.input_std, a.attention_feedback, gen);
    case Kind::Transformer: return std::make_shared<TransformerLM>(task, width, a.heads, a.layers, e.input_std, gen);
  }
  EMBER_FAIL("lesson_c_race", "unknown model kind");
}

// The width whose parameter count is nearest to `budget`, counted on a built
// model (so the count is the modules' own); an error if even the nearest is
// more than 10% off.
int64_t fit_width(const Entrant& e, const TaskShape& task, const Architecture& a, int64_t budget) {
  const int64_t step = e.kind == Kind::Transformer ? a.heads : 1;  // heads must divide D
  int64_t best = step, best_gap = INT64_MAX;
  for (int64_t w = step; w <= 4096; w += step) {
    Generator scratch(0);
    const int64_t gap = build(e, task, a, w, scratch)->num_parameters() - budget;
    if (std::llabs(gap) < best_gap) {
      best = w;
      best_gap = std::llabs(gap);
    }
    if (gap > 0) break;  // the count grows with the width
  }
  EMBER_CHECK(best_gap * 10 <= budget, "lesson_c_race",
              label(e, a) << ": no width gives a parameter count within 10% of the budget " << budget);
  return best;
}

// =====================================================================
// 4. Training and measuring.
// =====================================================================

struct Schedule {
  int64_t steps, batch;
  double lr, clip = 1.0;
};

struct Result {
  Entrant entrant{Kind::RNN};
  std::string label;
  int64_t width = 0, params = 0;
  std::vector<double> loss;                         // the training loss of every step's batch (fresh data)
  std::vector<std::pair<int64_t, double>> val;      // text: (step, validation loss), from step 0
  double seconds = 0;                               // wall time of the training (validation left out)
  std::vector<double> accuracy;                     // recall: [k - 1]; reverse: [output position i]
  std::vector<std::pair<int64_t, double>> reach;    // recall: (step, the distance it recalls up to)
  double alignment = NAN;                           // reverse, attention: fraction of argmax_j α_ij = L-1-i
  std::vector<double> heat;                         // reverse, attention: α of one example, (L, L)
  std::vector<int64_t> heat_src;                    // ... and its source symbols
  std::vector<double> grad_init, grad_trained;      // recall, recurrent: [distance d] ‖∂ℓ/∂h‖ / value at d = 0
  std::vector<double> grad_c_init, grad_c_trained;  // the same for the LSTM's cell state c_t
  std::vector<double> ms_per_step, ops_per_step;    // timing: [index of T]
  bool causal = true;                               // no output changed when later inputs did
};

// One optimizer update on one batch; returns the batch's loss.
double train_step(RaceModel& m, optim::Optimizer& opt, const Batch& b, double clip) {
  Tensor loss = cross_entropy(m.logits(b), m.targets(b), Reduction::Mean, kIgnore);
  opt.zero_grad();
  loss.backward();
  optim::clip_grad_norm_(m.parameters(), clip);
  opt.step();
  return loss.item<double>();
}

// Trains on next(data) for every step; `every` (if given) runs at step 0,
// every `every_n` steps and at the end (text: the validation loss).
void train_model(RaceModel& m, Result& r, const Schedule& s, const std::function<Batch(Generator&)>& next,
                 Generator data, const std::function<void(int64_t)>& every = nullptr, int64_t every_n = 0) {
  optim::Adam opt(m.parameters(), s.lr);
  if (every) every(0);
  const auto t0 = std::chrono::steady_clock::now();
  double paused = 0;
  for (int64_t step = 1; step <= s.steps; ++step) {
    r.loss.push_back(train_step(m, opt, next(data), s.clip));
    EMBER_CHECK(std::isfinite(r.loss.back()), "lesson_c_race",
                r.label << ": the loss became " << r.loss.back() << " at step " << step);
    if (every && (step % every_n == 0 || step == s.steps)) {
      const auto p0 = std::chrono::steady_clock::now();
      every(step);
      paused += std::chrono::duration<double>(std::chrono::steady_clock::now() - p0).count();
    }
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() - paused;
}

// Fraction of scored positions whose argmax is the target, by the order of
// the scored position in its row (recall: one per row; reverse: L per row).
std::vector<double> accuracy_by_position(RaceModel& m, const Batch& b) {
  NoGradGuard no_grad;
  const Tensor& tg = m.targets(b);
  const std::vector<int64_t> pred = argmax(m.logits(b), -1).contiguous().to_vector<int64_t>();
  const std::vector<int64_t> want = tg.contiguous().to_vector<int64_t>();
  const int64_t B = tg.size(0), T = tg.size(1);
  std::vector<double> right, seen;
  for (int64_t row = 0; row < B; ++row) {
    size_t n = 0;
    for (int64_t t = 0; t < T; ++t) {
      if (want[row * T + t] == kIgnore) continue;
      if (right.size() <= n) right.resize(n + 1), seen.resize(n + 1);
      right[n] += pred[row * T + t] == want[row * T + t];
      seen[n] += 1;
      ++n;
    }
  }
  for (size_t i = 0; i < right.size(); ++i) right[i] /= seen[i];
  return right;
}

// ‖∂loss/∂h_t‖ (mean over the batch's rows) at each distance d = T-1-t from
// the scored last position, divided by its value at d = 0. The loss reads
// only the last position, so this is how much of the output's error signal
// backpropagation through time delivers d steps back.
void gradient_profile(RecurrentLM& m, const Batch& b, std::vector<double>& h_ratio, std::vector<double>& c_ratio) {
  std::vector<Tensor> hs, cs;
  cross_entropy(m.run(b, &hs, &cs), b.targets, Reduction::Mean, kIgnore).backward();
  m.zero_grad();  // the parameters' gradients are not wanted here
  auto profile = [](const std::vector<Tensor>& states) {
    NoGradGuard no_grad;
    std::vector<double> out;
    const int64_t T = static_cast<int64_t>(states.size());
    for (int64_t d = 0; d < T; ++d) out.push_back(norm(states[T - 1 - d].grad(), 2.0, {1}).mean().item<double>());
    for (size_t d = out.size(); d-- > 0;) out[d] /= out[0];
    return out;
  };
  h_ratio = profile(hs);
  if (!cs.empty()) c_ratio = profile(cs);
}

// A stream model must not see its answers: change every input after
// position t and the logits at 0..t must stay bit for bit the same.
bool is_causal(RaceModel& m, const Batch& b, int64_t t) {
  NoGradGuard no_grad;
  Batch changed = b;
  std::vector<int64_t> ids = b.ids.contiguous().to_vector<int64_t>();
  const int64_t B = b.ids.size(0), T = b.ids.size(1);
  for (int64_t row = 0; row < B; ++row)
    for (int64_t u = t + 1; u < T; ++u) ids[row * T + u] = (ids[row * T + u] + 1) % kSymbols;
  changed.ids = tensor(ids, {B, T});
  const Tensor before = m.logits(b).narrow(1, 0, t + 1), after = m.logits(changed).narrow(1, 0, t + 1);
  return max(abs(before - after)).item<double>() == 0.0;
}

// The median wall time of one training step (forward, backward, clipping,
// Adam) over `reps` steps, after two untimed ones.
double ms_per_step(RaceModel& m, const Batch& b, int reps) {
  optim::Adam opt(m.parameters(), 1e-3);
  for (int i = 0; i < 2; ++i) train_step(m, opt, b, 1.0);
  std::vector<double> ms;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    train_step(m, opt, b, 1.0);
    ms.push_back(1e3 * std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::nth_element(ms.begin(), ms.begin() + reps / 2, ms.end());
  return ms[reps / 2];
}

// The op calls of one training step, forward ops and backward nodes (the
// profiler's top-level events): how many pieces, one after the other, the
// step's work is cut into.
double ops_per_step(RaceModel& m, const Batch& b) {
  optim::Adam opt(m.parameters(), 1e-3);
  inspect::Profiler prof;
  train_step(m, opt, b, 1.0);
  prof.stop_watching();
  int64_t n = 0;
  for (const inspect::Profiler::Event& e : prof.events()) n += e.depth == 0;
  return static_cast<double>(n);
}

// Runs the jobs on `threads` threads, each taking the next job not yet
// taken; the first exception thrown is rethrown here once all have ended.
void run_jobs(const std::vector<std::function<void()>>& jobs, int threads) {
  std::atomic<size_t> next{0};
  std::mutex failed_mutex;
  std::exception_ptr failed;
  auto worker = [&] {
    // OpenBLAS (Debian's OpenMP build) takes its thread count from the
    // calling thread's OpenMP setting, which a new thread does not inherit:
    // without this, each worker's matrix products would start OpenMP teams
    // of their own (measured: the RNN's steps 6x slower).
    set_num_threads(1);
    for (size_t i; (i = next++) < jobs.size();) {
      try {
        jobs[i]();
      } catch (...) {
        std::lock_guard<std::mutex> lock(failed_mutex);
        if (!failed) failed = std::current_exception();
      }
    }
  };
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back(worker);
  for (auto& t : pool) t.join();
  if (failed) std::rethrow_exception(failed);
}

std::mutex print_mutex;  // the models of a race finish on different threads
void report(const Result& r, const std::string& extra) {
  std::lock_guard<std::mutex> lock(print_mutex);
  std::printf("  %-28s %6lld params  %5lld steps in %6.1f s  %s\n", r.label.c_str(), static_cast<long long>(r.params),
              static_cast<long long>(r.loss.size()), r.seconds, extra.c_str());
  std::fflush(stdout);
}

double mean_of(const std::vector<double>& v, size_t from, size_t to) {
  double s = 0;
  for (size_t i = from; i < to; ++i) s += v[i];
  return to > from ? s / static_cast<double>(to - from) : NAN;
}

// =====================================================================
// 5. Pictures (ember::plot): one figure per question.
// =====================================================================

plot::Color color_of(Kind k) {
  switch (k) {
    case Kind::Window: return plot::palette(7);
    case Kind::RNN: return plot::palette(3);
    case Kind::LSTM: return plot::palette(0);
    case Kind::GRU: return plot::palette(2);
    case Kind::Seq2seq: return plot::palette(4);
    case Kind::Transformer: return plot::palette(1);
  }
  return plot::palette(9);
}
plot::Color color_of(const Entrant& e) { return e.input_std == 1.0 ? color_of(e.kind) : plot::palette(6); }
const plot::Color kGrey{140, 140, 140};

// Per-step losses averaged over consecutive windows: the curve of the
// expected loss without the noise of single batches.
plot::Series smoothed_loss(const Result& r) {
  plot::Series s{r.label};
  s.color = color_of(r.entrant);
  const size_t n = r.loss.size(), w = std::max<size_t>(1, n / 60);
  for (size_t a = 0; a < n; a += w) {
    const size_t b = std::min(n, a + w);
    s.x.push_back(0.5 * static_cast<double>(a + 1 + b));
    s.y.push_back(mean_of(r.loss, a, b));
  }
  return s;
}

void loss_plot(const std::vector<Result>& rs, const std::string& title, double chance, const std::string& chance_label,
               const std::string& path, bool with_val = false) {
  plot::LinePlot fig;
  fig.title = title;
  fig.x.label = "training step (Adam updates, the same batches for every model)";
  fig.y.label = with_val ? "loss (nats/char): lines training, dots validation" : "training loss (nats per scored symbol)";
  if (!with_val) fig.y.min = 0.0;
  for (const Result& r : rs) {
    fig.series.push_back(smoothed_loss(r));
    if (with_val && !r.val.empty()) {
      plot::Series v{""};  // same colour, no legend entry
      v.color = color_of(r.entrant);
      v.line = false;
      v.points = true;
      for (const auto& [step, loss] : r.val) {
        v.x.push_back(static_cast<double>(step));
        v.y.push_back(loss);
      }
      fig.series.push_back(v);
    }
  }
  fig.hlines = {{chance, chance_label, kGrey}};
  fig.legend = plot::Corner::Outside;
  fig.width = 1000;
  plot::write_png(fig, path);
}

// The first step at which r recalled every distance up to K, or -1.
int64_t step_reaching(const Result& r, int64_t K) {
  for (const auto& [step, reach] : r.reach)
    if (reach >= static_cast<double>(K)) return step;
  return -1;
}

void reach_plot(const std::vector<Result>& rs, int64_t K, const Architecture& a, const std::string& path) {
  plot::LinePlot fig;
  fig.title = "Recall: how far back each model remembers, as it trains";
  fig.x.label = "training step";
  fig.y = {.label = "reach: every k up to it recalled at >= 90%", .min = 0.0,
           .max = static_cast<double>(K) * 1.05};
  for (const Result& r : rs) {
    plot::Series s{r.label};
    s.color = color_of(r.entrant);
    s.points = true;
    for (const auto& [step, reach] : r.reach) {
      s.x.push_back(static_cast<double>(step));
      s.y.push_back(reach);
    }
    fig.series.push_back(s);
  }
  fig.hlines = {{static_cast<double>(a.window) - 1, "the MLP's window: k < " + std::to_string(a.window), kGrey}};
  fig.legend = plot::Corner::Outside;
  fig.width = 1000;
  plot::write_png(fig, path);
}

void recall_accuracy_plot(const std::vector<Result>& rs, const Architecture& a, const std::string& path) {
  plot::LinePlot fig;
  fig.title = "Recall: naming the marked symbol seen k steps ago";
  fig.x = {.label = "distance k (steps back, log scale)", .log = true};
  fig.y = {.label = "accuracy (128 new streams per k)", .min = 0.0, .max = 1.05};
  for (const Result& r : rs) {
    plot::Series s{r.label};
    s.color = color_of(r.entrant);
    for (size_t k = 1; k <= r.accuracy.size(); ++k) {
      s.x.push_back(static_cast<double>(k));
      s.y.push_back(r.accuracy[k - 1]);
    }
    fig.series.push_back(s);
  }
  fig.hlines = {{1.0 / kSymbols, "chance (1/8)", kGrey}};
  fig.vlines = {{static_cast<double>(a.window) - 0.5, "the MLP's window ends", kGrey}};
  fig.legend = plot::Corner::Outside;
  fig.width = 1000;
  plot::write_png(fig, path);
}

void reverse_accuracy_plot(const std::vector<Result>& rs, int64_t L, const std::string& path) {
  plot::LinePlot fig;
  fig.title = "Reverse " + std::to_string(L) + " symbols: accuracy at each output position";
  fig.x = {.label = "output position i (a stream model reads its source 2i+1 steps back)",
           .min = -0.3, .max = static_cast<double>(L) - 0.7};
  fig.y = {.label = "accuracy (256 new sequences)", .min = 0.0, .max = 1.05};
  for (const Result& r : rs) {
    plot::Series s{r.label};
    s.color = color_of(r.entrant);
    s.points = true;
    for (size_t i = 0; i < r.accuracy.size(); ++i) {
      s.x.push_back(static_cast<double>(i));
      s.y.push_back(r.accuracy[i]);
    }
    fig.series.push_back(s);
  }
  fig.hlines = {{1.0 / kSymbols, "chance (1/8)", kGrey}};
  fig.legend = plot::Corner::Outside;
  fig.width = 1000;
  plot::write_png(fig, path);
}

void gradient_plot(const std::vector<Result>& rs, bool trained, int64_t K, int64_t steps, const std::string& path) {
  plot::LinePlot fig;
  fig.title = trained ? "Gradient through time after " + std::to_string(steps) + " steps on recall"
                      : std::string("Gradient through time at initialisation");
  fig.x.label = "distance d from the scored output (steps back in time)";
  fig.y = {.label = "|dloss/dh_t| / |dloss/dh_T|, 64 streams", .min = 1e-16, .max = 100.0, .log = true};
  for (const Result& r : rs) {
    const std::vector<double>& g = trained ? r.grad_trained : r.grad_init;
    if (g.empty()) continue;
    plot::Series s{r.label + ", h_t"};
    s.color = color_of(r.entrant);
    for (size_t d = 0; d < g.size(); ++d) {
      s.x.push_back(static_cast<double>(d));
      s.y.push_back(g[d]);
    }
    fig.series.push_back(s);
    const std::vector<double>& c = trained ? r.grad_c_trained : r.grad_c_init;
    if (!c.empty()) {
      plot::Series sc{r.label + ", cell state c_t"};
      sc.color = color_of(r.entrant);
      sc.line = false;
      sc.points = true;
      for (size_t d = 0; d < c.size(); ++d) {
        sc.x.push_back(static_cast<double>(d));
        sc.y.push_back(c[d]);
      }
      fig.series.push_back(sc);
    }
  }
  plot::Series ref{"0.5^d (0.5^10 = 0.00098)"};
  ref.color = kGrey;
  ref.width = 1.0;
  for (size_t d = 0; d < (rs.empty() ? 0 : rs.front().grad_init.size()); ++d) {
    ref.x.push_back(static_cast<double>(d));
    ref.y.push_back(std::pow(0.5, static_cast<double>(d)));
  }
  fig.series.push_back(ref);
  fig.vlines = {{10.0, "d = 10", kGrey}, {static_cast<double>(K), "d = K: the marked symbol", kGrey}};
  fig.legend = plot::Corner::Outside;
  fig.width = 1000;
  plot::write_png(fig, path);
}

void attention_plot(const Result& r, int64_t L, const std::string& path) {
  plot::Heatmap fig;
  fig.title = "Encoder-decoder attention on one reversal";
  fig.x_label = "source position j and its symbol (argmax on j = L-1-i at " + fmt("%.1f", 100 * r.alignment) +
                "% of 256 sequences' outputs)";
  fig.y_label = "output position i and the symbol it writes";
  fig.value_label = "attention weight a_ij";
  fig.values = r.heat;
  fig.rows = fig.cols = L;
  fig.min = 0.0;
  fig.max = 1.0;
  fig.diverging = false;
  auto letter = [](int64_t s) { return std::string(1, static_cast<char>('A' + s)); };
  for (int64_t j = 0; j < L; ++j) fig.col_names.push_back(std::to_string(j) + " " + letter(r.heat_src[j]));
  for (int64_t i = 0; i < L; ++i) fig.row_names.push_back(std::to_string(i) + " " + letter(r.heat_src[L - 1 - i]));
  fig.width = 900;
  fig.height = 760;
  plot::write_png(fig, path);
}

// ms_per_step or ops_per_step against T, one line per model.
void timing_plot(const std::vector<Result>& rs, const std::vector<int64_t>& Ts, bool ops, int64_t budget,
                 const std::string& path) {
  plot::LinePlot fig;
  fig.title = ops ? "Op calls in one training step: T of them one after another"
                  : "Wall time of one training step, one model at a time";
  fig.x.log = true;
  fig.y = {.label = ops ? "forward ops + backward nodes per step" : "ms per step (1 thread)", .log = true};
  fig.x.label = "sequence length T (log scale; " + std::to_string(budget / 1000) + "k parameters, batch 32)";
  for (const Result& r : rs) {
    plot::Series s{r.label};
    s.color = color_of(r.entrant);
    s.points = true;
    for (size_t i = 0; i < Ts.size(); ++i) {
      s.x.push_back(static_cast<double>(Ts[i]));
      s.y.push_back(ops ? r.ops_per_step[i] : r.ms_per_step[i]);
    }
    fig.series.push_back(s);
  }
  fig.legend = plot::Corner::Outside;
  fig.width = 1000;
  plot::write_png(fig, path);
}

// =====================================================================
// 6. The races, the facts and the summary.
// =====================================================================

struct Options {
  bool quick = false, check = false, attention_feedback = false;
  std::string out = "out/lesson_c", data = std::string(EMBER_DATA_DIR) + "/tinyshakespeare.txt.gz";
  uint64_t seed = 0;
  int threads = 1;
  // the full run's; --quick changes the steps of those not given
  int64_t K = 50, L = 10, recall_steps = 3000, reverse_steps = 1500, text_steps = 1500;
  int64_t synthetic_budget = 20000, text_budget = 50000, text_context = 64, batch = 32;
  double lr = 3e-3;
};

// Facts the pictures should show; each is printed with its measured numbers.
struct Facts {
  std::vector<std::string> failed;
  int checked = 0;
  void check(bool ok, const std::string& what) {
    ++checked;
    std::printf("  [%s] %s\n", ok ? "ok" : "FAILED", what.c_str());
    if (!ok) failed.push_back(what);
  }
};

const Result& find(const std::vector<Result>& rs, Kind k, double input_std = 1.0) {
  for (const Result& r : rs)
    if (r.entrant.kind == k && r.entrant.input_std == input_std) return r;
  EMBER_FAIL("lesson_c_race", "no result for " << static_cast<int>(k));
}

std::string table_line(const std::vector<std::string>& cells, const std::vector<int>& widths) {
  std::string s;
  for (size_t i = 0; i < cells.size(); ++i) {
    const int w = widths[i];
    std::string c = cells[i];
    if (static_cast<int>(c.size()) < std::abs(w)) {
      const std::string pad(std::abs(w) - c.size(), ' ');
      c = w < 0 ? c + pad : pad + c;  // negative width: left-aligned
    }
    s += (i ? "  " : "") + c;
  }
  return s + "\n";
}

int program(Options o) {
  const std::vector<int64_t> timing_T = o.quick ? std::vector<int64_t>{16, 64} : std::vector<int64_t>{16, 32, 64, 128, 256};
  const auto t_start = std::chrono::steady_clock::now();
  // Read everything and make the directory first: a bad path fails now, not after the races.
  const std::string text = train::read_text_file(o.data);
  const train::CharTokenizer tok = train::CharTokenizer::from_text(text);
  const std::vector<int64_t> tokens = tok.encode(text);
  EMBER_CHECK(static_cast<int64_t>(tokens.size()) >= 20 * (o.text_context + 1), "lesson_c_race",
              o.data << " has " << tokens.size() << " characters; race 3 needs at least " << 20 * (o.text_context + 1));
  std::filesystem::create_directories(o.out);
  const std::string out = o.out + "/";

  set_num_threads(1);  // one model per thread, --threads of them at once
  const Architecture arch{.attention_feedback = o.attention_feedback};
  const int64_t prefix = 4;
  const std::string at_once =
      o.threads == 1 ? "one model at a time, on one thread" : std::to_string(o.threads) + " models at once, on one thread each";
  std::printf("Lesson C, measured%s: ember's modules and initialisation (inputs looked up at unit scale), Adam lr %g,\n"
              "batch %lld, gradient norm clipped at 1, seed %llu, %s\n\n",
              o.quick ? " (--quick)" : "", o.lr, static_cast<long long>(o.batch), static_cast<unsigned long long>(o.seed),
              at_once.c_str());
  Facts facts;
  std::vector<std::string> summary;  // the table, as printed at the end and written to summary.txt

  // Trains one model per kind on a task; `measure` runs on the trained model.
  auto race = [&](const std::vector<Entrant>& entrants, const TaskShape& task, int64_t budget, uint64_t init_stream,
                  const std::function<void(RaceModel&, Result&)>& before,
                  const std::function<void(RaceModel&, Result&)>& train_and_measure) {
    std::vector<Result> rs(entrants.size());
    std::vector<std::function<void()>> jobs;
    for (size_t i = 0; i < entrants.size(); ++i)
      jobs.push_back([&, i] {
        Result& r = rs[i];
        r.entrant = entrants[i];
        r.label = label(r.entrant, arch);
        r.width = fit_width(r.entrant, task, arch, budget);
        Generator init(o.seed, init_stream + i);
        std::shared_ptr<RaceModel> m = build(r.entrant, task, arch, r.width, init);
        r.params = m->num_parameters();
        if (before) before(*m, r);
        train_and_measure(*m, r);
      });
    run_jobs(jobs, o.threads);
    return rs;
  };
  auto check_budget = [&](const std::vector<Result>& rs, int64_t budget, const char* race_name) {
    int64_t lo = INT64_MAX, hi = 0;
    for (const Result& r : rs) lo = std::min(lo, r.params), hi = std::max(hi, r.params);
    facts.check(lo * 10 >= budget * 9 && hi * 10 <= budget * 11,
                std::string(race_name) + ": every model has " + std::to_string(budget) + " parameters +-10% (" +
                    std::to_string(lo) + " .. " + std::to_string(hi) + ")");
  };
  const std::vector<Entrant> stream_models{{Kind::LSTM}, {Kind::GRU}, {Kind::Transformer}, {Kind::RNN}, {Kind::Window}};
  std::vector<Entrant> recall_models = stream_models;
  if (!o.quick) recall_models.push_back({Kind::RNN, 0.02});

  // ---------------- race 1: recall at distance k ----------------
  const TaskShape recall_task{2 * kSymbols, kSymbols, prefix + o.K + 1};
  const Schedule recall_schedule{o.recall_steps, o.batch, o.lr};
  std::printf("1. Recall: name the marked symbol, k = 1..%lld steps back (log-uniform), streams of T = %lld,\n"
              "   %lld steps, budget %lld parameters\n",
              static_cast<long long>(o.K), static_cast<long long>(recall_task.context),
              static_cast<long long>(o.recall_steps), static_cast<long long>(o.synthetic_budget));
  const int64_t reach_every = std::max<int64_t>(10, o.recall_steps / 60);
  std::vector<int64_t> reach_ks;  // 1, 2, 3, 5, 7, 10, 15, 20, 30, 40, 50: about log-spaced, and K
  for (int64_t k : {1, 2, 3, 5, 7, 10, 15, 20, 30, 40, 50, 70, 100, 150, 200, 300, 500, 700, 1000})
    if (k < o.K) reach_ks.push_back(k);
  reach_ks.push_back(o.K);
  Generator probe_gen(o.seed, kRecallProbe);
  const Batch probe = recall_batch(64, o.K, prefix, probe_gen, o.K);  // the mark K steps back
  const std::vector<Result> recall = race(
      recall_models, recall_task, o.synthetic_budget, kInitStream,
      [&](RaceModel& m, Result& r) {
        if (auto* rec = dynamic_cast<RecurrentLM*>(&m)) gradient_profile(*rec, probe, r.grad_init, r.grad_c_init);
      },
      [&](RaceModel& m, Result& r) {
        // How far back it recalls, as it trains: the largest k whose accuracy,
        // and that of every shorter distance, is at least 0.9 (32 streams at
        // each of about ten distances; the same streams every time).
        auto measure_reach = [&](int64_t step) {
          Generator gen(o.seed, kRecallReach);
          int64_t reach = 0;
          for (int64_t k : reach_ks) {
            if (accuracy_by_position(m, recall_batch(32, o.K, prefix, gen, k))[0] < 0.9) break;
            reach = k;
          }
          r.reach.emplace_back(step, reach);
        };
        train_model(m, r, recall_schedule, [&](Generator& g) { return recall_batch(recall_schedule.batch, o.K, prefix, g); },
                    Generator(o.seed, kRecallData), measure_reach, reach_every);
        if (auto* rec = dynamic_cast<RecurrentLM*>(&m)) gradient_profile(*rec, probe, r.grad_trained, r.grad_c_trained);
        Generator eval(o.seed, kRecallEval);
        for (int64_t k = 1; k <= o.K; ++k)
          r.accuracy.push_back(accuracy_by_position(m, recall_batch(128, o.K, prefix, eval, k))[0]);
        report(r, "accuracy at k = 1, " + std::to_string(std::min<int64_t>(10, o.K)) + ", " + std::to_string(o.K) + ": " +
                      fmt("%.2f", r.accuracy[0]) + ", " + fmt("%.2f", r.accuracy[std::min<int64_t>(10, o.K) - 1]) + ", " +
                      fmt("%.2f", r.accuracy.back()));
      });

  {
    std::printf("\n   |dloss/dh_t| d steps before the output / at the output (backward() with retain_grad), streams with k = %lld:\n",
                static_cast<long long>(o.K));
    std::vector<int64_t> ds;
    for (int64_t d : {1, 5, 10, 20, 50})
      if (d < o.K) ds.push_back(d);
    ds.push_back(o.K);
    std::string line = "   " + std::string(32, ' ');
    for (int64_t d : ds) {
      const std::string h = "d=" + std::to_string(d);
      line += std::string(10 - h.size(), ' ') + h;
    }
    std::printf("%s\n", line.c_str());
    auto print_row = [&](const std::string& name, const std::vector<double>& g) {
      std::string l = "   " + padded(name, 32);
      for (int64_t d : ds) l += fmt("%10.2g", g[d]);
      std::printf("%s\n", l.c_str());
    };
    std::vector<double> lesson;
    for (int64_t d = 0; d <= o.K; ++d) lesson.push_back(std::pow(0.5, static_cast<double>(d)));
    print_row("the lesson, 0.5^d", lesson);
    for (const Result& r : recall) {
      if (r.grad_init.empty()) continue;
      print_row(r.label + ", h, at init", r.grad_init);
      print_row(r.label + ", h, trained", r.grad_trained);
      if (!r.grad_c_init.empty()) {
        print_row(r.label + ", c, at init", r.grad_c_init);
        print_row(r.label + ", c, trained", r.grad_c_trained);
      }
    }
  }

  // ---------------- race 2: reverse, sequence to sequence ----------------
  const TaskShape reverse_task{kSymbols + 1, kSymbols, 2 * o.L};
  const Schedule reverse_schedule{o.reverse_steps, o.batch, o.lr};
  std::vector<Entrant> reverse_models = stream_models;
  reverse_models.insert(reverse_models.begin() + 2, {Kind::Seq2seq});
  std::printf("\n2. Reverse %lld symbols: the stream models read s SEP and write r (teacher forcing); the encoder-\n"
              "   decoder reads s and writes r; %lld steps, budget %lld parameters\n",
              static_cast<long long>(o.L), static_cast<long long>(o.reverse_steps),
              static_cast<long long>(o.synthetic_budget));
  Generator causal_gen(o.seed, kReverseEval);
  const Batch causal_probe = reverse_batch(4, o.L, causal_gen);
  const std::vector<Result> reverse = race(
      reverse_models, reverse_task, o.synthetic_budget, kInitStream + 10,
      [&](RaceModel& m, Result& r) {
        if (r.entrant.kind == Kind::Seq2seq) return;  // reads the answers only through the decoder input, by design
        for (int64_t t = 0; t + 1 < 2 * o.L; ++t) r.causal = r.causal && is_causal(m, causal_probe, t);
      },
      [&](RaceModel& m, Result& r) {
        train_model(m, r, reverse_schedule, [&](Generator& g) { return reverse_batch(reverse_schedule.batch, o.L, g); },
                    Generator(o.seed, kReverseData));
        Generator eval(o.seed, kReverseEval);
        const Batch test = reverse_batch(256, o.L, eval);
        r.accuracy = accuracy_by_position(m, test);
        if (auto* s2s = dynamic_cast<Seq2seqAttention*>(&m)) {
          NoGradGuard no_grad;
          const std::vector<double> alpha = s2s->run(test).second.contiguous().to_vector<double>();  // (256, L, L)
          int64_t aligned = 0;
          for (int64_t row = 0; row < 256; ++row)
            for (int64_t i = 0; i < o.L; ++i) {
              const double* a = &alpha[(row * o.L + i) * o.L];
              aligned += std::max_element(a, a + o.L) - a == o.L - 1 - i;
            }
          r.alignment = static_cast<double>(aligned) / static_cast<double>(256 * o.L);
          r.heat.assign(alpha.begin(), alpha.begin() + o.L * o.L);
          const std::vector<int64_t> src = test.src.contiguous().to_vector<int64_t>();
          r.heat_src.assign(src.begin(), src.begin() + o.L);
        }
        report(r, "accuracy " + fmt("%.3f", mean_of(r.accuracy, 0, r.accuracy.size())) +
                      (std::isnan(r.alignment) ? "" : ", attention argmax on L-1-i: " + fmt("%.3f", r.alignment)));
      });

  // ---------------- race 3: tinyshakespeare ----------------
  const TaskShape text_task{tok.vocab_size(), tok.vocab_size(), o.text_context};
  const Schedule text_schedule{o.text_steps, o.batch, o.lr};
  const int64_t eval_every = std::max<int64_t>(1, o.text_steps / 10);
  std::printf("\n3. Next character of %s (%zu characters, V = %lld), T = %lld, %lld steps, budget %lld parameters\n",
              std::filesystem::path(o.data).filename().c_str(), tokens.size(), static_cast<long long>(tok.vocab_size()),
              static_cast<long long>(o.text_context), static_cast<long long>(o.text_steps),
              static_cast<long long>(o.text_budget));
  const std::vector<Result> text_results = race(
      stream_models, text_task, o.text_budget, kInitStream + 20, nullptr, [&](RaceModel& m, Result& r) {
        // every model draws the same windows: its own sampler with the same seed
        train::BatchSampler sampler(tokens, text_schedule.batch, o.text_context, 0.1, o.seed + kTextData);
        auto validate = [&](int64_t step) {
          NoGradGuard no_grad;
          Generator val_gen(o.seed, kTextVal);  // the same 8 validation batches every time
          double sum = 0;
          for (int n = 0; n < 8; ++n) {
            auto [x, y] = sampler.sample(true, val_gen);
            sum += cross_entropy(m.logits({x, y, {}, {}, {}}), y).item<double>() / 8;
          }
          r.val.emplace_back(step, sum);
        };
        train_model(
            m, r, text_schedule,
            [&](Generator&) {
              auto [x, y] = sampler.sample(false);
              return Batch{x, y, {}, {}, {}};
            },
            Generator(0), validate, eval_every);
        report(r, "validation loss " + fmt("%.3f", r.val.front().second) + " -> " + fmt("%.3f", r.val.back().second));
      });

  // ---------------- the wall time of a step, one model at a time ----------------
  std::printf("\n4. One training step at the text budget, batch 32, one model at a time on one thread:\n"
              "   wall time (median of %d) and op calls (forward ops + backward nodes)\n", o.quick ? 3 : 7);
  std::vector<Entrant> timing_models = stream_models;
  timing_models.push_back({Kind::Seq2seq});
  std::vector<Result> timing(timing_models.size());
  for (size_t i = 0; i < timing_models.size(); ++i) {
    Result& r = timing[i];
    r.entrant = timing_models[i];
    r.label = label(r.entrant, arch);
    std::string line = "  " + padded(r.label, 30);
    for (int64_t T : timing_T) {
      const TaskShape task = r.entrant.kind == Kind::Seq2seq ? TaskShape{tok.vocab_size() + 1, tok.vocab_size(), T}
                                                     : TaskShape{tok.vocab_size(), tok.vocab_size(), T};
      Generator init(o.seed, kTiming), data(o.seed, kTiming);
      std::shared_ptr<RaceModel> m = build(r.entrant, task, arch, fit_width(r.entrant, task, arch, o.text_budget), init);
      Batch b;
      if (r.entrant.kind == Kind::Seq2seq) {
        b = reverse_batch(o.batch, T / 2, data);  // T/2 symbols read, T/2 written
      } else {
        std::vector<int64_t> ids(o.batch * T);
        for (auto& id : ids) id = static_cast<int64_t>(data.next_below(tok.vocab_size()));
        b.ids = b.targets = tensor(ids, {o.batch, T});
      }
      r.ms_per_step.push_back(ms_per_step(*m, b, o.quick ? 3 : 7));
      r.ops_per_step.push_back(ops_per_step(*m, b));
      line += "  T=" + std::to_string(T) + ": " + fmt("%.1f ms", r.ms_per_step.back()) + fmt(" %.0f ops", r.ops_per_step.back());
    }
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
  }
  const size_t t64 = std::find(timing_T.begin(), timing_T.end(), 64) - timing_T.begin();
  auto ops_grow = [&](Kind k) { return find(timing, k).ops_per_step.back() / find(timing, k).ops_per_step.front(); };
  const double T_grow = static_cast<double>(timing_T.back()) / static_cast<double>(timing_T.front());

  // ---------------- pictures ----------------
  loss_plot(recall, "Recall at distance k: training loss", std::log(8.0),
            "ln 8: guessing 1 of 8", out + "recall_loss.png");
  recall_accuracy_plot(recall, arch, out + "recall_accuracy.png");
  reach_plot(recall, o.K, arch, out + "recall_reach.png");
  gradient_plot(recall, false, o.K, o.recall_steps, out + "gradient_init.png");
  gradient_plot(recall, true, o.K, o.recall_steps, out + "gradient_trained.png");
  loss_plot(reverse, "Reverse " + std::to_string(o.L) + " symbols: training loss", std::log(8.0),
            "ln 8: guessing 1 of 8", out + "reverse_loss.png");
  reverse_accuracy_plot(reverse, o.L, out + "reverse_accuracy.png");
  attention_plot(find(reverse, Kind::Seq2seq), o.L, out + "attention.png");
  loss_plot(text_results, "Next character of tinyshakespeare: loss",
            std::log(static_cast<double>(tok.vocab_size())),
            "ln " + std::to_string(tok.vocab_size()) + ": a uniform guess", out + "text_loss.png", true);
  timing_plot(timing, timing_T, false, o.text_budget, out + "step_time.png");
  timing_plot(timing, timing_T, true, o.text_budget, out + "step_ops.png");

  // ---------------- the summary table ----------------
  const Result &rec_rnn = find(recall, Kind::RNN), &rec_lstm = find(recall, Kind::LSTM), &rec_gru = find(recall, Kind::GRU),
               &rec_tr = find(recall, Kind::Transformer), &rec_mlp = find(recall, Kind::Window);
  std::vector<int64_t> ks;
  for (int64_t k : {5, 10, 20, 50})
    if (k < o.K) ks.push_back(k);
  ks.push_back(o.K);
  const size_t far_from = static_cast<size_t>(o.K - std::max<int64_t>(1, o.K / 5));  // the farthest fifth of the distances
  auto far_accuracy = [&](const Result& r) { return mean_of(r.accuracy, far_from, r.accuracy.size()); };
  std::string table = "Summary (" + std::string(o.quick ? "--quick" : "full run") + ", seed " + std::to_string(o.seed) + ")\n";
  std::vector<int> widths{-27, 13};
  std::vector<std::string> head{"model", "params"};
  for (int64_t k : ks) head.push_back("k=" + std::to_string(k)), widths.push_back(5);
  head.push_back("all k at"), widths.push_back(8);
  for (const char* h : {"rev acc", "align", "text val", "ms/step", "ops/step"}) head.push_back(h), widths.push_back(8);
  head.push_back("grad d=10 init"), widths.push_back(14);
  head.push_back("d=K trained"), widths.push_back(11);
  table += table_line(head, widths);
  auto find_in = [](const std::vector<Result>& rs, const Entrant& e) -> const Result* {
    for (const Result& r : rs)
      if (r.entrant.kind == e.kind && r.entrant.input_std == e.input_std) return &r;
    return nullptr;
  };
  std::vector<Entrant> rows = reverse_models;
  if (recall_models.size() > stream_models.size()) rows.push_back(recall_models.back());
  for (const Entrant& e : rows) {
    const Result *rc = find_in(recall, e), *rv = find_in(reverse, e), *tx = find_in(text_results, e),
                 *tm = find_in(timing, e);
    std::string params = rv ? std::to_string(rv->params) : rc ? std::to_string(rc->params) : "-";
    if (tx) params += " / " + std::to_string(tx->params);
    std::vector<std::string> row{label(e, arch), params};
    for (int64_t k : ks) row.push_back(rc ? fmt("%.2f", rc->accuracy[k - 1]) : "-");
    row.push_back(rc ? (step_reaching(*rc, o.K) < 0 ? "never" : std::to_string(step_reaching(*rc, o.K))) : "-");
    row.push_back(rv ? fmt("%.3f", mean_of(rv->accuracy, 0, rv->accuracy.size())) : "-");
    row.push_back(rv && !std::isnan(rv->alignment) ? fmt("%.3f", rv->alignment) : "-");
    row.push_back(tx ? fmt("%.3f", tx->val.back().second) : "-");
    row.push_back(tm && t64 < timing_T.size() ? fmt("%.2f", tm->ms_per_step[t64]) : "-");
    row.push_back(tm && t64 < timing_T.size() ? fmt("%.0f", tm->ops_per_step[t64]) : "-");
    const bool grads = rc && !rc->grad_init.empty();
    row.push_back(grads && rc->grad_init.size() > 10 ? fmt("%.2g", rc->grad_init[10]) : "-");
    row.push_back(grads ? fmt("%.2g", rc->grad_trained[o.K]) : "-");
    table += table_line(row, widths);
  }
  table += "params: the synthetic races' / the text race's; k=..: recall accuracy at distance k; all k at: the first\n"
           "step (of " + std::to_string(o.recall_steps) + ", measured every " + std::to_string(reach_every) +
           ") at which every k up to K was recalled at >= 90%; rev acc: reverse accuracy;\n"
           "align: the attention's argmax on j = L-1-i; text val: validation loss after " + std::to_string(o.text_steps) +
           " steps (nats per character);\n"
           "ms/step, ops/step: the wall time and the op calls (forward ops + backward nodes) of one training step at\n"
           "T = 64 (text budget, batch " + std::to_string(o.batch) + ", 1 thread);\n"
           "grad: |dloss/dh_t| d steps before the output / at the output, 10 steps back at initialisation (the lesson:\n"
           "0.5^10 = 0.00098) and K steps back, at the marked symbol, after training\n";

  // ---------------- the facts ----------------
  std::printf("\nWhat the pictures should show, checked:\n");
  check_budget(recall, o.synthetic_budget, "recall");
  check_budget(reverse, o.synthetic_budget, "reverse");
  check_budget(text_results, o.text_budget, "text");
  {
    bool causal = true;
    for (const Result& r : reverse) causal = causal && r.causal;
    facts.check(causal, "no stream model sees its answer: changing the inputs after t changes no output at 0..t");
  }
  const int64_t w = arch.window;
  if (o.K >= w) {
    const double inside = mean_of(rec_mlp.accuracy, 0, w - 1), outside = mean_of(rec_mlp.accuracy, w - 1, o.K);
    facts.check(inside >= 0.9 && outside <= 0.2,
                "the MLP knows what is inside its window and guesses beyond it: accuracy " + fmt("%.2f", inside) +
                    " for k < " + std::to_string(w) + ", " + fmt("%.2f", outside) + " for k >= " + std::to_string(w) +
                    " (chance 0.125)");
  }
  {
    const int64_t lstm = step_reaching(rec_lstm, o.K), gru = step_reaching(rec_gru, o.K), rnn = step_reaching(rec_rnn, o.K);
    auto when = [&](int64_t step) { return step < 0 ? "not in " + std::to_string(o.recall_steps) : std::to_string(step); };
    auto sooner = [](int64_t a, int64_t b) { return a >= 0 && (b < 0 || a < b); };
    facts.check(sooner(lstm, rnn) && sooner(gru, rnn),
                "the gates learn the longest distances sooner: every k up to K recalled (>= 90%) at step " + when(lstm) +
                    " by the LSTM, " + when(gru) + " by the GRU, " + when(rnn) + " by the RNN");
  }
  facts.check(far_accuracy(rec_tr) >= 0.9, "attention looks anywhere: the Transformer's accuracy for k > " +
                                               std::to_string(far_from) + " is " + fmt("%.2f", far_accuracy(rec_tr)));
  if (o.K + prefix > 10)
    facts.check(rec_rnn.grad_init[10] < 0.01, "the RNN's gradient vanishes at initialisation: 10 steps back it is " +
                                                  fmt("%.2g", rec_rnn.grad_init[10]) +
                                                  " of the output's (the lesson's 0.5^10 = 0.00098)");
  facts.check(std::max({rec_rnn.grad_init[o.K], rec_lstm.grad_init[o.K], rec_lstm.grad_c_init[o.K], rec_gru.grad_init[o.K]}) < 1e-3,
              "at initialisation less than a thousandth of the gradient reaches d = K (RNN " + fmt("%.2g", rec_rnn.grad_init[o.K]) +
                  ", LSTM h " + fmt("%.2g", rec_lstm.grad_init[o.K]) + " and c " + fmt("%.2g", rec_lstm.grad_c_init[o.K]) +
                  ", GRU " + fmt("%.2g", rec_gru.grad_init[o.K]) + ")");
  facts.check(rec_lstm.grad_c_trained[o.K] > 1000 * rec_lstm.grad_c_init[o.K] &&
                  rec_gru.grad_trained[o.K] > 1000 * rec_gru.grad_init[o.K],
              "training opens the gates: at d = K the gradient grew from " + fmt("%.2g", rec_lstm.grad_c_init[o.K]) + " to " +
                  fmt("%.2g", rec_lstm.grad_c_trained[o.K]) + " (LSTM, c) and from " + fmt("%.2g", rec_gru.grad_init[o.K]) +
                  " to " + fmt("%.2g", rec_gru.grad_trained[o.K]) + " (GRU)");
  {
    const Result& s2s = find(reverse, Kind::Seq2seq);
    const double acc = mean_of(s2s.accuracy, 0, s2s.accuracy.size());
    facts.check(acc >= 0.9 && s2s.alignment >= 0.8,
                "the encoder-decoder reverses (accuracy " + fmt("%.3f", acc) + ") and its attention follows the alignment: "
                "argmax_j a_ij = L-1-i at " + fmt("%.1f", 100 * s2s.alignment) + "% of the positions");
    const Result& mlp = find(reverse, Kind::Window);
    const int64_t first_blind = (w + 1) / 2;  // output i needs the input 2i+1 steps back
    if (first_blind < o.L) {
      const double blind = mean_of(mlp.accuracy, first_blind, o.L);
      facts.check(blind <= 0.2, "the MLP cannot reverse what left its window: accuracy " + fmt("%.2f", blind) +
                                    " at output positions i >= " + std::to_string(first_blind) + " (chance 0.125)");
    }
  }
  facts.check(ops_grow(Kind::Transformer) == 1.0 && std::abs(ops_grow(Kind::RNN) / T_grow - 1) < 0.1 &&
                  std::abs(ops_grow(Kind::LSTM) / T_grow - 1) < 0.1,
              "the recurrent models cut a step into T pieces, the Transformer does not: from T = " +
                  std::to_string(timing_T.front()) + " to " + std::to_string(timing_T.back()) +
                  " the op calls of a step grow " + fmt("x%.2f", ops_grow(Kind::RNN)) + " (RNN), " +
                  fmt("x%.2f", ops_grow(Kind::LSTM)) + " (LSTM), " + fmt("x%.2f", ops_grow(Kind::Transformer)) +
                  " (Transformer)");
  {
    double worst = 0;
    for (const Result& r : text_results) worst = std::max(worst, r.val.back().second);
    const double lnV = std::log(static_cast<double>(tok.vocab_size()));
    facts.check(worst < lnV - 1.0, "every model learns text: the worst validation loss " + fmt("%.3f", worst) +
                                        " is below ln V - 1 = " + fmt("%.3f", lnV - 1.0));
  }

  const double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
  table += "total run time " + fmt("%.0f s", total) + "\n";
  std::printf("\n%s", table.c_str());
  std::ofstream(out + "summary.txt") << table;
  std::printf("\nPictures in %s: recall_loss, recall_accuracy, recall_reach, gradient_init, gradient_trained, reverse_loss,\n"
              "reverse_accuracy, attention, text_loss, step_time, step_ops (.png); the table in summary.txt\n",
              o.out.c_str());
  std::printf("%d facts checked, %zu failed%s\n", facts.checked, facts.failed.size(),
              facts.failed.empty() || o.check ? "" : " (exit status 0: --check makes a failed fact an error)");
  return o.check && !facts.failed.empty() ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Lesson C, measured: an MLP window, an RNN, an LSTM, a GRU, an encoder-decoder with attention and a "
               "Transformer race on recall at distance k, reversal and tinyshakespeare with the same budget; "
               "pictures of their losses, accuracy against distance, gradients through time, attention and step time."};
  ember::examples::show_defaults(app);
  Options o;
  app.add_flag("--quick", o.quick, "the short race of the test suite: K = 30 and fewer steps (about 35 s on 2 cores)");
  app.add_flag("--check", o.check, "exit with status 1 if a fact the pictures should show did not happen");
  app.add_flag("--attention-feedback", o.attention_feedback,
               "the encoder-decoder in Bahdanau's order: the context also fed back into the decoder's GRU");
  app.add_option("--out", o.out, "directory for the pictures and summary.txt");
  app.add_option("--data", o.data, "the text of race 3 (.gz accepted)");
  app.add_option("--seed", o.seed, "seed of every initialisation and batch")
      ->check([](const std::string& v) {  // CLI11 would read -1 as 2^64 - 1
        return v.find('-') == std::string::npos ? std::string() : "a seed is a non-negative integer, got " + v;
      });
  app.add_option("--threads", o.threads,
                 "models trained at once, one thread each (the numbers do not depend on it; on this project's 2-core VM "
                 "a second one gained at most about 1.2x)")
      ->check(CLI::Range(1, 64));
  // the sizes --quick changes (only those not given), with their ranges
  const std::vector<std::tuple<const char*, int64_t*, int64_t, const char*, int64_t, int64_t>> sizes{
      {"--max-distance", &o.K, 30, "K, the longest recall distance", 1, 1000},
      {"--reverse-length", &o.L, 10, "L, the length of the sequences to reverse", 2, 200},
      {"--recall-steps", &o.recall_steps, 300, "training steps of race 1", 1, 10000000},
      {"--reverse-steps", &o.reverse_steps, 300, "training steps of race 2", 1, 10000000},
      {"--text-steps", &o.text_steps, 60, "training steps of race 3", 1, 10000000}};
  for (const auto& [flag, value, quick, what, lo, hi] : sizes)
    app.add_option(flag, *value, std::string(what) + " (--quick: " + std::to_string(quick) + ")")->check(CLI::Range(lo, hi));
  CLI11_PARSE(app, argc, argv);
  for (const auto& [flag, value, quick, what, lo, hi] : sizes)
    if (o.quick && app.count(flag) == 0) *value = quick;
  return ember::examples::run("lesson_c_race", [&] { return program(o); });
}
