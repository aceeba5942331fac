/// @file
/// Tensor: a cheap handle (shared_ptr) to a TensorImpl, which is a view of a
/// Storage: (storage, offset, shape, strides, dtype) plus the three fields
/// autograd needs (requires_grad, grad, grad_fn).
///
/// Copying a Tensor copies the handle, not the numbers: `Tensor b = a;` makes b
/// another name for the same tensor. Use clone() for a deep copy.
///
/// This header holds the data structure and the non-differentiable basics
/// (tensor/tensor.cpp). The differentiable operations (a + b, matmul, sum,
/// views, ...) are declared in autograd/ops.h; the class's last block of
/// members (backward, in-place writes, printing, shortcuts such as x.sum())
/// is the autograd layer's, defined in autograd/tensor_methods.cpp, as its
/// banner says.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/error.h"
#include "tensor/dtype.h"
#include "tensor/shape.h"
#include "tensor/storage.h"

namespace ember {

struct Node;  // autograd/node.h: one backward step of the graph
struct RowGrad;  // below: a gradient's rows
struct TensorImpl;
class Tensor;

using TensorPair = std::pair<Tensor, Tensor>;  // max(x, d): values, indices
using GradHook = std::function<std::optional<Tensor>(const Tensor& grad)>;

class Tensor {
 public:
  Tensor() = default;  // undefined tensor (e.g. grad() before any backward)
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  bool defined() const { return impl_ != nullptr; }
  TensorImpl* impl() const { return impl_.get(); }
  const std::shared_ptr<TensorImpl>& impl_ptr() const { return impl_; }
  bool is_same(const Tensor& o) const { return impl_ == o.impl_; }

  // ---- metadata ----
  DType dtype() const;
  const Shape& shape() const;
  const Shape& stride() const;
  int64_t size(int64_t dim) const;  // negative dims count from the end
  int64_t dim() const;
  int64_t numel() const;
  int64_t storage_offset() const;
  bool is_contiguous() const;
  bool is_floating_point() const { return is_floating(dtype()); }
  const std::shared_ptr<Storage>& storage() const;
  uint64_t version() const;  // the storage's in-place write counter

  /// Raw pointer to element [0, 0, ...] (storage offset applied).
  template <typename T> T* data_ptr() const;
  void* raw_data() const;

  // ---- reading values ----
  /// The one value of a one-element tensor, as T (error unless numel() == 1):
  /// `loss.item()` is a double, as in PyTorch; `ids.item<int64_t>()` an integer.
  template <typename T = double> T item() const;
  template <typename T> std::vector<T> to_vector() const;  // row-major copy

  // ---- autograd fields (the data; the engine lives in autograd/) ----
  bool requires_grad() const;
  Tensor& requires_grad_(bool on = true);  // error for int64/bool
  /// Undefined until a backward writes it. A non-leaf's stays undefined unless
  /// retain_grad() was called before backward (reading it then warns once).
  /// Rows a backward left as rows (row_grad() below) are added into it first.
  Tensor grad() const;
  void set_grad(const Tensor& g) const;    // undefined tensor clears it, rows too
  /// The gradient as rows, before grad() adds them into a dense tensor: an
  /// nn::Embedding built with sparse = true leaves its table's gradient this
  /// way (zero except rows[k] added at row ids[k]; ids may repeat), so that an
  /// optimizer that understands rows (SGD) reads and writes only those rows.
  /// Empty when the gradient is dense or undefined.
  const std::vector<RowGrad>& row_grad() const;
  const std::shared_ptr<Node>& grad_fn() const;
  bool is_leaf() const { return grad_fn() == nullptr; }
  std::string name() const;                // a label for graph export
  Tensor& set_name(const std::string& n);
  Tensor detach() const;  // same storage, no graph

  // =====================================================================
  // The autograd half of the handle. Everything below is defined by the
  // autograd layer (autograd/tensor_methods.cpp), not in tensor/: these
  // members run the engine, check in-place writes against the graph, print
  // a node's name, or forward to the differentiable ops of autograd/ops.h.
  // The tensor layer never calls them (the build proves it: each layer links
  // with only the layers below it, tests/layering/), so a program of tensor/
  // alone links without autograd; these members need ember::autograd.
  // =====================================================================

  /// PyTorch-like printing, with requires_grad=True on a leaf that requires
  /// grad and `grad_fn=<MulBackward>` on a result of the graph (format_values
  /// below prints the values alone).
  std::string to_string() const;

  // ---- the backward pass (autograd/engine.h) ----
  void backward(const Tensor& grad_output = Tensor(), bool retain_graph = false, bool create_graph = false) const;
  void retain_grad() const;
  void register_hook(GradHook hook) const;

  // ---- in-place writes (bump the version; refused on tensors in a graph) ----
  Tensor& fill_(double value);
  Tensor& zero_();
  Tensor& copy_(const Tensor& src);  // src broadcast to this shape, dtype converted
  Tensor& add_(const Tensor& other, double alpha = 1.0);
  Tensor& add_(double value);
  Tensor& mul_(const Tensor& other);
  Tensor& mul_(double value);

