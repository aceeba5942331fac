// Attention (nn/attention.cpp): scaled dot-product attention with and
// without masks, Bahdanau's additive attention, multi-head attention and the
// Transformer block, through their forward() calls.
//
// Legend: B batch, T time steps (Tq queries, Tk keys), D model dim, h heads.
#include <limits>
#include <memory>

#include "autograd/ops.h"
#include "inputs.h"
#include "nn/attention.h"
#include "nn/checkpoint.h"

namespace ember::samples {

using namespace ember::nn;

void add_nn_attention_samples(std::vector<OpInfo>& ops) {
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
                   return {{"Tq != Tk", {normal_leaf(g, {2, 2}), normal_leaf(g, {3, 2}), normal_leaf(g, {3, 3})}},
                           {"(B, h, T, d)", {normal_leaf(g, {1, 2, 3, 2}), normal_leaf(g, {1, 2, 3, 2}), normal_leaf(g, {1, 2, 3, 2})}},
                           {"bool mask with a fully masked row",
                            {normal_leaf(g, {3, 2}), normal_leaf(g, {3, 2}), normal_leaf(g, {3, 2}),
                             bools({true, false, true, false, false, false, true, true, false}, {3, 3})}},
                           {"float mask (added, -inf blocks)",
                            {normal_leaf(g, {2, 2}), normal_leaf(g, {3, 2}), normal_leaf(g, {3, 2}),
                             tensor(std::vector<double>{0.5, neg_inf, -1, 0, 0.3, 0.2}, {2, 3})}},
                           {"non-contiguous q, k, v",
                            {transposed(normal_values(g, {3, 2})), transposed(normal_values(g, {3, 2})), transposed(normal_values(g, {3, 2}))}}};
                 }});
  ops.push_back({.name = "nn.sdpa(causal)",
                 .nodes = {"PermuteBackward", "MatmulBackward", "MulScalarBackward", "MaskedFillBackward",
                           "SoftmaxBackward"},
                 .fn = sdpa(true),
                 .samples = [](Generator& g) -> Samples {
                   return {{"T = 4", {normal_leaf(g, {4, 2}), normal_leaf(g, {4, 2}), normal_leaf(g, {4, 2})}},
                           {"batched, with a key-padding mask",
                            {normal_leaf(g, {2, 3, 2}), normal_leaf(g, {2, 3, 2}), normal_leaf(g, {2, 3, 2}), bools({true, true, false}, {3})}},
                           {"non-contiguous q, k, v",
                            {transposed(normal_values(g, {3, 2})), transposed(normal_values(g, {3, 2})), transposed(normal_values(g, {3, 2}))}}};
                 }});

  // q (…, Tq, d), k (…, Tk, d), v (…, Tk, dv) -> (…, Tq, dv), without storing the weights. The tiles
  // are 128 query rows by 128 keys (tensor/attention.cpp): the "several tiles" samples cross both edges.
  auto tiled = [](bool causal) {
    return [causal](const Inputs& in) { return tiled_attention(in[0], in[1], in[2], causal); };
  };
  auto heads = [](Generator& g, int64_t B, int64_t T, int64_t h, int64_t d) {  // (B, h, T, d) head views of (B, T, h d)
    return normal_values(g, {B, T, h, d}).transpose(1, 2).detach().requires_grad_();
  };
  ops.push_back({.name = "tiled_attention",
                 .nodes = {"TiledAttentionBackward"},
                 .fn = tiled(false),
                 .samples = [heads](Generator& g) -> Samples {
                   return {{"Tq != Tk, d != dv", {normal_leaf(g, {2, 2}), normal_leaf(g, {3, 2}), normal_leaf(g, {3, 3})}},
                           {"(B, h, T, d) head views (non-contiguous)", {heads(g, 1, 3, 2, 2), heads(g, 1, 3, 2, 2), heads(g, 1, 3, 2, 2)}},
                           {"non-contiguous q, k, v",
                            {transposed(normal_values(g, {3, 2})), transposed(normal_values(g, {3, 2})), transposed(normal_values(g, {3, 2}))}},
                           {"several tiles: Tq = 130, Tk = 131", {normal_leaf(g, {130, 1}), normal_leaf(g, {131, 1}), normal_leaf(g, {131, 1})}},
                           {"v is a constant", {normal_leaf(g, {2, 2}), normal_leaf(g, {2, 2}), randn({2, 2}, g, kFloat64)}},
                           {"zero-size (Tk = 0)", {normal_leaf(g, {2, 2}), normal_leaf(g, {0, 2}), normal_leaf(g, {0, 2})}}};
                 }});
  ops.push_back({.name = "tiled_attention(causal)",
                 .nodes = {"TiledAttentionBackward"},
                 .fn = tiled(true),
                 .samples = [heads](Generator& g) -> Samples {
                   return {{"T = 4", {normal_leaf(g, {4, 2}), normal_leaf(g, {4, 2}), normal_leaf(g, {4, 2})}},
                           {"Tq > Tk", {normal_leaf(g, {4, 2}), normal_leaf(g, {2, 2}), normal_leaf(g, {2, 2})}},
                           {"(B, h, T, d) head views (non-contiguous)", {heads(g, 2, 3, 2, 2), heads(g, 2, 3, 2, 2), heads(g, 2, 3, 2, 2)}},
                           {"several tiles: T = 130", {normal_leaf(g, {130, 1}), normal_leaf(g, {130, 1}), normal_leaf(g, {130, 1})}}};
                 }});

  // s (B, Dq), h (B, T, Dk), W (A, Dq), U (A, Dk), b_U (A), v (1, A) [, mask (B, T)] -> [context, weights]
  ops.push_back({.name = "nn.AdditiveAttention",
                 .nodes = {"PermuteBackward", "MatmulBackward", "AddBackward", "ReshapeBackward", "TanhBackward",
                           "MaskedFillBackward", "SoftmaxBackward", "CatBackward"},
                 .fn =
                     [](const Inputs& in) {
                       Generator init(0);  // the weights no input replaces: the same at every call
                       AdditiveAttention att(in[2].size(1), in[3].size(1), in[2].size(0), {.dtype = kFloat64, .generator = &init});
                       att.w->weight = in[2];
                       att.u->weight = in[3];
                       att.u->bias = in[4];
                       att.v->weight = in[5];
                       Attention a = att.forward(in[0], in[1], in.size() > 6 ? in[6] : Tensor());
                       return flat_cat({a.output, a.weights});
                     },
                 .samples = [](Generator& g) -> Samples {
                   auto params = [&g](Inputs in) {
                     for (const Shape& s : {Shape{4, 3}, Shape{4, 2}, Shape{4}, Shape{1, 4}}) in.push_back(normal_leaf(g, s));
                     return in;
                   };
                   Inputs masked = params({normal_leaf(g, {2, 3}), transposed(normal_values(g, {2, 3, 2}))});
                   masked.push_back(bools({true, false, true, false, true, true}, {2, 3}));
                   return {{"B = 2, T = 3", params({normal_leaf(g, {2, 3}), normal_leaf(g, {2, 3, 2})})},
                           {"mask, non-contiguous h", masked}};
                 }});

  // x (B, T, D), then W_q, b_q, W_k, b_k, W_v, b_v, W_o, b_o [, key/value (B, Tk, D)] -> (B, Tq, D)
  auto mha = [](bool causal) {
    return [causal](const Inputs& in) {
      const int64_t D = in[0].size(2);
      Generator init(0);  // the weights no input replaces: the same at every call
      MultiHeadAttention m(D, /*heads=*/2, {.causal = causal, .bias = true, .dtype = kFloat64, .generator = &init});
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
      in.push_back(normal_leaf(g, {D, D}, 0.5));
      in.push_back(normal_leaf(g, {D}));
    }
    return in;
  };
  // Self-attention goes through tiled_attention; cross-attention, which returns its weights, through
  // scaled_softmax (the scale and the causal mask inside its SoftmaxBackward).
  const std::vector<std::string> mha_nodes = {"PermuteBackward", "MatmulBackward", "AddBackward", "ReshapeBackward",
                                              "SoftmaxBackward", "TiledAttentionBackward"};
  const std::vector<std::string> mha_causal_nodes = {"PermuteBackward", "MatmulBackward", "AddBackward",
                                                     "ReshapeBackward", "TiledAttentionBackward"};
  ops.push_back({.name = "nn.MultiHeadAttention",
                 .nodes = mha_nodes,
                 .fn = mha(false),
                 .samples = [mha_inputs](Generator& g) -> Samples {
                   Inputs cross = mha_inputs(g, normal_leaf(g, {1, 2, 4}));
                   cross.push_back(normal_leaf(g, {1, 3, 4}));
                   return {{"self-attention, B = 2", mha_inputs(g, normal_leaf(g, {2, 3, 4}))},
                           {"cross-attention, Tq = 2, Tk = 3", cross},
                           {"time-major x (non-contiguous)", mha_inputs(g, time_major(normal_values(g, {1, 3, 4})))}};
                 }});
  ops.push_back({.name = "nn.MultiHeadAttention(causal)",
                 .nodes = mha_causal_nodes,
                 .fn = mha(true),
                 .samples = [mha_inputs](Generator& g) -> Samples {
                   return {{"self-attention, B = 2", mha_inputs(g, normal_leaf(g, {2, 3, 4}))},
                           {"time-major x (non-contiguous)", mha_inputs(g, time_major(normal_values(g, {1, 3, 4})))}};
                 }});

  // x (B, T, D), ln1.weight, attn.w_q.weight, attn.w_v.bias, ln2.bias, fc1.weight, fc2.weight -> (B, T, D)
  ops.push_back({.name = "nn.TransformerBlock",
                 .nodes = {"LayerNormBackward", "PermuteBackward", "MatmulBackward", "AddBackward", "ReshapeBackward",
                           "TiledAttentionBackward", "GeluBackward"},
                 .fn =
                     [](const Inputs& in) {
                       Generator init(6);  // the weights no input replaces: the same at every call
                       TransformerBlock block(4, 2, {.mlp_ratio = 2, .dropout = 0.0, .causal = true, .dtype = kFloat64, .generator = &init});
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
                     return Inputs{x, normal_leaf(g, {4}), normal_leaf(g, {4, 4}), normal_leaf(g, {4}), normal_leaf(g, {4}), normal_leaf(g, {8, 4}),
                                   normal_leaf(g, {4, 8})};
                   };
                   return {{"causal, B = 1, T = 3", params(normal_leaf(g, {1, 3, 4}))},
                           {"time-major x (non-contiguous)", params(time_major(normal_values(g, {2, 2, 4})))}};
                 }});

  // The same block, checkpointed (nn/checkpoint.h): x (B, T, D), ln1.weight, attn.w_q.weight, fc2.weight
  // -> (B, T, D). Its one node recomputes the block in backward; with create_graph the recomputation
  // records, which gradgradcheck differentiates.
  ops.push_back({.name = "nn.checkpoint(TransformerBlock)",
                 .nodes = {"CheckpointBackward"},
                 .fn =
                     [](const Inputs& in) {
                       Generator init(6);
                       auto block = std::make_shared<TransformerBlock>(
                           4, 2, TransformerBlockOptions{.mlp_ratio = 2, .causal = true, .dtype = kFloat64, .generator = &init});
                       block->ln1->weight = in[1];
                       block->attn->w_q->weight = in[2];
                       block->fc2->weight = in[3];
                       // the function owns the block: it must live until backward
                       return nn::checkpoint([block](const Inputs& x) { return block->forward(x[0]); }, {in[0]});
                     },
                 .samples = [](Generator& g) -> Samples {
                   auto params = [&g](Tensor x) {
                     return Inputs{x, normal_leaf(g, {4}), normal_leaf(g, {4, 4}), normal_leaf(g, {4, 8})};
                   };
                   return {{"causal, B = 1, T = 3", params(normal_leaf(g, {1, 3, 4}))},
                           {"time-major x (non-contiguous)", params(time_major(normal_values(g, {2, 2, 4})))}};
                 }});
}

}  // namespace ember::samples
