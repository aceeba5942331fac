// The two spellings of an op (tensor/tensor.h states the rule): every op
// that works on one tensor is both `ember::op(x, ...)` and `x.op(...)`, made
// from its one line of tensor/op_list.h, and the two give the same tensor,
// bit for bit. Free functions only: ops over a
// list of tensors and the layers' building blocks (torch.nn.functional's
// habit). Every op of the gradcheck registry must be in one of the two lists.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "ember.h"
#include "gradcheck_samples/registry.h"

namespace {

using namespace ember;

void expect_same(const Tensor& a, const Tensor& b, const char* op) {
  EXPECT_TRUE(equal_bits(a, b)) << op << ": x." << op << "(...) and ember::" << op << "(x, ...) differ";
}
void expect_same(const std::pair<Tensor, Tensor>& a, const std::pair<Tensor, Tensor>& b, const char* op) {
  expect_same(a.first, b.first, op);
  expect_same(a.second, b.second, op);
}

// The ops of tensor/op_list.h: both spellings are made from their one line.
std::set<std::string> listed_ops() {
  std::set<std::string> names;
#define EMBER_DEFAULT(v)
#define EMBER_OP(R, name, params, args) names.insert(#name);
#include "tensor/op_list.h"
#undef EMBER_OP
#undef EMBER_DEFAULT
  return names;
}

// The ops with both spellings: the listed ones, and the three methods written
// by hand (their argument order or their body differs), each called both ways.
std::set<std::string> check_both_spellings() {
  std::set<std::string> spelled = listed_ops();
  Generator gen(3);
  const Tensor x = randn({3, 4}, gen, kFloat64), y = randn({3, 4}, gen, kFloat64) + 3.0;
  const Tensor ids = tensor({2, 0, 2}, kInt64), mask = gt(x, 0.0);
  // Calling both compiles only if both exist; then they must agree.
  expect_same(x.exp(), exp(x), "exp");
  expect_same(x.max(1, true), max(x, 1, true), "max");
  expect_same(x.slice(1, 0, 4, 2), slice(x, 1, 0, 4, 2), "slice");
  expect_same(x.t(), transpose(x, 0, 1), "t");
  expect_same(x.where(mask, y), where(mask, x, y), "where");  // PyTorch's order: x where cond, else y
  spelled.insert("where");
  Tensor a = x.clone(), b = x.clone();
  a.index_add_(0, ids, y);
  index_add_(b, 0, ids, y);
  expect_same(a, b, "index_add_");
  return spelled;
}

// Free functions only, like torch.cat and torch.nn.functional.
const std::set<std::string> kFunctionalOnly = {"cat", "stack", "embedding", "layer_norm", "cross_entropy",
                                               "gelu", "scaled_softmax", "tiled_attention", "one_hot"};

// The registry's entry names are an op's name, or a variant of it:
// "sum_dim", "cross_entropy(sum)". The scalar forms are operators
// ("x * 3.0", "2.5 - x").
std::string op_of(const std::string& entry, const std::set<std::string>& known) {
  if (entry.find("scalar") != std::string::npos) return "operator";
  std::string best;
  for (const std::string& op : known)
    if (entry == op || entry.rfind(op + "_", 0) == 0 || entry.rfind(op + "(", 0) == 0)
      if (op.size() > best.size()) best = op;
  return best;
}

TEST(ApiSpelling, EveryRegistryOpHasBothSpellingsOrIsFunctional) {
  const std::set<std::string> spelled = check_both_spellings();
  EXPECT_GE(spelled.size(), 59u);  // every op of tensor/op_list.h and the hand-written methods, overloads counted once
  std::set<std::string> known = spelled;
  known.insert(kFunctionalOnly.begin(), kFunctionalOnly.end());
  int ops = 0;
  for (const samples::OpInfo& info : samples::op_registry()) {
    if (info.name.rfind("nn.", 0) == 0) continue;  // modules, not ops
    ++ops;
    const std::string op = op_of(info.name, known);
    EXPECT_FALSE(op.empty()) << "registry op \"" << info.name
                             << "\" has no method spelling here and is not listed as functional only";
  }
  EXPECT_GT(ops, 60);
  for (const std::string& f : kFunctionalOnly) EXPECT_EQ(spelled.count(f), 0u) << f;
}

TEST(ApiSpelling, OpOfNamesTheOpOfARegistryEntry) {
  const std::set<std::string> known = {"sum", "index_select", "cross_entropy", "squeeze", "norm"};
  EXPECT_EQ(op_of("sum_keepdim", known), "sum");
  EXPECT_EQ(op_of("index_select_last_dim", known), "index_select");
  EXPECT_EQ(op_of("cross_entropy(none)", known), "cross_entropy");
  EXPECT_EQ(op_of("norm_inf", known), "norm");
  EXPECT_EQ(op_of("mul_scalar", known), "operator");
  EXPECT_EQ(op_of("summary", known), "");  // a prefix is not enough: "sum" + "_" or "(" is
}

TEST(ApiSpelling, ItemWithoutATypeIsADouble) {
  const Tensor loss = tensor({0.25f});
  static_assert(std::is_same_v<decltype(loss.item()), double>);
  EXPECT_EQ(loss.item(), 0.25);
  EXPECT_EQ(tensor({7}, kInt64).item<int64_t>(), 7);  // the typed form stays
  EXPECT_EQ(tensor({7}, kInt64).item(), 7.0);
}

}  // namespace
