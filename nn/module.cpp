#include "nn/module.h"

#include <sstream>
#include <map>
#include <set>
#include <unordered_set>

#include "autograd/grad_mode.h"
#include "tensor/kernels.h"

namespace ember::nn {

void Module::check_new_name(const std::string& name) const {
  EMBER_CHECK(!name.empty() && name.find('.') == std::string::npos, type_name(),
              "invalid name \"" << name << "\": names must be non-empty and contain no '.'");
  auto taken = [&](const auto& list) {
    for (const auto& [n, _] : list)
      if (n == name) return true;
    return false;
  };
  EMBER_CHECK(!taken(params_) && !taken(buffers_) && !taken(children_), type_name(),
              "name \"" << name << "\" is already registered");
}

// The parameters and the children may outlive their module: each parameter
// forgets it as its owner, each child forgets it as its parent (its path()
// starts again from itself), and a .grad with a graph of its own (backward
// with create_graph) keeps its values and loses the graph that refers back
// to the parameter (module.h).
Module::~Module() {
  for (auto& [_, t] : params_) {
    if (!t.defined()) continue;
    if (t.impl()->owner == this) t.impl()->owner = nullptr;
    // The stored .grad, not grad(): that would add pending sparse rows into
    // a new dense (V, D) tensor here, which may throw. Rows never carry a graph.
    Tensor& g = t.impl()->grad;
    if (g.defined() && g.grad_fn()) g = g.detach();
  }
  for (auto& [_, child] : children_)
    if (child && child->parent_ == this) {
      child->parent_ = nullptr;
      child->name_in_parent_.clear();
    }
}

Tensor Module::register_parameter(const std::string& name, Tensor t, bool requires_grad) {
  check_new_name(name);
  EMBER_CHECK(t.defined() && t.is_floating_point(), type_name(),
              "parameter \"" << name << "\" must be a defined floating tensor");
  if (requires_grad) t.requires_grad_(true);
  if (!t.impl()->owner) t.impl()->owner = this;
  params_.emplace_back(name, t);
  return params_.back().second;
}

std::string Module::name_of(const TensorImpl& impl) const {
  for (const auto& [name, t] : params_)
    if (t.impl() == &impl) {
      const std::string prefix = path();
      return prefix.empty() ? name : prefix + "." + name;
    }
  return "";
}

Tensor Module::register_buffer(const std::string& name, Tensor t) {
  check_new_name(name);
  EMBER_CHECK(t.defined(), type_name(), "buffer \"" << name << "\" must be a defined tensor");
  buffers_.emplace_back(name, t);
  return buffers_.back().second;
}

void Module::replace_parameter(const std::string& name, const Tensor& t) {
  Tensor& p = parameter(name);
  EMBER_CHECK(t.shape() == p.shape() && t.dtype() == p.dtype(), type_name(),
              "cannot replace parameter \"" << name << "\" of shape " << shape_str(p.shape()) << " "
                                            << dtype_name(p.dtype()) << " with a tensor of shape "
                                            << shape_str(t.shape()) << " " << dtype_name(t.dtype()));
  if (p.impl()->owner == this) p.impl()->owner = nullptr;
  if (!t.impl()->owner) t.impl()->owner = this;  // a tied weight keeps the module it came from
  p = t;
}

void Module::parameter_to_buffers(const std::string& name, const std::vector<std::pair<std::string, Tensor>>& buffers) {
  Tensor& p = parameter(name);  // errors when absent
  if (p.impl()->owner == this) p.impl()->owner = nullptr;
  for (auto it = params_.begin(); it != params_.end(); ++it)
    if (it->first == name) {
      params_.erase(it);
      break;
    }
  for (const auto& [n, t] : buffers) register_buffer(n, t);
}

Tensor& Module::parameter(const std::string& name) {
  for (auto& [n, t] : params_)
    if (n == name) return t;
  EMBER_FAIL(type_name(), "has no parameter named \"" << name << "\"");
}

Tensor& Module::buffer(const std::string& name) {
  for (auto& [n, t] : buffers_)
    if (n == name) return t;
  EMBER_FAIL(type_name(), "has no buffer named \"" << name << "\"");
}

std::string Module::path() const {
  std::string p;
  for (const Module* m = this; m->parent_; m = m->parent_) p = m->name_in_parent_ + (p.empty() ? "" : "." + p);
  return p;
}

void Module::collect(const std::string& prefix, std::vector<std::pair<std::string, Module*>>& out) const {
  // Depth-first, registration order (the tree is shallow: recursion is fine here).
  out.emplace_back(prefix, const_cast<Module*>(this));
  for (const auto& [name, child] : children_) child->collect(prefix.empty() ? name : prefix + "." + name, out);
}

std::vector<std::pair<std::string, Module*>> Module::named_modules() const {
  std::vector<std::pair<std::string, Module*>> out;
  collect("", out);
  return out;
}

std::vector<std::pair<std::string, Tensor>> Module::named_parameters(bool dedup) const {
  std::vector<std::pair<std::string, Tensor>> out;
  std::unordered_set<const TensorImpl*> seen;
  for (const auto& [prefix, m] : named_modules()) {
    for (const auto& [name, t] : m->params_) {
      if (seen.insert(t.impl()).second || !dedup) out.emplace_back(prefix.empty() ? name : prefix + "." + name, t);
    }
  }
  return out;
}

std::vector<Tensor> Module::parameters() const {
  std::vector<Tensor> out;
  for (auto& [_, t] : named_parameters()) out.push_back(t);
  return out;
}

std::vector<std::pair<std::string, Tensor>> Module::named_buffers() const {
  std::vector<std::pair<std::string, Tensor>> out;
  std::unordered_set<const TensorImpl*> seen;
  for (const auto& [prefix, m] : named_modules()) {
    for (const auto& [name, t] : m->buffers_) {
      if (seen.insert(t.impl()).second) out.emplace_back(prefix.empty() ? name : prefix + "." + name, t);
    }
  }
  return out;
}

int64_t Module::num_parameters() const {
  int64_t n = 0;
  for (const auto& [_, t] : named_parameters()) n += t.numel();
  return n;
}

void Module::zero_grad(bool set_to_none) {
  for (Tensor& t : parameters()) {
    if (set_to_none || !t.grad().defined()) {
      t.set_grad(Tensor());
    } else {
      kernel::fill_(t.grad(), 0.0);
    }
  }
}

Module& Module::to(DType dtype) {
  EMBER_CHECK(is_floating(dtype), type_name(), "to: modules convert to float32 or float64, not " << dtype_name(dtype));
  // Swap the storage inside each TensorImpl, once per tensor (ties share one).
  auto convert = [dtype](const Tensor& t) {
    if (!t.is_floating_point() || t.dtype() == dtype) return;
    Tensor converted = kernel::to(t, dtype);
    TensorImpl* impl = t.impl();
    impl->storage = converted.storage();
    impl->offset = 0;
    impl->strides = converted.stride();
    impl->dtype = dtype;
  };
  std::unordered_set<const TensorImpl*> done;
  auto visit = [&](const Tensor& t) {
    if (!done.insert(t.impl()).second) return;
    convert(t);
    if (t.grad().defined()) convert(t.grad());
  };
  for (const auto& [_, t] : named_parameters()) visit(t);
  for (const auto& [_, t] : named_buffers()) visit(t);
  return *this;
}

std::vector<std::pair<std::string, Tensor>> Module::state_dict() const {
  std::vector<std::pair<std::string, Tensor>> out;
  for (const auto& [name, t] : named_parameters(/*dedup=*/false)) out.emplace_back(name, t.detach());
  for (const auto& [name, t] : named_buffers()) out.emplace_back(name, t.detach());
  return out;
}

std::vector<std::pair<Tensor, Tensor>> Module::match_state_dict(const std::vector<std::pair<std::string, Tensor>>& state,
                                                                bool strict, const std::string& source,
                                                                const char* op) const {
  std::map<std::string, Tensor> given;
  for (const auto& [name, t] : state) {
    EMBER_CHECK(t.defined(), op, source << ": tensor \"" << name << "\" is undefined");
    EMBER_CHECK(given.emplace(name, t).second, op, source << ": tensor \"" << name << "\" appears twice");
  }
  // The module's tensors, each once, with all the names it has.
  std::vector<std::pair<Tensor, std::vector<std::string>>> tensors;
  std::map<const TensorImpl*, size_t> index;
  std::set<std::string> names;
  auto add = [&](const std::string& name, const Tensor& t) {
    names.insert(name);
    auto [it, fresh] = index.emplace(t.impl(), tensors.size());
    if (fresh) tensors.push_back({t, {}});
    tensors[it->second].second.push_back(name);
  };
  for (const auto& [name, t] : named_parameters(/*dedup=*/false)) add(name, t);
  for (const auto& [name, t] : named_buffers()) add(name, t);
  if (strict) {
    for (const auto& [name, _] : state)
      EMBER_CHECK(names.count(name), op, source << " has tensor \"" << name << "\", which the model does not have");
  }
  std::vector<std::pair<Tensor, Tensor>> copies;
  for (const auto& [dst, tensor_names] : tensors) {
    const Tensor* src = nullptr;
    const std::string* src_name = nullptr;
    for (const std::string& name : tensor_names) {
      auto it = given.find(name);
      if (it == given.end()) continue;
      const Tensor& t = it->second;
      EMBER_CHECK(t.shape() == dst.shape() && t.dtype() == dst.dtype(), op,
                  "tensor \"" << name << "\" has shape " << shape_str(t.shape()) << " " << dtype_name(t.dtype())
                               << " in " << source << " but " << shape_str(dst.shape()) << " "
                               << dtype_name(dst.dtype()) << " in the model");
      if (!src) {
        src = &t;
        src_name = &name;
        continue;
      }
      // A tied tensor given twice (a PyTorch-style state dict): one matrix, or a mistake.
      Tensor differ = kernel::compare(kernel::Compare::Ne, kernel::contiguous(*src), kernel::contiguous(t));
      EMBER_CHECK(kernel::sum(kernel::to(differ, kInt64), {}, false).item<int64_t>() == 0, op,
                  source << ": \"" << *src_name << "\" and \"" << name
                         << "\" are one tied tensor in the model, but it holds different values under the two names; "
                            "build the model without tying to load them");
    }
    if (!src) {
      EMBER_CHECK(!strict, op, "tensor \"" << tensor_names.front() << "\" of the model is missing from " << source);
      continue;
    }
    copies.emplace_back(dst, *src);
  }
  return copies;
}

void Module::load_state_dict(const std::vector<std::pair<std::string, Tensor>>& state, bool strict) {
  std::vector<std::pair<Tensor, Tensor>> copies = match_state_dict(state, strict, "state_dict", "load_state_dict");
  NoGradGuard no_grad;
  for (auto& [dst, src] : copies) kernel::copy_(dst, src, "load_state_dict");
}

void Module::train(bool on) {
  for (auto& [_, m] : named_modules()) m->training_ = on;
}

std::string Module::to_string() const {
  std::ostringstream os;
  os << type_name() << "(" << extra_repr();
  if (!children_.empty()) {
    os << "\n";
    for (const auto& [name, child] : children_) {
      std::string sub = child->to_string();
      // Indent the child's lines by two spaces.
      std::string indented;
      for (char c : sub) {
        indented += c;
        if (c == '\n') indented += "  ";
      }
      os << "  (" << name << "): " << indented << "\n";
    }
  }
  os << ")";
  return os.str();
}

std::ostream& operator<<(std::ostream& os, const Module& m) { return os << m.to_string(); }

}  // namespace ember::nn
