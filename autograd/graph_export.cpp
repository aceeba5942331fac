#include "autograd/graph_export.h"

#include <cstdio>
#include <sstream>
#include <unordered_map>

#include "autograd/node.h"
#include "tensor/io.h"

namespace ember {

std::string shape_label(const Shape& s) { return s.empty() ? "scalar" : shape_str(s); }

namespace {

// "= 0.7616" or "= [0.1, -2, 3, ...]": the first few values of a tensor.
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

}  // namespace

std::string to_dot(const Tensor& root, const DotOptions& options) {
  std::ostringstream os;
  os << "digraph backward {\n  rankdir=BT;\n  node [fontname=\"Helvetica\", fontsize=11];\n";
  os << "  out [label=\"output " << shape_label(root.shape()) << "\", shape=plaintext];\n";
  std::unordered_map<const void*, std::string> ids;
  auto id_of = [&](const void* p, const char* prefix) {
    auto it = ids.find(p);
    if (it != ids.end()) return it->second;
    std::string id = prefix + std::to_string(ids.size());
    ids.emplace(p, id);
    return id;
  };
  auto leaf_node = [&](const std::shared_ptr<TensorImpl>& t) {
    std::string lid = id_of(t.get(), "leaf");
    os << "  " << lid << " [shape=ellipse, style=filled, fillcolor=\"#f5e6c8\", label=\""
       << tensor_lines(t, options, "leaf") << "\"];\n";
    return lid;
  };
  if (!root.grad_fn()) {
    if (root.requires_grad()) leaf_node(root.impl_ptr());
    os << "}\n";
    return os.str();
  }
  std::vector<Node*> stack{root.grad_fn().get()};
  std::unordered_map<Node*, bool> seen{{root.grad_fn().get(), true}};
  os << "  " << id_of(root.grad_fn().get(), "n") << " -> out [style=dashed];\n";
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    std::string nid = id_of(n, "n");
    // A node that a backward with create_graph recorded: part of the gradient graph.
    os << "  " << nid << " [shape=box, style=\"filled" << (n->in_gradient_graph ? ",dashed" : "")
       << "\", fillcolor=\"" << (n->in_gradient_graph ? "#e3f2d9" : "#dfe8f5") << "\", label=\"" << n->name();
    if (n->in_gradient_graph) os << "\\n(gradient graph)";
    if (auto out = n->output.lock()) os << "\\n" << tensor_lines(out, options, "computes");
    for (SavedTensor* s : n->saved())
      if (s->peek().defined())
        os << "\\nsaved " << dtype_name(s->peek().dtype()) << " " << shape_label(s->peek().shape());
    os << "\"];\n";
    for (const Edge& e : n->next) {
      if (e.node) {
        os << "  " << nid << " -> " << id_of(e.node.get(), "n") << ";\n";
        if (!seen[e.node.get()]) {
          seen[e.node.get()] = true;
          stack.push_back(e.node.get());
        }
      } else if (e.leaf) {
        std::string lid = leaf_node(e.leaf);
        os << "  " << nid << " -> " << lid << " [label=\"accumulate\", fontsize=9];\n";
      }
    }
  }
  os << "}\n";
  return os.str();
}

void write_dot(const Tensor& root, const std::string& path, const DotOptions& options) {
  const std::string text = to_dot(root, options);
  write_file_atomically(path, {text}, "write_dot");
}

}  // namespace ember
