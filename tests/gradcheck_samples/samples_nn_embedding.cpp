// The embedding lesson's modules (nn/embedding.cpp), through what a learner
// calls: Embedding::forward, LearnedPositionalEmbedding::forward,
// EmbeddingComposer::forward (both positional variants) and LMHead::forward,
// untied and tied.
//
// Legend: B batch, T sequence length, D embedding dim, V vocabulary size,
//         L maximum context length.
//
// Not here: padding_idx. Its rule "the padding row gets no gradient" is a
// choice, not the derivative (the padding row IS read by the lookup), so a
// numerical check of that row must disagree; tests/nn_embedding_test.cpp
// checks the other rows with gradcheck and the padding row by value.
#include <memory>
#include <optional>

#include "autograd/ops.h"
#include "inputs.h"
#include "nn/embedding.h"

namespace ember::samples {

namespace {

using namespace ember::nn;

// A registry fn is a pure function of its inputs, but a module owns its
// weights. So each fn builds a small module and points its public `weight`
// handle at the input: forward() then reads exactly the tensor that gradcheck
// perturbs. (The module's registered parameter keeps its own random init;
// nothing here reads it.)
std::shared_ptr<Embedding> token_with(const Tensor& w) {
  Generator init(0);  // the weights no input replaces: the same at every call
  auto m = std::make_shared<Embedding>(w.size(0), w.size(1), EmbeddingOptions{.dtype = w.dtype(), .generator = &init});
  m->weight = w;
  return m;
}
std::shared_ptr<LearnedPositionalEmbedding> learned_with(const Tensor& w) {
  Generator init(0);  // the weights no input replaces: the same at every call
  auto m = std::make_shared<LearnedPositionalEmbedding>(w.size(0), w.size(1), InitOptions{.dtype = w.dtype(), .generator = &init});
  m->weight = w;
  return m;
}
std::shared_ptr<LMHead> head_with(const Tensor& w) {
  Generator init(0);  // the weights no input replaces: the same at every call
  auto m = std::make_shared<LMHead>(w.size(1), w.size(0), InitOptions{.dtype = w.dtype(), .generator = &init});
  m->weight = w;
  return m;
}

constexpr int64_t kSinusoidalL = 8;  // the sinusoidal composer's table length (T <= 8 below)

}  // namespace

void add_nn_embedding_samples(std::vector<OpInfo>& ops) {

  // weight (V, D), ids (*) -> (*, D)
  ops.push_back({.name = "nn.Embedding",
                 .nodes = {"IndexSelectBackward"},
                 .fn = [](const Inputs& in) { return token_with(in[0])->forward(in[1]); },
                 .samples = [](Generator& g) -> Samples {
                   return {{"repeated ids (B, T)", {normal_leaf(g, {5, 3}), ids({1, 3, 1, 1, 4, 1}, {2, 3})}},
                           {"1-D ids", {normal_leaf(g, {4, 2}), ids({0, 3, 3}, {3})}},
                           {"non-contiguous (transposed) weight", {transposed(normal_values(g, {4, 3})), ids({2, 0, 2}, {1, 3})}},
                           {"zero-size (no ids)", {normal_leaf(g, {3, 2}), ids({}, {2, 0})}}};
                 }});

  // weight (L, D), ids (B, T) -> rows 0..T-1: (T, D)
  ops.push_back({.name = "nn.LearnedPositionalEmbedding",
                 .nodes = {"SliceBackward"},
                 .fn = [](const Inputs& in) { return learned_with(in[0])->forward(in[1]); },
                 .samples = [](Generator& g) -> Samples {
                   return {{"T < L", {normal_leaf(g, {5, 2}), ids({0, 1, 2, 3, 4, 0}, {2, 3})}},
                           {"T = L", {normal_leaf(g, {3, 2}), ids({1, 1, 1}, {1, 3})}},
                           {"non-contiguous (transposed) weight", {transposed(normal_values(g, {4, 3})), ids({0, 0}, {1, 2})}}};
                 }});

  // token (V, D), positional (L, D), ids (B, T) -> (B, T, D)
  ops.push_back({.name = "nn.EmbeddingComposer(learned)",
                 .nodes = {"IndexSelectBackward", "SliceBackward", "AddBackward"},
                 .fn =
                     [](const Inputs& in) {
                       EmbeddingComposer c(token_with(in[0]), learned_with(in[1]));
                       return c.forward(in[2]);
                     },
                 .samples = [](Generator& g) -> Samples {
                   return {{"B = 2, repeated ids", {normal_leaf(g, {5, 2}), normal_leaf(g, {4, 2}), ids({4, 1, 4, 0, 0, 2}, {2, 3})}},
                           {"T = L", {normal_leaf(g, {3, 3}), normal_leaf(g, {2, 3}), ids({2, 2}, {1, 2})}},
                           {"non-contiguous (transposed) tables",
                            {transposed(normal_values(g, {4, 2})), transposed(normal_values(g, {3, 2})), ids({3, 1}, {2, 1})}}};
                 }});

  // token (V, D), ids (B, T) -> (B, T, D); the sinusoidal table is a constant
  ops.push_back({.name = "nn.EmbeddingComposer(sinusoidal)",
                 .nodes = {"IndexSelectBackward", "AddBackward"},
                 .fn =
                     [](const Inputs& in) {
                       auto pos = std::make_shared<SinusoidalPositionalEmbedding>(kSinusoidalL, in[0].size(1), in[0].dtype());
                       EmbeddingComposer c(token_with(in[0]), pos);
                       return c.forward(in[1]);
                     },
                 .samples = [](Generator& g) -> Samples {
                   return {{"B = 2, repeated ids", {normal_leaf(g, {5, 4}), ids({4, 1, 4, 0, 0, 2}, {2, 3})}},
                           {"odd D", {normal_leaf(g, {3, 3}), ids({0, 2, 1, 2, 0}, {1, 5})}},
                           {"non-contiguous (transposed) table", {transposed(normal_values(g, {4, 2})), ids({3, 3}, {1, 2})}}};
                 }});

  // weight (V, D), hidden (*, D) -> logits (*, V)
  ops.push_back({.name = "nn.LMHead",
                 .nodes = {"PermuteBackward", "MatmulBackward"},
                 .fn = [](const Inputs& in) { return head_with(in[0])->forward(in[1]); },
                 .samples = [](Generator& g) -> Samples {
                   return {{"hidden (B, T, D)", {normal_leaf(g, {5, 3}), normal_leaf(g, {2, 2, 3})}},
                           {"non-contiguous (transposed) hidden", {normal_leaf(g, {4, 3}), transposed(normal_values(g, {2, 3}))}},
                           {"1-D hidden", {normal_leaf(g, {4, 2}), normal_leaf(g, {2})}},
                           {"hidden is a constant", {normal_leaf(g, {3, 2}), randn({2, 2}, g, kFloat64)}}};
                 }});

  // one matrix W (V, D), ids (B, T) -> head(embedding(ids)) = logits (B, T, V):
  // W's gradient is the lookup's plus the projection's.
  ops.push_back({.name = "nn.LMHead(tied)",
                 .nodes = {"IndexSelectBackward", "PermuteBackward", "MatmulBackward"},
                 .fn =
                     [](const Inputs& in) {
                       auto emb = token_with(in[0]);
                       Generator init(0);  // the weights no input replaces: the same at every call
                       LMHead head(in[0].size(1), in[0].size(0), {.dtype = in[0].dtype(), .generator = &init});
                       tie_weights(head, *emb);  // head.weight is now in[0] itself
                       return head.forward(emb->forward(in[1]));
                     },
                 .samples = [](Generator& g) -> Samples {
                   return {{"2 ids used of V = 5", {normal_leaf(g, {5, 3}), ids({1, 3, 3, 1}, {2, 2})}},
                           {"non-contiguous (transposed) weight", {transposed(normal_values(g, {4, 2})), ids({0, 2, 0}, {1, 3})}}};
                 }});
}

}  // namespace ember::samples
