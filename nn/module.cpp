#include "nn/module.h"

#include <sstream>
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

Tensor Module::register_parameter(const std::string& name, Tensor t, bool requires_grad) {
  check_new_name(name);
  EMBER_CHECK(t.defined() && t.is_floating_point(), type_name(),
              "parameter \"" << name << "\" must be a defined floating tensor");
  if (requires_grad) t.requires_grad_(true);
  params_.emplace_back(name, t);
  return params_.back().second;
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
  p = t;
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
