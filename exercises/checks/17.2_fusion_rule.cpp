// Checks exercise 17.2: the learner's groups against compile/'s own pass
// (fuse_elementwise) on graphs captured from five functions: one chain, a
// chain cut by a product, two shapes in turn, a call between a group's
// members that does not read it, and softmax's backward written out.
#include <string>

#include "exercises/checks/check.h"

namespace ex17_2 {
std::vector<std::vector<size_t>> groups(const ember::compiler::Graph& g);
}  // namespace ex17_2

namespace {

using namespace ember;
using namespace ember::compiler;
using Inputs = std::vector<Tensor>;
using Groups = std::vector<std::vector<size_t>>;

Graph passed(const Function& fn, const Inputs& inputs) {
  Graph g = capture(fn, inputs).graph;
  optimize(g, /*fuse=*/false);
  return g;
}

// The pass's groups, as indices into g's calls: each fused call's members
// are calls of g, found again by their results.
Groups reference(const Graph& g) {
  Graph fused = g;
  fuse_elementwise(fused);
  Groups out;
  for (const Call& c : fused.calls) {
    if (!c.fused) continue;
    std::vector<size_t> members;
    for (const Call& m : c.fused->members)
      for (size_t i = 0; i < g.calls.size(); ++i)
        if (g.calls[i].results == m.results) members.push_back(i);
    out.push_back(members);
  }
  return out;
}

std::string show(const Groups& gs, const Graph& g) {
  std::string s;
  for (const auto& grp : gs) {
    s.append(s.empty() ? "[" : ", [");
    for (size_t k = 0; k < grp.size(); ++k) {
      if (k) s.append(" ");
      s.append(g.calls.at(grp[k]).op);
    }
    s.append("]");
  }
  return s.empty() ? "no groups" : s;
}

void expect_groups(const std::string& what, const Function& fn, const Inputs& inputs) {
  const Graph g = passed(fn, inputs);
  const Groups want = reference(g);
  const Groups got = ex17_2::groups(g);
  for (const auto& grp : got)
    for (size_t i : grp)
      check::expect(i < g.calls.size(), what + ": a group names call " + std::to_string(i) + ", but the graph has " +
                                            std::to_string(g.calls.size()) + " calls");
  if (got == want) return;
  std::string hint = "one open group: join it, close it (when a call reads it, or a fusible call cannot join), or leave it open";
  bool single = false;
  for (const auto& grp : got) single = single || grp.size() == 1;
  if (single) hint = "a group of one call is no group: it runs as that call";
  else if (got.size() < want.size())
    hint = "a call that reads the open group's values must find them in memory: it closes the group before it runs; "
           "and a fusible call of another shape or dtype cannot join";
  else if (got.size() > want.size())
    hint = "a call that does not read the open group leaves it open: the group's members may sit on both sides of it";
  check::fail(what + ": you group " + show(got, g) + ", the pass groups " + show(want, g) + "\n" + to_string(g), hint);
}

}  // namespace

check::Exercise check::exercise() {
  return {"17.2", "Write the fusion rule", "docs/book/17_compile.md", {
    {"one chain: gelu(x + b) * 0.5 is one group", [] {
       expect_groups("gelu(x + b) * 0.5", [](const Inputs& in) { return Inputs{gelu(in[0] + in[1]) * 0.5}; },
                     {zeros({4, 8}), zeros({8})});
     }},
    {"a product reads the group: it closes before the product, a new one opens after", [] {
       expect_groups("tanh(matmul(relu(x * 2 + 1), w)) - 1", [](const Inputs& in) {
         return Inputs{tanh(matmul(relu(in[0] * 2.0 + 1.0), in[1])) * 3.0 - 1.0};
       }, {zeros({4, 8}), zeros({8, 8})});
     }},
    {"two shapes in turn: a fusible call of another shape closes the group", [] {
       expect_groups("exp(x) * 2 + 1, then (y - 1) * 3, then x * 4", [](const Inputs& in) {
         Tensor a = exp(in[0]) * 2.0 + 1.0;
         Tensor b = (in[1] - 1.0) * 3.0;
         return Inputs{a, b, in[0] * 4.0 - 2.0};
       }, {zeros({4, 8}), zeros({8})});
     }},
    {"a call between the members that does not read the group leaves it open", [] {
       expect_groups("(x * 2 + 1) and matmul(y, w) between, then * 3", [](const Inputs& in) {
         Tensor a = in[0] * 2.0 + 1.0;
         Tensor p = matmul(in[1], in[2]);
         return Inputs{(a * 3.0).neg(), p};
       }, {zeros({4, 8}), zeros({3, 3}), zeros({3, 3})});
     }},
    {"softmax's backward, its row sum as a product by ones: y * (g - (g * y) @ 1); the product reads the group", [] {
       expect_groups("y * (g - (g * y) @ 1)", [](const Inputs& in) {
         const Tensor y = softmax(in[0], -1);
         return Inputs{y * (in[1] - matmul(in[1] * y, ones({8, 1})))};
       }, {zeros({4, 8}), zeros({4, 8})});
     }},
  }};
}
