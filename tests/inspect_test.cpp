// inspect/: the backward trace (nodes, order, gradients, partial traces),
// gradient provenance, the profiler's work accounting, the memory timeline's
// peak, the step-through page in a real browser (headless Chromium), and
// that nothing watches once the instruments are gone.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "ember.h"
#include "inspect/inspect.h"
#include "test_util.h"

namespace {

using namespace ember;
using inspect::BackwardTrace;

// A scratch file of this process: test runs of several checkouts share /tmp.
std::string test_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / (std::to_string(::getpid()) + "_" + name)).string();
}

// L = sum(w * x) + sum(exp(w)): dL/dw = x + exp(w), dL/dx = w.
struct SmallGraph {
  Tensor w = tensor({0.5, -1.0, 2.0}, kFloat64).requires_grad_();
  Tensor x = tensor({3.0, 0.25, -1.5}, kFloat64).requires_grad_();
  SmallGraph() {
    w.set_name("w");
    x.set_name("x");
  }
  Tensor loss() const { return sum(w * x) + sum(exp(w)); }
};

TEST(InspectTrace, SmallGraphHasItsNodesInATopologicalOrderWithTheClosedFormGradients) {
  SmallGraph g;
  BackwardTrace trace;
  g.loss().backward();
  ASSERT_TRUE(trace.complete());
  std::multiset<std::string> names;
  for (const auto& s : trace.steps()) names.insert(s.name);
  EXPECT_EQ(names, (std::multiset<std::string>{"AddBackward", "SumBackward", "SumBackward", "MulBackward", "ExpBackward"}));
  // Valid order: a node runs only after every node that sends it a gradient.
  std::map<const void*, int64_t> step_of;
  for (const auto& s : trace.steps()) step_of[s.node] = s.step;
  for (const auto& s : trace.steps())
    for (const auto& e : s.sent)
      if (!e.to_leaf) {
        EXPECT_GT(step_of.at(e.target), s.step) << s.name << " sends to " << e.target_name;
      }
  EXPECT_EQ(trace.steps().front().name, "AddBackward");  // the root's node first
  EXPECT_EQ(trace.steps().front().grad_in.first, (std::vector<double>{1.0}));
  // What reached the leaves: the closed forms.
  std::map<std::string, std::vector<double>> leaf;
  for (const auto& l : trace.leaves()) leaf[l.name] = l.total.first;
  const std::vector<double> w{0.5, -1.0, 2.0}, x{3.0, 0.25, -1.5};
  for (int i = 0; i < 3; ++i) {
    EXPECT_NEAR(leaf.at("w")[i], x[i] + std::exp(w[i]), 1e-12);
    EXPECT_NEAR(leaf.at("x")[i], w[i], 1e-12);
  }
  // MulBackward saved both factors and sent g*x to w and g*w to x.
  for (const auto& s : trace.steps())
    if (s.name == "MulBackward") {
      EXPECT_EQ(s.saved.size(), 2u);
      ASSERT_EQ(s.sent.size(), 2u);
      EXPECT_TRUE(s.sent[0].to_leaf);
      EXPECT_EQ(s.sent[0].target_name, "w");
      EXPECT_EQ(s.sent[0].grad.first, x);
    }
  std::ostringstream os;
  trace.print(os);
  for (const char* part : {"MulBackward", "ExpBackward", "-> input 0 leaf w", "leaf x: .grad +="})
    EXPECT_NE(os.str().find(part), std::string::npos) << os.str();
}

// A model as a user writes it: its own Module subclass, a parameter of its
// own, two nn::Linear children, inside an outer module of its own.
struct UserBlock : nn::Module {
  std::shared_ptr<nn::Linear> fc1, fc2;
  Tensor scale;
  UserBlock() {
    fc1 = register_module("fc1", std::make_shared<nn::Linear>(3, 4, nn::LinearOptions{.dtype = kFloat64}));
    fc2 = register_module("fc2", std::make_shared<nn::Linear>(4, 2, nn::LinearOptions{.dtype = kFloat64}));
    scale = register_parameter("scale", ones({2}, kFloat64));
  }
  std::string type_name() const override { return "UserBlock"; }
  Tensor forward(const Tensor& x) { return fc2->forward(tanh(fc1->forward(x))) * scale; }
};
struct UserModel : nn::Module {
  std::shared_ptr<UserBlock> block = register_module("block", std::make_shared<UserBlock>());
  std::string type_name() const override { return "UserModel"; }
};

