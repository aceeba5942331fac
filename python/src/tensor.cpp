// The Tensor class from Python: metadata, printing, Python indexing, the
// operators, in-place writes, the factories, and NumPy without copies (the
// buffer protocol one way, from_numpy the other).
#include <cstring>
#include <string>
#include <vector>

#include "bindings.h"

namespace ember::python {

LongCall::LongCall(std::initializer_list<const Tensor*> tensors, const char* op) {
  int64_t n = 0;
  for (const Tensor* t : tensors)
    if (t->defined()) n += t->numel();
  if (std::strcmp(op, "matmul") == 0 && tensors.size() == 2) {
    // a product's work: multiply-adds, (elements of a) x (columns of b)
    const Tensor& a = **tensors.begin();
    const Tensor& b = **(tensors.begin() + 1);
    if (a.defined() && b.defined() && b.dim() > 0) n = a.numel() * b.size(-1) / 4;
  }
  if (n >= kLongCallElements) release_.emplace();
}

PyRef::~PyRef() {
  py::gil_scoped_acquire gil;
  object = py::object();
}

std::shared_ptr<PyRef> hold(py::object o) { return std::make_shared<PyRef>(std::move(o)); }

PyObject* error_type = nullptr;

namespace {

// ---- NumPy: the buffer protocol ----
//
// np.asarray(t), memoryview(t) and every reader of the buffer protocol see
// the tensor's own memory, strides and all (a transposed or sliced tensor
// is a strided view, not a copy). While a view exists the storage stays
// alive: the buffer holds the storage itself, not only the Python object.
struct Exported {
  std::shared_ptr<Storage> storage;
  std::vector<Py_ssize_t> shape, strides;
  std::string format;
};

const char* buffer_format(DType dt) {
  switch (dt) {
    case DType::Float32: return "f";
    case DType::Float64: return "d";
    case DType::Int64: return "q";
    case DType::Bool: return "?";
    case DType::Int8: return "b";
    default: return nullptr;
  }
}

int tensor_getbuffer(PyObject* obj, Py_buffer* view, int flags) {
  std::memset(view, 0, sizeof(Py_buffer));
  Tensor t;
  try {
    t = py::reinterpret_borrow<py::object>(obj).cast<Tensor>();
  } catch (...) {
    PyErr_SetString(PyExc_BufferError, "ember.Tensor: not a tensor");
    return -1;
  }
  if (!t.defined()) {
    PyErr_SetString(PyExc_BufferError, "ember.Tensor: the tensor is undefined");
    return -1;
  }
  const char* format = buffer_format(t.dtype());
  if (format == nullptr) {
    PyErr_SetString(PyExc_BufferError,
                    "ember.Tensor: bfloat16 has no buffer format (NumPy has no bfloat16): convert with .to(ember.float32)");
    return -1;
  }
  if (t.requires_grad()) {
    PyErr_SetString(PyExc_BufferError,
                    "ember.Tensor: the tensor requires grad (a write through NumPy would escape autograd): "
                    "export t.detach()");
    return -1;
  }
  auto* e = new Exported{t.storage(), {}, {}, format};
  const int64_t item = static_cast<int64_t>(dtype_size(t.dtype()));
  for (int64_t d = 0; d < t.dim(); ++d) {
    e->shape.push_back(static_cast<Py_ssize_t>(t.shape()[d]));
    e->strides.push_back(static_cast<Py_ssize_t>(t.stride()[d] * item));
  }
  view->buf = t.raw_data();
  view->obj = obj;
  Py_INCREF(obj);
  view->len = static_cast<Py_ssize_t>(t.numel() * item);
  view->readonly = 0;
  view->itemsize = static_cast<Py_ssize_t>(item);
  view->format = (flags & PyBUF_FORMAT) ? e->format.data() : nullptr;
  view->ndim = static_cast<int>(t.dim());
  view->shape = e->shape.data();
  view->strides = e->strides.data();
  view->internal = e;
  if ((flags & PyBUF_STRIDES) != PyBUF_STRIDES && !t.is_contiguous()) {
    delete e;
    Py_DECREF(obj);
    view->obj = nullptr;
    PyErr_SetString(PyExc_BufferError, "ember.Tensor: the tensor is not contiguous and the reader cannot take strides");
    return -1;
  }
  return 0;
}

void tensor_releasebuffer(PyObject*, Py_buffer* view) { delete static_cast<Exported*>(view->internal); }

// ---- NumPy: from_numpy ----
DType dtype_of_array(const py::array& a) {
  const py::dtype dt = a.dtype();
  const char kind = dt.kind();
  const auto size = dt.itemsize();
  EMBER_CHECK(dt.attr("isnative").cast<bool>(), "from_numpy", "the array's byte order is not this machine's");
  if (kind == 'f' && size == 4) return kFloat32;
  if (kind == 'f' && size == 8) return kFloat64;
  if (kind == 'i' && size == 8) return kInt64;
  if (kind == 'b' && size == 1) return kBool;
  if (kind == 'i' && size == 1) return kInt8;
  EMBER_FAIL("from_numpy", "NumPy dtype " << py_text(dt)
                                          << " has no ember dtype (float32, float64, int64, bool, int8); convert it first");
}

Tensor from_numpy(const py::array& a) {
  const DType dt = dtype_of_array(a);
  const int64_t item = static_cast<int64_t>(dtype_size(dt));
  EMBER_CHECK(a.writeable(), "from_numpy",
              "the array is read-only (ember would write into it): copy it with ember.tensor(a)");
  EMBER_CHECK(reinterpret_cast<uintptr_t>(a.data()) % static_cast<uintptr_t>(item) == 0, "from_numpy",
              "the array's memory is not aligned to its " << item << "-byte elements: copy it with ember.tensor(a)");
  Shape shape, strides;
  int64_t extent = 0;
  bool empty = false;
  for (py::ssize_t d = 0; d < a.ndim(); ++d) {
    const int64_t n = a.shape(d), s = a.strides(d);
    EMBER_CHECK(s >= 0 && s % item == 0, "from_numpy",
                "stride " << s << " bytes of dim " << d << " is negative or not a multiple of the "
                          << item << "-byte element: copy the array first (a.copy())");
    shape.push_back(n);
    strides.push_back(s / item);
    if (n == 0) empty = true;
    extent += (n - 1) * (s / item);
  }
  auto impl = std::make_shared<TensorImpl>();
  const size_t nbytes = empty ? 0 : static_cast<size_t>((extent + 1) * item);
  impl->storage = std::make_shared<Storage>(const_cast<void*>(a.data()), nbytes, hold(a));
  impl->shape = shape;
  impl->strides = strides;
  impl->dtype = dt;
  return Tensor(impl);
}

// ---- indexing with Python syntax ----
Tensor ids_tensor(py::handle h) {
  if (py::isinstance<Tensor>(h)) return h.cast<Tensor>();
  return from_numpy(py::array_t<int64_t, py::array::c_style | py::array::forcecast>(py::reinterpret_borrow<py::object>(h)))
      .clone();
}

/// x[key]: ints select (the dim goes), slices slice (positive steps), None
/// adds a dim of 1, ... stands for the dims not named, and one int64 tensor
/// (or list of ints) picks entries along its dim (a copy; its shape replaces
/// the dim). Everything else is a view.
Tensor index(const Tensor& x, py::handle key, bool* is_view = nullptr) {
  py::tuple items = py::isinstance<py::tuple>(key) ? py::reinterpret_borrow<py::tuple>(key) : py::make_tuple(key);
  int64_t named = 0;
  bool ellipsis = false;
  for (py::handle h : items) {
    if (h.is_none()) continue;
    if (h.ptr() == Py_Ellipsis) {
      EMBER_CHECK(!ellipsis, "index", "an index can have only one ellipsis (...)");
      ellipsis = true;
      continue;
    }
    ++named;
  }
  EMBER_CHECK(named <= x.dim(), "index",
              "too many indices (" << named << ") for a tensor of " << x.dim() << " dims, shape " << shape_str(x.shape()));
  Tensor out = x;
  int64_t d = 0, tensor_indices = 0;
  if (is_view) *is_view = true;
  for (py::handle h : items) {
    if (h.is_none()) {
      out = out.unsqueeze(d++);
    } else if (h.ptr() == Py_Ellipsis) {
      d += x.dim() - named;
    } else if (PySlice_Check(h.ptr())) {
      Py_ssize_t start, stop, step;
      if (PySlice_Unpack(h.ptr(), &start, &stop, &step) < 0) throw py::error_already_set();
      EMBER_CHECK(step > 0, "index", "slice step " << step << " must be positive (ember has no negative strides)");
      const Py_ssize_t n = static_cast<Py_ssize_t>(out.size(d));
      PySlice_AdjustIndices(n, &start, &stop, step);
      if (stop < start) stop = start;
      out = out.slice(d, start, stop, step);
      ++d;
    } else if (PyLong_Check(h.ptr()) && !PyBool_Check(h.ptr())) {
      const long long i = PyLong_AsLongLong(h.ptr());
      if (i == -1 && PyErr_Occurred()) throw py::error_already_set();
      out = out.select(d, i);
    } else if (py::isinstance<Tensor>(h) || py::isinstance<py::list>(h) || py::isinstance<py::array>(h)) {
      EMBER_CHECK(++tensor_indices == 1, "index", "one tensor index per subscript (ember indexes one dim at a time)");
      Tensor ids = ids_tensor(h);
      EMBER_CHECK(ids.dtype() == kInt64, "index",
                  "a tensor index must be int64, not " << dtype_name(ids.dtype())
                                                       << " (for a bool mask use where or masked_fill)");
      if (is_view) *is_view = false;
      Shape shape(out.shape().begin(), out.shape().begin() + d);
      shape.insert(shape.end(), ids.shape().begin(), ids.shape().end());
      shape.insert(shape.end(), out.shape().begin() + d + 1, out.shape().end());
      out = out.index_select(d, ids.reshape({ids.numel()})).reshape(shape);
      d += ids.dim();
    } else if (PyIndex_Check(h.ptr()) && !PyBool_Check(h.ptr())) {  // NumPy's integers
      out = out.select(d, h.cast<int64_t>());
    } else {
      EMBER_FAIL("index", "cannot index with " << type_name_of(h)
                                               << " (ints, slices, None, ..., an int64 tensor or a list of ints)");
    }
  }
  return out;
}

Tensor scalar_like(const Tensor& x, double s) { return scalar_tensor(s, x.dtype()); }

// ---- the operators as the type's number slots ----
//
// `a + b` on two tensors does not need pybind11's general call machinery
// (find the method __add__, try each overload, convert each argument): the
// interpreter calls the type's nb_add slot with the two operands, and the
// slot below unpacks them and calls ember directly. (The __add__ methods
// stay, for x.__add__(y) and for the signatures; this is PyTorch's way too.)
// Either operand may be the tensor: `2 * x` arrives as nb_multiply(2, x).
enum class Operand { Tensor, Number, Other };

Operand operand(PyObject* o, const Tensor*& t, double& d) {
  py::detail::make_caster<Tensor> c;
  if (c.load(o, false)) {
    t = &py::detail::cast_op<Tensor&>(c);  // the object's own handle, alive while o is
    return Operand::Tensor;
  }
  if (PyFloat_Check(o)) {
    d = PyFloat_AS_DOUBLE(o);
    return Operand::Number;
  }
  if (PyLong_Check(o) && !PyBool_Check(o)) {
    d = PyLong_AsDouble(o);
    if (d == -1.0 && PyErr_Occurred()) throw py::error_already_set();
    return Operand::Number;
  }
  // NumPy's scalars (np.float32(2)) and other numbers with __float__; not arrays
  PyNumberMethods* n = Py_TYPE(o)->tp_as_number;
  if (n && n->nb_float && !PyObject_HasAttrString(o, "__len__")) {
    d = PyFloat_AsDouble(o);
    if (d == -1.0 && PyErr_Occurred()) throw py::error_already_set();
    return Operand::Number;
  }
  return Operand::Other;
}

template <typename F> PyObject* guarded(F&& f) {
  try {
    return f();
  } catch (py::error_already_set& e) {
    e.restore();
  } catch (const Error& e) {
    PyErr_SetString(error_type, e.what());
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  }
  return nullptr;
}

using TT = Tensor (*)(const Tensor&, const Tensor&);
using TS = Tensor (*)(const Tensor&, double);
using ST = Tensor (*)(double, const Tensor&);

template <TT tt, TS ts, ST st> PyObject* binary_slot(PyObject* a, PyObject* b) {
  return guarded([&]() -> PyObject* {
    const Tensor *x = nullptr, *y = nullptr;
    double s = 0;
    const Operand oa = operand(a, x, s), ob = operand(b, y, s);
    Tensor out;
    if (oa == Operand::Tensor && ob == Operand::Tensor) {
      LongCall c({x, y}, "operator");
      out = tt(*x, *y);
    } else if (oa == Operand::Tensor && ob == Operand::Number) {
      LongCall c({x}, "operator");
      out = ts(*x, s);
    } else if (oa == Operand::Number && ob == Operand::Tensor) {
      LongCall c({y}, "operator");
      out = st(s, *y);
    } else {
      Py_RETURN_NOTIMPLEMENTED;
    }
    return py::cast(std::move(out)).release().ptr();
  });
}

PyObject* matmul_slot(PyObject* a, PyObject* b) {
  return guarded([&]() -> PyObject* {
    const Tensor *x = nullptr, *y = nullptr;
    double s = 0;
    if (operand(a, x, s) != Operand::Tensor || operand(b, y, s) != Operand::Tensor) Py_RETURN_NOTIMPLEMENTED;
    Tensor out;
    {
      LongCall c({x, y}, "matmul");
      out = x->matmul(*y);
    }
    return py::cast(std::move(out)).release().ptr();
  });
}

PyObject* negative_slot(PyObject* a) {
  return guarded([&]() -> PyObject* { return py::cast(-py::reinterpret_borrow<py::object>(a).cast<Tensor>()).release().ptr(); });
}

#define EMBER_SLOT(name, op)                                                \
  Tensor name##_tt(const Tensor& a, const Tensor& b) { return a op b; }     \
  Tensor name##_ts(const Tensor& a, double b) { return a op b; }            \
  Tensor name##_st(double a, const Tensor& b) { return a op b; }            \
  PyObject* name##_slot(PyObject* a, PyObject* b) { return binary_slot<name##_tt, name##_ts, name##_st>(a, b); }
EMBER_SLOT(add, +)
EMBER_SLOT(sub, -)
EMBER_SLOT(mul, *)
EMBER_SLOT(div, /)
#undef EMBER_SLOT

void set_number_slots(PyTypeObject* type) {
  PyNumberMethods* n = type->tp_as_number;
  n->nb_add = add_slot;
  n->nb_subtract = sub_slot;
  n->nb_multiply = mul_slot;
  n->nb_true_divide = div_slot;
  n->nb_matrix_multiply = matmul_slot;
  n->nb_negative = negative_slot;
}

py::object item(const Tensor& t) {
  switch (t.dtype()) {
    case DType::Int64:
    case DType::Int8: return py::int_(t.item<int64_t>());
    case DType::Bool: return py::bool_(t.item<bool>());
    default: return py::float_(t.item<double>());
  }
}

}  // namespace

void bind_tensor(py::module_& m, py::class_<Tensor>& cls) {
  // The buffer protocol, ember's own getbuffer (see Exported above).
  auto* type = reinterpret_cast<PyTypeObject*>(cls.ptr());
  type->tp_as_buffer->bf_getbuffer = tensor_getbuffer;
  type->tp_as_buffer->bf_releasebuffer = tensor_releasebuffer;
  // NumPy defers to the tensor's operators (np.float32(2) * t is a tensor)
  cls.attr("__array_priority__") = 1000;

  cls.def_property_readonly("shape", [](const Tensor& t) { return py::tuple(py::cast(t.shape())); })
      .def_property_readonly("dtype", &Tensor::dtype)
      .def_property_readonly("ndim", &Tensor::dim)
      .def("dim", &Tensor::dim)
      .def("numel", &Tensor::numel)
      .def("size", [](const Tensor& t) { return py::tuple(py::cast(t.shape())); })
      .def("size", &Tensor::size, py::arg("dim"))
      .def("stride", [](const Tensor& t) { return py::tuple(py::cast(t.stride())); })
      .def("stride", [](const Tensor& t, int64_t d) { return t.stride()[wrap_dim(d, t.dim(), "stride")]; }, py::arg("dim"))
      .def("storage_offset", &Tensor::storage_offset)
      .def("is_contiguous", &Tensor::is_contiguous)
      .def("is_floating_point", &Tensor::is_floating_point)
      .def("data_ptr", [](const Tensor& t) { return reinterpret_cast<uintptr_t>(t.raw_data()); })
      .def("_version", &Tensor::version)
      .def("item", &item)
      .def("__repr__", &Tensor::to_string)
      .def("__len__", [](const Tensor& t) {
        EMBER_CHECK(t.dim() > 0, "len", "a 0-d tensor has no length");
        return t.size(0);
      })
      .def("__hash__", [](const Tensor& t) { return reinterpret_cast<uintptr_t>(t.impl()); })
      .def("is_same", &Tensor::is_same, py::arg("other"))
      .def("__getitem__", [](const Tensor& t, py::handle key) { return index(t, key); })
      .def("__setitem__",
           [](const Tensor& t, py::handle key, py::object value) {
             bool is_view = true;
             Tensor target = index(t, key, &is_view);
             EMBER_CHECK(is_view, "setitem", "cannot assign through a tensor index (it selects a copy)");
             if (py::isinstance<Tensor>(value)) target.copy_(value.cast<Tensor>());
             else target.fill_(value.cast<double>());
           })
      // autograd's fields
      .def_property("requires_grad", &Tensor::requires_grad, [](Tensor& t, bool on) { t.requires_grad_(on); })
      .def("requires_grad_", [](Tensor& t, bool on) { return t.requires_grad_(on); }, py::arg("requires_grad") = true)
      .def_property("grad", [](const Tensor& t) -> std::optional<Tensor> {
                      Tensor g = t.grad();
                      if (!g.defined()) return std::nullopt;
                      return g;
                    },
                    [](const Tensor& t, std::optional<Tensor> g) { t.set_grad(g ? *g : Tensor()); })
      .def_property_readonly("is_leaf", &Tensor::is_leaf)
      .def_property("name", &Tensor::name, [](Tensor& t, const std::string& n) { t.set_name(n); })
      .def("detach", &Tensor::detach)
      .def("retain_grad", &Tensor::retain_grad)
      .def_property_readonly("T", [](const Tensor& t) {
        Shape dims;
        for (int64_t d = t.dim() - 1; d >= 0; --d) dims.push_back(d);
        return t.permute(dims);
      })
      .def("t", &Tensor::t)
      .def("where", &Tensor::where, py::arg("condition"), py::arg("other"))
      // in-place writes
      .def("fill_", &Tensor::fill_, py::arg("value"))
      .def("zero_", &Tensor::zero_)
      .def("copy_", &Tensor::copy_, py::arg("src"))
      .def("add_", py::overload_cast<const Tensor&, double>(&Tensor::add_), py::arg("other"), py::arg("alpha") = 1.0)
      .def("add_", py::overload_cast<double>(&Tensor::add_), py::arg("other"))
      .def("mul_", py::overload_cast<const Tensor&>(&Tensor::mul_), py::arg("other"))
      .def("mul_", py::overload_cast<double>(&Tensor::mul_), py::arg("other"))
      .def("index_add_", &Tensor::index_add_, py::arg("dim"), py::arg("index"), py::arg("source"))
      .def("__iadd__", [](Tensor& t, const Tensor& o) { return t.add_(o); })
      .def("__iadd__", [](Tensor& t, double s) { return t.add_(s); })
      .def("__isub__", [](Tensor& t, const Tensor& o) { return t.add_(o, -1.0); })
      .def("__isub__", [](Tensor& t, double s) { return t.add_(-s); })
      .def("__imul__", [](Tensor& t, const Tensor& o) { return t.mul_(o); })
      .def("__imul__", [](Tensor& t, double s) { return t.mul_(s); });

  // operators: a tensor and a tensor, a tensor and a number, a number and a tensor
#define EMBER_BINARY(py_name, py_rname, expr_tt, expr_ts, expr_st)                                             \
  cls.def(py_name, [](const Tensor& a, const Tensor& b) { LongCall c({&a, &b}, py_name); return expr_tt; });   \
  cls.def(py_name, [](const Tensor& a, double b) { LongCall c({&a}, py_name); return expr_ts; });              \
  cls.def(py_rname, [](const Tensor& a, double b) { LongCall c({&a}, py_name); return expr_st; });
  EMBER_BINARY("__add__", "__radd__", a + b, a + b, b + a)
  EMBER_BINARY("__sub__", "__rsub__", a - b, a - b, b - a)
  EMBER_BINARY("__mul__", "__rmul__", a * b, a * b, b * a)
  EMBER_BINARY("__truediv__", "__rtruediv__", a / b, a / b, b / a)
  EMBER_BINARY("__pow__", "__rpow__", a.pow(b), a.pow(b), scalar_like(a, b).pow(a))
#undef EMBER_BINARY
  cls.def("__neg__", [](const Tensor& a) { return -a; });
  cls.def("__matmul__", [](const Tensor& a, const Tensor& b) {
    LongCall c({&a, &b}, "matmul");
    return a.matmul(b);
  });
#define EMBER_COMPARE(py_name, op)                                                       \
  cls.def(py_name, [](const Tensor& a, const Tensor& b) { return a.op(b); });           \
  cls.def(py_name, [](const Tensor& a, double b) { return a.op(b); });
  EMBER_COMPARE("__eq__", eq)
  EMBER_COMPARE("__ne__", ne)
  EMBER_COMPARE("__lt__", lt)
  EMBER_COMPARE("__le__", le)
  EMBER_COMPARE("__gt__", gt)
  EMBER_COMPARE("__ge__", ge)
#undef EMBER_COMPARE
  // Scalars for the binary ops' function and method forms too: x.add(2), ember.maximum(x, 0).
  for (const char* name : {"add", "sub", "mul", "div", "maximum", "minimum"}) {
    const std::string op = name;
    auto f = [op](const Tensor& x, double s) {
      const Tensor other = scalar_like(x, s);
      if (op == "add") return x.add(other);
      if (op == "sub") return x.sub(other);
      if (op == "mul") return x.mul(other);
      if (op == "div") return x.div(other);
      if (op == "maximum") return x.maximum(other);
      return x.minimum(other);
    };
    m.def(name, f, py::arg("input"), py::arg("other"));
    cls.def(name, f, py::arg("other"));
  }

  set_number_slots(type);

  // ---- NumPy ----
  m.def("from_numpy", &from_numpy, py::arg("array"),
        "A tensor over the array's memory (no copy): float32, float64, int64 or bool, any non-negative strides. "
        "The tensor keeps the array alive; writes through either are seen by both.");

  // ---- factories ----
  m.def("zeros", [](const ShapeArg& s, DType dt) { return zeros(s.dims, dt); }, py::arg("size"), py::arg("dtype") = kFloat32);
  m.def("ones", [](const ShapeArg& s, DType dt) { return ones(s.dims, dt); }, py::arg("size"), py::arg("dtype") = kFloat32);
  m.def("full", [](const ShapeArg& s, double v, DType dt) { return full(s.dims, v, dt); }, py::arg("size"),
        py::arg("fill_value"), py::arg("dtype") = kFloat32);
  m.def("zeros_like", &zeros_like, py::arg("input"));
  m.def("ones_like", &ones_like, py::arg("input"));
  m.def("full_like", &full_like, py::arg("input"), py::arg("fill_value"));
  m.def("_arange", [](double start, double end, double step, DType dt) { return arange(start, end, step, dt); });
  m.def("eye", &eye, py::arg("n"), py::arg("m") = -1, py::arg("dtype") = kFloat32);
  m.def("scalar_tensor", &scalar_tensor, py::arg("value"), py::arg("dtype") = kFloat32);
  m.def("empty", [](const ShapeArg& s, DType dt) { return zeros(s.dims, dt); }, py::arg("size"), py::arg("dtype") = kFloat32,
        "Zeros (ember never hands out uninitialized memory to Python).");

  py::class_<Generator>(m, "Generator")
      .def(py::init<uint64_t, uint64_t>(), py::arg("seed") = 0, py::arg("stream") = 0)
      .def("manual_seed", [](Generator& g, uint64_t seed) -> Generator& { g.manual_seed(seed); return g; },
           py::arg("seed"), py::return_value_policy::reference_internal)
      .def("get_state", [](const Generator& g) { return py::make_tuple(g.get_state().state, g.get_state().inc); })
      .def("set_state", [](Generator& g, py::tuple s) { g.set_state({s[0].cast<uint64_t>(), s[1].cast<uint64_t>()}); });
  m.def("default_generator", &default_generator, py::return_value_policy::reference);
  m.def("manual_seed", [](uint64_t seed) { manual_seed(seed); }, py::arg("seed"));
  auto gen_or_default = [](Generator* g) -> Generator& { return g ? *g : default_generator(); };
  m.def("rand", [gen_or_default](const ShapeArg& s, DType dt, Generator* g) { return rand(s.dims, gen_or_default(g), dt); },
        py::arg("size"), py::arg("dtype") = kFloat32, py::arg("generator") = nullptr);
  m.def("randn", [gen_or_default](const ShapeArg& s, DType dt, Generator* g) { return randn(s.dims, gen_or_default(g), dt); },
        py::arg("size"), py::arg("dtype") = kFloat32, py::arg("generator") = nullptr);
  m.def("randint",
        [gen_or_default](int64_t lo, int64_t hi, const ShapeArg& s, Generator* g) { return randint(lo, hi, s.dims, gen_or_default(g)); },
        py::arg("low"), py::arg("high"), py::arg("size"), py::arg("generator") = nullptr);
  m.def("uniform_", [gen_or_default](const Tensor& t, double lo, double hi, Generator* g) { uniform_(t, lo, hi, gen_or_default(g)); return t; },
        py::arg("tensor"), py::arg("a") = 0.0, py::arg("b") = 1.0, py::arg("generator") = nullptr);
  m.def("normal_", [gen_or_default](const Tensor& t, double mean, double std, Generator* g) { normal_(t, mean, std, gen_or_default(g)); return t; },
        py::arg("tensor"), py::arg("mean") = 0.0, py::arg("std") = 1.0, py::arg("generator") = nullptr);

  // ---- ops over several tensors, the layers' building blocks ----
  m.def("cat", [](const std::vector<Tensor>& xs, int64_t d) { return cat(xs, d); }, py::arg("tensors"), py::arg("dim") = 0);
  m.def("stack", [](const std::vector<Tensor>& xs, int64_t d) { return stack(xs, d); }, py::arg("tensors"), py::arg("dim") = 0);
  m.def("where", py::overload_cast<const Tensor&, const Tensor&, const Tensor&>(&where), py::arg("condition"),
        py::arg("input"), py::arg("other"));
  m.def("one_hot", &one_hot, py::arg("input"), py::arg("num_classes") = -1);
  m.def("equal_bits", &equal_bits, py::arg("a"), py::arg("b"));

  // threads
  m.def("set_num_threads", [](int n) { set_num_threads(n); }, py::arg("n"));
  m.def("get_num_threads", []() { return get_num_threads(); });
}

}  // namespace ember::python
