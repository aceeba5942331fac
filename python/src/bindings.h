// The Python face of ember: what the binding files share.
//
// The package `ember` (python/ember/) is a little Python over the extension
// module `ember._ember`, built from these files with pybind11. Each file
// binds one layer: tensor.cpp the Tensor class, the factories and NumPy;
// generated_ops.cpp (written by python/tools/gen_ops.py from
// tensor/op_list.h) every op as a function and a method; autograd.cpp the
// engine, grad mode, hooks, transforms, gradcheck and Functions written in
// Python; nn.cpp the modules, optimizers, training and instruments.
#pragma once

#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "ember.h"

namespace py = pybind11;

namespace ember::python {

/// A shape or a list of dims from Python: an int or a sequence of ints
/// (`x.sum(1)`, `x.sum((0, 1))`, `x.reshape([2, 3])`).
struct ShapeArg {
  Shape dims;
};

/// Releases the GIL for a call that may run long, so that other Python
/// threads run while ember computes: when its tensors hold at least
/// kLongCallElements elements together (a matrix product: when it does at
/// least 4 x kLongCallElements multiply-adds). A small op keeps the GIL:
/// releasing and taking it back costs about as much as the op. The kernels
/// never call Python.
class LongCall {
 public:
  static constexpr int64_t kLongCallElements = 1 << 14;
  LongCall(std::initializer_list<const Tensor*> tensors, const char* op);
  LongCall(const LongCall&) = delete;
  LongCall& operator=(const LongCall&) = delete;

 private:
  std::optional<py::gil_scoped_release> release_;
};

/// A Python object held from C++ code that may run without the GIL (a hook
/// or a Function's backward kept by a graph): destroyed with the GIL held.
struct PyRef {
  explicit PyRef(py::object o) : object(std::move(o)) {}
  ~PyRef();
  py::object object;
};
std::shared_ptr<PyRef> hold(py::object o);

/// The Python type of ember.Error (set once, when the module is made).
extern PyObject* error_type;

/// str(h) as a C++ string (for messages).
inline std::string py_text(py::handle h) { return py::str(h).cast<std::string>(); }
/// The name of h's type, "float", "list", ...
inline std::string type_name_of(py::handle h) { return py::type::of(h).attr("__name__").cast<std::string>(); }

inline py::tuple to_python_pair(const TensorPair& p) { return py::make_tuple(p.first, p.second); }

void bind_tensor(py::module_& m, py::class_<Tensor>& cls);
void bind_generated_ops(py::module_& m, py::class_<Tensor>& cls);
void bind_autograd(py::module_& m);
void bind_nn(py::module_& m);

}  // namespace ember::python

namespace pybind11::detail {
template <> struct type_caster<ember::python::ShapeArg> {
  PYBIND11_TYPE_CASTER(ember::python::ShapeArg, const_name("Union[int, Sequence[int]]"));
  bool load(handle src, bool convert) {
    if (PyLong_Check(src.ptr())) {
      value.dims = {src.cast<int64_t>()};
      return true;
    }
    make_caster<std::vector<int64_t>> seq;
    if (!seq.load(src, convert)) return false;
    value.dims = cast_op<std::vector<int64_t>&&>(std::move(seq));
    return true;
  }
  static handle cast(const ember::python::ShapeArg& s, return_value_policy, handle) {
    return py::tuple(py::cast(s.dims)).release();
  }
};
}  // namespace pybind11::detail
