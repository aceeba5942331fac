#include "autograd/graph_export.h"

#include <fstream>
#include <sstream>
#include <unordered_map>

#include "autograd/node.h"

namespace ember {

std::string to_dot(const Tensor& root) {
  std::ostringstream os;
  os << "digraph backward {\n  rankdir=BT;\n  node [fontname=\"Helvetica\", fontsize=11];\n";
  os << "  out [label=\"output " << shape_str(root.shape()) << "\", shape=plaintext];\n";
  std::unordered_map<const void*, std::string> ids;
  auto id_of = [&](const void* p, const char* prefix) {
    auto it = ids.find(p);
    if (it != ids.end()) return it->second;
    std::string id = prefix + std::to_string(ids.size());
    ids.emplace(p, id);
    return id;
  };
  auto leaf_label = [](const TensorImpl* t) {
    std::string name = t->name.empty() ? "leaf" : t->name;
    return name + "\\n" + shape_str(t->shape);
  };
  if (!root.grad_fn()) {
    if (root.requires_grad())
      os << "  " << id_of(root.impl(), "leaf") << " [label=\"" << leaf_label(root.impl()) << "\", shape=ellipse];\n";
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
    os << "  " << nid << " [shape=box, style=filled, fillcolor=\"#dfe8f5\", label=\"" << n->name();
    for (SavedTensor* s : n->saved())
      if (s->peek().defined()) os << "\\nsaved " << dtype_name(s->peek().dtype()) << " " << shape_str(s->peek().shape());
    os << "\"];\n";
    for (const Edge& e : n->next) {
      if (e.node) {
        os << "  " << nid << " -> " << id_of(e.node.get(), "n") << ";\n";
        if (!seen[e.node.get()]) {
          seen[e.node.get()] = true;
          stack.push_back(e.node.get());
        }
      } else if (e.leaf) {
        std::string lid = id_of(e.leaf.get(), "leaf");
        os << "  " << lid << " [shape=ellipse, style=filled, fillcolor=\"#f5e6c8\", label=\"" << leaf_label(e.leaf.get())
           << "\"];\n";
        os << "  " << nid << " -> " << lid << " [label=\"accumulate\", fontsize=9];\n";
      }
    }
  }
  os << "}\n";
  return os.str();
}

void write_dot(const Tensor& root, const std::string& path) {
  std::string text = to_dot(root);
  std::ofstream f(path);
  EMBER_CHECK(f.good(), "write_dot", "cannot open " << path << " for writing");
  f << text;
  EMBER_CHECK(f.good(), "write_dot", "failed writing " << path);
}

}  // namespace ember
