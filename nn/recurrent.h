/// @file
/// Recurrent cells (lesson C): one time step each, and sequence helpers that
/// unroll a cell over (B, T, I) so backward() does backpropagation through time.
///
/// Legend: B batch, T time steps, I input size, H hidden size.
#pragma once

#include <optional>
#include <utility>

#include "nn/init.h"
#include "nn/layers.h"

namespace ember::nn {

/// h_t = tanh(W_x x_t + W_h h_{t-1} + b)
class RNNCell : public Module {
 public:
  RNNCell(int64_t input_size, int64_t hidden_size, const InitOptions& options = {});
  Tensor forward(const Tensor& x, const Tensor& h) const;  // x:(B,I) h:(B,H) -> (B,H)
  std::string type_name() const override { return "RNNCell"; }
  std::string extra_repr() const override;
  int64_t hidden_size() const { return hidden_; }

  std::shared_ptr<Linear> w_x;  // (H, I) with the bias b
  std::shared_ptr<Linear> w_h;  // (H, H), no bias

 private:
  int64_t hidden_;
};

/// The modern LSTM with a forget gate. Weights are laid out like PyTorch's
/// (rows in gate order i, f, g, o) so PyTorch weights load unchanged:
///   [i f g o] = W_ih x + b_ih + W_hh h + b_hh
///   i, f, o = sigmoid(.), g = tanh(.)
///   c_t = f ⊙ c_{t-1} + i ⊙ g,  h_t = o ⊙ tanh(c_t)
/// An LSTM's state: the hidden state h (what the next layer sees) and the
/// cell state c (the memory the gates write to), each (B, H).
struct LSTMState {
  Tensor h, c;
};

class LSTMCell : public Module {
 public:
  LSTMCell(int64_t input_size, int64_t hidden_size, const InitOptions& options = {});
  /// x:(B,I), state (h, c) each (B,H) -> (h_t, c_t)
  LSTMState forward(const Tensor& x, const LSTMState& state) const;
  std::string type_name() const override { return "LSTMCell"; }
  std::string extra_repr() const override;
  int64_t hidden_size() const { return hidden_; }

  Tensor weight_ih, weight_hh;  // (4H, I), (4H, H)
  Tensor bias_ih, bias_hh;      // (4H)

 private:
  int64_t hidden_;
};

/// The GRU in the lesson's convention, where z weights the NEW state:
///   z = sigmoid(W_z x + U_z h + b_z),  r = sigmoid(W_r x + U_r h + b_r)
///   h̃ = tanh(W_h x + U_h (r ⊙ h) + b_h)
///   h_t = (1 - z) ⊙ h_{t-1} + z ⊙ h̃
/// (PyTorch's GRU swaps the roles of z and 1 - z and applies r after U_h.)
class GRUCell : public Module {
 public:
  GRUCell(int64_t input_size, int64_t hidden_size, const InitOptions& options = {});
  Tensor forward(const Tensor& x, const Tensor& h) const;  // x:(B,I) h:(B,H) -> (B,H)
  std::string type_name() const override { return "GRUCell"; }
  std::string extra_repr() const override;
  int64_t hidden_size() const { return hidden_; }

  std::shared_ptr<Linear> w_z, w_r, w_h;  // x -> gate, with the biases
  std::shared_ptr<Linear> u_z, u_r, u_h;  // h -> gate, no bias

 private:
  int64_t hidden_;
};

/// Sequence helpers: x (B, T, I) -> outputs (B, T, H) and the last state.
/// A missing initial state is zeros.
class RNN : public Module {
 public:
  RNN(int64_t input_size, int64_t hidden_size, const InitOptions& options = {});
  std::pair<Tensor, Tensor> forward(const Tensor& x, std::optional<Tensor> h0 = std::nullopt) const;
  std::string type_name() const override { return "RNN"; }
  std::shared_ptr<RNNCell> cell;
};
class LSTM : public Module {
 public:
  LSTM(int64_t input_size, int64_t hidden_size, const InitOptions& options = {});
  /// -> (outputs (B,T,H), state at T)
  std::pair<Tensor, LSTMState> forward(const Tensor& x, std::optional<LSTMState> state = std::nullopt) const;
  std::string type_name() const override { return "LSTM"; }
  std::shared_ptr<LSTMCell> cell;
};
class GRU : public Module {
 public:
  GRU(int64_t input_size, int64_t hidden_size, const InitOptions& options = {});
  std::pair<Tensor, Tensor> forward(const Tensor& x, std::optional<Tensor> h0 = std::nullopt) const;
  std::string type_name() const override { return "GRU"; }
  std::shared_ptr<GRUCell> cell;
};

}  // namespace ember::nn
