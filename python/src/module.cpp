// The extension module ember._ember: ember::Error becomes ember.Error (a
// ValueError), the dtypes, the Tensor class, then one binding file per layer.
#include "bindings.h"

PYBIND11_MODULE(_ember, m) {
  namespace em = ember;
  namespace ep = ember::python;
  m.doc() = "ember's C++ core, as the Python package `ember` uses it (see python/ember/__init__.py)";

  // Every ember::Error (bad input, named op, value and shapes) reaches Python
  // as ember.Error with the same message. It is a ValueError, so code that
  // catches bad values catches it.
  ep::error_type = py::register_exception<em::Error>(m, "Error", PyExc_ValueError).ptr();

  py::enum_<em::DType>(m, "dtype")
      .value("float32", em::DType::Float32)
      .value("float64", em::DType::Float64)
      .value("int64", em::DType::Int64)
      .value("bool", em::DType::Bool)
      .value("bfloat16", em::DType::BFloat16)
      .value("int8", em::DType::Int8)
      .def("__repr__", [](em::DType d) { return std::string("ember.") + em::dtype_name(d); })
      .def_property_readonly("is_floating_point", [](em::DType d) { return em::is_floating(d); })
      .def_property_readonly("itemsize", [](em::DType d) { return em::dtype_size(d); });

  py::class_<em::Tensor> tensor(m, "Tensor", py::buffer_protocol());
  ep::bind_tensor(m, tensor);
  ep::bind_generated_ops(m, tensor);
  ep::bind_autograd(m);
  ep::bind_nn(m);
}
