// lesson_c_race, part 2 of 7: each model's modules and forward pass (the
// shapes are in the comments; models.h says what each model is), then the
// widths that give every model the same parameter budget.
#include "lesson_c_race/models.h"

#include <cstdlib>

#include "lesson_c_race/format.h"

namespace lesson_c {

Input::Input(const TaskShape& task, int64_t E, double std, Generator& gen) {
  table = register_module("table", std::make_shared<nn::Embedding>(task.vocab, E, nn::EmbeddingOptions{.generator = &gen}));
  nn::init::normal_(table->weight, 0.0, std, gen);
}

Tensor Input::forward(const Tensor& ids) const {
  nn::ModuleScope scope(*this);
  return table->forward(ids);
}

WindowMLP::WindowMLP(const TaskShape& task, int64_t w, int64_t E, int64_t H, double std, Generator& gen) : w_(w) {
  const nn::LinearOptions o{.generator = &gen};
  input = register_module("input", std::make_shared<Input>(task, E, std, gen));
  fc1 = register_module("fc1", std::make_shared<nn::Linear>(w * E, H, o));
  head = register_module("head", std::make_shared<nn::Linear>(H, task.classes, o));
}

Tensor WindowMLP::logits(const Batch& b) {
  nn::ModuleScope scope(*this);
  Tensor x = input->forward(b.ids);  // (B, T, E)
  const int64_t B = x.size(0), T = x.size(1), E = x.size(2);
  Tensor padded = cat({zeros({B, w_ - 1, E}), x}, 1);  // (B, w-1+T, E)
  std::vector<Tensor> views;                           // view j: the input w-1-j steps back
  for (int64_t j = 0; j < w_; ++j) views.push_back(padded.narrow(1, j, T));
  return head->forward(tanh(fc1->forward(cat(views, 2))));  // (B, T, w*E) -> (B, T, H) -> (B, T, classes)
}

RecurrentLM::RecurrentLM(Kind kind, const TaskShape& task, int64_t E, int64_t H, double std, Generator& gen)
    : kind_(kind), H_(H) {
  const nn::InitOptions o{.generator = &gen};
  input = register_module("input", std::make_shared<Input>(task, E, std, gen));
  if (kind == Kind::RNN) rnn = register_module("rnn", std::make_shared<nn::RNN>(E, H, o));
  if (kind == Kind::LSTM) lstm = register_module("lstm", std::make_shared<nn::LSTM>(E, H, o));
  if (kind == Kind::GRU) gru = register_module("gru", std::make_shared<nn::GRU>(E, H, o));
  head = register_module("head", std::make_shared<nn::Linear>(H, task.classes, nn::LinearOptions{.generator = &gen}));
}

Tensor RecurrentLM::run(const Batch& b, std::vector<Tensor>* keep_h, std::vector<Tensor>* keep_c) {
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

TransformerLM::TransformerLM(const TaskShape& task, int64_t D, int64_t heads, int64_t layers, double std,
                             Generator& gen) {
  input = register_module("input", std::make_shared<Input>(task, D, std, gen));
  pos = register_module(
      "pos", std::make_shared<nn::LearnedPositionalEmbedding>(task.context, D, nn::InitOptions{.generator = &gen}));
  nn::init::normal_(pos->weight, 0.0, std, gen);
  blocks = register_module("blocks", std::make_shared<nn::ModuleList<nn::TransformerBlock>>());
  // Lesson C's attention as the lesson writes it: the T x T weights computed
  // and kept (the stored kernel; chapter 15 shows the tiled one).
  for (int64_t l = 0; l < layers; ++l)
    blocks->push_back(std::make_shared<nn::TransformerBlock>(
        D, heads, nn::TransformerBlockOptions{.causal = true, .attention = nn::AttentionKernel::Stored, .generator = &gen}));
  ln = register_module("ln", std::make_shared<nn::LayerNorm>(D));
  head = register_module("head", std::make_shared<nn::Linear>(D, task.classes, nn::LinearOptions{.generator = &gen}));
}

Tensor TransformerLM::logits(const Batch& b) {
  nn::ModuleScope scope(*this);
  Tensor x = input->forward(b.ids) + pos->forward(b.ids.size(1));  // (B, T, D) + (T, D)
  for (auto& block : *blocks) x = block->forward(x);
  return head->forward(ln->forward(x));
}

Seq2seqAttention::Seq2seqAttention(const TaskShape& task, int64_t E, int64_t H, double std, bool feedback,
                                   Generator& gen)
    : feedback_(feedback) {
  const nn::InitOptions o{.generator = &gen};
  input = register_module("input", std::make_shared<Input>(task, E, std, gen));  // shared by source and decoder
  enc_fwd = register_module("enc_fwd", std::make_shared<nn::GRU>(E, H, o));
  enc_bwd = register_module("enc_bwd", std::make_shared<nn::GRU>(E, H, o));
  dec = register_module("dec", std::make_shared<nn::GRUCell>(feedback ? E + 2 * H : E, H, o));
  attn = register_module("attn", std::make_shared<nn::AdditiveAttention>(H, 2 * H, H, o));
  head = register_module("head", std::make_shared<nn::Linear>(3 * H, task.classes, nn::LinearOptions{.generator = &gen}));
}

std::pair<Tensor, Tensor> Seq2seqAttention::run(const Batch& b) {
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

}  // namespace lesson_c
