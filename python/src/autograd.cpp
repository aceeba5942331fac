// Autograd from Python: backward and grad, grad mode, hooks that run Python
// inside the engine, the function transforms, gradcheck, and Functions
// whose forward and backward are Python (ember.autograd.Function).
#include <string>
#include <vector>

#include "bindings.h"

namespace ember::python {
namespace {

/// f(*xs) for a Python callable held from C++: the transforms call it from
/// C++, and the GIL is taken (a no-op in the calling thread, which holds it).
py::object call_python(const PyRef& f, const std::vector<Tensor>& xs) {
  py::gil_scoped_acquire gil;
  py::tuple args(xs.size());
  for (size_t i = 0; i < xs.size(); ++i) args[i] = py::cast(xs[i]);
  return f.object(*args);
}

/// A Python callable of tensors that returns one tensor, as a TensorFn.
TensorFn tensor_fn(py::function f) {
  auto ref = hold(std::move(f));
  return [ref](const std::vector<Tensor>& xs) {
    py::gil_scoped_acquire gil;  // before out: out is released while it is held
    py::object out = call_python(*ref, xs);
    EMBER_CHECK(py::isinstance<Tensor>(out), "transform",
                "the function must return one ember.Tensor, not " << type_name_of(out));
    return out.cast<Tensor>();
  };
}

/// The positional arguments of a call from Python, as tensors.
std::vector<Tensor> arg_tensors(const py::args& args) {
  std::vector<Tensor> xs;
  for (py::handle a : args) xs.push_back(a.cast<Tensor>());
  return xs;
}

std::vector<Tensor> as_tensors(py::handle h) {
  if (py::isinstance<Tensor>(h)) return {h.cast<Tensor>()};
  std::vector<Tensor> out;
  for (py::handle x : h) out.push_back(x.is_none() ? Tensor() : x.cast<Tensor>());
  return out;
}

py::object optional_tensor(const Tensor& t) { return t.defined() ? py::cast(t) : py::none(); }

py::tuple tensors_tuple(const std::vector<Tensor>& ts) {
  py::tuple out(ts.size());
  for (size_t i = 0; i < ts.size(); ++i) out[i] = optional_tensor(ts[i]);
  return out;
}

/// The node of a Function written in Python: its backward is the class's
/// backward(ctx, grad), called with the GIL; what ctx.save_for_backward
/// saved is kept as SavedTensors (checked against in-place writes, freed
/// after the backward, the output without a reference cycle).
struct PythonFunctionBackward : Node {
  PythonFunctionBackward(std::string name, std::shared_ptr<PyRef> backward, std::shared_ptr<PyRef> ctx, size_t inputs)
      : name_(std::move(name)), backward_(std::move(backward)), ctx_(std::move(ctx)), inputs_(inputs) {}
  const char* name() const override { return name_.c_str(); }
  std::vector<SavedRef> saved() override {
    std::vector<SavedRef> out;
    for (SavedTensor& s : saved_) out.push_back({"saved", &s});
    return out;
  }
  std::vector<Tensor> saved_tensors() {
    std::vector<Tensor> out;
    for (SavedTensor& s : saved_) out.push_back(s.get(*this));
    return out;
  }
  std::vector<Tensor> apply(const Tensor& grad_out) override {
    py::gil_scoped_acquire gil;
    py::object ctx = ctx_->object;
    // ctx.saved_tensors reads this node while backward runs, and only then:
    // the link goes again on every way out, an exception's too.
    struct Link {
      py::object ctx;
      ~Link() {
        try {
          ctx.attr("_node") = py::none();
        } catch (...) {  // a destructor must not throw; a plain attribute's set does not fail
        }
      }
    } link{ctx};
    ctx.attr("_node") = py::cast(this, py::return_value_policy::reference);
    py::object result = backward_->object(ctx, grad_out);
    std::vector<py::object> grads;
    if (py::isinstance<py::tuple>(result)) {
      for (py::handle g : result) grads.push_back(py::reinterpret_borrow<py::object>(g));
    } else {
      grads.push_back(result);
    }
    EMBER_CHECK(grads.size() == inputs_, name_,
                "backward returned " << grads.size() << " gradients for " << inputs_ << " inputs of forward");
    std::vector<Tensor> out;
    for (size_t i = 0; i < grads.size(); ++i) {
      if (grads[i].is_none()) {
        out.emplace_back();
        continue;
      }
      EMBER_CHECK(py::isinstance<Tensor>(grads[i]), name_,
                  "backward's gradient " << i << " is a " << type_name_of(grads[i])
                                         << ", not an ember.Tensor or None");
      Tensor g = grads[i].cast<Tensor>();
      // The gradient of input i: of its shape (or one it broadcasts to, which
      // the engine sums back), and of its dtype.
      bool fits = true;
      try {
        fits = broadcast_shapes(input_shapes[i], g.shape(), name_.c_str()) == g.shape();
      } catch (const Error&) {
        fits = false;
      }
      EMBER_CHECK(fits && g.dtype() == input_dtypes_[i], name_,
                  "backward's gradient " << i << " is " << dtype_name(g.dtype()) << " of shape " << shape_str(g.shape())
                                         << ", but input " << i << " of forward is " << dtype_name(input_dtypes_[i])
                                         << " of shape " << shape_str(input_shapes[i]));
      out.push_back(g);
    }
    return out;
  }
  std::string name_;
  std::shared_ptr<PyRef> backward_, ctx_;
  size_t inputs_;
  std::vector<DType> input_dtypes_;
  std::vector<SavedTensor> saved_;
};

}  // namespace

void bind_autograd(py::module_& m) {
  m.def("is_grad_enabled", &is_grad_enabled);
  m.def("_set_grad_enabled", &set_grad_enabled, py::arg("mode"));
  m.def("is_anomaly_enabled", &is_anomaly_enabled);
  m.def("_set_anomaly_enabled", &set_anomaly_enabled, py::arg("mode"));

  auto backward_fn = [](const Tensor& t, std::optional<Tensor> gradient, std::optional<bool> retain_graph,
                        bool create_graph) {
    // The engine may run Python (hooks, Functions): those take the GIL back.
    py::gil_scoped_release release;
    t.backward(gradient ? *gradient : Tensor(), retain_graph.value_or(create_graph), create_graph);
  };
  py::class_<Tensor> cls = py::reinterpret_borrow<py::class_<Tensor>>(m.attr("Tensor"));
  cls.def("backward", backward_fn, py::arg("gradient") = py::none(), py::arg("retain_graph") = py::none(),
          py::arg("create_graph") = false);
  cls.def("register_hook", [](const Tensor& t, py::function f) {
    auto ref = hold(std::move(f));
    t.register_hook([ref](const Tensor& grad) -> std::optional<Tensor> {
      py::gil_scoped_acquire gil;
      py::object out = ref->object(grad);
      if (out.is_none()) return std::nullopt;
      EMBER_CHECK(py::isinstance<Tensor>(out), "hook",
                  "a hook returns None or an ember.Tensor, not " << type_name_of(out));
      return out.cast<Tensor>();
    });
  }, py::arg("hook"), "Calls hook(grad) when the tensor's gradient is computed; a tensor it returns replaces the gradient.");
  cls.def_property_readonly("grad_fn", [](const Tensor& t) -> py::object {
    if (!t.grad_fn()) return py::none();
    return py::str(t.grad_fn()->name());
  });

  m.def("_grad",
        [](py::object outputs, py::object inputs, py::object grad_outputs, bool retain_graph, bool create_graph,
           bool allow_unused) {
          std::vector<Tensor> outs = as_tensors(outputs), ins = as_tensors(inputs), gos;
          if (!grad_outputs.is_none()) gos = as_tensors(grad_outputs);
          std::vector<Tensor> grads;
          {
            py::gil_scoped_release release;
            grads = grad(outs, ins, gos, GradOptions{retain_graph, create_graph, allow_unused});
          }
          return tensors_tuple(grads);
        });

  // ---- the transforms (autograd/functional.h) ----
  m.def("_jvp", [](py::function f, py::object primals, py::object tangents) {
    JvpResult r = jvp(tensor_fn(std::move(f)), as_tensors(primals), as_tensors(tangents));
    return py::make_tuple(r.output, r.tangent);
  });
  m.def("_vjp", [](py::function f, py::object primals) {
    VjpResult r = vjp(tensor_fn(std::move(f)), as_tensors(primals));
    auto pullback = r.pullback;
    py::cpp_function pb([pullback](const Tensor& cotangent) { return tensors_tuple(pullback(cotangent)); });
    return py::make_tuple(r.output, pb);
  });
  for (auto [name, transform] : {std::pair{"_jacrev", &jacrev}, std::pair{"_jacfwd", &jacfwd}, std::pair{"_hessian", &hessian}}) {
    auto t = transform;
    m.def(name, [t](py::function f, int argnum) {
      JacobianFn j = t(tensor_fn(std::move(f)), argnum);
      return py::cpp_function([j](py::args args) { return j(arg_tensors(args)); });
    });
  }
  m.def("_hvp", [](py::function f, py::object primals, const Tensor& v, int argnum) {
    return hvp(tensor_fn(std::move(f)), as_tensors(primals), v, argnum);
  });
  m.def("_vmap", [](py::function f, std::vector<std::optional<int64_t>> in_dims, std::vector<int64_t> out_dims,
                    const std::string& randomness) {
    auto ref = hold(std::move(f));
    BatchFn fn = [ref](const std::vector<Tensor>& xs) {
      py::gil_scoped_acquire gil;
      py::object out = call_python(*ref, xs);
      return as_tensors(out);
    };
    VmapOptions o;
    o.in_dims = std::move(in_dims);
    o.out_dims = std::move(out_dims);
    EMBER_CHECK(randomness == "error" || randomness == "different" || randomness == "same", "vmap",
                "randomness '" << randomness << "' is not one of 'error', 'different', 'same'");
    o.randomness = randomness == "error" ? Randomness::Error : randomness == "same" ? Randomness::Same : Randomness::Different;
    BatchFn batched = vmap(fn, o);
    return py::cpp_function([batched](py::args args) { return batched(arg_tensors(args)); });
  });

  // ---- gradcheck ----
  py::class_<GradcheckResult>(m, "GradcheckResult")
      .def_readonly("ok", &GradcheckResult::ok)
      .def_readonly("max_abs_err", &GradcheckResult::max_abs_err)
      .def_readonly("max_rel_err", &GradcheckResult::max_rel_err)
      .def_readonly("checked", &GradcheckResult::checked)
      .def_readonly("report", &GradcheckResult::report)
      .def("__bool__", [](const GradcheckResult& r) { return r.ok; });
  for (auto [name, check] : {std::pair{"_gradcheck", 0}, std::pair{"_gradgradcheck", 1}, std::pair{"_forward_gradcheck", 2}}) {
    const int which = check;
    m.def(name, [which](py::function f, py::object inputs, double eps, double atol, double rtol) {
      const GradFn fn = tensor_fn(std::move(f));
      const std::vector<Tensor> xs = as_tensors(inputs);
      const GradcheckOptions o{eps, atol, rtol};
      return which == 0 ? gradcheck(fn, xs, o) : which == 1 ? gradgradcheck(fn, xs, o) : forward_gradcheck(fn, xs, o);
    });
  }

  // ---- Functions written in Python ----
  py::class_<PythonFunctionBackward, std::shared_ptr<PythonFunctionBackward>>(m, "_FunctionNode")
      .def("saved_tensors", [](PythonFunctionBackward& n) { return tensors_tuple(n.saved_tensors()); });
  m.def("_record_function",
        [](const Tensor& out, const std::vector<Tensor>& inputs, py::object ctx, py::function backward,
           const std::vector<Tensor>& saved, const std::string& name) {
          Tensor result = out.detach();
          if (!needs_grad(inputs)) return result;
          auto node = std::make_shared<PythonFunctionBackward>(name + "Backward", hold(std::move(backward)), hold(ctx),
                                                               inputs.size());
          for (const Tensor& s : saved) node->saved_.emplace_back(s.is_same(out) ? result : s);
          for (const Tensor& in : inputs) node->input_dtypes_.push_back(in.dtype());
          record(result, node, inputs);
          return result;
        });
}

}  // namespace ember::python
