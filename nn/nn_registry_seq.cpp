// Registry entries for lesson C's modules (see nn/nn_registry_seq.h).
//
// Each entry calls what a learner calls — a module's forward() or the
// functional form — on float64 inputs. A module owns its weights, so each fn
// builds a small module and points its public weight handles at the inputs
// (as nn/nn_registry.cpp does): gradcheck then perturbs exactly the tensors
// forward() reads. Weights a fn does not take keep their seeded init.
//
// Ops with several outputs (an LSTM's h and c, attention's context and
// weights) return them flattened and concatenated, so one Jacobian covers all
// of them; that is why CatBackward appears in their node lists.
//
// Legend: B batch, T time steps (Tq queries, Tk keys), I input size, H hidden
//         size, D model dim, C classes.
#include "nn/nn_registry_seq.h"

#include <limits>
#include <memory>

#include "autograd/op_registry.h"
#include "autograd/ops.h"
#include "nn/attention.h"
#include "nn/layers.h"
#include "nn/loss.h"
#include "nn/recurrent.h"
#include "tensor/factory.h"

namespace ember::nn {

namespace {

using Inputs = std::vector<Tensor>;
using Samples = std::vector<OpSample>;

// A float64 N(0, 1) leaf that requires grad (scaled, for recurrent weights
// that should not saturate tanh).
Tensor leaf(Generator& g, const Shape& s, double scale = 1.0) {
  return (randn(s, g, kFloat64) * scale).detach().requires_grad_();
}
// The same values laid out with the last two dims transposed in memory.
Tensor transposed_leaf(Generator& g, const Shape& s) {
  Shape swapped = s;
  std::swap(swapped[s.size() - 1], swapped[s.size() - 2]);
  return randn(swapped, g, kFloat64).transpose(-1, -2).detach().requires_grad_();
}
// A (B, T, F) sequence stored time-major, (T, B, F) in memory.
Tensor time_major_leaf(Generator& g, const Shape& s) {
  return randn({s[1], s[0], s[2]}, g, kFloat64).transpose(0, 1).detach().requires_grad_();
}
Tensor ids(const std::vector<int64_t>& v, const Shape& s) { return tensor(v, s); }
Tensor bools(const std::vector<bool>& v, const Shape& s) { return tensor(v, s); }
// Concatenated flat outputs: one Jacobian for several results.
Tensor flat_cat(const std::vector<Tensor>& ts) {
  std::vector<Tensor> flat;
  for (const Tensor& t : ts) flat.push_back(t.flatten());
  return cat(flat, 0);
}

void add_layer_ops(std::vector<OpInfo>& ops) {
  // x (*, I), W (O, I) [, b (O)] -> (*, O)
  ops.push_back({.name = "nn.Linear",
                 .nodes = {"PermuteBackward", "MatmulBackward", "AddBackward"},
                 .fn =
                     [](const Inputs& in) {
                       Linear lin(in[1].size(1), in[1].size(0), in.size() > 2, /*seed=*/0, kFloat64);
                       lin.weight = in[1];
                       if (in.size() > 2) lin.bias = in[2];
                       return lin.forward(in[0]);
                     },
                 .samples = [](Generator& g) -> Samples {
                   return {{"(N, I)", {leaf(g, {3, 4}), leaf(g, {2, 4}), leaf(g, {2})}},
                           {"(B, T, I)", {leaf(g, {2, 3, 4}), leaf(g, {2, 4}), leaf(g, {2})}},
                           {"non-contiguous x and W", {transposed_leaf(g, {3, 4}), transposed_leaf(g, {2, 4}), leaf(g, {2})}},
                           {"no bias", {leaf(g, {3, 2}), leaf(g, {3, 2})}},
                           {"zero-size (N = 0)", {leaf(g, {0, 3}), leaf(g, {2, 3}), leaf(g, {2})}}};
                 }});

  // x (*, D), weight (D), bias (D) -> (*, D)
  ops.push_back({.name = "nn.layer_norm",
                 .nodes = {"LayerNormBackward"},
                 .fn = [](const Inputs& in) { return layer_norm(in[0], in[1], in[2]); },
                 .samples = [](Generator& g) -> Samples {
                   return {{"(N, D)", {leaf(g, {3, 5}), leaf(g, {5}), leaf(g, {5})}},
                           {"(B, T, D)", {leaf(g, {2, 3, 4}), leaf(g, {4}), leaf(g, {4})}},
                           {"non-contiguous x", {transposed_leaf(g, {3, 4}), leaf(g, {4}), leaf(g, {4})}},
                           {"weight and bias are constants", {leaf(g, {2, 3}), randn({3}, g, kFloat64), randn({3}, g, kFloat64)}},
                           {"zero-size (N = 0)", {leaf(g, {0, 3}), leaf(g, {3}), leaf(g, {3})}}};
                 }});

  // x (any) -> x * mask / (1 - p); a fixed seed inside fn, so every call of
  // the function (gradcheck calls it many times) draws the same mask
  ops.push_back({.name = "nn.dropout",
                 .nodes = {"MulBackward"},
                 .fn =
                     [](const Inputs& in) {
                       Generator gen(5);
                       return dropout(in[0], 0.4, gen);
                     },
                 .samples = [](Generator& g) -> Samples {
                   return {{"contiguous", {leaf(g, {3, 4})}},
                           {"non-contiguous (transposed)", {transposed_leaf(g, {3, 4})}},
                           {"zero-size", {leaf(g, {0, 3})}}};
                 }});
}

void add_loss_ops(std::vector<OpInfo>& ops) {
  // logits (N, C) or (B, T, C), targets int64 -> () or per-target losses
  auto ce_samples = [](Generator& g) -> Samples {
    return {{"(N, C)", {leaf(g, {3, 4}), ids({0, 3, 2}, {3})}},
            {"(B, T, C)", {leaf(g, {2, 2, 3}), ids({0, 2, 1, 1}, {2, 2})}},
            {"ignore_index -100 (not counted)", {leaf(g, {3, 4}), ids({1, -100, 3}, {3})}},
            {"non-contiguous logits", {transposed_leaf(g, {3, 4}), ids({2, 2, 0}, {3})}}};
  };
  auto ce = [](Reduction r) {
    return [r](const Inputs& in) { return cross_entropy(in[0], in[1], r); };
  };
  ops.push_back({.name = "nn.cross_entropy", .nodes = {"CrossEntropyBackward"}, .fn = ce(Reduction::Mean),
                 .samples = ce_samples});
  ops.push_back({.name = "nn.cross_entropy(sum)", .nodes = {"CrossEntropyBackward"}, .fn = ce(Reduction::Sum),
                 .samples = ce_samples});
  ops.push_back({.name = "nn.cross_entropy(none)", .nodes = {"CrossEntropyBackward"}, .fn = ce(Reduction::None),
                 .samples = ce_samples});

  // input, target (broadcast) -> mean of squared differences
  ops.push_back({.name = "nn.mse_loss",
                 .nodes = {"AddBackward", "MulBackward", "SumBackward"},  // sub records AddBackward (b scaled by -1)
                 .fn = [](const Inputs& in) { return mse_loss(in[0], in[1]); },
                 .samples = [](Generator& g) -> Samples {
                   return {{"same shape", {leaf(g, {2, 3}), leaf(g, {2, 3})}},
                           {"broadcast target", {leaf(g, {2, 3}), leaf(g, {3})}},
                           {"non-contiguous", {transposed_leaf(g, {3, 4}), leaf(g, {3, 4})}},
                           {"target is a constant", {leaf(g, {4}), randn({4}, g, kFloat64)}}};
                 }});
}

void add_recurrent_ops(std::vector<OpInfo>& ops) {
  // x (B, I), h (B, H), W_x (H, I), b (H), W_h (H, H) -> h_t (B, H)
  ops.push_back({.name = "nn.RNNCell",
                 .nodes = {"PermuteBackward", "MatmulBackward", "AddBackward", "TanhBackward"},
                 .fn =
                     [](const Inputs& in) {
                       RNNCell cell(in[2].size(1), in[2].size(0), 0, kFloat64);
                       cell.w_x->weight = in[2];
                       cell.w_x->bias = in[3];
                       cell.w_h->weight = in[4];
                       return cell.forward(in[0], in[1]);
                     },
                 .samples = [](Generator& g) -> Samples {
                   return {{"B = 2", {leaf(g, {2, 3}), leaf(g, {2, 2}), leaf(g, {2, 3}), leaf(g, {2}), leaf(g, {2, 2})}},
                           {"non-contiguous x, h, W_x",
                            {transposed_leaf(g, {2, 3}), transposed_leaf(g, {2, 2}), transposed_leaf(g, {2, 3}), leaf(g, {2}),
                             leaf(g, {2, 2})}}};
                 }});

  // x (B, I), h, c (B, H), W_ih (4H, I), W_hh (4H, H), b_ih, b_hh (4H) -> [h_t, c_t]
  auto lstm_cell_inputs = [](Generator& g, Tensor x, Tensor h, Tensor c) {
    return Inputs{x, h, c, leaf(g, {8, 3}), leaf(g, {8, 2}), leaf(g, {8}), leaf(g, {8})};
  };
  ops.push_back({.name = "nn.LSTMCell",
                 .nodes = {"PermuteBackward", "MatmulBackward", "AddBackward", "SliceBackward", "SigmoidBackward",
                           "TanhBackward", "MulBackward", "ReshapeBackward", "CatBackward"},
                 .fn =
                     [](const Inputs& in) {
                       LSTMCell cell(in[3].size(1), in[4].size(1), 0, kFloat64);
                       cell.weight_ih = in[3];
                       cell.weight_hh = in[4];
                       cell.bias_ih = in[5];
                       cell.bias_hh = in[6];
                       auto [h, c] = cell.forward(in[0], in[1], in[2]);
                       return flat_cat({h, c});
                     },
                 .samples = [lstm_cell_inputs](Generator& g) -> Samples {
                   return {{"B = 2", lstm_cell_inputs(g, leaf(g, {2, 3}), leaf(g, {2, 2}), leaf(g, {2, 2}))},
                           {"non-contiguous x, h, c",
                            lstm_cell_inputs(g, transposed_leaf(g, {2, 3}), transposed_leaf(g, {2, 2}),
                                             transposed_leaf(g, {2, 2}))}};
                 }});

  // x (B, I), h (B, H), W_z, W_r, W_h (H, I), b_z, b_r, b_h (H), U_z, U_r, U_h (H, H) -> h_t
  auto gru_cell_inputs = [](Generator& g, Tensor x, Tensor h) {
    Inputs in{x, h};
    for (int k = 0; k < 3; ++k) in.push_back(leaf(g, {2, 3}));
    for (int k = 0; k < 3; ++k) in.push_back(leaf(g, {2}));
    for (int k = 0; k < 3; ++k) in.push_back(leaf(g, {2, 2}));
    return in;
  };
  ops.push_back({.name = "nn.GRUCell",
                 .nodes = {"PermuteBackward", "MatmulBackward", "AddBackward", "SigmoidBackward", "TanhBackward",
                           "MulBackward", "MulScalarBackward"},  // 1 - z records MulScalarBackward (by -1)
                 .fn =
                     [](const Inputs& in) {
                       GRUCell cell(in[2].size(1), in[2].size(0), 0, kFloat64);
                       std::shared_ptr<Linear> w[] = {cell.w_z, cell.w_r, cell.w_h}, u[] = {cell.u_z, cell.u_r, cell.u_h};
                       for (int k = 0; k < 3; ++k) {
                         w[k]->weight = in[2 + k];
                         w[k]->bias = in[5 + k];
                         u[k]->weight = in[8 + k];
                       }
                       return cell.forward(in[0], in[1]);
                     },
                 .samples = [gru_cell_inputs](Generator& g) -> Samples {
                   return {{"B = 2", gru_cell_inputs(g, leaf(g, {2, 3}), leaf(g, {2, 2}))},
                           {"non-contiguous x, h", gru_cell_inputs(g, transposed_leaf(g, {2, 3}), transposed_leaf(g, {2, 2}))}};
                 }});

  // x (B, T, I), h0, c0 (B, H), W_ih, W_hh, b_ih, b_hh -> [outputs (B, T, H), h_T, c_T]
  auto lstm_inputs = [](Generator& g, Tensor x, Tensor h0, Tensor c0) {
    return Inputs{x, h0, c0, leaf(g, {8, 2}), leaf(g, {8, 2}), leaf(g, {8}), leaf(g, {8})};
  };
  ops.push_back({.name = "nn.LSTM",
                 .nodes = {"PermuteBackward", "MatmulBackward", "AddBackward", "SliceBackward", "SigmoidBackward",
                           "TanhBackward", "MulBackward", "ReshapeBackward", "CatBackward"},
                 .fn =
                     [](const Inputs& in) {
                       LSTM lstm(in[3].size(1), in[4].size(1), 0, kFloat64);
                       lstm.cell->weight_ih = in[3];
                       lstm.cell->weight_hh = in[4];
                       lstm.cell->bias_ih = in[5];
                       lstm.cell->bias_hh = in[6];
                       auto [y, state] = lstm.forward(in[0], std::make_pair(in[1], in[2]));
                       return flat_cat({y, state.first, state.second});
                     },
                 .samples = [lstm_inputs](Generator& g) -> Samples {
                   return {{"T = 3, through the initial state", lstm_inputs(g, leaf(g, {2, 3, 2}), leaf(g, {2, 2}), leaf(g, {2, 2}))},
                           {"time-major x (non-contiguous), zero initial state (constant)",
                            lstm_inputs(g, time_major_leaf(g, {2, 3, 2}), zeros({2, 2}, kFloat64), zeros({2, 2}, kFloat64))},
                           {"T = 0 (the state passes through)",
                            lstm_inputs(g, leaf(g, {1, 0, 2}), leaf(g, {1, 2}), leaf(g, {1, 2}))}};
                 }});
}

void add_attention_ops(std::vector<OpInfo>& ops) {
  const double neg_inf = -std::numeric_limits<double>::infinity();
  // q (…, Tq, d), k (…, Tk, d), v (…, Tk, dv) [, mask (bool: true = keep; float: added)] -> (…, Tq, dv)
  auto sdpa = [](bool causal) {
    return [causal](const Inputs& in) {
      return scaled_dot_product_attention(in[0], in[1], in[2], in.size() > 3 ? in[3] : Tensor(), causal).output;
    };
  };
  ops.push_back({.name = "nn.sdpa",
                 .nodes = {"PermuteBackward", "MatmulBackward", "MulScalarBackward", "MaskedFillBackward",
                           "AddBackward", "SoftmaxBackward"},
                 .fn = sdpa(false),
                 .samples = [neg_inf](Generator& g) -> Samples {
                   return {{"Tq != Tk", {leaf(g, {2, 2}), leaf(g, {3, 2}), leaf(g, {3, 3})}},
                           {"(B, h, T, d)", {leaf(g, {1, 2, 3, 2}), leaf(g, {1, 2, 3, 2}), leaf(g, {1, 2, 3, 2})}},
                           {"bool mask with a fully masked row",
                            {leaf(g, {3, 2}), leaf(g, {3, 2}), leaf(g, {3, 2}),
                             bools({true, false, true, false, false, false, true, true, false}, {3, 3})}},
                           {"float mask (added, -inf blocks)",
                            {leaf(g, {2, 2}), leaf(g, {3, 2}), leaf(g, {3, 2}),
                             tensor(std::vector<double>{0.5, neg_inf, -1, 0, 0.3, 0.2}, {2, 3})}},
                           {"non-contiguous q, k, v",
                            {transposed_leaf(g, {3, 2}), transposed_leaf(g, {3, 2}), transposed_leaf(g, {3, 2})}}};
                 }});
  ops.push_back({.name = "nn.sdpa(causal)",
                 .nodes = {"PermuteBackward", "MatmulBackward", "MulScalarBackward", "MaskedFillBackward",
                           "SoftmaxBackward"},
                 .fn = sdpa(true),
                 .samples = [](Generator& g) -> Samples {
                   return {{"T = 4", {leaf(g, {4, 2}), leaf(g, {4, 2}), leaf(g, {4, 2})}},
                           {"batched, with a key-padding mask",
                            {leaf(g, {2, 3, 2}), leaf(g, {2, 3, 2}), leaf(g, {2, 3, 2}), bools({true, true, false}, {3})}},
                           {"non-contiguous q, k, v",
                            {transposed_leaf(g, {3, 2}), transposed_leaf(g, {3, 2}), transposed_leaf(g, {3, 2})}}};
                 }});

  // s (B, Dq), h (B, T, Dk), W (A, Dq), U (A, Dk), b_U (A), v (1, A) [, mask (B, T)] -> [context, weights]
  ops.push_back({.name = "nn.AdditiveAttention",
                 .nodes = {"PermuteBackward", "MatmulBackward", "AddBackward", "ReshapeBackward", "TanhBackward",
                           "MaskedFillBackward", "SoftmaxBackward", "CatBackward"},
                 .fn =
                     [](const Inputs& in) {
                       AdditiveAttention att(in[2].size(1), in[3].size(1), in[2].size(0), 0, kFloat64);
                       att.w->weight = in[2];
                       att.u->weight = in[3];
                       att.u->bias = in[4];
                       att.v->weight = in[5];
                       Attention a = att.forward(in[0], in[1], in.size() > 6 ? in[6] : Tensor());
                       return flat_cat({a.output, a.weights});
                     },
                 .samples = [](Generator& g) -> Samples {
                   auto params = [&g](Inputs in) {
                     for (const Shape& s : {Shape{4, 3}, Shape{4, 2}, Shape{4}, Shape{1, 4}}) in.push_back(leaf(g, s));
                     return in;
                   };
                   Inputs masked = params({leaf(g, {2, 3}), transposed_leaf(g, {2, 3, 2})});
                   masked.push_back(bools({true, false, true, false, true, true}, {2, 3}));
                   return {{"B = 2, T = 3", params({leaf(g, {2, 3}), leaf(g, {2, 3, 2})})},
                           {"mask, non-contiguous h", masked}};
                 }});

  // x (B, T, D), then W_q, b_q, W_k, b_k, W_v, b_v, W_o, b_o [, key/value (B, Tk, D)] -> (B, Tq, D)
  auto mha = [](bool causal) {
    return [causal](const Inputs& in) {
      const int64_t D = in[0].size(2);
      MultiHeadAttention m(D, /*heads=*/2, causal, true, 0, kFloat64);
      std::shared_ptr<Linear> lin[] = {m.w_q, m.w_k, m.w_v, m.w_o};
      for (int i = 0; i < 4; ++i) {
        lin[i]->weight = in[1 + 2 * i];
        lin[i]->bias = in[2 + 2 * i];
      }
      return in.size() > 9 ? m.forward(in[0], in[9], in[9]).output : m.forward(in[0]);
    };
  };
  auto mha_inputs = [](Generator& g, Tensor x) {
    Inputs in{x};
    const int64_t D = x.size(2);
    for (int i = 0; i < 4; ++i) {
      in.push_back(leaf(g, {D, D}, 0.5));
      in.push_back(leaf(g, {D}));
    }
    return in;
  };
  const std::vector<std::string> mha_nodes = {"PermuteBackward", "MatmulBackward", "AddBackward",      "ReshapeBackward",
                                              "MulScalarBackward", "SoftmaxBackward"};
  std::vector<std::string> mha_causal_nodes = mha_nodes;
  mha_causal_nodes.push_back("MaskedFillBackward");
  ops.push_back({.name = "nn.MultiHeadAttention",
                 .nodes = mha_nodes,
                 .fn = mha(false),
                 .samples = [mha_inputs](Generator& g) -> Samples {
                   Inputs cross = mha_inputs(g, leaf(g, {1, 2, 4}));
                   cross.push_back(leaf(g, {1, 3, 4}));
                   return {{"self-attention, B = 2", mha_inputs(g, leaf(g, {2, 3, 4}))},
                           {"cross-attention, Tq = 2, Tk = 3", cross},
                           {"time-major x (non-contiguous)", mha_inputs(g, time_major_leaf(g, {1, 3, 4}))}};
                 }});
  ops.push_back({.name = "nn.MultiHeadAttention(causal)",
                 .nodes = mha_causal_nodes,
                 .fn = mha(true),
                 .samples = [mha_inputs](Generator& g) -> Samples {
                   return {{"self-attention, B = 2", mha_inputs(g, leaf(g, {2, 3, 4}))},
                           {"time-major x (non-contiguous)", mha_inputs(g, time_major_leaf(g, {1, 3, 4}))}};
                 }});

  // x (B, T, D), ln1.weight, attn.w_q.weight, attn.w_v.bias, ln2.bias, fc1.weight, fc2.weight -> (B, T, D)
  ops.push_back({.name = "nn.TransformerBlock",
                 .nodes = {"LayerNormBackward", "PermuteBackward", "MatmulBackward", "AddBackward", "ReshapeBackward",
                           "MulScalarBackward", "MaskedFillBackward", "SoftmaxBackward", "GeluBackward"},
                 .fn =
                     [](const Inputs& in) {
                       TransformerBlock block(4, 2, 2, 0.0, /*causal=*/true, 6, kFloat64);
                       block.ln1->weight = in[1];
                       block.attn->w_q->weight = in[2];
                       block.attn->w_v->bias = in[3];
                       block.ln2->bias = in[4];
                       block.fc1->weight = in[5];
                       block.fc2->weight = in[6];
                       return block.forward(in[0]);
                     },
                 .samples = [](Generator& g) -> Samples {
                   auto params = [&g](Tensor x) {
                     return Inputs{x, leaf(g, {4}), leaf(g, {4, 4}), leaf(g, {4}), leaf(g, {4}), leaf(g, {8, 4}),
                                   leaf(g, {4, 8})};
                   };
                   return {{"causal, B = 1, T = 3", params(leaf(g, {1, 3, 4}))},
                           {"time-major x (non-contiguous)", params(time_major_leaf(g, {2, 2, 4}))}};
                 }});
}

std::vector<OpInfo> sequence_ops() {
  std::vector<OpInfo> ops;
  add_layer_ops(ops);
  add_loss_ops(ops);
  add_recurrent_ops(ops);
  add_attention_ops(ops);
  return ops;
}

}  // namespace

void register_sequence_ops() {
  // A function-local static: its initializer runs exactly once.
  static const bool registered = [] {
    for (OpInfo& op : sequence_ops()) register_op(std::move(op));
    return true;
  }();
  (void)registered;
}

}  // namespace ember::nn
