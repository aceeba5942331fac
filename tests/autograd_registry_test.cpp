// The gradcheck registry (tests/gradcheck_samples/registry.h) under test:
//   * every sample of every op passes gradcheck (one test per op);
//   * each op records exactly the Node types it declares;
//   * every Node type defined in ember's sources is declared by some op, so
//     an op added without a registry entry (and so without a gradient test)
//     fails here;
//   * every node is recorded inside an OpScope (an op without one computes
//     the right numbers, but the profiler and the backward trace cannot name
//     it). The Node types are read from the sources themselves
//     (each names itself with EMBER_NODE_NAME), so nothing in the library
//     has to register them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "autograd/functional.h"
#include "autograd/node.h"
#include "autograd/observer.h"
#include "autograd/op_scope.h"
#include "registry.h"
#include "tensor/kernels.h"
#include "test_util.h"

namespace ember::samples {
// GoogleTest prints a parameter on failure; the name is what matters.
void PrintTo(const OpInfo& op, std::ostream* os) { *os << op.name; }
}  // namespace ember::samples

namespace {

using namespace ember;
using namespace ember::samples;

// Every Node type in the library's sources: each names itself once, with
// EMBER_NODE_NAME(Name) at the start of a line of its struct.
std::set<std::string> node_types_in_sources() {
  namespace fs = std::filesystem;
  std::set<std::string> names;
  const std::regex node_def(R"(\n[ \t]*EMBER_NODE_NAME\((\w+)\))");
  for (const char* dir : {"tensor", "autograd", "nn", "train"}) {
    for (const auto& entry : fs::recursive_directory_iterator(fs::path(EMBER_SOURCE_DIR) / dir)) {
      if (entry.path().extension() != ".cpp" && entry.path().extension() != ".h") continue;
      std::ifstream f(entry.path());
      std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
      for (std::sregex_iterator m(text.begin(), text.end(), node_def), end; m != end; ++m) names.insert((*m)[1]);
    }
  }
  return names;
}

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

// Watches ops begin and end while fn runs (the events the profiler and the
// trace build on) and returns the nodes recorded while no OpScope was open.
std::vector<std::string> nodes_recorded_outside_an_op_scope(const std::function<void()>& fn) {
  struct Watcher : AutogradObserver {
    int depth = 0;
    std::vector<std::string> outside;
    void op_begin(const char*, const std::vector<const Tensor*>&) override { ++depth; }
    void op_end(const char*) override { --depth; }
    void node_recorded(Node& node, const Tensor&) override {
      if (depth == 0) outside.push_back(node.name());
    }
  } watcher;
  struct Install {  // removed again also when fn throws
    explicit Install(AutogradObserver* o) { set_autograd_observer(o); }
    ~Install() { set_autograd_observer(nullptr); }
  };
  {
    Install install(&watcher);
    fn();
  }
  return watcher.outside;
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
    const GradcheckResult r = gradcheck(op.fn, s.inputs, op.gradcheck);
    EXPECT_TRUE(r.ok) << r.report;
    entries += r.checked;
  }
  // Zero-size samples compare nothing; the op must be checked somewhere.
  EXPECT_GT(entries, 0) << op.name << ": no sample has a non-empty Jacobian";
}

// Every op's backward is itself differentiable (create_graph), checked by
// finite differences of its gradient; or the op says why not, and then
// create_graph must refuse it loudly rather than return a wrong derivative.
TEST_P(OpRegistry, Gradgradcheck) {
  const OpInfo& op = GetParam();
  Generator g(2024);
  std::vector<OpSample> samples = op.samples(g);
  int64_t entries = 0;
  for (const OpSample& s : samples) {
    SCOPED_TRACE(op.name + " on " + describe(s));
    if (!op.no_second_order.empty()) {
      Tensor out = op.fn(s.inputs);
      if (!out.requires_grad() || out.numel() == 0) continue;
      test::expect_error([&] { (void)sum(out).backward(Tensor(), false, /*create_graph=*/true); },
                         {"create_graph", "cannot be differentiated"});
      ++entries;
      continue;
    }
    const GradcheckResult r = gradgradcheck(op.fn, s.inputs, op.gradcheck);
    EXPECT_TRUE(r.ok) << r.report;
    entries += r.checked;
  }
  EXPECT_GT(entries, 0) << op.name << ": no sample checks a second derivative";
}

