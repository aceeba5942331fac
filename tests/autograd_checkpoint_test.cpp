// Activation checkpointing (autograd/checkpoint.h; nn/checkpoint.h for a
// module). What it must do: give the gradients of the run without it, bit
// for bit, with dropout (the same masks on recompute, and the generators left
// where they were); keep only the piece's input for backward; work with create_graph, forward mode,
// autograd::grad on parameters, nesting; refuse a parameter changed in place
// before backward, and a tensor its gradient could not reach.
//
// Legend: B batch, T sequence length, D model dim, V vocabulary size.
#include <gtest/gtest.h>

#include "ember.h"
#include "inspect/memory.h"
#include "test_util.h"
#include "train/step_memory.h"

using namespace ember;
using ember::test::expect_error;
using ember::test::values;

namespace {

nn::GPTConfig config(double dropout) {
  nn::GPTConfig c;
  c.vocab_size = 17;
  c.context_length = 24;
  c.dim = 32;
  c.heads = 4;
  c.layers = 3;
  c.dropout = dropout;
  c.seed = 8;
  return c;
}

struct Step {
  double loss;
  std::vector<std::vector<double>> grads;
  uint64_t after;  // the first block's dropout generator after the step
};

Step step(bool checkpointed, double dropout, nn::AttentionKernel kernel) {
  nn::GPT gpt(config(dropout));
  gpt.set_attention(kernel);
  gpt.checkpoint_activations = checkpointed;
  Generator g(1);
  Tensor x = randint(0, 17, {2, 24}, g), y = randint(0, 17, {2, 24}, g);
  Step s;
  for (int i = 0; i < 2; ++i) {  // two steps: the second one's masks follow the first's
    gpt.zero_grad();
    Tensor loss = gpt.loss(x, y);
    loss.backward();
    s.loss = loss.item();
  }
  for (auto& [name, p] : gpt.named_parameters()) s.grads.push_back(values(p.grad()));
  s.after = gpt.blocks->operator[](0).drop->generator().next_u64();
  return s;
}

}  // namespace

TEST(ActivationCheckpoint, GptGradientsAreBitwiseTheSameWithDropout) {
  for (auto kernel : {nn::AttentionKernel::Tiled, nn::AttentionKernel::Stored}) {
    SCOPED_TRACE(nn::attention_kernel_name(kernel));
    Step plain = step(false, 0.2, kernel), ckpt = step(true, 0.2, kernel);
    EXPECT_EQ(plain.loss, ckpt.loss);
    ASSERT_EQ(plain.grads.size(), ckpt.grads.size());
    for (size_t i = 0; i < plain.grads.size(); ++i) EXPECT_EQ(plain.grads[i], ckpt.grads[i]) << "parameter " << i;
    EXPECT_EQ(plain.after, ckpt.after);  // recomputing drew the same numbers and put the generator back
  }
}

// The saved-for-backward bytes of a checkpointed step, measured by the
// memory timeline, against train::step_memory's closed form: each block
// keeps only its input.
TEST(ActivationCheckpoint, KeepsOnlyEachBlocksInput) {
  for (bool checkpointed : {false, true}) {
    SCOPED_TRACE(checkpointed ? "checkpointed" : "plain");
    nn::GPT gpt(config(0.0));
    gpt.checkpoint_activations = checkpointed;
    Generator g(1);
    Tensor x = randint(0, 17, {2, 24}, g), y = randint(0, 17, {2, 24}, g);
    int64_t most = 0;  // saved for backward, at any moment of the step
    {
      inspect::MemoryTimeline mem;
      mem.track(gpt.parameters(), MemoryKind::Parameters);
      gpt.loss(x, y).backward();
      for (const auto& s : mem.samples()) most = std::max(most, s.live[static_cast<size_t>(MemoryKind::SavedForBackward)]);
    }
    train::StepMemory m = train::step_memory(gpt, 2);
    EXPECT_EQ(most, m.saved_activations);  // the batch was made before the timeline: not counted
  }
}

