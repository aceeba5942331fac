/// @file
/// nn::Module: a named tree of parameters, buffers and sub-modules.
///
/// A module registers what it owns by name; names compose with dots through
/// the tree ("blocks.0.attn.w_q.weight"). Parameters are tensors that require
/// grad and that an optimizer updates; buffers are tensors that belong to the
/// module (saved with it) but are not trained, e.g. a sinusoidal table.
///
/// A tensor registered in two places (weight tying) is ONE parameter: it is
/// listed once, under the first name it was registered with, and counted once.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "autograd/observer.h"
#include "tensor/tensor.h"

namespace ember::nn {

class Module : public TensorOwner {
 public:
  /// A parameter's .grad that has a graph of its own (backward with
  /// create_graph) refers, through that graph, to the parameter itself: a
  /// reference cycle that would keep both alive for ever. The module breaks it
  /// as it goes: each such .grad keeps its values and loses its graph.
  virtual ~Module();
  Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  /// The type name shown by to_string() ("Embedding").
  virtual std::string type_name() const = 0;
  /// Extra text inside the parentheses of to_string() ("50257, 768").
  virtual std::string extra_repr() const { return ""; }

  /// Every parameter of this module and its children, dotted names, each
  /// tensor once (a tied weight appears under its first name only).
  /// dedup = false lists a tied tensor under every name it has (checkpoints use it).
  std::vector<std::pair<std::string, Tensor>> named_parameters(bool dedup = true) const;
  std::vector<Tensor> parameters() const;
  std::vector<std::pair<std::string, Tensor>> named_buffers() const;
  std::vector<std::pair<std::string, Module*>> named_modules() const;  // includes this one as ""
  /// Number of scalars over all parameters (a tied matrix counted once).
  int64_t num_parameters() const;

  /// Clears every parameter's grad (set to none, like PyTorch's default), or
  /// fills it with zeros when set_to_none is false.
  void zero_grad(bool set_to_none = true);

  void train(bool on = true);
  void eval() { train(false); }
  bool is_training() const { return training_; }

  /// A readable tree, like PyTorch's repr:
  ///   EmbeddingComposer(
  ///     (token): Embedding(50257, 768)
  ///     (positional): LearnedPositionalEmbedding(1024, 768)
  ///   )
  std::string to_string() const;

  /// The module's dotted name from the root of the tree it was first
  /// registered into ("blocks.0.attn"); "" for a root.
  std::string path() const;
  /// A parameter's dotted name from the root ("blocks.0.attn.w_q.weight"),
  /// "" if it is not this module's own. Each parameter remembers the module
  /// that registered it first (TensorImpl::owner), so an instrument names
  /// the parameters of any model, a user's own Module subclass included.
  std::string name_of(const TensorImpl& impl) const override;

  /// Lookup by local name; error naming the module and the name if absent.
  Tensor& parameter(const std::string& name);
  Tensor& buffer(const std::string& name);

  /// Converts every floating parameter and buffer (and any .grad) to dtype, in
  /// place: each tensor keeps its identity, so every handle to it (a module's
  /// `weight` member, a tied head) sees the change. Make optimizers after.
  ///   nn::Linear fc(3, 2);  fc.to(kFloat64);  // e.g. to gradcheck it
  Module& to(DType dtype);

  /// The module's state in memory: every parameter under every name it has
  /// (a tied tensor under both) and every buffer, as detached tensors that
  /// share the module's memory (clone() them to keep a snapshot).
  std::vector<std::pair<std::string, Tensor>> state_dict() const;
  /// Copies the values of `state` in. Strict: every name of the module must
  /// be present and every entry must be a name of the module. Shapes and
  /// dtypes must match, and two entries for one tied tensor must hold equal
  /// values. On any error nothing has changed.
  void load_state_dict(const std::vector<std::pair<std::string, Tensor>>& state, bool strict = true);
  /// The check of load_state_dict alone: the (module tensor, source tensor)
  /// copies it would make. `source` names the state in error messages (a
  /// file path), `op` starts them.
  std::vector<std::pair<Tensor, Tensor>> match_state_dict(const std::vector<std::pair<std::string, Tensor>>& state,
                                                          bool strict, const std::string& source,
                                                          const char* op) const;

 protected:
  /// Registration returns the stored handle; modules keep their
  /// own copy of the handle (e.g. `weight`) for readable forward code.
  Tensor register_parameter(const std::string& name, Tensor t, bool requires_grad = true);
  Tensor register_buffer(const std::string& name, Tensor t);
  template <typename M>
  std::shared_ptr<M> register_module(const std::string& name, std::shared_ptr<M> m) {
    check_new_name(name);
    children_.emplace_back(name, m);
    Module& child = *m;
    if (!child.parent_) {  // a module registered twice keeps its first name
      child.parent_ = this;
      child.name_in_parent_ = name;
    }
    return m;
  }
  /// Replaces a registered parameter's tensor (used by weight tying).
  void replace_parameter(const std::string& name, const Tensor& t);
  /// Replaces a registered parameter by buffers (a weight quantized into
  /// its values and scales: nn/quantize.h); error naming it if there is none.
  void parameter_to_buffers(const std::string& name, const std::vector<std::pair<std::string, Tensor>>& buffers);

 private:
  void check_new_name(const std::string& name) const;
  void collect(const std::string& prefix, std::vector<std::pair<std::string, Module*>>& out) const;

  std::vector<std::pair<std::string, Tensor>> params_;
  std::vector<std::pair<std::string, Tensor>> buffers_;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
  bool training_ = true;
  const Module* parent_ = nullptr;  // for path(): where it was first registered
  std::string name_in_parent_;
};

/// The first line of a module's forward(): while an inspect/ instrument
/// watches, ops running inside it are labelled with the module's path
/// ("blocks.0.attn.softmax"). When nothing watches it costs a pointer load.
class ModuleScope {
 public:
  explicit ModuleScope(const Module& m) : watcher_(autograd_observer()) {
    if (watcher_) watcher_->module_begin(m.path(), m.type_name());
  }
  ~ModuleScope() {
    if (watcher_) watcher_->module_end();
  }
  ModuleScope(const ModuleScope&) = delete;
  ModuleScope& operator=(const ModuleScope&) = delete;

 private:
  AutogradObserver* watcher_;
};

std::ostream& operator<<(std::ostream& os, const Module& m);

/// A list of modules of one type, registered as "0", "1", ... so that their
/// parameters are named "blocks.0.attn.w_q.weight" (PyTorch's ModuleList).
template <typename M>
class ModuleList : public Module {
 public:
  void push_back(std::shared_ptr<M> m) {
    EMBER_CHECK(m != nullptr, "ModuleList", "cannot add a null module");
    register_module(std::to_string(items_.size()), m);
    items_.push_back(std::move(m));
  }
  size_t size() const { return items_.size(); }
  M& operator[](size_t i) const { return *items_.at(i); }
  auto begin() const { return items_.begin(); }  // iterates the shared_ptrs
  auto end() const { return items_.end(); }
  std::string type_name() const override { return "ModuleList"; }

 private:
  std::vector<std::shared_ptr<M>> items_;
};

}  // namespace ember::nn