// Forward mode: every op's forward rule (next to its backward rule in
// autograd/ops/) gives the Jacobian's columns that central differences give,
// and <u, J v> by the forward rules equals <u^T J, v> by the backward rules
// to float64 round-off. An op without a forward rule gives zero tangents,
// which fails here.
TEST_P(OpRegistry, ForwardGradcheck) {
  const OpInfo& op = GetParam();
  Generator g(2024);
  int64_t entries = 0;
  for (const OpSample& s : op.samples(g)) {
    SCOPED_TRACE(op.name + " on " + describe(s));
    const GradcheckResult r = forward_gradcheck(op.fn, s.inputs, op.gradcheck);
    EXPECT_TRUE(r.ok) << r.report;
    entries += r.checked;
  }
  EXPECT_GT(entries, 0) << op.name << ": no sample has a non-empty Jacobian";
}

// Forward-over-reverse (what hessian() and hvp() compute): the tangent of the
// gradient <f, u> along v, with tangents travelling through the backward
// rules, equals the same second derivative by reverse-over-reverse
// (backward with create_graph, then backward again).
TEST_P(OpRegistry, ForwardOverReverseAgreesWithReverseOverReverse) {
  const OpInfo& op = GetParam();
  if (!op.no_second_order.empty()) GTEST_SKIP() << op.name << ": " << op.no_second_order;
  Generator g(2024);
  int64_t compared = 0;
  for (const OpSample& s : op.samples(g)) {
    SCOPED_TRACE(op.name + " on " + describe(s));
    std::vector<size_t> diff;
    for (size_t k = 0; k < s.inputs.size(); ++k)
      if (s.inputs[k].defined() && s.inputs[k].is_floating_point() && s.inputs[k].requires_grad()) diff.push_back(k);
    Tensor out0 = op.fn(s.inputs);
    if (diff.empty() || !out0.requires_grad() || out0.numel() == 0) continue;
    Generator r(11);
    Tensor u = randn(out0.shape(), r, kFloat64);
    std::vector<Tensor> vs(s.inputs.size());
    for (size_t k : diff) vs[k] = randn(s.inputs[k].shape(), r, kFloat64);
    // x -> (u^T J(x)) flattened over the differentiated inputs
    TensorFn pulled = [&](const std::vector<Tensor>& xs) {
      VjpResult b = vjp(op.fn, xs);
      std::vector<Tensor> gs = b.pullback(u), parts;
      for (size_t k : diff) parts.push_back(reshape(gs[k], {-1}));
      return cat(parts, 0);
    };
    std::vector<double> fwd = jvp(pulled, s.inputs, vs).tangent.to_vector<double>();
    // reverse-over-reverse: d/dx <pulled(x), w> for each unit w is a row; here
    // one product: the Hessian of <f, u> is symmetric, so H v = grad <grad <f,u>, v>.
    // one leaf per position, as vjp makes them (mul(x, x): two arguments)
    std::vector<Tensor> ins = s.inputs, wrt;
    for (size_t k : diff) {
      ins[k] = s.inputs[k].detach().requires_grad_();
      wrt.push_back(ins[k]);
    }
    Tensor out = op.fn(ins);
    std::vector<Tensor> g1 = grad({out}, wrt, {u}, {.create_graph = true, .allow_unused = true});
    Tensor inner = zeros({}, kFloat64);
    for (size_t i = 0; i < g1.size(); ++i)
      if (g1[i].defined()) inner = inner + sum(g1[i] * vs[diff[i]]);
    std::vector<double> rev;
    if (inner.requires_grad()) {
      std::vector<Tensor> g2 = grad({inner}, wrt, {}, {.allow_unused = true});
      for (size_t i = 0; i < g2.size(); ++i) {
        std::vector<double> part = g2[i].defined() ? g2[i].to_vector<double>()
                                                   : std::vector<double>(static_cast<size_t>(wrt[i].numel()), 0.0);
        rev.insert(rev.end(), part.begin(), part.end());
      }
    } else {
      rev.assign(fwd.size(), 0.0);
    }
    ASSERT_EQ(fwd.size(), rev.size());
    for (size_t i = 0; i < fwd.size(); ++i) {
      if (std::isnan(rev[i]) || std::isnan(fwd[i])) {  // NaN in one way must be NaN in the other
        EXPECT_EQ(std::isnan(fwd[i]), std::isnan(rev[i])) << "element " << i << ": " << fwd[i] << " vs " << rev[i];
        continue;
      }
      EXPECT_NEAR(fwd[i], rev[i], 1e-9 * (1 + std::abs(rev[i]))) << "element " << i;
      ++compared;
    }
  }
  EXPECT_GT(compared, 0) << op.name << ": no sample compares a second derivative";
}