  // ---- every op on one tensor as a method too ----
  // The rule (PyTorch's): an op that works on one tensor has two spellings
  // with the same arguments, `ember::op(x, ...)` and `x.op(...)`, both made
  // from its one line in tensor/op_list.h. Free functions only: ops over a
  // list of tensors (cat, stack) and the layers' building blocks, like
  // torch.nn.functional (embedding, layer_norm, cross_entropy, gelu,
  // scaled_softmax, one_hot): autograd/ops.h.
#define EMBER_DEFAULT(v) = v
#define EMBER_OP(R, name, params, args) R name params const;
#include "tensor/op_list.h"
#undef EMBER_OP
#undef EMBER_DEFAULT
  Tensor t() const;                                              // transpose of a 2-D tensor
  Tensor where(const Tensor& cond, const Tensor& other) const;  // where(cond, *this, other), as in PyTorch
  Tensor& index_add_(int64_t d, const Tensor& ids, const Tensor& src);  // index_add_(*this, ...)

 private:
  /// The impl, or an ember::Error naming op when the tensor is undefined:
  /// every member that reads the tensor goes through it.
  TensorImpl& get(const char* op) const {
    if (!impl_) undefined_error(op);
    return *impl_;
  }
  [[noreturn]] static void undefined_error(const char* op);

  std::shared_ptr<TensorImpl> impl_;
};

/// What owns a tensor under a name of its own: nn::Module for its
/// parameters ("blocks.0.attn.w_q.weight"). Instruments ask it, so that a
/// trace of any model names the model's parameters without being told; the
/// tensor layer only keeps the pointer.
class TensorOwner {
 public:
  /// The owned tensor's full name, or "" if `impl` is not one of its own.
  virtual std::string name_of(const TensorImpl& impl) const = 0;

 protected:
  ~TensorOwner() = default;
};

namespace detail {
/// Told, on this thread, when a program reads a tensor's values into C++
/// numbers (item, to_vector). Its one user is compile/'s tracer: a value read
/// while it captures a function would decide what the function does next,
/// and a graph cannot hold that, so the tracer refuses it. Null when nothing
/// watches.
struct ValueReadWatcher {
  virtual void reading_values(const Tensor& t, const char* how) = 0;

 protected:
  ~ValueReadWatcher() = default;
};
extern thread_local ValueReadWatcher* value_read_watcher;
}  // namespace detail

/// Rows of a gradient along dim 0: rows[k] (shape (D...)) adds at row ids[k].
struct RowGrad {
  Tensor ids;   // int64, (n)
  Tensor rows;  // (n, D...), the tensor's dtype
};

struct TensorImpl {
  std::shared_ptr<Storage> storage;
  int64_t offset = 0;  // in elements
  Shape shape;
  Shape strides;       // in elements
  DType dtype = DType::Float32;

  /// autograd
  bool requires_grad = false;
  Tensor grad;
  std::vector<RowGrad> row_grad;   // rows not yet added into grad (then grad is undefined)
  std::shared_ptr<Node> grad_fn;   // null for leaves
  std::vector<GradHook> hooks;     // leaf hooks (non-leaf hooks live on grad_fn)
  std::string name;
  /// The module that registered this tensor as a parameter first (a tied
  /// weight keeps its first owner); cleared when that module is destroyed.
  const TensorOwner* owner = nullptr;
  // Destroying the last handle of a long graph's output does not recurse
  // node by node: Node::~Node (autograd/node.cpp) releases its inputs'
  // nodes with a loop.
};

/// Adds t's pending rows into a dense t.grad (zeros first if it has none;
/// a new tensor if anything else holds the old one), leaving none pending.
/// The rows go in their order, as index_add_ adds them.
void densify_row_grad(TensorImpl& t);

/// Whether a .grad must not be written in place: it has a graph of its own,
/// another handle holds it or its storage (what someone holds is never
/// changed under them), or several of its elements share one memory location
/// (an expanded tensor). Accumulating into it then makes a new tensor.
bool grad_is_shared(const Tensor& grad);

/// Allocates an uninitialized contiguous tensor (the caller fills it).
/// Validates sizes and overflow before allocating; errors name `op`.
Tensor empty(const Shape& shape, DType dtype = kFloat32, const char* op = "empty");

/// Prints t.to_string() (defined beside it, in the autograd layer).
std::ostream& operator<<(std::ostream& os, const Tensor& t);

/// True when a and b have the same shape, dtype and bytes: equality bit for
/// bit (a NaN equals the same NaN, 0.0 and -0.0 differ).
bool equal_bits(const Tensor& a, const Tensor& b);
/// The values part of to_string: "tensor([...], shape=(...)" (no closing parenthesis).
std::string format_values(const Tensor& t);

// ---- template definitions ----
template <typename T> T* Tensor::data_ptr() const {
  EMBER_CHECK(defined(), "data_ptr", "tensor is undefined");
  EMBER_CHECK(dtype_of<T>::value == dtype(), "data_ptr",
              "requested " << dtype_name(dtype_of<T>::value) << " but the tensor is " << dtype_name(dtype()));
  return static_cast<T*>(raw_data());
}

}  // namespace ember
