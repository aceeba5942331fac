// Checks stage 9 (docs/book/build_your_own/09_attention.md): mini's causal
// mask, causal self-attention and pre-norm Transformer block against
// ember's MultiHeadAttention (causal, the weights stored) and
// TransformerBlock in float64, with mini's starting weights copied into
// ember's by name: outputs, and the gradients of the input and of every
// parameter; then the refusals.
//
// Tolerances: an output is a chain of products (stage 5, 1e-10 each), a
// softmax and a layer norm (1e-9): 1e-9 relative, absolute below 1; the
// gradients go back through the same chain: 1e-8.
//
// When a result differs, the checker computes, with ember's ops and the same
// weights, what each typical mistake gives (no 1/√d, 1/d instead, no mask, a
// mask that hides the past instead of the future, heads split by a reshape
// alone, a post-norm block, a block without its residuals) and names the one
// that matches.
#include <cmath>
#include <optional>

#include "exercises/yours/checks/inputs.h"
#include "exercises/yours/checks/yours.h"
#include "mini/attention.h"

namespace {

using check::fail;
using check::show;
using yours::first_difference;
using yours::random_input;
using yours::same;

ember::Tensor number(double v) { return ember::tensor({v}, ember::kFloat64); }

// Copies mini's parameters into ember's module, name by name; fails on a
// name ember has and mini does not.
void copy_into(const mini::Module& m, ember::nn::Module& e, const std::string& what) {
  const auto mine = m.named_parameters();
  std::string names;
  for (const auto& [name, v] : mine) names += (names.empty() ? "" : ", ") + name;
  ember::NoGradGuard no_grad;
  for (auto& [name, t] : e.named_parameters()) {
    const mini::Var* found = nullptr;
    for (const auto& [n, v] : mine)
      if (n == name) found = &v;
    if (!found || found->shape() != t.shape())
      fail(what + "'s named_parameters() should have " + name + " of shape " + show(t.shape()) + "; it has " + names,
           "name the members as the header does (ember's names), registered in its order");
    t.copy_(ember::tensor(found->data().values(), t.shape()));
  }
}

// mini's parameters and ember's, by name, for the gradients.
void compare_parameter_grads(const mini::Module& m, const ember::nn::Module& e, const std::string& where,
                             const std::string& hint) {
  const auto mine = m.named_parameters();
  for (const auto& [name, t] : e.named_parameters()) {
    for (const auto& [n, v] : mine) {
      if (n != name) continue;
      const std::optional<mini::Tensor> got = v.grad();
      if (!got) fail("no gradient reached " + name + where, "every parameter takes part in the forward");
      const std::string diff = first_difference(*got, t.grad(), 1e-8);
      if (!diff.empty()) fail(name + "'s gradient: " + diff + where, hint);
    }
  }
}

// Where x's gradient differs from ember's: empty when it does not, "none
// reached it" when the learner's backward never got there.
std::string grad_difference(const mini::Var& x, const ember::Tensor& want) {
  const std::optional<mini::Tensor> got = x.grad();
  return got ? first_difference(*got, want, 1e-8) : "no gradient reached it";
}

// ---- the mask ----

void masks() {
  for (int64_t T = 1; T <= 6; ++T) {
    const mini::Tensor m = mini::causal_mask(T);
    check::expect(m.shape() == mini::Shape{T, T}, "causal_mask(" + std::to_string(T) + ") has shape " + show(m.shape()),
                  "a (T, T) table: a row for each query, a column for each key");
    for (int64_t i = 0; i < T; ++i)
      for (int64_t j = 0; j < T; ++j) {
        const double v = m.at({i, j});
        const bool future = j > i;
        check::expect(future ? std::isinf(v) && v < 0 : v == 0,
                      "causal_mask(" + std::to_string(T) + ")[" + std::to_string(i) + ", " + std::to_string(j) +
                          "] is " + check::num(v) + ", not " + (future ? "-inf" : "0"),
                      future ? "key j > i is the future of query i: -inf, whose e^ is exactly 0"
                             : "a query sees itself and the past: 0 leaves their scores as they are");
      }
  }
}

// ---- attention ----

struct Variant {
  double scale_power;  // the scores times d^-scale_power
  int mask;            // 0: causal, 1: none, 2: the past hidden instead
  int reshape_only;    // heads split by (B, T, D) -> (B, h, T, d) alone: 1, and merged back so too: 2
};

ember::Tensor attention_variant(const ember::Tensor& x, const ember::nn::MultiHeadAttention& a, int64_t h,
                                const Variant& v) {
  const int64_t B = x.size(0), T = x.size(1), D = x.size(2), d = D / h;
  auto lin = [&](const ember::nn::Linear& l, const ember::Tensor& y) { return ember::nn::linear(y, l.weight, l.bias); };
  auto split = [&](const ember::Tensor& y) {
    return v.reshape_only ? y.reshape({B, h, T, d}) : y.reshape({B, T, h, d}).transpose(1, 2);
  };
  const ember::Tensor q = split(lin(*a.w_q, x)), k = split(lin(*a.w_k, x)), vv = split(lin(*a.w_v, x));
  ember::Tensor scores = q.matmul(k.transpose(2, 3)).mul(number(std::pow(static_cast<double>(d), -v.scale_power)));
  if (v.mask != 1) {
    std::vector<double> m(static_cast<size_t>(T * T), 0.0);
    for (int64_t i = 0; i < T; ++i)
      for (int64_t j = 0; j < T; ++j)
        if (v.mask == 0 ? j > i : j < i) m[static_cast<size_t>(i * T + j)] = -INFINITY;
    scores = scores.add(ember::tensor(m, {T, T}));
  }
  const ember::Tensor out = scores.softmax(scores.dim() - 1).matmul(vv);
  const ember::Tensor merged = v.reshape_only == 2 ? out.reshape({B, T, D}) : out.transpose(1, 2).reshape({B, T, D});
  return lin(*a.w_o, merged);
}

std::string attention_mistake(const mini::Tensor& got, const ember::Tensor& x, const ember::nn::MultiHeadAttention& a,
                              int64_t h) {
  const std::vector<std::pair<Variant, std::string>> variants = {
      {{0, 0, 0}, "the scores were not divided by √d: with d numbers per head, q·k grows like √d, and an "
                      "unscaled softmax saturates"},
      {{1, 0, 0}, "the scores were divided by d: the scale is 1/√d"},
      {{0.5, 1, 0}, "no mask: query i saw the keys after it, the future it must predict"},
      {{0.5, 2, 0}, "the mask hides the past and shows the future: -inf goes where key j > query i"},
      {{0.5, 0, 1}, "heads split by a reshape alone: (B, T, D) viewed as (B, h, T, d) mixes positions into heads; "
                    "reshape to (B, T, h, d), then swap T and h"},
      {{0.5, 0, 2}, "heads split by a reshape alone, and merged back so: (B, T, D) viewed as (B, h, T, d) mixes "
                    "positions into heads; reshape to (B, T, h, d), then swap T and h (and back)"},
  };
  for (const auto& [v, hint] : variants)
    if (same(got, attention_variant(x, a, h, v).detach(), 1e-9)) return hint;
  return "softmax(q kᵀ/√d + mask) v for each head, the heads merged back in order, then w_o";
}

void attentions() {
  ember::Generator gen(90);
  mini::Generator init(90);
  for (int trial = 0; trial < 30; ++trial) {
    const int64_t h = 1 + static_cast<int64_t>(gen.next_below(3)), d = 1 + static_cast<int64_t>(gen.next_below(4));
    const int64_t D = h * d, B = 1 + static_cast<int64_t>(gen.next_below(2)), T = 1 + static_cast<int64_t>(gen.next_below(6));
    const mini::CausalSelfAttention attn(D, h, init);
    ember::nn::MultiHeadAttention ea(D, h, {.causal = true, .kernel = ember::nn::AttentionKernel::Stored,
                                            .dtype = ember::kFloat64});
    const std::string where = "\n  trial " + std::to_string(trial) + " (seed 90): CausalSelfAttention(D " +
                              std::to_string(D) + ", heads " + std::to_string(h) + "), x of shape (" +
                              std::to_string(B) + ", " + std::to_string(T) + ", " + std::to_string(D) +
                              "), y = forward(x), y.backward(grad)";
    copy_into(attn, ea, "CausalSelfAttention");
    const yours::Input in = random_input({B, T, D}, gen);
    const mini::Var x(in.m, true);
    const ember::Tensor xe = in.e.detach().requires_grad_();
    const mini::Var y = attn.forward(x);
    const ember::Tensor ye = ea.forward(xe);
    if (y.shape() != ye.shape())
      fail("the output has shape " + show(y.shape()) + ", not " + show(ye.shape()) + where,
           "attention maps (B, T, D) to (B, T, D): merge the heads back");
    const std::string diff = first_difference(y.data(), ye.detach(), 1e-9);
    if (!diff.empty()) fail("the output: " + diff + where, attention_mistake(y.data(), in.e, ea, h));
    const std::vector<double> gv = yours::draw(ye.numel(), gen, false, 0);
    y.backward(mini::Tensor(gv, ye.shape()));
    ye.backward(ember::tensor(gv, ye.shape()));
    const std::string gdiff = grad_difference(x, xe.grad());
    if (!gdiff.empty())
      fail("x's gradient: " + gdiff + where, "the forward agrees: each op's backward passed in the earlier stages; is "
                                             "a constant (the mask, the scale) a Var that requires no grad?");
    compare_parameter_grads(attn, ea, where, "the forward agrees, and x's gradient: which parameter's path differs?");
  }
}

// ---- the block ----

std::string block_mistake(const mini::Tensor& got, const ember::Tensor& x, ember::nn::TransformerBlock& b) {
  ember::NoGradGuard no_grad;
  const ember::Tensor post1 = b.ln1->forward(x.add(b.attn->forward(x)));
  const ember::Tensor post = b.ln2->forward(post1.add(b.fc2->forward(ember::gelu(b.fc1->forward(post1)))));
  if (same(got, post, 1e-9))
    return "a post-norm block (norm after the residual, the 2017 paper's): this one is pre-norm, x + f(ln(x)), as "
           "GPT-2's and ember's";
  const ember::Tensor a = b.attn->forward(b.ln1->forward(x));
  const ember::Tensor no_res = b.fc2->forward(ember::gelu(b.fc1->forward(b.ln2->forward(a))));
  if (same(got, no_res, 1e-9)) return "the residuals are missing: each half adds its result to its input, x + f(x)";
  return "x + attn(ln1(x)), then that plus fc2(gelu(fc1(ln2(that))))";
}

void blocks() {
  ember::Generator gen(91);
  mini::Generator init(91);
  for (int trial = 0; trial < 20; ++trial) {
    const int64_t h = 1 + static_cast<int64_t>(gen.next_below(2)), D = h * (1 + static_cast<int64_t>(gen.next_below(4)));
    const int64_t B = 1 + static_cast<int64_t>(gen.next_below(2)), T = 1 + static_cast<int64_t>(gen.next_below(5));
    const mini::TransformerBlock block(D, h, init);
    ember::nn::TransformerBlock eb(D, h, {.attention = ember::nn::AttentionKernel::Stored, .dtype = ember::kFloat64});
    copy_into(block, eb, "TransformerBlock");
    const std::string where = "\n  trial " + std::to_string(trial) + " (seed 91): TransformerBlock(D " +
                              std::to_string(D) + ", heads " + std::to_string(h) + "), x of shape (" +
                              std::to_string(B) + ", " + std::to_string(T) + ", " + std::to_string(D) +
                              "), sum(forward(x) · w).backward()";
    const yours::Input in = random_input({B, T, D}, gen);
    const mini::Var x(in.m, true);
    const ember::Tensor xe = in.e.detach().requires_grad_();
    const mini::Var y = block.forward(x);
    const ember::Tensor ye = eb.forward(xe);
    const std::string diff =
        y.shape() == ye.shape() ? first_difference(y.data(), ye.detach(), 1e-9) : "shape " + show(y.shape());
    if (!diff.empty()) fail("the output: " + diff + where, block_mistake(y.data(), in.e, eb));
    const std::vector<double> wv = yours::draw(ye.numel(), gen, false, 0);
    mini::sum(mini::mul(y, mini::Var(mini::Tensor(wv, ye.shape())))).backward();
    ye.mul(ember::tensor(wv, ye.shape())).sum().backward();
    const std::string gdiff = grad_difference(x, xe.grad());
    if (!gdiff.empty()) fail("x's gradient: " + gdiff + where, "the forward agrees: does every residual add x itself?");
    compare_parameter_grads(block, eb, where, "the forward agrees, and x's gradient: which parameter's path differs?");
  }
}

void refusals() {
  mini::Generator init(92);
  yours::expect_refusal([&] { mini::CausalSelfAttention(6, 4, init); }, {"CausalSelfAttention", "4", "6"},
                        "CausalSelfAttention(D 6, heads 4)", "4 heads cannot share 6 numbers equally");
  const mini::CausalSelfAttention attn(4, 2, init);
  yours::expect_refusal([&] { attn.forward(mini::Var(mini::Tensor(std::vector<double>(8), {2, 4}))); },
                        {"CausalSelfAttention", "(2, 4)"}, "forward of an x of shape (2, 4)",
                        "x is (B, T, D): a batch of sequences of vectors");
  yours::expect_refusal([&] { attn.forward(mini::Var(mini::Tensor(std::vector<double>(6), {1, 2, 3}))); },
                        {"CausalSelfAttention", "(1, 2, 3)"}, "forward of an x of shape (1, 2, 3) into D = 4",
                        "the last dim is the model's D");
}

check::Exercise attention() {
  using yours::step;
  return {"9", "Attention and a Transformer block", "docs/book/build_your_own/09_attention.md", {
    step("causal_mask for T = 1 to 6", masks),
    step("causal self-attention on 30 random inputs against ember's: the output and every gradient", attentions),
    step("the pre-norm Transformer block on 20 random inputs against ember's", blocks),
    step("what must be refused is refused, with a message naming the module and the shapes", refusals),
  }};
}

const yours::Stage stage{9, attention};

}  // namespace