// create_graph: the recomputation records, so the gradient can be
// differentiated again, and equals the one without checkpointing.
TEST(ActivationCheckpoint, SecondDerivativesThroughTheRecomputation) {
  Tensor w = tensor(std::vector<double>{0.3, -0.7, 1.1}).requires_grad_();
  auto piece = [&w](const std::vector<Tensor>& in) { return tanh(in[0] * w).sum() * in[0].sum(); };
  for (bool checkpointed : {false, true}) {
    Tensor x = tensor(std::vector<double>{0.5, 1.5, -2.0}).requires_grad_();
    Tensor y = checkpointed ? nn::checkpoint(piece, {x}) : piece({x});
    std::vector<Tensor> g = grad({y}, {x, w}, {}, {.create_graph = true});
    std::vector<Tensor> gg = grad({g[0].sum() + g[1].sum()}, {x, w});
    static std::vector<std::vector<double>> first;
    std::vector<std::vector<double>> now = {values(g[0]), values(g[1]), values(gg[0]), values(gg[1])};
    if (!checkpointed) first = now;
    else EXPECT_EQ(now, first);
  }
  Tensor x = tensor(std::vector<double>{0.5, 1.5, -2.0}).requires_grad_();
  GradcheckResult r = gradgradcheck([&](const std::vector<Tensor>& in) { return nn::checkpoint(piece, in); }, {x});
  EXPECT_TRUE(r.ok) << r.report;
  EXPECT_GT(r.checked, 0);
}

TEST(ActivationCheckpoint, GradcheckOfABlockWithNonContiguousInput) {
  auto block = std::make_shared<nn::TransformerBlock>(
      8, 2, nn::TransformerBlockOptions{.dtype = kFloat64, .generator = test::seeded(2)});
  Tensor x = randn({3, 2, 8}, *test::seeded(4), kFloat64).transpose(0, 1).detach().requires_grad_();  // (B, T, D) time-major
  ASSERT_FALSE(x.is_contiguous());
  EXPECT_GRADCHECK([&](const std::vector<Tensor>& in) { return nn::checkpoint(*block, in[0]); }, {x});
}

// The tangent of a checkpointed piece is that of its ops.
TEST(ActivationCheckpoint, ForwardModeTangents) {
  nn::TransformerBlock block(8, 2, {.dtype = kFloat64, .generator = test::seeded(5)});
  Tensor x = randn({2, 3, 8}, *test::seeded(6), kFloat64), t = randn({2, 3, 8}, *test::seeded(7), kFloat64);
  std::vector<double> plain, ckpt;
  {
    DualLevel level;
    plain = values(tangent(block.forward(make_dual(x, t))));
  }
  {
    DualLevel level;
    Tensor p = block.ln1->weight;  // a parameter requires grad: the checkpoint records
    ASSERT_TRUE(p.requires_grad());
    ckpt = values(tangent(nn::checkpoint(block, make_dual(x, t))));
  }
  EXPECT_EQ(plain, ckpt);
}

// autograd::grad on the parameters (no .grad touched), and a piece inside a piece.
TEST(ActivationCheckpoint, GradOnParametersAndNesting) {
  nn::Linear a(4, 4, {.dtype = kFloat64, .generator = test::seeded(1)}), b(4, 4, {.dtype = kFloat64, .generator = test::seeded(2)});
  Tensor x = randn({3, 4}, *test::seeded(3), kFloat64).requires_grad_();
  auto outer = [&](const std::vector<Tensor>& in) {
    Tensor h = nn::checkpoint([&](const std::vector<Tensor>& i) { return tanh(a.forward(i[0])); }, {in[0]});
    return b.forward(h).pow(2).sum();
  };
  std::vector<Tensor> want = grad({outer({x})}, {x, a.weight, b.weight});
  std::vector<Tensor> got = grad({nn::checkpoint(outer, {x})}, {x, a.weight, b.weight});
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(values(got[i]), values(want[i])) << i;
  EXPECT_FALSE(a.weight.grad().defined());
}

TEST(ActivationCheckpoint, ParameterChangedBeforeBackwardIsAnError) {
  nn::Linear lin(3, 3, {.generator = test::seeded(1)});
  Tensor x = randn({2, 3}, *test::seeded(2)).requires_grad_();
  Tensor y = nn::checkpoint(lin, x).sum();
  {
    NoGradGuard no_grad;
    lin.weight.mul_(2.0);  // an optimizer step between forward and backward
  }
  expect_error([&] { y.backward(); }, "backward", {"modified by an inplace operation", "CheckpointBackward"});
  EXPECT_FALSE(x.grad().defined());
}

