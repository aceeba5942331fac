// autograd/graph_export.cpp: the walk over the graph (every node once, from
// the output's grad_fn to the leaves) writing one DOT line per box, ellipse
// and arrow; then the title and the legend (graph_export.h has the picture).
#include "autograd/graph_export.h"

#include <cstdio>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "autograd/node.h"
#include "base/io.h"

namespace ember {

std::string shape_label(const Shape& s) { return s.empty() ? "scalar" : shape_str(s); }

namespace {

constexpr const char* kNodeFill = "#dfe8f5";           // a Node of the graph
constexpr const char* kGradientGraphFill = "#e3f2d9";  // a Node a create_graph backward recorded
constexpr const char* kLeafFill = "#f5e6c8";

// "0.7616" or "[0.1, -2, 3, ...]": the first few values of a tensor.
std::string few_values(const Tensor& t) {
  if (!t.defined()) return "";
  std::vector<double> v;
  if (t.dtype() == kFloat32 || t.dtype() == kFloat64) v = t.to_vector<double>();
  else return "";
  std::ostringstream os;
  auto num = [&](double x) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4g", x);
    return std::string(buf);
  };
  if (v.size() == 1) return num(v[0]);
  os << "[";
  for (size_t i = 0; i < v.size() && i < 4; ++i) os << (i ? ", " : "") << num(v[i]);
  os << (v.size() > 4 ? ", ...]" : "]");
  return os.str();
}

// A tensor's lines in a label: its name (if any) and shape, then what was asked.
std::string tensor_lines(const std::shared_ptr<TensorImpl>& impl, const DotOptions& o, const char* unnamed) {
  std::string s = (impl->name.empty() ? std::string(unnamed) : impl->name) + " " + shape_label(impl->shape);
  if (o.values) s += "\\n= " + few_values(Tensor(impl));
  if (o.grads && impl->grad.defined()) s += "\\ngrad " + few_values(impl->grad);
  return s;
}

// "saved: x (float64 (2, 3))", or "saved: a (o, float64 scalar)" when the
// saved tensor has a name other than its role.
std::string saved_line(const SavedRef& s) {
  const Tensor& t = s->peek();
  const std::string own = t.impl_ptr()->name;
  return std::string("saved: ") + s.name + " (" + (own.empty() || own == s.name ? "" : own + ", ") +
         dtype_name(t.dtype()) + " " + shape_label(t.shape()) + ")";
}

// The key: a sample of each shape and arrow beside what it means, as one
// table (Graphviz's HTML-like label) in the bottom row, beside the output.
void legend(std::ostream& os, bool gradient_graph) {
  auto row = [&](const std::string& sample, const std::string& meaning) {
    os << "      <TR>" << sample << "<TD ALIGN=\"LEFT\">" << meaning << "</TD></TR>\n";
  };
  os << "  legend [shape=plaintext, fontsize=9, label=<\n"
        "    <TABLE BORDER=\"1\" COLOR=\"#bbbbbb\" CELLBORDER=\"0\" CELLSPACING=\"3\" CELLPADDING=\"2\">\n"
        "      <TR><TD COLSPAN=\"2\"><B>legend</B></TD></TR>\n";
  row(std::string("<TD BGCOLOR=\"") + kNodeFill + "\" BORDER=\"1\" COLOR=\"black\">box</TD>",
      "a Node: one step of backward: its op's rule,<BR ALIGN=\"LEFT\"/>the tensor it computed, the tensors it saved");
  if (gradient_graph)
    row(std::string("<TD BGCOLOR=\"") + kGradientGraphFill + "\" BORDER=\"1\" STYLE=\"dashed\" COLOR=\"black\">box</TD>",
        "a Node recorded by a backward with create_graph");
  row(std::string("<TD BGCOLOR=\"") + kLeafFill + "\" BORDER=\"1\" STYLE=\"rounded\" COLOR=\"black\">ellipse</TD>",
      "a leaf: a tensor that requires grad");
  row("<TD><FONT POINT-SIZE=\"12\">&#9472;&#9472;&#9654;</FONT></TD>", "the gradient goes on to the Node of an input");
  row("<TD><FONT POINT-SIZE=\"12\">&#9472;&#9472;&#9654;</FONT> accumulate</TD>",
      "the gradient is added into the leaf's .grad");
  row("<TD><FONT POINT-SIZE=\"12\">&#9473;&#9473;&#9654;</FONT></TD>", "backward() starts at the output, with gradient 1");
  os << "    </TABLE>>];\n  { rank=min; out; legend; }\n";
}

}  // namespace