TEST(InspectTrace, NamesTheParametersOfAUsersOwnModelWithoutBeingTold) {
  UserModel model;
  Tensor x = randn({5, 3}, kFloat64);
  Tensor outside = tensor({0.5, 2.0}, kFloat64).requires_grad_();
  BackwardTrace trace;
  trace.name_leaves({{"outside", outside}});  // a tensor no module owns: named by hand
  (model.block->forward(x) * outside).sum().backward();
  ASSERT_TRUE(trace.complete());
  std::set<std::string> leaves;
  for (const auto& l : trace.leaves()) leaves.insert(l.name);
  std::set<std::string> want = {"outside"};
  for (const auto& [name, _] : model.named_parameters()) want.insert(name);
  EXPECT_EQ(want, (std::set<std::string>{"outside", "block.fc1.weight", "block.fc1.bias", "block.fc2.weight",
                                         "block.fc2.bias", "block.scale"}));
  EXPECT_EQ(leaves, want);
  std::ostringstream os;
  trace.print(os);
  EXPECT_NE(os.str().find("leaf block.fc1.weight: .grad += (4, 3)"), std::string::npos) << os.str();
  EXPECT_EQ(os.str().find("leaf leaf"), std::string::npos) << os.str();
}

TEST(InspectTrace, AParameterKeepsItsFirstModulesNameAndLosesItWithTheModule) {
  Tensor shared;
  {
    UserBlock a;
    nn::Linear b(3, 4, {.dtype = kFloat64});
    EXPECT_EQ(a.fc1->name_of(*a.fc1->weight.impl()), "fc1.weight");  // its path from the root, a
    EXPECT_EQ(a.name_of(*a.scale.impl()), "scale");
    EXPECT_EQ(a.name_of(*a.fc1->weight.impl()), "");  // fc1's, not a's own
    EXPECT_EQ(a.fc1->weight.impl()->owner, a.fc1.get());
    EXPECT_EQ(b.name_of(*b.weight.impl()), "weight");
    EXPECT_EQ(b.weight.impl()->owner, &b);
    EXPECT_EQ(a.scale.impl()->owner, &a);
    shared = a.scale;
  }
  EXPECT_EQ(shared.impl()->owner, nullptr);  // the module is gone; the tensor lives on, unnamed
  BackwardTrace trace;
  (shared * 2.0).sum().backward();
  EXPECT_EQ(trace.leaves().at(0).name, "leaf");
}

// A child kept after its parent is gone names itself from its own root: its
// path does not run through the destroyed parent (under ASan a dangling
// parent would be a use after free here).
TEST(InspectTrace, AChildThatOutlivesItsParentIsNamedFromItself) {
  std::shared_ptr<UserBlock> kept;
  {
    UserModel model;
    kept = model.block;
    EXPECT_EQ(kept->fc1->path(), "block.fc1");
  }
  EXPECT_EQ(kept->path(), "");
  EXPECT_EQ(kept->fc1->path(), "fc1");
  BackwardTrace trace;
  kept->forward(randn({2, 3}, kFloat64)).sum().backward();
  std::set<std::string> leaves;
  for (const auto& l : trace.leaves()) leaves.insert(l.name);
  EXPECT_EQ(leaves, (std::set<std::string>{"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias", "scale"}));
}