// Outside grad mode it is the function itself; an undefined input is an error.
TEST(ActivationCheckpoint, NoGradAndBadInput) {
  nn::Linear lin(3, 3, {.generator = test::seeded(1)});
  Tensor x = randn({2, 3}, *test::seeded(2));
  {
    NoGradGuard no_grad;
    Tensor y = nn::checkpoint(lin, x);
    EXPECT_FALSE(y.grad_fn());
    EXPECT_EQ(values(y), values(lin.forward(x)));
  }
  expect_error([&] { nn::checkpoint(lin, Tensor()); }, "checkpoint", {"input 0", "undefined"});
  expect_error([&] { checkpoint(CheckpointFn(), {x}); }, "checkpoint", {"no function"});
}

// A piece that reads a tensor with a graph of its own (computed before it,
// held by the closure): the gradient flows on into that graph, and the
// recomputation's backward leaves the caller's graph as it was, for the
// outer backward that still needs it.
TEST(ActivationCheckpoint, ReadsATensorComputedBeforeIt) {
  Tensor w = tensor(std::vector<double>{0.5, -1.5}).requires_grad_();
  Tensor x = tensor(std::vector<double>{2.0, 3.0}).requires_grad_();
  Tensor z = tensor(std::vector<double>{-1.0, 0.25}).requires_grad_();
  auto run = [&](bool checkpointed) {
    Tensor h = x * w;  // MulBackward saves x and w: the recomputation must not free them
    auto piece = [h](const std::vector<Tensor>& in) { return tanh(in[0] * h); };
    Tensor y = checkpointed ? nn::checkpoint(piece, {z}) : piece({z});
    return grad({y.sum() + h.sum()}, {x, w, z});
  };
  std::vector<Tensor> want = run(false), got = run(true);
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(values(got[i]), values(want[i])) << i;
}

// The same tensor as two inputs, and as an input the piece also reads
// through its closure: each use adds its share once, with and without
// create_graph.
TEST(ActivationCheckpoint, ATensorUsedTwiceGetsItsGradientOnce) {
  Tensor x = tensor(std::vector<double>{0.5, -2.0}).requires_grad_();
  auto piece = [&x](const std::vector<Tensor>& in) { return (in[0] * in[1] * x).sum(); };
  const std::vector<double> want = values(grad({piece({x, x})}, {x})[0]);  // 3 x²
  for (bool create_graph : {false, true}) {
    SCOPED_TRACE(create_graph ? "create_graph" : "plain");
    Tensor y = nn::checkpoint(piece, {x, x});
    EXPECT_EQ(values(grad({y}, {x}, {}, {.create_graph = create_graph})[0]), want);
  }
}

// One input computed from another: each gets its own partial derivative (the
// walk back from the recomputation stops at the inputs), so the gradient is
// the one without checkpointing, not the path through the first input twice.
TEST(ActivationCheckpoint, AnInputComputedFromAnotherGetsItsPartialOnce) {
  Tensor x = tensor(std::vector<double>{0.5, -2.0, 1.5}).requires_grad_();
  auto piece = [](const std::vector<Tensor>& in) { return (in[0] * sin(in[1])).sum(); };
  auto run = [&](bool checkpointed, bool create_graph) {
    Tensor x2 = x * x;
    Tensor y = checkpointed ? nn::checkpoint(piece, {x, x2}) : piece({x, x2});
    Tensor g = grad({y}, {x}, {}, {.create_graph = create_graph})[0];
    if (!create_graph) return values(g);
    std::vector<double> both = values(g), second = values(grad({g.sum()}, {x})[0]);
    both.insert(both.end(), second.begin(), second.end());
    return both;
  };
  for (bool create_graph : {false, true}) {
    SCOPED_TRACE(create_graph ? "create_graph" : "plain");
    const std::vector<double> want = run(false, create_graph), got = run(true, create_graph);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-14) << i;
  }
}

// Two tensors the piece reads through its closure, the second computed from
// the first: the same, for what it reads.
TEST(ActivationCheckpoint, TensorsReadOneFromAnotherGetTheirPartialsOnce) {
  Tensor w = tensor(std::vector<double>{0.25, -1.0}).requires_grad_();
  Tensor z = tensor(std::vector<double>{1.5, 2.0}).requires_grad_();
  auto run = [&](bool checkpointed) {
    Tensor a = w * 3.0, b = exp(a);
    auto piece = [a, b](const std::vector<Tensor>& in) { return (in[0] * a * b).sum(); };
    Tensor y = checkpointed ? nn::checkpoint(piece, {z}) : piece({z});
    return grad({y}, {w, z});
  };
  std::vector<Tensor> want = run(false), got = run(true);
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(values(got[i]), values(want[i])) << i;
}

