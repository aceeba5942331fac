// nn::Module: a named tree of parameters, buffers and sub-modules.
//
// A module registers what it owns by name; names compose with dots through
// the tree ("blocks.0.attn.w_q.weight"). Parameters are tensors that require
// grad and that an optimizer updates; buffers are tensors that belong to the
// module (saved with it) but are not trained, e.g. a sinusoidal table.
//
// A tensor registered in two places (weight tying) is ONE parameter: it is
// listed once, under the first name it was registered with, and counted once.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tensor/tensor.h"

namespace ember::nn {

class Module {
 public:
  virtual ~Module() = default;
  Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  // The type name shown by to_string() ("Embedding").
  virtual std::string type_name() const = 0;
  // Extra text inside the parentheses of to_string() ("50257, 768").
  virtual std::string extra_repr() const { return ""; }

  // Every parameter of this module and its children, dotted names, each
  // tensor once (a tied weight appears under its first name only).
  // dedup = false lists a tied tensor under every name it has (checkpoints use it).
  std::vector<std::pair<std::string, Tensor>> named_parameters(bool dedup = true) const;
  std::vector<Tensor> parameters() const;
  std::vector<std::pair<std::string, Tensor>> named_buffers() const;
  std::vector<std::pair<std::string, Module*>> named_modules() const;  // includes this one as ""
  // Number of scalars over all parameters (a tied matrix counted once).
  int64_t num_parameters() const;

  // Clears every parameter's grad (set to none, like PyTorch's default), or
  // fills it with zeros when set_to_none is false.
  void zero_grad(bool set_to_none = true);

  void train(bool on = true);
  void eval() { train(false); }
  bool is_training() const { return training_; }

  // A readable tree, like PyTorch's repr:
  //   EmbeddingComposer(
  //     (token): Embedding(50257, 768)
  //     (positional): LearnedPositionalEmbedding(1024, 768)
  //   )
  std::string to_string() const;

  // Lookup by local name; error naming the module and the name if absent.
  Tensor& parameter(const std::string& name);
  Tensor& buffer(const std::string& name);

 protected:
  // Registration returns the stored handle; modules keep their
  // own copy of the handle (e.g. `weight`) for readable forward code.
  Tensor register_parameter(const std::string& name, Tensor t, bool requires_grad = true);
  Tensor register_buffer(const std::string& name, Tensor t);
  template <typename M>
  std::shared_ptr<M> register_module(const std::string& name, std::shared_ptr<M> m) {
    check_new_name(name);
    children_.emplace_back(name, m);
    return m;
  }
  // Replaces a registered parameter's tensor (used by weight tying).
  void replace_parameter(const std::string& name, const Tensor& t);

 private:
  void check_new_name(const std::string& name) const;
  void collect(const std::string& prefix, std::vector<std::pair<std::string, Module*>>& out) const;

  std::vector<std::pair<std::string, Tensor>> params_;
  std::vector<std::pair<std::string, Tensor>> buffers_;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
  bool training_ = true;
};

std::ostream& operator<<(std::ostream& os, const Module& m);

}  // namespace ember::nn
