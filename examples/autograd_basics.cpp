// autograd_basics: reverse-mode autodiff on the smallest graph that shows
// everything (micrograd's example, plus one re-used value):
//
//   e = a * b,  n = e + c,  o = tanh(n),  L = o * a      (a is used twice)
//
//   ./build/examples/autograd_basics [--out DIR] [--values]
//   (writes DIR/autograd_basics.dot and, with Graphviz, DIR/autograd_basics.png:
//    a title, the graph and a legend of its boxes, ellipses and arrows; --values
//    also writes each tensor's value and gradient into the picture)
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>

#include "common/program.h"
#include "ember.h"
#include "plot/plot.h"

using namespace ember;

namespace {

std::string fmt(double v, int width = 8) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%*.4f", width, v == 0 ? 0.0 : v);  // no "-0.0000"
  return buf;
}
double val(const Tensor& t) { return t.item<double>(); }
void line(const std::string& what, double v, const std::string& why = "") {
  std::cout << "  " << what << std::string(what.size() < 34 ? 34 - what.size() : 0, ' ') << "=" << fmt(v)
            << (why.empty() ? "" : "   " + why) << "\n";
}
Tensor leaf(double v, const char* name) {
  Tensor t = scalar_tensor(v, kFloat64).requires_grad_();
  t.set_name(name);
  return t;
}

struct Graph {
  Tensor e, n, o, L;
};
// The forward pass. Every op records a Node (MulBackward, AddBackward, ...)
// that knows how to send a gradient back to its inputs.
Graph forward(const Tensor& a, const Tensor& b, const Tensor& c) {
  Graph g;
  g.e = (a * b).set_name("e");
  g.n = (g.e + c).set_name("n");
  g.o = tanh(g.n).set_name("o");
  g.L = (g.o * a).set_name("L");
  return g;
}

}  // namespace

int program(const std::string& out_dir, bool values) {
  Tensor a = leaf(0.5, "a"), b = leaf(-1.0, "b"), c = leaf(0.8, "c");

  std::cout << "1. Forward: compute L and record the graph\n";
  Graph g = forward(a, b, c);
  line("a", val(a));
  line("b", val(b));
  line("c", val(c));
  line("e = a * b", val(g.e));
  line("n = e + c", val(g.n));
  line("o = tanh(n)", val(g.o));
  line("L = o * a", val(g.L), "(a is used a second time here)");
  std::cout << "  L's grad_fn is " << g.L.grad_fn()->name() << "; o's is " << g.o.grad_fn()->name() << "\n\n";

  std::cout << "2. Backward: L.backward() applies the chain rule from L back to the leaves\n";
  // Leaves keep .grad; intermediates only if asked (retain_grad), to show them.
  for (const Tensor& t : {g.e, g.n, g.o}) t.retain_grad();
  g.L.backward();
  const double A = val(a), B = val(b), O = val(g.o);
  const double dL_do = A, dL_dn = dL_do * (1 - O * O), dL_de = dL_dn;
  line("dL/do = a", val(g.o.grad()), "L = o * a: the other factor");
  line("dL/dn = dL/do * (1 - o^2)", val(g.n.grad()), "tanh'(n) = 1 - tanh(n)^2");
  line("dL/de = dL/dn * 1", val(g.e.grad()), "a sum passes the gradient through");
  line("dL/dc = dL/dn * 1", val(c.grad()), "same for the other addend");
  line("dL/db = dL/de * a", val(b.grad()), "e = a * b: the other factor");
  line("dL/da = dL/de * b  +  o", val(a.grad()), "two paths, so two terms: via e, and directly");
  std::cout << "  by hand: dL/do " << fmt(dL_do) << ", dL/dn " << fmt(dL_dn) << ", dL/db " << fmt(dL_de * A)
            << ", dL/da " << fmt(dL_de * B + O) << "\n";
  std::cout << "  a's two contributions arrive along two edges of the graph and are added\n"
               "  into a.grad. (Inside the graph, a node runs only after all its consumers\n"
               "  have sent their share, so it always passes on the complete gradient.)\n\n";

  std::cout << "3. Gradients accumulate\n";
  const double first = val(a.grad());
  forward(a, b, c).L.backward();  // a new graph: the first was freed by backward()
  line("a.grad after a second backward", val(a.grad()), "= 2 x " + fmt(first, 0) + ": added, not replaced");
  std::cout << "  backward() adds into .grad, so gradients from several losses (or\n"
               "  several batches) can be summed. A training step must therefore clear\n"
               "  them first: that is zero_grad(), i.e. set_grad(Tensor()) on each parameter.\n";
  for (const Tensor& t : {a, b, c}) t.set_grad(Tensor());
  forward(a, b, c).L.backward();
  line("a.grad after zero_grad + backward", val(a.grad()), "correct again");
  std::cout << "\n";

  std::cout << "4. The graph\n";
  std::filesystem::create_directories(out_dir);
  const std::string dot_path = (std::filesystem::path(out_dir) / "autograd_basics.dot").string();
  // Drawn before this graph's backward, so every node still shows what it
  // saved; with --values, each box shows its tensor's value and each leaf its
  // .grad from section 3.
  Graph last = forward(a, b, c);
  for (const Tensor& t : {last.e, last.n, last.o}) t.retain_grad();
  write_dot(last.L, dot_path,
            {.values = values, .grads = values, .title = "The backward graph of L = tanh(a * b + c) * a"});
  std::cout << "  wrote " << dot_path
            << " (boxes: Nodes, the tensor each computed and what it saved, by role; ellipses: leaves"
            << (values ? "; with values and gradients" : "") << "; the legend is in the picture)\n";
  if (std::system("command -v dot > /dev/null 2>&1") == 0) {
    const std::string png = (std::filesystem::path(out_dir) / "autograd_basics.png").string();
    const std::string cmd = "dot -Tpng '" + dot_path + "' -o '" + png + "'";
    if (std::system(cmd.c_str()) == 0) {
      ember::plot::flatten_png(png);  // Graphviz may leave an alpha channel: RGB, like every picture ember writes
      std::cout << "  rendered " << png << "\n";
    } else {
      std::cout << "  dot failed; try: " << cmd << "\n";
    }
  } else {
    std::cout << "  Graphviz is not installed. To draw it: dot -Tpng " << dot_path << " -o graph.png\n"
                 "  (or paste the file into any online Graphviz viewer)\n";
  }
  return 0;
}

int main(int argc, char** argv) {
  CLI::App app{"A micrograd-sized expression, its gradients explained step by step, and its graph as DOT/PNG."};
  ember::examples::show_defaults(app);
  std::string out_dir = "out";
  bool values = false;
  app.add_option("--out", out_dir, "directory for autograd_basics.dot and .png");
  app.add_flag("--values", values, "write each tensor's value and gradient into the graph picture");
  CLI11_PARSE(app, argc, argv);
  return ember::examples::run("autograd_basics", [&] { return program(out_dir, values); });
}
