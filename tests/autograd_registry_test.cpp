// The op registry (autograd/op_registry.h) under test:
//   * every sample of every op passes gradcheck (one test per op);
//   * each op records exactly the Node types it declares;
//   * every Node type in the binary is declared by some op, so an op added
//     without a registry entry (and so without a gradient test) fails here.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <set>
#include <sstream>

#include "autograd/node.h"
#include "autograd/op_registry.h"
#include "nn/nn_registry.h"
#include "nn/nn_registry_seq.h"
#include "test_util.h"

namespace ember {
// GoogleTest prints a parameter on failure; the name is what matters.
void PrintTo(const OpInfo& op, std::ostream* os) { *os << op.name; }
}  // namespace ember

namespace {

using namespace ember;

// "(3, 1) x (4) broadcast"
std::string describe(const OpSample& s) {
  std::ostringstream os;
  for (size_t i = 0; i < s.inputs.size(); ++i) os << (i ? " x " : "") << shape_str(s.inputs[i].shape());
  os << " " << s.label;
  return os.str();
}

// Names of every Node reachable from t (an explicit stack, like the engine).
std::set<std::string> recorded_nodes(const Tensor& t) {
  std::set<std::string> names;
  std::vector<Node*> stack;
  std::set<Node*> seen;
  if (t.grad_fn()) stack.push_back(t.grad_fn().get());
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    if (!seen.insert(n).second) continue;
    names.insert(n->name());
    for (const Edge& e : n->next)
      if (e.node) stack.push_back(e.node.get());
  }
  return names;
}

// Every sample, run forward once with grad on: the nodes the op recorded.
std::set<std::string> nodes_recorded_by(const OpInfo& op) {
  Generator g(7);
  std::set<std::string> names;
  for (const OpSample& s : op.samples(g)) {
    std::set<std::string> n = recorded_nodes(op.fn(s.inputs));
    names.insert(n.begin(), n.end());
  }
  return names;
}

std::string joined(const std::set<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out.empty() ? "(none)" : out;
}

class OpRegistry : public ::testing::TestWithParam<OpInfo> {};

TEST_P(OpRegistry, Gradcheck) {
  const OpInfo& op = GetParam();
  Generator g(2024);
  std::vector<OpSample> samples = op.samples(g);
  ASSERT_FALSE(samples.empty()) << op.name << " has no samples";
  int64_t entries = 0;
  for (const OpSample& s : samples) {
    SCOPED_TRACE(op.name + " on " + describe(s));
    EXPECT_GRADCHECK(op.fn, s.inputs, op.gradcheck);
    entries += gradcheck(op.fn, s.inputs, op.gradcheck).checked;
  }
  // Zero-size samples compare nothing; the op must be checked somewhere.
  EXPECT_GT(entries, 0) << op.name << ": no sample has a non-empty Jacobian";
}

TEST_P(OpRegistry, RecordsTheNodesItDeclares) {
  const OpInfo& op = GetParam();
  std::set<std::string> declared(op.nodes.begin(), op.nodes.end());
  std::set<std::string> recorded = nodes_recorded_by(op);
  EXPECT_EQ(joined(recorded), joined(declared))
      << op.name << " declares nodes {" << joined(declared) << "} but its samples record {" << joined(recorded) << "}";
}

std::string test_name(const ::testing::TestParamInfo<OpInfo>& info) {
  std::string name = info.param.name;
  std::replace_if(name.begin(), name.end(), [](unsigned char c) { return !std::isalnum(c); }, '_');
  return name;
}

// Layers above autograd add their entries through a function (a static
// library drops an object file nothing references; see nn/nn_registry.h).
// Every such function is called here, during static initialization, and
// GoogleTest reads op_registry() later, when main() starts the tests.
[[maybe_unused]] const bool all_layers_registered = (nn::register_embedding_ops(), nn::register_sequence_ops(), true);

INSTANTIATE_TEST_SUITE_P(Autograd, OpRegistry, ::testing::ValuesIn(op_registry()), test_name);

TEST(AutogradRegistry, NamesAreUnique) {
  std::set<std::string> names;
  for (const OpInfo& op : op_registry()) EXPECT_TRUE(names.insert(op.name).second) << "duplicate op " << op.name;
}

TEST(AutogradRegistry, EveryNodeTypeIsInTheRegistry) {
  // What the registry claims, plus what its samples actually record.
  std::set<std::string> covered;
  for (const OpInfo& op : op_registry()) {
    covered.insert(op.nodes.begin(), op.nodes.end());
    std::set<std::string> recorded = nodes_recorded_by(op);
    covered.insert(recorded.begin(), recorded.end());
  }
  std::set<std::string> declared;
  for (const OpInfo& op : op_registry()) declared.insert(op.nodes.begin(), op.nodes.end());

  std::set<std::string> missing;
  for (const std::string& n : node_type_names())
    if (!declared.count(n)) missing.insert(n);
  EXPECT_TRUE(missing.empty()) << "Node types with no registry entry (add the op to autograd/op_registry.cpp, "
                                  "or register it with register_op): "
                               << joined(missing);
  // Names the registry declares must be real node types.
  std::set<std::string> all(node_type_names().begin(), node_type_names().end());
  for (const std::string& n : covered) EXPECT_TRUE(all.count(n)) << n << " is not a known Node type";
  EXPECT_GE(all.size(), 30u) << "node_type_names() looks incomplete: " << joined(all);
}

TEST(AutogradRegistry, RegisterOpRejectsDuplicatesAndGaps) {
  test::expect_error([] { register_op(op_registry().front()); }, {"register_op", "already registered"});
  OpInfo half_done;
  half_done.name = "no_fn";
  test::expect_error([&] { register_op(half_done); }, {"register_op", "no_fn"});
}

}  // namespace
