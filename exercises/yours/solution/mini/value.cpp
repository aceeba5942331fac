// Stage 1, the reference solution: each op states its value and its local
// derivatives; backward() walks the graph once, in an order where every
// value has its whole gradient before it passes it on.
#include "mini/value.h"

#include <cmath>
#include <unordered_set>
#include <utility>
namespace mini {

Value::Value(double data) : node_(std::make_shared<Node>()) { node_->data = data; }

Value::Value(std::shared_ptr<Node> node) : node_(std::move(node)) {}

double Value::data() const { return node_->data; }

double Value::grad() const { return node_->grad; }

namespace {

// A new value: its number, and each input with d(new)/d(input).
Value make(double data, const char* op, std::vector<Node::Input> inputs) {
  auto node = std::make_shared<Node>();
  node->data = data;
  node->op = op;
  node->inputs = std::move(inputs);
  return Value(std::move(node));
}

// Every node `out` was computed from, and out itself, each after every node
// that uses it: out first, the leaves last. A depth-first walk that lists a
// node once all its inputs are listed, then reversed; with a stack of its
// own, so that a chain of 100 000 values does not exhaust the call stack.
std::vector<Node*> topological_order(Node* out) {
  std::vector<Node*> order;
  std::unordered_set<Node*> seen{out};
  std::vector<std::pair<Node*, size_t>> stack{{out, 0}};  // a node, and its next input to visit
  while (!stack.empty()) {
    auto& [node, next] = stack.back();
    if (next < node->inputs.size()) {
      Node* input = node->inputs[next++].node.get();
      if (seen.insert(input).second) stack.push_back({input, 0});
      continue;
    }
    order.push_back(node);  // every input of node is listed before it
    stack.pop_back();
  }
  return {order.rbegin(), order.rend()};
}

}  // namespace

// The ops: the value, then d(result)/d(each input) at these numbers.
Value operator+(const Value& a, const Value& b) {
  return make(a.data() + b.data(), "add", {{a.node(), 1.0}, {b.node(), 1.0}});
}

Value operator*(const Value& a, const Value& b) {
  return make(a.data() * b.data(), "mul", {{a.node(), b.data()}, {b.node(), a.data()}});
}

Value operator-(const Value& a) { return make(-a.data(), "neg", {{a.node(), -1.0}}); }

Value operator-(const Value& a, const Value& b) {
  return make(a.data() - b.data(), "sub", {{a.node(), 1.0}, {b.node(), -1.0}});
}

Value operator/(const Value& a, const Value& b) {
  // d(a/b)/da = 1/b, d(a/b)/db = -a/b^2
  return make(a.data() / b.data(), "div", {{a.node(), 1.0 / b.data()}, {b.node(), -a.data() / (b.data() * b.data())}});
}

Value pow(const Value& a, double k) {
  return make(std::pow(a.data(), k), "pow", {{a.node(), k * std::pow(a.data(), k - 1)}});
}

Value exp(const Value& a) {
  const double y = std::exp(a.data());
  return make(y, "exp", {{a.node(), y}});  // (e^a)' = e^a
}

Value log(const Value& a) {
  return make(std::log(a.data()), "log", {{a.node(), 1.0 / a.data()}});
}

Value tanh(const Value& a) {
  const double y = std::tanh(a.data());
  return make(y, "tanh", {{a.node(), 1.0 - y * y}});
}

Value relu(const Value& a) {
  return make(a.data() > 0 ? a.data() : 0.0, "relu", {{a.node(), a.data() > 0 ? 1.0 : 0.0}});
}

// The chain rule, in an order: when a node comes up, every node that uses
// it has already added its part into node->grad, so the grad it passes on
// is complete. Each passes grad * local to each input, adding (+=): an
// input used twice (x * x, or a value two ops read) gets both parts.
void Value::backward() const {
  const std::vector<Node*> order = topological_order(node_.get());
  node_->grad = 1.0;
  for (Node* node : order)
    for (Node::Input& input : node->inputs) input.node->grad += node->grad * input.local;
}

void Value::zero_grad() const {
  for (Node* node : topological_order(node_.get())) node->grad = 0.0;
}

}  // namespace mini