// Forward mode on broadcast views: each differentiable input in turn is an
// expand view (stride 0) of a tensor of ones' shape, whose one tangent value
// every element shares. The op's forward rule must give what it gives on the
// dense copy of that view with the dense copy of its tangent: a rule that
// assumed a layout without overlap would read one tangent value where there
// are several, or write several into one.
TEST_P(OpRegistry, ForwardRulesOnStrideZeroInputs) {
  const OpInfo& op = GetParam();
  Generator g(2024);
  int64_t compared = 0;
  for (const OpSample& s : op.samples(g)) {
    for (size_t k = 0; k < s.inputs.size(); ++k) {
      const Tensor& x = s.inputs[k];
      if (!x.defined() || !x.is_floating_point() || !x.requires_grad() || x.numel() < 2 || x.dim() == 0) continue;
      SCOPED_TRACE(op.name + " on " + describe(s) + ", input " + std::to_string(k) + " broadcast");
      const Shape ones_shape(static_cast<size_t>(x.dim()), 1);
      Tensor small = reshape(x.detach().reshape({-1}).narrow(0, 0, 1), ones_shape);
      Generator r(7 + k);
      Tensor v = randn(ones_shape, r, x.dtype());
      TensorFn through_a_view = [&](const std::vector<Tensor>& in) {
        std::vector<Tensor> all = s.inputs;
        all[k] = in[0].expand(x.shape());
        return op.fn(all);
      };
      std::vector<Tensor> dense = s.inputs, tangents(s.inputs.size());
      dense[k] = small.expand(x.shape()).contiguous();
      tangents[k] = v.expand(x.shape()).contiguous();
      const std::vector<double> a = jvp(through_a_view, {small}, {v}).tangent.to_vector<double>();
      const std::vector<double> b = jvp(op.fn, dense, tangents).tangent.to_vector<double>();
      ASSERT_EQ(a.size(), b.size());
      for (size_t i = 0; i < a.size(); ++i) {
        if (std::isnan(a[i]) || std::isnan(b[i])) {
          EXPECT_EQ(std::isnan(a[i]), std::isnan(b[i])) << "element " << i << ": " << a[i] << " vs " << b[i];
          continue;
        }
        EXPECT_NEAR(a[i], b[i], 1e-11 * (1 + std::abs(b[i]))) << "element " << i;
        ++compared;
      }
    }
  }
  if (compared == 0) GTEST_SKIP() << op.name << ": no floating input with two or more elements";
}

TEST_P(OpRegistry, RecordsTheNodesItDeclares) {
  const OpInfo& op = GetParam();
  std::set<std::string> declared(op.nodes.begin(), op.nodes.end());
  std::set<std::string> recorded = nodes_recorded_by(op);
  EXPECT_EQ(joined(recorded), joined(declared))
      << op.name << " declares nodes {" << joined(declared) << "} but its samples record {" << joined(recorded) << "}";
}

// The nodes an op's backward records only while it records (create_graph)
// are there: in the graph of the gradient of some sample.
TEST_P(OpRegistry, ItsBackwardRecordsTheGradientNodesItDeclares) {
  const OpInfo& op = GetParam();
  if (op.grad_nodes.empty()) return;  // most ops: their backward records only ops of the registry
  Generator g(7);
  std::set<std::string> found;
  for (const OpSample& s : op.samples(g)) {
    std::vector<Tensor> wrt;
    for (const Tensor& t : s.inputs)
      if (t.defined() && t.requires_grad()) wrt.push_back(t);
    Tensor out = op.fn(s.inputs);
    if (wrt.empty() || !out.requires_grad() || out.numel() == 0) continue;
    // a cotangent with a graph of its own: a linear op's gradient depends on nothing else
    Generator r(3);
    Tensor u = randn(out.shape(), r, out.dtype()).requires_grad_();
    for (const Tensor& gi : grad({out}, wrt, {u}, {.create_graph = true, .allow_unused = true})) {
      if (!gi.defined()) continue;
      std::set<std::string> n = recorded_nodes(gi);
      found.insert(n.begin(), n.end());
    }
  }
  for (const std::string& n : op.grad_nodes) EXPECT_TRUE(found.count(n)) << op.name << "'s backward never recorded " << n;
}

// Every op opens an OpScope before it records its node: what the profiler
// and the backward trace see (autograd/op_scope.h).
TEST_P(OpRegistry, RecordsEveryNodeInsideAnOpScope) {
  const OpInfo& op = GetParam();
  ASSERT_EQ(autograd_observer(), nullptr) << "another observer is installed";
  Generator g(7);
  for (const OpSample& s : op.samples(g)) {
    const std::vector<std::string> outside = nodes_recorded_outside_an_op_scope([&] { (void)op.fn(s.inputs); });
    EXPECT_TRUE(outside.empty()) << op.name << " on " << describe(s) << " recorded "
                                 << joined(std::set<std::string>(outside.begin(), outside.end()))
                                 << " outside any OpScope: its op must begin with OpScope scope(\"<name>\", ...)";
  }
}

