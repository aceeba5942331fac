// The recurrent cells and the LSTM over a sequence (nn/recurrent.cpp). Each
// fn builds a small module and points its weight handles at the inputs;
// several outputs are returned as one (flat_cat).
//
// Legend: B batch, T time steps, I input size, H hidden size.
#include <memory>

#include "autograd/ops.h"
#include "inputs.h"
#include "nn/recurrent.h"

namespace ember::samples {

using namespace ember::nn;

void add_nn_recurrent_samples(std::vector<OpInfo>& ops) {
  // x (B, I), h (B, H), W_x (H, I), b (H), W_h (H, H) -> h_t (B, H)
  ops.push_back({.name = "nn.RNNCell",
                 .nodes = {"PermuteBackward", "MatmulBackward", "AddBackward", "TanhBackward"},
                 .fn =
                     [](const Inputs& in) {
                       Generator init(0);  // the weights no input replaces: the same at every call
                       RNNCell cell(in[2].size(1), in[2].size(0), {.dtype = kFloat64, .generator = &init});
                       cell.w_x->weight = in[2];
                       cell.w_x->bias = in[3];
                       cell.w_h->weight = in[4];
                       return cell.forward(in[0], in[1]);
                     },
                 .samples = [](Generator& g) -> Samples {
                   return {{"B = 2", {normal_leaf(g, {2, 3}), normal_leaf(g, {2, 2}), normal_leaf(g, {2, 3}), normal_leaf(g, {2}), normal_leaf(g, {2, 2})}},
                           {"non-contiguous x, h, W_x",
                            {transposed(normal_values(g, {2, 3})), transposed(normal_values(g, {2, 2})), transposed(normal_values(g, {2, 3})), normal_leaf(g, {2}),
                             normal_leaf(g, {2, 2})}}};
                 }});

  // x (B, I), h, c (B, H), W_ih (4H, I), W_hh (4H, H), b_ih, b_hh (4H) -> [h_t, c_t]
  auto lstm_cell_inputs = [](Generator& g, Tensor x, Tensor h, Tensor c) {
    return Inputs{x, h, c, normal_leaf(g, {8, 3}), normal_leaf(g, {8, 2}), normal_leaf(g, {8}), normal_leaf(g, {8})};
  };
  ops.push_back({.name = "nn.LSTMCell",
                 .nodes = {"PermuteBackward", "MatmulBackward", "AddBackward", "SliceBackward", "SigmoidBackward",
                           "TanhBackward", "MulBackward", "ReshapeBackward", "CatBackward"},
                 .fn =
                     [](const Inputs& in) {
                       Generator init(0);  // the weights no input replaces: the same at every call
                       LSTMCell cell(in[3].size(1), in[4].size(1), {.dtype = kFloat64, .generator = &init});
                       cell.weight_ih = in[3];
                       cell.weight_hh = in[4];
                       cell.bias_ih = in[5];
                       cell.bias_hh = in[6];
                       LSTMState next = cell.forward(in[0], {in[1], in[2]});
                       return flat_cat({next.h, next.c});
                     },
                 .samples = [lstm_cell_inputs](Generator& g) -> Samples {
                   return {{"B = 2", lstm_cell_inputs(g, normal_leaf(g, {2, 3}), normal_leaf(g, {2, 2}), normal_leaf(g, {2, 2}))},
                           {"non-contiguous x, h, c",
                            lstm_cell_inputs(g, transposed(normal_values(g, {2, 3})), transposed(normal_values(g, {2, 2})),
                                             transposed(normal_values(g, {2, 2})))}};
                 }});

  // x (B, I), h (B, H), W_z, W_r, W_h (H, I), b_z, b_r, b_h (H), U_z, U_r, U_h (H, H) -> h_t
  auto gru_cell_inputs = [](Generator& g, Tensor x, Tensor h) {
    Inputs in{x, h};
    for (int k = 0; k < 3; ++k) in.push_back(normal_leaf(g, {2, 3}));
    for (int k = 0; k < 3; ++k) in.push_back(normal_leaf(g, {2}));
    for (int k = 0; k < 3; ++k) in.push_back(normal_leaf(g, {2, 2}));
    return in;
  };
  ops.push_back({.name = "nn.GRUCell",
                 .nodes = {"PermuteBackward", "MatmulBackward", "AddBackward", "SigmoidBackward", "TanhBackward",
                           "MulBackward", "MulScalarBackward"},  // 1 - z records MulScalarBackward (by -1)
                 .fn =
                     [](const Inputs& in) {
                       Generator init(0);  // the weights no input replaces: the same at every call
                       GRUCell cell(in[2].size(1), in[2].size(0), {.dtype = kFloat64, .generator = &init});
                       std::shared_ptr<Linear> w[] = {cell.w_z, cell.w_r, cell.w_h}, u[] = {cell.u_z, cell.u_r, cell.u_h};
                       for (int k = 0; k < 3; ++k) {
                         w[k]->weight = in[2 + k];
                         w[k]->bias = in[5 + k];
                         u[k]->weight = in[8 + k];
                       }
                       return cell.forward(in[0], in[1]);
                     },
                 .samples = [gru_cell_inputs](Generator& g) -> Samples {
                   return {{"B = 2", gru_cell_inputs(g, normal_leaf(g, {2, 3}), normal_leaf(g, {2, 2}))},
                           {"non-contiguous x, h", gru_cell_inputs(g, transposed(normal_values(g, {2, 3})), transposed(normal_values(g, {2, 2})))}};
                 }});

  // x (B, T, I), h0, c0 (B, H), W_ih, W_hh, b_ih, b_hh -> [outputs (B, T, H), h_T, c_T]
  auto lstm_inputs = [](Generator& g, Tensor x, Tensor h0, Tensor c0) {
    return Inputs{x, h0, c0, normal_leaf(g, {8, 2}), normal_leaf(g, {8, 2}), normal_leaf(g, {8}), normal_leaf(g, {8})};
  };
  ops.push_back({.name = "nn.LSTM",
                 .nodes = {"PermuteBackward", "MatmulBackward", "AddBackward", "SliceBackward", "SigmoidBackward",
                           "TanhBackward", "MulBackward", "ReshapeBackward", "CatBackward"},
                 .fn =
                     [](const Inputs& in) {
                       Generator init(0);  // the weights no input replaces: the same at every call
                       LSTM lstm(in[3].size(1), in[4].size(1), {.dtype = kFloat64, .generator = &init});
                       lstm.cell->weight_ih = in[3];
                       lstm.cell->weight_hh = in[4];
                       lstm.cell->bias_ih = in[5];
                       lstm.cell->bias_hh = in[6];
                       auto [y, state] = lstm.forward(in[0], LSTMState{in[1], in[2]});
                       return flat_cat({y, state.h, state.c});
                     },
                 .samples = [lstm_inputs](Generator& g) -> Samples {
                   return {{"T = 3, through the initial state", lstm_inputs(g, normal_leaf(g, {2, 3, 2}), normal_leaf(g, {2, 2}), normal_leaf(g, {2, 2}))},
                           {"time-major x (non-contiguous), zero initial state (constant)",
                            lstm_inputs(g, time_major(normal_values(g, {2, 3, 2})), zeros({2, 2}, kFloat64), zeros({2, 2}, kFloat64))},
                           {"T = 0 (the state passes through)",
                            lstm_inputs(g, normal_leaf(g, {1, 0, 2}), normal_leaf(g, {1, 2}), normal_leaf(g, {1, 2}))}};
                 }});
}

}  // namespace ember::samples
