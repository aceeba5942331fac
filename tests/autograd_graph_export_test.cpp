// autograd/graph_export.h and Node::saved(): every Node of every op in the
// gradcheck registry names each tensor it saved, by its role (distinct names,
// "output" exactly for the op's own output); the DOT picture shows those
// names, a title, a legend, an output box whose arrow points at the root's
// Node, and each leaf once.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <unordered_set>

#include "autograd/graph_export.h"
#include "autograd/node.h"
#include "ember.h"
#include "registry.h"

namespace {

using namespace ember;

// Every Node reachable from t's grad_fn, once each.
std::vector<Node*> nodes_of(const Tensor& t) {
  std::vector<Node*> out, stack;
  std::unordered_set<Node*> seen;
  if (t.grad_fn()) stack.push_back(t.grad_fn().get()), seen.insert(t.grad_fn().get());
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    out.push_back(n);
    for (const Edge& e : n->next)
      if (e.node && seen.insert(e.node.get()).second) stack.push_back(e.node.get());
  }
  return out;
}

TEST(GraphExport, EveryNodeNamesWhatItSaved) {
  Generator gen(7);
  std::set<std::string> named;  // "MulBackward: a" ...
  for (const samples::OpInfo& op : samples::op_registry()) {
    const std::vector<samples::OpSample> cases = op.samples(gen);
    ASSERT_FALSE(cases.empty()) << op.name;
    const Tensor out = op.fn(cases.front().inputs);
    for (Node* n : nodes_of(out)) {
      std::set<std::string> names;
      for (const SavedRef& s : n->saved()) {
        ASSERT_NE(s.name, nullptr) << op.name << " " << n->name();
        const std::string name = s.name;
        EXPECT_FALSE(name.empty()) << op.name << " " << n->name();
        EXPECT_TRUE(names.insert(name).second) << op.name << " " << n->name() << " saves two tensors named " << name;
        if (s->peek().defined()) {
          EXPECT_EQ(name == "output", s->is_output()) << op.name << " " << n->name() << ": " << name;
        }
        named.insert(std::string(n->name()) + ": " + name);
      }
    }
  }
  // the roles a reader meets first, as the formulas name them
  for (const char* want : {"MulBackward: a", "MulBackward: b", "MatmulBackward: a", "TanhBackward: output",
                           "LogBackward: x", "SoftmaxBackward: output", "LayerNormBackward: weight",
                           "CrossEntropyBackward: targets", "IndexSelectBackward: ids"})
    EXPECT_TRUE(named.count(want)) << "no " << want;
}

TEST(GraphExport, ThePictureNamesSavedTensorsAndExplainsItself) {
  Tensor x = tensor(std::vector<double>{0.5, 1.5, 2.0}).requires_grad_();
  x.set_name("x");
  Tensor w = tensor(std::vector<double>{1, 2, 3, 4, 5, 6}, {3, 2}).requires_grad_();
  w.set_name("w");
  Tensor h = matmul(log(x).reshape({1, 3}), w).set_name("h");  // log saves its input, matmul both operands
  Tensor L = (tanh(h) * x.sum()).sum().set_name("L");            // tanh saves its output; x is used twice
  const std::string dot = to_dot(L);
  for (const char* part : {"saved: x (float64 (3))", "saved: b (w, float64 (3, 2))", "saved: output (float64 (1, 2))",
                           "label=\"The backward graph of L", "output L scalar", "<B>legend</B>",
                           "a leaf: a tensor that requires grad", "accumulate"})
    EXPECT_NE(dot.find(part), std::string::npos) << "missing " << part << " in\n" << dot;
  // the output's box points at L's Node (the bold arrow), not at a loose label
  EXPECT_NE(dot.find("out -> n0 [style=bold]"), std::string::npos) << dot;
  EXPECT_EQ(dot.find("-> out"), std::string::npos) << dot;
  // x feeds two Nodes but is drawn once
  size_t defs = 0;
  for (size_t at = dot.find("label=\"x (3)"); at != std::string::npos; at = dot.find("label=\"x (3)", at + 1)) ++defs;
  EXPECT_EQ(defs, 1u) << dot;
  // a title of one's own, and no legend when not asked for
  const std::string bare = to_dot(L, {.title = "my graph", .legend = false});
  EXPECT_NE(bare.find("label=\"my graph"), std::string::npos);
  EXPECT_EQ(bare.find("legend"), std::string::npos);
}

}  // namespace
