// Checks stage 10 (docs/book/build_your_own/10_gpt.md), the capstone: mini's
// GPT against ember's nn::GPT (float64) of the same configuration (V 65, a
// context of 16, D 32, 4 heads, 2 blocks, the head tied), with ember's
// starting numbers copied into mini's by name: the parameters' names and
// shapes, one forward and backward (the logits, the loss, every gradient),
// then 40 steps of training on Tiny Shakespeare (ember's corpus: the same
// batches, AdamW with lr 3e-3 and weight decay 0.01 on both), the loss
// compared at every step; then the refusals.
//
// Tolerances: one forward and backward, 1e-8 relative (stage 9's chain, two
// blocks deep, and a cross-entropy over 64 rows). Training: every step's
// rounding differences (~1e-13 relative: ember multiplies on OpenBLAS, mini
// in its own loops) change the next step's parameters, and the training
// amplifies them; stated tolerance 1e-6 relative on each of the 40 losses
// (the note says whether they also agree within 1e-9).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>

#include "exercises/yours/checks/inputs.h"
#include "exercises/yours/checks/yours.h"
#include "mini/gpt.h"
#include "mini/optim.h"

namespace {

using check::fail;
using check::show;
using yours::first_difference;

const mini::GPTConfig kConfig{65, 16, 32, 4, 2};
const int64_t kBatch = 4;

std::unique_ptr<ember::nn::GPT> ember_gpt(uint64_t seed) {
  ember::nn::GPTConfig c;
  c.vocab_size = kConfig.vocab_size;
  c.context_length = kConfig.context_length;
  c.dim = kConfig.dim;
  c.heads = kConfig.heads;
  c.layers = kConfig.layers;
  c.seed = seed;
  c.dtype = ember::kFloat64;
  return std::make_unique<ember::nn::GPT>(c);
}

std::string names_of(const std::vector<std::pair<std::string, mini::Var>>& params) {
  std::string out;
  for (const auto& [name, v] : params) out += (out.empty() ? "" : ", ") + name + " " + show(v.shape());
  return out;
}

// ember's starting numbers into mini's parameters, by name (every name must match).
void copy_from(const ember::nn::GPT& e, const mini::GPT& m) {
  const auto mine = m.named_parameters();
  const auto theirs = e.named_parameters();
  std::string want;
  for (const auto& [name, t] : theirs) want += (want.empty() ? "" : ", ") + name + " " + show(t.shape());
  check::expect(mine.size() == theirs.size(),
                "your GPT's named_parameters() are " + names_of(mine) + "\n  ember's GPT's are " + want,
                "the members are named as the header says, each registered once; the head's weight is the token "
                "table (tied), listed once");
  for (const auto& [name, t] : theirs) {
    const mini::Var* found = nullptr;
    for (const auto& [n, v] : mine)
      if (n == name) found = &v;
    check::expect(found && found->shape() == t.shape(),
                  "ember's GPT has " + name + " " + show(t.shape()) + "; yours has " + names_of(mine),
                  "name the members as ember does: embed.token, embed.positional, blocks.0, ..., ln_f, head");
    const std::vector<double> v = t.contiguous().to_vector<double>();
    for (int64_t k = 0; k < found->data().numel(); ++k)
      found->data().at(mini::unravel(k, found->shape())) = v[static_cast<size_t>(k)];
  }
}

// B·T ids of a batch, row by row.
std::vector<int64_t> ids_of(const ember::Tensor& t) { return t.contiguous().to_vector<int64_t>(); }

void parameters() {
  mini::Generator init(100);
  const mini::GPT model(kConfig, init);
  copy_from(*ember_gpt(100), model);
  check::note(std::to_string(model.named_parameters().size()) + " parameters, named as ember's");
}

void one_step() {
  mini::Generator init(101);
  const mini::GPT model(kConfig, init);
  const auto owned = ember_gpt(101);
  ember::nn::GPT& e = *owned;
  copy_from(e, model);
  ember::Generator gen(101);
  std::vector<int64_t> ids(static_cast<size_t>(kBatch * kConfig.context_length)), targets(ids.size());
  for (int64_t& id : ids) id = static_cast<int64_t>(gen.next_below(65));
  for (int64_t& t : targets) t = static_cast<int64_t>(gen.next_below(65));
  const int64_t B = kBatch, T = kConfig.context_length;
  const ember::Tensor ie = ember::tensor(ids, {B, T}), te = ember::tensor(targets, {B, T});
  const std::string where = "\n  B 4, T 16, random ids and targets (seed 101), from ember's starting numbers";
  const mini::Var logits = model.forward(ids, B, T);
  const ember::Tensor le = e.forward(ie);
  const std::string diff =
      logits.shape() == le.shape() ? first_difference(logits.data(), le.detach(), 1e-8) : "shape " + show(logits.shape());
  if (!diff.empty()) {
    // the same forward with the position table zeroed: what a model without positions gives
    ember::Tensor pos;
    for (auto& [name, t] : e.named_parameters())
      if (name == "embed.positional.weight") pos = t;
    const ember::Tensor saved = pos.detach().clone();
    ember::Tensor without;
    {
      ember::NoGradGuard no_grad;
      pos.copy_(ember::zeros_like(pos));
      without = e.forward(ie);
      pos.copy_(saved);
    }
    fail("the logits: " + diff + where,
         yours::same(logits.data(), without, 1e-8)
             ? std::string("the positions are missing: without them a token's vector is the same wherever it stands, "
                           "and attention cannot tell the order; add the position table's rows 0 ... T-1")
             : std::string("each block passed stage 9: is the order embed, blocks, ln_f, head, and is the head's "
                           "weight the token table?"));
  }
  const mini::Var loss = model.loss(ids, targets, B, T);
  const ember::Tensor loss_e = e.loss(ie, te);
  check::expect(yours::close(loss.data().values()[0], loss_e.item<double>(), 1e-8),
                "the loss is " + check::num(loss.data().values()[0]) + ", ember's " + check::num(loss_e.item<double>()) +
                    where,
                "the mean cross-entropy over all B·T positions: logits reshaped to (B·T, V)");
  loss.backward();
  loss_e.backward();
  const auto mine = model.named_parameters();
  for (const auto& [name, t] : e.named_parameters())
    for (const auto& [n, v] : mine)
      if (n == name) {
        const std::optional<mini::Tensor> g = v.grad();
        const std::string gd = g ? first_difference(*g, t.grad(), 1e-8) : std::string("none");
        check::expect(gd.empty(), name + "'s gradient: " + gd + where,
                      name == "embed.token.weight"
                          ? "the tied table gets the lookup's part and the head's: is the head's weight the table's "
                            "Var itself?"
                          : "the forward agrees: which op on this parameter's path differs?");
      }
}

void training() {
  mini::Generator init(102);
  const mini::GPT model(kConfig, init);
  const auto owned = ember_gpt(102);
  ember::nn::GPT& e = *owned;
  copy_from(e, model);
  const std::string text = ember::train::read_text_file(std::string(EMBER_DATA_DIR) + "/tinyshakespeare.txt.gz");
  const ember::train::CharTokenizer tok = ember::train::CharTokenizer::from_text(text);
  check::expect(tok.vocab_size() == kConfig.vocab_size, "Tiny Shakespeare has " + std::to_string(tok.vocab_size()) +
                                                            " characters, not 65", "");
  ember::train::BatchSampler batches(tok.encode(text), kBatch, kConfig.context_length, 0.1, 102);
  mini::AdamW om(model.parameters(), 3e-3, 0.9, 0.999, 1e-8, 0.01);
  ember::optim::AdamW oe(e.parameters(), 3e-3, 0.9, 0.999, 1e-8, 0.01);
  double first = 0, last = 0, largest = 0;
  for (int step = 1; step <= 40; ++step) {
    const auto [x, y] = batches.sample();
    const std::vector<int64_t> ids = ids_of(x), targets = ids_of(y);
    const double got =
        mini::train_step(om, [&] { return model.loss(ids, targets, kBatch, kConfig.context_length); });
    oe.zero_grad();
    const ember::Tensor l = e.loss(x, y);
    l.backward();
    oe.step();
    const double want = l.item<double>();
    if (step == 1) first = got;
    last = got;
    largest = std::max(largest, std::abs(got - want) / std::abs(want));
    if (!yours::close(got, want, 1e-6))
      fail("the loss at step " + std::to_string(step) + " is " + check::num(got) + ", ember's " + check::num(want) +
               " (tolerance 1e-6 relative)\n  B 4, T 16, Tiny Shakespeare batches (seed 102), AdamW lr 3e-3, weight "
               "decay 0.01, from ember's starting numbers",
           step == 1 ? "the first loss comes before any update: the forward differs (see the check before)"
                     : "the first loss agrees, so the forward does: the updates differ. Does the optimizer see each "
                       "parameter once (the tied table too), and does train_step forget the last gradients?");
  }
  char line[200];
  std::snprintf(line, sizeof line, "the loss went from %.3f to %.3f in 40 steps, as ember's: %s", first, last,
                largest < 1e-9 ? "every step within 1e-9 of it" : "every step within 1e-6 of it");
  check::note(line);
}

void refusals() {
  mini::Generator init(103);
  yours::expect_refusal([&] { mini::GPT({65, 16, 30, 4, 2}, init); }, {"GPT", "4", "30"}, "GPT with dim 30 and 4 heads",
                        "4 heads cannot share 30 numbers equally");
  yours::expect_refusal([&] { mini::GPT({0, 16, 32, 4, 2}, init); }, {"GPT", "0"}, "GPT with vocab_size 0",
                        "a model of no tokens");
  const mini::GPT model({65, 8, 16, 2, 1}, init);
  yours::expect_refusal([&] { model.forward(std::vector<int64_t>(9, 0), 1, 9); }, {"9", "8"},
                        "forward of 9 tokens with a context of 8",
                        "the position table has 8 rows: there is no position 8");
  yours::expect_refusal([&] { model.forward(std::vector<int64_t>(4, 65), 1, 4); }, {"65"},
                        "forward of the id 65 with 65 tokens", "ids are 0 to 64 (the embedding refuses it)");
}

check::Exercise gpt() {
  using yours::step;
  return {"10", "A character GPT", "docs/book/build_your_own/10_gpt.md", {
    step("the GPT's parameters have ember's names and shapes", parameters),
    step("one forward and backward from ember's starting numbers: the logits, the loss, every gradient", one_step),
    step("40 steps of training on Tiny Shakespeare beside ember's GPT: the loss at every step", training),
    step("what must be refused is refused, with a message naming the values", refusals),
  }};
}

const yours::Stage stage{10, gpt};

}  // namespace