// The values an entry states (closed forms) at the points it names.
TEST_P(OpRegistry, GivesTheValuesItsEntryStates) {
  const OpInfo& op = GetParam();
  for (const auto& [x, y] : op.values) {
    const double got = op.fn({tensor(std::vector<double>{x})}).to_vector<double>().at(0);
    EXPECT_NEAR(got, y, 1e-15 * std::abs(y)) << op.name << "(" << x << ")";
  }
}

std::string test_name(const ::testing::TestParamInfo<OpInfo>& info) {
  std::string name = info.param.name;
  std::replace_if(name.begin(), name.end(), [](unsigned char c) { return !std::isalnum(c); }, '_');
  return name;
}

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
    covered.insert(op.grad_nodes.begin(), op.grad_nodes.end());
    std::set<std::string> recorded = nodes_recorded_by(op);
    covered.insert(recorded.begin(), recorded.end());
  }
  std::set<std::string> declared;
  for (const OpInfo& op : op_registry()) {
    declared.insert(op.nodes.begin(), op.nodes.end());
    declared.insert(op.grad_nodes.begin(), op.grad_nodes.end());
  }

  const std::set<std::string> all = node_types_in_sources();
  std::set<std::string> missing;
  for (const std::string& n : all)
    if (!declared.count(n)) missing.insert(n);
  EXPECT_TRUE(missing.empty()) << "Node types with no registry entry (add the op to its family's table in "
                                  "tests/gradcheck_samples/samples_<family>.cpp): "
                               << joined(missing);
  // Names the registry declares must be real node types.
  for (const std::string& n : covered) EXPECT_TRUE(all.count(n)) << n << " is not a Node type in ember's sources";
  EXPECT_GE(all.size(), 30u) << "the source scan looks incomplete: " << joined(all);
}

// Every module a lesson uses is in the table once (under the name the tour prints).
TEST(AutogradRegistry, ListsEveryModuleOfTheLessons) {
  for (const char* name :
       {"embedding", "nn.Embedding", "nn.LearnedPositionalEmbedding", "nn.EmbeddingComposer(learned)",
        "nn.EmbeddingComposer(sinusoidal)", "nn.LMHead", "nn.LMHead(tied)", "nn.Linear", "layer_norm", "cross_entropy",
        "cross_entropy(sum)", "cross_entropy(none)", "nn.mse_loss", "nn.dropout", "nn.RNNCell", "nn.LSTMCell",
        "nn.GRUCell", "nn.LSTM", "nn.sdpa", "nn.sdpa(causal)", "nn.AdditiveAttention", "nn.MultiHeadAttention",
        "nn.MultiHeadAttention(causal)", "nn.TransformerBlock"}) {
    int count = 0;
    for (const OpInfo& op : op_registry()) count += op.name == name;
    EXPECT_EQ(count, 1) << name;
  }
}

// The check above, both ways, on an op defined here: recorded without an
// OpScope it is caught, with one it is not.
struct TwiceBackward final : Node {
  EMBER_NODE_NAME(TwiceBackward)
  std::vector<Tensor> apply(const Tensor& g) override { return {g * 2.0}; }
};
Tensor twice_without_scope(const Tensor& x) {
  Tensor out = kernel::binary_scalar(kernel::Binary::Mul, x, 2.0);
  if (needs_grad({x})) record(out, std::make_shared<TwiceBackward>(), {x});
  return out;
}
Tensor twice_with_scope(const Tensor& x) {
  OpScope scope("twice", x);
  return twice_without_scope(x);
}
TEST(AutogradRegistry, FindsANodeRecordedWithoutOpScope) {
  Tensor x = ones({3}, kFloat64).requires_grad_();
  EXPECT_TRUE(nodes_recorded_outside_an_op_scope([&] { (void)twice_with_scope(x); }).empty());
  const std::vector<std::string> outside = nodes_recorded_outside_an_op_scope([&] { (void)twice_without_scope(x); });
  ASSERT_EQ(outside.size(), 1u);
  EXPECT_EQ(outside[0], "TwiceBackward");
}

TEST(AutogradRegistry, RegisterOpRejectsDuplicatesAndGaps) {
  test::expect_error([] { register_op(op_registry().front()); }, {"register_op", "already registered"});
  OpInfo half_done;
  half_done.name = "no_fn";
  test::expect_error([&] { register_op(half_done); }, {"register_op", "no_fn"});
}

}  // namespace
