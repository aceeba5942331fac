// Stage 4, the reference solution: each op records its node with a backward
// written with stage 3's ops; backward() counts, for every node, the uses of
// its output, and runs a node when the last of them has passed its part.
#include "mini/autograd.h"

#include <algorithm>
#include <string>
#include <unordered_map>
#include <utility>

#include "mini/error.h"

namespace mini {

namespace {

// "(2, 3)"
std::string str(const Shape& s) {
  std::string out = "(";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + ")";
}

// A copy of t in a storage of its own: a leaf's gradient shares nothing.
Tensor copy(const Tensor& t) { return Tensor(t.values(), t.shape()); }

}  // namespace

Var::Var(Tensor data, bool requires_grad) : data_(std::move(data)) {
  if (requires_grad) {
    node_ = std::make_shared<GradNode>();
    node_->shape = data_.shape();
  }
}

Var::Var(Tensor data, std::shared_ptr<GradNode> node) : data_(std::move(data)), node_(std::move(node)) {}

std::optional<Tensor> Var::grad() const {
  if (!node_ || !node_->is_leaf()) return std::nullopt;
  return node_->grad;
}

void Var::zero_grad() const {
  if (node_) node_->grad.reset();
}

void Var::add_(const Tensor& delta) const {
  for (int64_t d = 0; d < data_.dim(); ++d)  // two elements in one place: a write to one would change both
    MINI_CHECK(data_.strides()[static_cast<size_t>(d)] != 0 || data_.shape()[static_cast<size_t>(d)] <= 1, "add_",
               "a Var whose data is expanded (strides " << str(data_.strides()) << ", shape " << str(shape())
                                                        << ") shares one element between several indices");
  MINI_CHECK(broadcast_shape(shape(), delta.shape(), "add_") == shape(), "add_",
             "a delta of shape " << str(delta.shape()) << " does not broadcast to the Var's shape " << str(shape()));
  const std::vector<double> values = add(data_, delta).values();
  for (int64_t k = 0; k < data_.numel(); ++k) data_.at(unravel(k, shape())) = values[static_cast<size_t>(k)];
  ++*version_;
}

const Tensor& Saved::get(const std::string& op) const {
  MINI_CHECK(*counter_ == version_, op,
             "a tensor this op saved for its backward has been changed in place since (add_): it was at version "
                 << version_ << ", it is at version " << *counter_ << " now");
  return data_;
}

Var record(Tensor data, const std::string& op, const std::vector<Var>& inputs,
           std::function<std::vector<Tensor>(const Tensor& grad)> backward) {
  bool any = false;
  for (const Var& v : inputs) any = any || v.requires_grad();
  if (!any) return Var(std::move(data), nullptr);
  auto node = std::make_shared<GradNode>();
  node->op = op;
  node->shape = data.shape();
  for (const Var& v : inputs) node->next.push_back(v.node());
  node->backward = std::move(backward);
  return Var(std::move(data), std::move(node));
}

// The engine. First, how many times each node's output is used by the nodes
// reachable from this one: the edges that lead to it. Then a ready queue:
// a node runs when every use has added its part of the gradient into the
// node's pending gradient, so that what it passes on is complete.
void Var::backward(const Tensor& grad) const {
  MINI_CHECK(requires_grad(), "backward",
             "this Var of shape " << str(shape()) << " does not require grad: nothing it came from requires grad");
  MINI_CHECK(grad.shape() == shape(), "backward",
             "a grad of shape " << str(grad.shape()) << " for a Var of shape " << str(shape()));

  std::unordered_map<GradNode*, int> uses;
  std::vector<GradNode*> stack{node_.get()};
  uses[node_.get()] = 0;
  while (!stack.empty()) {
    GradNode* node = stack.back();
    stack.pop_back();
    for (const auto& next : node->next) {
      if (!next) continue;
      if (uses.count(next.get()) == 0) stack.push_back(next.get());  // first seen: walk it too
      ++uses[next.get()];
    }
  }

  std::unordered_map<GradNode*, Tensor> pending;  // the gradient gathered so far, of a node not run yet
  std::vector<std::pair<GradNode*, Tensor>> arrived;  // each leaf's whole gradient, written when the walk is done
  pending.emplace(node_.get(), grad);
  std::vector<GradNode*> ready{node_.get()};
  while (!ready.empty()) {
    GradNode* node = ready.back();
    ready.pop_back();
    const Tensor g = pending.at(node);
    pending.erase(node);
    if (node->is_leaf()) {
      arrived.emplace_back(node, g);
      continue;
    }
    const std::vector<Tensor> grads = node->backward(g);
    MINI_CHECK(grads.size() == node->next.size(), "backward",
               node->op << "'s backward gave " << grads.size() << " gradients for " << node->next.size() << " inputs");
    for (size_t i = 0; i < grads.size(); ++i) {
      GradNode* next = node->next[i].get();
      if (!next) continue;
      MINI_CHECK(grads[i].shape() == next->shape, "backward",
                 node->op << "'s gradient for input " << i << " has shape " << str(grads[i].shape())
                          << ", but that input has shape " << str(next->shape));
      auto [at, first] = pending.emplace(next, grads[i]);
      if (!first) at->second = add(at->second, grads[i]);  // a second use: its part adds
      if (--uses[next] == 0) ready.push_back(next);
    }
  }
  // Nothing can be refused any more: a refusal above left every grad as it
  // was. A leaf's gradient adds up over backward() calls.
  for (auto& [leaf, g] : arrived) leaf->grad = leaf->grad ? add(*leaf->grad, g) : copy(g);
}

void Var::backward() const {
  MINI_CHECK(data_.numel() == 1, "backward",
             "a gradient can be implied only for a Var of one element, this one has shape " << str(shape())
                                                                                            << ": call backward(grad)");
  backward(Tensor({1.0}, shape()));
}

// ---- the ops: the forward of stage 3, and the gradient of each input ----

Var add(const Var& a, const Var& b) {
  return record(add(a.data(), b.data()), "add", {a, b}, [sa = a.shape(), sb = b.shape()](const Tensor& g) {
    // each element of a broadcast input was used once for each copy: its parts add up
    return std::vector<Tensor>{sum_to(g, sa), sum_to(g, sb)};
  });
}

Var sub(const Var& a, const Var& b) {
  return record(sub(a.data(), b.data()), "sub", {a, b}, [sa = a.shape(), sb = b.shape()](const Tensor& g) {
    return std::vector<Tensor>{sum_to(g, sa), sum_to(neg(g), sb)};
  });
}

Var mul(const Var& a, const Var& b) {
  return record(mul(a.data(), b.data()), "mul", {a, b},
                [av = Saved(a), bv = Saved(b), sa = a.shape(), sb = b.shape()](const Tensor& g) {
                  // d(a*b)/da = b, d(a*b)/db = a
                  return std::vector<Tensor>{sum_to(mul(g, bv.get("mul")), sa), sum_to(mul(g, av.get("mul")), sb)};
                });
}

Var div(const Var& a, const Var& b) {
  return record(div(a.data(), b.data()), "div", {a, b},
                [av = Saved(a), bv = Saved(b), sa = a.shape(), sb = b.shape()](const Tensor& g) {
                  // d(a/b)/da = 1/b, d(a/b)/db = -a/b^2
                  const Tensor& b = bv.get("div");
                  return std::vector<Tensor>{sum_to(div(g, b), sa), sum_to(neg(div(mul(g, av.get("div")), mul(b, b))), sb)};
                });
}

Var neg(const Var& x) {
  return record(neg(x.data()), "neg", {x}, [](const Tensor& g) { return std::vector<Tensor>{neg(g)}; });
}

// exp and tanh recompute their output from the saved input in backward (ember
// saves the output instead: a copy kept against a recomputation).
Var exp(const Var& x) {
  return record(exp(x.data()), "exp", {x}, [xv = Saved(x)](const Tensor& g) {
    return std::vector<Tensor>{mul(g, exp(xv.get("exp")))};
  });
}

Var log(const Var& x) {
  return record(log(x.data()), "log", {x}, [xv = Saved(x)](const Tensor& g) {
    return std::vector<Tensor>{div(g, xv.get("log"))};
  });
}

Var tanh(const Var& x) {
  return record(tanh(x.data()), "tanh", {x}, [xv = Saved(x)](const Tensor& g) {
    const Tensor y = tanh(xv.get("tanh"));
    return std::vector<Tensor>{mul(g, map(y, [](double v) { return 1 - v * v; }))};
  });
}

Var relu(const Var& x) {
  return record(relu(x.data()), "relu", {x}, [xv = Saved(x)](const Tensor& g) {
    return std::vector<Tensor>{mul(g, map(xv.get("relu"), [](double v) { return v > 0 ? 1.0 : 0.0; }))};
  });
}

Var sum(const Var& x, const Shape& dims, bool keepdim) {
  return record(sum(x.data(), dims, keepdim), "sum", {x}, [shape = x.shape(), dims, keepdim](const Tensor& g) {
    // Every element of x was added once into the result: each gets the
    // gradient of the element it went into. Without keepdim the summed dims
    // are put back as sizes 1 first, so that g lines up with x's dims.
    Shape kept = shape;
    for (size_t d = 0; d < kept.size(); ++d)
      if (dims.empty() || std::find(dims.begin(), dims.end(), static_cast<int64_t>(d)) != dims.end()) kept[d] = 1;
    const Tensor lined_up = keepdim ? g : Tensor(g.values(), kept);
    return std::vector<Tensor>{lined_up.expand(shape)};
  });
}

Var max(const Var& x, int64_t d, bool keepdim) {
  return record(max(x.data(), d, keepdim), "max", {x}, [xv = Saved(x), d, keepdim](const Tensor& g) {
    // Only the element that was the max moved the result: it gets the
    // gradient, every other element 0.
    const Tensor& x = xv.get("max");
    const Tensor top = max(x, d, true);
    Shape kept = x.shape();
    kept[static_cast<size_t>(d)] = 1;
    const Tensor gk = keepdim ? g : Tensor(g.values(), kept);
    Tensor out(std::vector<double>(static_cast<size_t>(x.numel()), 0.0), x.shape());
    Tensor taken(std::vector<double>(static_cast<size_t>(top.numel()), 0.0), kept);  // 1 once a row's max is found
    for (int64_t k = 0; k < x.numel(); ++k) {
      const Index index = unravel(k, x.shape());
      Index row = index;
      row[static_cast<size_t>(d)] = 0;
      if (taken.at(row) == 0 && x.at(index) == top.at(row)) {
        out.at(index) = gk.at(row);
        taken.at(row) = 1;
      }
    }
    return std::vector<Tensor>{out};
  });
}

}  // namespace mini