std::string to_dot(const Tensor& root, const DotOptions& options) {
  std::ostringstream os;
  const std::string root_name = root.defined() && !root.impl_ptr()->name.empty() ? root.impl_ptr()->name : "";
  const std::string title =
      !options.title.empty() ? options.title : "The backward graph of " + (root_name.empty() ? "the output" : root_name);
  os << "digraph backward {\n  rankdir=BT;\n  labelloc=t; fontname=\"Helvetica\"; fontsize=14;\n"
     << "  label=\"" << title << "\\n\\n\";\n  node [fontname=\"Helvetica\", fontsize=11];\n"
     << "  edge [fontname=\"Helvetica\"];\n";
  os << "  out [shape=box, style=\"rounded,bold\", label=\"output " << (root_name.empty() ? "" : root_name + " ")
     << shape_label(root.shape()) << "\\nbackward() starts here\"];\n";
  std::unordered_map<const void*, std::string> ids;
  auto id_of = [&](const void* p, const char* prefix) {
    auto it = ids.find(p);
    if (it != ids.end()) return it->second;
    std::string id = prefix + std::to_string(ids.size());
    ids.emplace(p, id);
    return id;
  };
  std::unordered_set<const void*> drawn_leaves;
  auto leaf_node = [&](const std::shared_ptr<TensorImpl>& t) {
    std::string lid = id_of(t.get(), "leaf");
    if (drawn_leaves.insert(t.get()).second)
      os << "  " << lid << " [shape=ellipse, style=filled, fillcolor=\"" << kLeafFill << "\", label=\""
         << tensor_lines(t, options, "leaf") << "\"];\n";
    return lid;
  };
  bool gradient_graph = false;
  if (!root.grad_fn()) {
    if (root.requires_grad()) os << "  out -> " << leaf_node(root.impl_ptr()) << " [style=bold];\n";
  } else {
    std::vector<Node*> stack{root.grad_fn().get()};
    std::unordered_set<Node*> seen{root.grad_fn().get()};
    os << "  out -> " << id_of(root.grad_fn().get(), "n") << " [style=bold];\n";
    while (!stack.empty()) {
      Node* n = stack.back();
      stack.pop_back();
      std::string nid = id_of(n, "n");
      gradient_graph = gradient_graph || n->meta.in_gradient_graph;
      // A node that a backward with create_graph recorded: part of the gradient graph.
      os << "  " << nid << " [shape=box, style=\"filled" << (n->meta.in_gradient_graph ? ",dashed" : "")
         << "\", fillcolor=\"" << (n->meta.in_gradient_graph ? kGradientGraphFill : kNodeFill) << "\", label=\"" << n->name();
      if (n->meta.in_gradient_graph) os << "\\n(gradient graph)";
      if (auto out = n->output.lock()) os << "\\n" << tensor_lines(out, options, "computes");
      for (const SavedRef& s : n->saved())
        if (s->peek().defined()) os << "\\n" << saved_line(s);
      os << "\"];\n";
      for (const Edge& e : n->next) {
        if (e.node) {
          os << "  " << nid << " -> " << id_of(e.node.get(), "n") << ";\n";
          if (seen.insert(e.node.get()).second) stack.push_back(e.node.get());
        } else if (e.leaf) {
          std::string lid = leaf_node(e.leaf);
          os << "  " << nid << " -> " << lid << " [label=\"accumulate\", fontsize=9];\n";
        }
      }
    }
  }
  if (options.legend) legend(os, gradient_graph);
  os << "}\n";
  return os.str();
}

void write_dot(const Tensor& root, const std::string& path, const DotOptions& options) {
  const std::string text = to_dot(root, options);
  write_file_atomically(path, {text}, "write_dot");
}

}  // namespace ember