// A hook on a parameter the piece reads runs once, on the whole gradient, as
// without checkpointing (not once more inside the recomputation's backward).
TEST(ActivationCheckpoint, AHookOnAParameterReadInsideRunsOnce) {
  Tensor w = tensor(std::vector<double>{0.5, -1.5}).requires_grad_();
  int calls = 0;
  w.register_hook([&calls](const Tensor& g) -> std::optional<Tensor> {
    ++calls;
    return g * 2.0;
  });
  Tensor z = tensor(std::vector<double>{2.0, 3.0}).requires_grad_();
  auto piece = [&w](const std::vector<Tensor>& in) { return (in[0] * w).sum(); };
  nn::checkpoint(piece, {z}).backward();
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(values(w.grad()), (std::vector<double>{4.0, 6.0}));
}

// A piece runs twice, in forward and again in backward: an in-place write
// into what it reads would be made twice (the caller's input scaled twice,
// the gradient taken at the changed value). It is refused before the input
// changes, by op and input; a write into a tensor the piece makes is fine.
TEST(ActivationCheckpoint, AnInPlaceWriteIntoAnInputIsRefusedBeforeItIsMade) {
  Tensor w = tensor(std::vector<double>{0.5, -1.5}).requires_grad_();
  Tensor x = tensor(std::vector<double>{2.0, 3.0});
  auto scales_its_input = [&w](const std::vector<Tensor>& in) {
    Tensor x = in[0];
    x.mul_(2.0);
    return (x * w).sum();
  };
  expect_error([&] { nn::checkpoint(scales_its_input, {x}); }, "checkpoint",
               {"mul_ writes in place into input 0", "(2)", "clone() it inside"});
  EXPECT_EQ(values(x), (std::vector<double>{2.0, 3.0})) << "the input is as it was";
  EXPECT_FALSE(w.grad().defined());
  // the same through a view of the input, and into the second input
  Tensor big = tensor(std::vector<double>{1, 2, 3, 4}).reshape({2, 2});
  auto writes_a_row = [&w](const std::vector<Tensor>& in) {
    Tensor row = in[1].select(0, 1);
    row.fill_(0.0);
    return (in[0] * w).sum();
  };
  expect_error([&] { nn::checkpoint(writes_a_row, {x, big}); }, "checkpoint", {"fill_ writes in place into input 1"});
  EXPECT_EQ(values(big), (std::vector<double>{1, 2, 3, 4}));
  // a tensor the piece reads through its closure that requires grad,
  // written outside grad mode inside the piece
  auto writes_its_weight = [&w](const std::vector<Tensor>& in) {
    Tensor y = (in[0] * w).sum();
    NoGradGuard plain;
    Tensor(w).add_(1.0);
    return y;
  };
  expect_error([&] { nn::checkpoint(writes_its_weight, {x}); }, "checkpoint",
               {"add_ writes in place into a tensor of shape (2) that requires grad"});
  EXPECT_EQ(values(w), (std::vector<double>{0.5, -1.5}));
  // ... and through a view made outside grad mode, seen when the piece returns
  auto writes_through_a_view = [&w](const std::vector<Tensor>& in) {
    Tensor y = (in[0] * w).sum();
    NoGradGuard plain;
    Tensor first = w.narrow(0, 0, 1);
    first.add_(1.0);
    return y;
  };
  expect_error([&] { nn::checkpoint(writes_through_a_view, {x}); }, "checkpoint",
               {"writes in place into a tensor of shape (2) that it reads"});
  // writes into its own tensors: the plain function's gradients, bit for bit
  auto writes_its_own = [&w](const std::vector<Tensor>& in) {
    Tensor h = in[0].clone();
    h.mul_(2.0);
    return (h * w).sum();
  };
  Tensor v = tensor(std::vector<double>{2.0, 3.0});
  std::vector<Tensor> got = grad({nn::checkpoint(writes_its_own, {v})}, {w});
  EXPECT_EQ(values(got[0]), (std::vector<double>{4.0, 6.0}));
  EXPECT_EQ(values(v), (std::vector<double>{2.0, 3.0}));
}