TEST(InspectTrace, SavedTensorsAreNamedByTheirRoleInTheOp) {
  SmallGraph g;
  BackwardTrace trace;
  g.loss().backward();
  std::map<std::string, std::vector<std::string>> saved;
  for (const auto& s : trace.steps())
    for (const auto& u : s.saved) saved[s.name].push_back(u.name);
  EXPECT_EQ(saved.at("MulBackward"), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(saved.at("ExpBackward"), (std::vector<std::string>{"output"}));
  std::ostringstream os;
  trace.print(os);
  EXPECT_NE(os.str().find("saved output: float64 (3) (version 0)"), std::string::npos) << os.str();
}

TEST(InspectTrace, LabelsCarryTheModulePath) {
  nn::GPTConfig c;
  c.vocab_size = 11;
  c.context_length = 4;
  c.dim = 8;
  c.heads = 2;
  c.layers = 1;
  nn::GPT gpt(c);
  Tensor ids = tensor(std::vector<int64_t>{1, 2, 3, 4}, {1, 4});
  BackwardTrace trace;
  gpt.loss(ids, ids).backward();
  std::set<std::string> labels;
  for (const auto& s : trace.steps()) labels.insert(s.label);
  for (const char* want : {"blocks.0.attn.tiled_attention", "blocks.0.ln1.layer_norm", "embed.token.embedding", "cross_entropy"})
    EXPECT_TRUE(labels.count(want)) << "no node recorded at " << want;
}

TEST(InspectTrace, ProvenancePartsAddUpBitwiseAndNameTheRows) {
  // A tied pair: the lookup sends the rows of the ids, the head all V rows.
  Generator gen(3);
  nn::Embedding emb(6, 4, {.dtype = kFloat64, .generator = &gen});
  nn::LMHead head(4, 6, {.dtype = kFloat64, .generator = &gen});
  nn::tie_weights(head, emb);
  Tensor ids = tensor(std::vector<int64_t>{1, 4, 4}, {1, 3});
  Tensor r = randn({1, 3, 6}, gen, kFloat64);
  BackwardTrace trace;
  (head.forward(emb.forward(ids)) * r).sum().backward();
  auto parts = trace.provenance(emb.weight);
  ASSERT_EQ(parts.size(), 2u);
  std::map<std::string, std::vector<int64_t>> rows;
  for (const auto& p : parts) rows[p.node] = p.rows;
  EXPECT_EQ(rows.at("IndexSelectBackward"), (std::vector<int64_t>{1, 4}));
  EXPECT_EQ(rows.at("PermuteBackward"), (std::vector<int64_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_TRUE(equal_bits(BackwardTrace::sum(parts), emb.weight.grad()));

  Tensor unused = ones({2}, kFloat64).requires_grad_();
  test::expect_error([&] { trace.provenance(unused); }, "provenance", {"received no gradient"});
}

TEST(InspectTrace, AFailingBackwardLeavesAPartialTraceEndingAtTheFailingNode) {
  // A version error: a saved tensor modified in place after the forward.
  Tensor a = tensor({1.0, 2.0}, kFloat64).requires_grad_();
  Tensor b = a * 2.0;
  Tensor c = exp(b);  // ExpBackward saves its output c
  Tensor loss = sum(c * 3.0);
  {
    NoGradGuard no_grad;
    c.add_(1.0);
  }
  BackwardTrace trace;
  EXPECT_THROW(loss.backward(), Error);
  ASSERT_FALSE(trace.complete());
  ASSERT_FALSE(trace.steps().empty());
  EXPECT_EQ(trace.steps().back().name, "ExpBackward");
  EXPECT_NE(trace.steps().back().error.find("modified by an inplace operation"), std::string::npos);
  for (size_t i = 0; i + 1 < trace.steps().size(); ++i) EXPECT_TRUE(trace.steps()[i].error.empty());
  EXPECT_TRUE(trace.leaves().empty()) << "no leaf was written";

  // An anomaly: NaN in a gradient, caught where it appears.
  Tensor z = tensor({0.0, 1.0}, kFloat64).requires_grad_();
  AnomalyGuard anomaly;
  BackwardTrace second;
  EXPECT_THROW(sum(sqrt(z)).backward(), Error);  // d sqrt(0) = inf
  ASSERT_FALSE(second.complete());
  EXPECT_EQ(second.steps().back().name, "SqrtBackward");
  EXPECT_NE(second.steps().back().error.find("anomaly"), std::string::npos);
}

TEST(InspectProfiler, MatmulFlopsAreTwoMNKAndBackwardIsSeparate) {
  const int64_t M = 3, K = 4, N = 5;
  Tensor a = randn({M, K}).requires_grad_(), b = randn({K, N}).requires_grad_();
  inspect::Profiler prof;
  Tensor c = matmul(a, b);
  c.sum().backward();
  double fwd = -1, bwd = -1;
  for (const auto& e : prof.events()) {
    if (e.name == "matmul" && !e.backward) fwd = e.flops;
    if (e.name == "MatmulBackward") bwd = e.flops;
  }
  EXPECT_EQ(fwd, 2.0 * M * N * K);
  EXPECT_EQ(bwd, 2 * 2.0 * M * N * K);  // dA = dC Bᵀ and dB = Aᵀ dC: two products of the same size
  auto rows = prof.rows(inspect::Profiler::By::Op);
  bool have_fwd = false, have_bwd = false;
  for (const auto& r : rows) {
    have_fwd |= r.key == "matmul" && !r.backward && r.calls == 1;
    have_bwd |= r.key == "MatmulBackward" && r.backward;
  }
  EXPECT_TRUE(have_fwd && have_bwd);
  EXPECT_NE(prof.table().find("MatmulBackward"), std::string::npos);
  // Chrome trace-event JSON with one "X" event per op call.
  const std::string path = test_path("ember_profile_test.json");
  prof.write_chrome_trace(path);
  std::ifstream f(path);
  std::stringstream text;
  text << f.rdbuf();
  EXPECT_NE(text.str().find("\"traceEvents\""), std::string::npos);
  EXPECT_NE(text.str().find("\"name\": \"MatmulBackward\""), std::string::npos);
  std::filesystem::remove(path);
}

// The Chrome trace's categories are the table's pass column, from one rule
// (Profiler::pass_of): an optimizer's step and gradient clipping are "upd".
TEST(InspectProfiler, ChromeTraceCategoriesAreTheTablesPasses) {
  nn::Linear fc(3, 2);
  optim::AdamW opt(fc.parameters(), 1e-3);
  Tensor x = randn({4, 3});
  inspect::Profiler prof;
  fc.forward(x).sum().backward();
  optim::clip_grad_norm_(fc.parameters(), 1.0);
  opt.step();
  prof.stop_watching();
  const std::string path = test_path("ember_profile_cat_test.json");
  prof.write_chrome_trace(path);
  std::ifstream f(path);
  const nlohmann::json trace = nlohmann::json::parse(f);
  std::filesystem::remove(path);
  std::map<std::string, std::string> cat;
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "X") cat[e["name"].get<std::string>()] = e["cat"].get<std::string>();
  EXPECT_EQ(cat.at("AdamW.step"), "upd");
  EXPECT_EQ(cat.at("clip_grad_norm_"), "upd");
  EXPECT_EQ(cat.at("matmul"), "fwd");
  EXPECT_EQ(cat.at("MatmulBackward"), "bwd");
  for (const auto& r : prof.rows()) EXPECT_EQ(cat.at(r.key), r.pass()) << r.key;
  // The report: the table by op, the table by module, and the machine's peaks once.
  const std::string report = prof.report();
  auto count = [&](const std::string& what) {
    size_t n = 0;
    for (size_t at = report.find(what); at != std::string::npos; at = report.find(what, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("This machine ("), 1u) << report;
  EXPECT_EQ(count(" events in "), 1u);
  EXPECT_EQ(count("op                       pass"), 1u);
  EXPECT_EQ(count("module                   pass"), 1u);
  EXPECT_LT(report.find("module                   pass"), report.find("This machine ("));
  EXPECT_EQ(count("AdamW.step               upd"), 1u) << report;
}

TEST(InspectProfiler, SelfTimeExcludesNestedOps) {
  Tensor x = randn({64, 64});
  inspect::Profiler prof;
  (void)max(x);  // max(x) runs reshape and max along a dim inside itself
  const auto& ev = prof.events();
  ASSERT_FALSE(ev.empty());
  EXPECT_EQ(ev.front().name, "max");
  EXPECT_EQ(ev.front().depth, 0);
  double children = 0;
  for (size_t i = 1; i < ev.size(); ++i)
    if (ev[i].parent == 0) children += ev[i].total_ms;
  EXPECT_GT(children, 0);
  EXPECT_NEAR(ev.front().self_ms, ev.front().total_ms - children, 1e-9);
}

// An instrument that takes its time over every node: what another
// instrument (the profiler) must not charge to the node.
struct SlowInstrument : inspect::Instrument {
  SlowInstrument() { start(); }
  ~SlowInstrument() override { stop(); }
  void node_begin(const Node&, const Tensor&) override {
    const double until = inspect::now_ms() + 20;
    while (inspect::now_ms() < until) {
    }
  }
};

TEST(InspectProfiler, AnotherInstrumentsTimeIsLeftOut) {
  Tensor x = ones({3}).requires_grad_();
  Tensor y = exp(x).sum();
  inspect::Profiler prof;
  SlowInstrument slow;
  const double t0 = inspect::now_ms();
  y.backward();
  const double wall = inspect::now_ms() - t0;
  double nodes = 0;
  for (const auto& e : prof.events()) nodes += e.backward ? e.total_ms : 0;
  EXPECT_GE(prof.others_ms(), 2 * 20.0);  // two nodes (SumBackward, ExpBackward), 20 ms each
  // Charged to the nodes as well, the 40 ms would count twice and exceed the wall time.
  EXPECT_LE(nodes + prof.others_ms(), wall);
}

// The memory timeline's clock is the program's: another instrument's 40 ms
// in its handlers is not a flat stretch of the picture, and the clock never
// runs backwards (a sample inside another handler sees its time late).
TEST(InspectMemory, TheTimeAxisLeavesTheOtherInstrumentsOut) {
  Tensor x = ones({3}).requires_grad_();
  Tensor y = exp(x).sum();
  const double t0 = inspect::now_ms();  // before the timeline's clock starts: wall bounds it
  inspect::MemoryTimeline mem;
  SlowInstrument slow;
  y.backward();
  const double wall = inspect::now_ms() - t0;
  ASSERT_GE(wall, 40.0);
  const auto& samples = mem.samples();
  ASSERT_GE(samples.size(), 3u);
  for (size_t i = 1; i < samples.size(); ++i) EXPECT_GE(samples[i].ms, samples[i - 1].ms) << i;
  EXPECT_LE(samples.back().ms, wall - 40.0);
}

TEST(InspectMemory, PeakOfAScriptedSequenceIsItsClosedForm) {
  inspect::MemoryTimeline mem;
  std::optional<Tensor> a = empty({1000});  // 4000 bytes
  Tensor b = empty({2000});                 // 8000: 12000 live
  a.reset();                                // 8000
  Tensor c = empty({500}, kFloat64);        // 4000: 12000 again
  Tensor d = empty({250});                  // 1000: 13000, the peak
  d = Tensor();                             // 12000
  EXPECT_EQ(mem.peak().bytes, 13000);
  EXPECT_EQ(inspect::MemoryTimeline::total(mem.live()), 12000);
  // What tags do: a saved temporary becomes "saved for backward".
  Tensor w = ones({10}).requires_grad_();  // 40 bytes, a temporary as far as the timeline knows
  Tensor y = exp(w);                      // ExpBackward saves its output y (40 bytes)
  EXPECT_EQ(mem.live()[static_cast<size_t>(MemoryKind::SavedForBackward)], 40);
  y.sum().backward();                      // w.grad: 40 bytes of gradients
  EXPECT_EQ(mem.live()[static_cast<size_t>(MemoryKind::Gradients)], 40);
}

// Backward frees each node's saved tensors as it passes them; what the trace
// keeps alive is drawn as the instruments' and left out of the peak.
TEST(InspectMemory, SavedTensorsGoDuringBackwardAndTheTracesCopiesAreApart) {
  Tensor w = ones({1000}).requires_grad_();  // made before the timeline: not counted
  inspect::MemoryTimeline mem;
  std::optional<inspect::BackwardTrace> trace(std::in_place);
  Tensor loss;
  {
    Tensor y = exp(w);  // 4000 bytes, saved by ExpBackward
    loss = (y * 2.0).sum();
  }
  const size_t saved = static_cast<size_t>(MemoryKind::SavedForBackward),
               kept = static_cast<size_t>(MemoryKind::Instruments), grads = static_cast<size_t>(MemoryKind::Gradients);
  EXPECT_EQ(mem.live()[saved], 4000);
  loss.backward();
  EXPECT_EQ(mem.live()[saved], 0);     // released by ExpBackward itself, though `loss` is alive
  EXPECT_EQ(mem.live()[kept], 4000);   // the part ExpBackward sent to w, held for provenance
  EXPECT_EQ(mem.live()[grads], 4000);  // w.grad: a copy, since the trace shares the part
  const int64_t with_trace = inspect::MemoryTimeline::total(mem.live());
  EXPECT_EQ(inspect::MemoryTimeline::program_total(mem.live()), with_trace - 4000);
  trace.reset();
  EXPECT_EQ(mem.live()[kept], 0);
}

TEST(InspectHooks, NothingWatchesWithoutAnInstrument) {
  EXPECT_EQ(autograd_observer(), nullptr);
  EXPECT_EQ(tensor_observer(), nullptr);
  {
    inspect::Profiler p;
    inspect::BackwardTrace t;
    EXPECT_NE(autograd_observer(), nullptr);
  }
  EXPECT_EQ(autograd_observer(), nullptr) << "the last instrument gone, the hooks are null again";
  EXPECT_EQ(tensor_observer(), nullptr);
}

// ---- the step-through page in a real browser ----

// chromium --headless --dump-dom: the page after its script ran.
std::string dump_dom(const std::string& url) {
  const std::string dir = test_path("ember_chromium_profile");
  const std::string cmd =
      "timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run "
      "--disable-background-networking --disable-component-update --disable-sync --user-data-dir='" +
      dir + "' --dump-dom '" + url + "' 2>/dev/null";
  std::string out;
  if (FILE* p = popen(cmd.c_str(), "r")) {
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    pclose(p);
  }
  return out;
}

std::string element_text(const std::string& dom, const std::string& id) {
  const size_t at = dom.find("id=\"" + id + "\"");
  if (at == std::string::npos) return "";
  const size_t open = dom.find('>', at) + 1, close = dom.find('<', open);
  return dom.substr(open, close - open);
}

std::string html_escaped(std::string s) {
  std::string out;
  for (char c : s) out += c == '<' ? "&lt;" : c == '>' ? "&gt;" : c == '&' ? "&amp;" : std::string(1, c);
  return out;
}

TEST(InspectPage, ChromiumShowsTheTracesStepAtStepN) {
  ASSERT_EQ(std::system("command -v chromium > /dev/null 2>&1"), 0)
      << "headless Chromium is needed for this test (Debian chromium; scripts/deps.sh installs it)";
  SmallGraph g;
  BackwardTrace trace;
  g.loss().backward();
  const std::string path = test_path("ember_backward_test.html");
  trace.to_html(path);
  for (int64_t step : {int64_t{0}, int64_t{2}, static_cast<int64_t>(trace.steps().size()) - 1}) {
    SCOPED_TRACE("step " + std::to_string(step));
    const std::string dom = dump_dom("file://" + path + "?step=" + std::to_string(step));
    ASSERT_FALSE(dom.empty()) << "chromium printed nothing";
    const auto& s = trace.steps()[static_cast<size_t>(step)];
    EXPECT_NE(dom.find("data-step=\"" + std::to_string(step) + "\""), std::string::npos);
    EXPECT_NE(dom.find("data-active-node=\"" + s.name + "\""), std::string::npos);
    // The highlighted SVG node is this step's, and the panel shows its numbers.
    EXPECT_NE(dom.find("id=\"s" + std::to_string(step) + "\" class=\"node active\""), std::string::npos);
    EXPECT_EQ(element_text(dom, "grad-in"), html_escaped(s.grad_in.text()));
    for (const auto& e : s.sent) EXPECT_NE(dom.find(html_escaped(e.grad.text())), std::string::npos) << e.target_name;
    // Each saved tensor under its role in the op ("a: float64 (3), version 0").
    for (const auto& u : s.saved)
      EXPECT_NE(dom.find(">" + u.name + ": float64 " + inspect::shape_text(u.shape) + ", version "), std::string::npos)
          << u.name;
    EXPECT_EQ(element_text(dom, "note"), "");
  }
  // The step that has saved tensors names them on the page.
  int64_t mul = -1;
  for (const auto& s : trace.steps())
    if (s.name == "MulBackward") mul = s.step;
  ASSERT_GE(mul, 0);
  const std::string at_mul = dump_dom("file://" + path + "?step=" + std::to_string(mul));
  ASSERT_FALSE(at_mul.empty()) << "chromium printed nothing";
  EXPECT_NE(at_mul.find(">a: float64 (3), version 0<"), std::string::npos) << at_mul;
  EXPECT_NE(at_mul.find(">b: float64 (3), version 0<"), std::string::npos);
  // A step past the end shows the last one and says so; the legend says when leaves turn green.
  const int64_t last = static_cast<int64_t>(trace.steps().size()) - 1;
  const std::string past = dump_dom("file://" + path + "?step=100");
  ASSERT_FALSE(past.empty()) << "chromium printed nothing";
  EXPECT_NE(past.find("data-step=\"" + std::to_string(last) + "\""), std::string::npos);
  EXPECT_EQ(element_text(past, "note"),
            "?step=100 is outside this trace (steps 0 to " + std::to_string(last) + "): showing step " +
                std::to_string(last) + ".");
  EXPECT_NE(past.find("they turn green at the last step"), std::string::npos);
  // The graph starts fitted to its pane.
  EXPECT_NE(past.find("data-zoom=\"fit\""), std::string::npos);
  std::filesystem::remove(path);
  std::error_code ignored;
  std::filesystem::remove_all(test_path("ember_chromium_profile"), ignored);
}

}  // namespace
