#include "nn/recurrent.h"

#include <cmath>

#include "nn/init.h"
#include "tensor/factory.h"

namespace ember::nn {

namespace {
void check_step(const char* op, const Tensor& x, int64_t I, const Tensor& h, int64_t H) {
  EMBER_CHECK(x.dim() == 2 && x.size(1) == I, op, "input must be (B, " << I << "), got " << shape_str(x.shape()));
  EMBER_CHECK(h.dim() == 2 && h.size(0) == x.size(0) && h.size(1) == H, op,
              "state must be (" << x.size(0) << ", " << H << "), got " << shape_str(h.shape()));
}
void check_sequence(const char* op, const Tensor& x, int64_t I) {
  EMBER_CHECK(x.dim() == 3 && x.size(2) == I, op, "input must be (B, T, " << I << "), got " << shape_str(x.shape()));
}
std::string sizes(int64_t I, int64_t H) { return std::to_string(I) + ", " + std::to_string(H); }
}  // namespace

// ---- RNN ----
RNNCell::RNNCell(int64_t I, int64_t H, const InitOptions& o) : hidden_(H) {
  Generator* gen = &init::generator(o.generator);
  w_x = register_module("w_x", std::make_shared<Linear>(I, H, LinearOptions{.bias = true, .dtype = o.dtype, .generator = gen}));
  w_h = register_module("w_h", std::make_shared<Linear>(H, H, LinearOptions{.bias = false, .dtype = o.dtype, .generator = gen}));
}
Tensor RNNCell::forward(const Tensor& x, const Tensor& h) const {
  ModuleScope scope(*this);
  check_step("RNNCell", x, w_x->weight.size(1), h, hidden_);
  return tanh(w_x->forward(x) + w_h->forward(h));
}
std::string RNNCell::extra_repr() const { return sizes(w_x->weight.size(1), hidden_); }

// ---- LSTM ----
LSTMCell::LSTMCell(int64_t I, int64_t H, const InitOptions& o) : hidden_(H) {
  EMBER_CHECK(I > 0 && H > 0, "LSTMCell", "input_size " << I << " and hidden_size " << H << " must be positive");
  Generator& gen = init::generator(o.generator);
  const double bound = 1.0 / std::sqrt(static_cast<double>(H));  // PyTorch's init for recurrent weights
  auto make = [&](Shape s) {
    Tensor t = empty(s, o.dtype, "LSTMCell");
    init::uniform_(t, -bound, bound, gen);
    return t;
  };
  weight_ih = register_parameter("weight_ih", make({4 * H, I}));
  weight_hh = register_parameter("weight_hh", make({4 * H, H}));
  bias_ih = register_parameter("bias_ih", make({4 * H}));
  bias_hh = register_parameter("bias_hh", make({4 * H}));
}
LSTMState LSTMCell::forward(const Tensor& x, const LSTMState& state) const {
  ModuleScope scope(*this);
  const Tensor &h = state.h, &c = state.c;
  check_step("LSTMCell", x, weight_ih.size(1), h, hidden_);
  check_step("LSTMCell", x, weight_ih.size(1), c, hidden_);
  const int64_t H = hidden_;
  Tensor gates = linear(x, weight_ih, bias_ih) + linear(h, weight_hh, bias_hh);  // (B, 4H)
  Tensor i = sigmoid(narrow(gates, 1, 0, H));
  Tensor f = sigmoid(narrow(gates, 1, H, H));
  Tensor g = tanh(narrow(gates, 1, 2 * H, H));
  Tensor o = sigmoid(narrow(gates, 1, 3 * H, H));
  Tensor c_t = f * c + i * g;
  Tensor h_t = o * tanh(c_t);
  return {h_t, c_t};
}
std::string LSTMCell::extra_repr() const { return sizes(weight_ih.size(1), hidden_); }

// ---- GRU ----
GRUCell::GRUCell(int64_t I, int64_t H, const InitOptions& o) : hidden_(H) {
  const LinearOptions from_x{.bias = true, .dtype = o.dtype, .generator = &init::generator(o.generator)};
  LinearOptions from_h = from_x;
  from_h.bias = false;
  w_z = register_module("w_z", std::make_shared<Linear>(I, H, from_x));
  w_r = register_module("w_r", std::make_shared<Linear>(I, H, from_x));
  w_h = register_module("w_h", std::make_shared<Linear>(I, H, from_x));
  u_z = register_module("u_z", std::make_shared<Linear>(H, H, from_h));
  u_r = register_module("u_r", std::make_shared<Linear>(H, H, from_h));
  u_h = register_module("u_h", std::make_shared<Linear>(H, H, from_h));
}
Tensor GRUCell::forward(const Tensor& x, const Tensor& h) const {
  ModuleScope scope(*this);
  check_step("GRUCell", x, w_z->weight.size(1), h, hidden_);
  Tensor z = sigmoid(w_z->forward(x) + u_z->forward(h));
  Tensor r = sigmoid(w_r->forward(x) + u_r->forward(h));
  Tensor h_tilde = tanh(w_h->forward(x) + u_h->forward(r * h));
  return (1.0 - z) * h + z * h_tilde;
}
std::string GRUCell::extra_repr() const { return sizes(w_z->weight.size(1), hidden_); }

// ---- sequences: a plain loop over time; autograd records every step, so
// backward() through the outputs is backpropagation through time ----
namespace {
// The outputs of every step, (B, T, H); T = 0 gives an empty (B, 0, H).
Tensor stack_steps(const std::vector<Tensor>& outs, const Tensor& x, int64_t H) {
  return outs.empty() ? zeros({x.size(0), 0, H}, x.dtype()) : stack(outs, 1);
}

// For the cells whose state is one tensor (RNN, GRU): h_t = cell(x_t, h_{t-1})
// for t = 0..T-1; returns every h_t as (B, T, H), and h_T.
template <typename Cell>
std::pair<Tensor, Tensor> run_over_time(const Cell& cell, const Tensor& x, Tensor h) {
  std::vector<Tensor> outs;
  for (int64_t t = 0; t < x.size(1); ++t) {
    h = cell.forward(select(x, 1, t), h);  // x_t: (B, I)
    outs.push_back(h);
  }
  return {stack_steps(outs, x, cell.hidden_size()), h};
}
}  // namespace

RNN::RNN(int64_t I, int64_t H, const InitOptions& o) {
  cell = register_module("cell", std::make_shared<RNNCell>(I, H, o));
}
std::pair<Tensor, Tensor> RNN::forward(const Tensor& x, std::optional<Tensor> h0) const {
  ModuleScope scope(*this);
  check_sequence("RNN", x, cell->w_x->weight.size(1));
  return run_over_time(*cell, x, h0 ? *h0 : zeros({x.size(0), cell->hidden_size()}, x.dtype()));
}

LSTM::LSTM(int64_t I, int64_t H, const InitOptions& o) {
  cell = register_module("cell", std::make_shared<LSTMCell>(I, H, o));
}
std::pair<Tensor, LSTMState> LSTM::forward(const Tensor& x, std::optional<LSTMState> state) const {
  ModuleScope scope(*this);
  check_sequence("LSTM", x, cell->weight_ih.size(1));
  const Shape s{x.size(0), cell->hidden_size()};
  LSTMState st = state ? *state : LSTMState{zeros(s, x.dtype()), zeros(s, x.dtype())};
  std::vector<Tensor> outs;
  for (int64_t t = 0; t < x.size(1); ++t) {
    st = cell->forward(select(x, 1, t), st);
    outs.push_back(st.h);
  }
  return {stack_steps(outs, x, cell->hidden_size()), st};
}

GRU::GRU(int64_t I, int64_t H, const InitOptions& o) {
  cell = register_module("cell", std::make_shared<GRUCell>(I, H, o));
}
std::pair<Tensor, Tensor> GRU::forward(const Tensor& x, std::optional<Tensor> h0) const {
  ModuleScope scope(*this);
  check_sequence("GRU", x, cell->w_z->weight.size(1));
  return run_over_time(*cell, x, h0 ? *h0 : zeros({x.size(0), cell->hidden_size()}, x.dtype()));
}

}  // namespace ember::nn
