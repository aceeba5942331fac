#include "autograd/functional.h"

#include <memory>

#include "autograd/engine.h"
#include "autograd/forward.h"
#include "autograd/grad_mode.h"
#include "autograd/ops.h"
#include "tensor/factory.h"

namespace ember {

namespace {
bool differentiable(const Tensor& t) { return t.defined() && is_floating(t.dtype()); }

void check_argnum(int argnum, const std::vector<Tensor>& inputs, const char* op) {
  EMBER_CHECK(argnum >= 0 && static_cast<size_t>(argnum) < inputs.size(), op,
              "argnum " << argnum << " is out of range for " << inputs.size() << " inputs");
  EMBER_CHECK(differentiable(inputs[static_cast<size_t>(argnum)]), op,
              "input " << argnum << " must be float32 or float64, got "
                       << (inputs[static_cast<size_t>(argnum)].defined()
                               ? dtype_name(inputs[static_cast<size_t>(argnum)].dtype())
                               : "an undefined tensor"));
}

Tensor call(const TensorFn& f, const std::vector<Tensor>& inputs, const char* op) {
  Tensor out = f(inputs);
  EMBER_CHECK(out.defined() && is_floating(out.dtype()), op,
              "the function must return a float32 or float64 tensor, got "
                  << (out.defined() ? dtype_name(out.dtype()) : "an undefined tensor"));
  return out;
}

// A tensor of `shape` with a 1 at flat position i.
Tensor one_hot_at(const Shape& shape, int64_t i, DType dt) {
  Tensor e = zeros(shape, dt);
  NoGradGuard plain;
  reshape(e, {-1}).narrow(0, i, 1).fill_(1.0);
  return e;
}

Shape joined(const Shape& a, const Shape& b) {
  Shape s = a;
  s.insert(s.end(), b.begin(), b.end());
  return s;
}
}  // namespace

namespace {
// J v while compile/'s tracer watches (compile, vmap). The tracer writes
// down ops and backward passes, not tangents, which live beside memory
// (autograd/forward.h). But the pullback u -> Jᵀ u is linear in u, and the
// gradient of <Jᵀ u, v> in u is J v: two backward passes, the first with
// create_graph, give the same derivative as ops a graph can hold.
JvpResult jvp_by_pullback(const TensorFn& f, const std::vector<Tensor>& primals, const std::vector<Tensor>& tangents) {
  EnableGradGuard recording;
  std::vector<Tensor> ins, wrt, directions;
  bool outer = false;  // a primal that requires grad itself: the output keeps its graph, as eager's does
  for (size_t i = 0; i < primals.size(); ++i) {
    outer = outer || primals[i].requires_grad();
    if (!tangents[i].defined()) {
      ins.push_back(primals[i]);
      continue;
    }
    // x + z with z = -0 everywhere (the exact identity: x + -0 is x, also for
    // x = -0), differentiated in z: d/dz is d/dx, and z is a tensor of its
    // own, where a new leaf over x's memory is one a graph cannot hold.
    const Tensor z = full(primals[i].shape(), -0.0, primals[i].dtype()).requires_grad_();
    ins.push_back(primals[i] + z);
    wrt.push_back(z);
    directions.push_back(tangents[i]);
  }
  const Tensor out = call(f, ins, "jvp");
  const Tensor value = outer ? out : out.detach();
  const Tensor none = zeros(out.shape(), out.dtype());
  if (wrt.empty() || !out.requires_grad()) return {value, none};
  const Tensor u = zeros(out.shape(), out.dtype()).requires_grad_();
  const std::vector<Tensor> pulled = grad({out}, wrt, {u}, {.create_graph = true, .allow_unused = true});
  std::vector<Tensor> linear, along;
  for (size_t k = 0; k < pulled.size(); ++k) {
    if (!pulled[k].defined() || !pulled[k].requires_grad()) continue;  // this primal does not reach the output
    linear.push_back(pulled[k]);
    along.push_back(directions[k].dtype() == pulled[k].dtype() ? directions[k] : directions[k].to(pulled[k].dtype()));
  }
  if (linear.empty()) return {value, none};
  const Tensor t = grad(linear, {u}, along, {.allow_unused = true})[0];
  return {value, t.defined() ? t : none};
}
}  // namespace

JvpResult jvp(const TensorFn& f, const std::vector<Tensor>& primals, const std::vector<Tensor>& tangents) {
  EMBER_CHECK(tangents.size() == primals.size(), "jvp",
              "got " << tangents.size() << " tangents for " << primals.size() << " primals; give one per primal "
                     << "(an undefined tensor for an input that is not differentiated)");
  for (size_t i = 0; i < primals.size(); ++i) {
    if (!tangents[i].defined()) continue;
    EMBER_CHECK(differentiable(primals[i]), "jvp",
                "primal " << i << " is " << (primals[i].defined() ? dtype_name(primals[i].dtype()) : "undefined")
                          << " and cannot have a tangent");
    EMBER_CHECK(tangents[i].shape() == primals[i].shape(), "jvp",
                "tangent " << i << " has shape " << shape_str(tangents[i].shape()) << " but primal " << i
                           << " has shape " << shape_str(primals[i].shape()));
  }
  EMBER_CHECK(!forward_level_active(), "jvp",
              "a dual level is already open (jvp inside jvp, or jacfwd of jacfwd): forward-over-forward is not "
              "supported; hessian() and hvp() compute second derivatives forward-over-reverse");
  if (detail::capture_composes) return jvp_by_pullback(f, primals, tangents);
  DualLevel level;
  std::vector<Tensor> duals;
  for (size_t i = 0; i < primals.size(); ++i)
    duals.push_back(tangents[i].defined() ? make_dual(primals[i], tangents[i]) : primals[i]);
  Tensor out = call(f, duals, "jvp");
  Tensor t = tangent(out);
  // A tangent outlives the level as a tensor of its own (the level drops
  // only the link from the output's memory to it).
  if (!t.defined()) t = zeros(out.shape(), out.dtype());
  return {out, t};
}

VjpResult vjp(const TensorFn& f, const std::vector<Tensor>& primals) {
  // Each floating primal enters as a tensor the gradient is taken for: a
  // recorded copy when it requires grad itself (so an outer transform can
  // differentiate through this one), else a fresh leaf over its memory.
  auto ins = std::make_shared<std::vector<Tensor>>();
  bool outer = false;
  Tensor out;
  {
    EnableGradGuard recording;
    for (const Tensor& p : primals) {
      if (!differentiable(p)) {
        ins->push_back(p);
      } else if (p.requires_grad()) {
        ins->push_back(p.clone());
        outer = true;
      } else {
        ins->push_back(p.detach().requires_grad_());
      }
    }
    out = call(f, *ins, "vjp");
  }
  VjpResult r;
  r.output = out;
  r.pullback = [ins, out, outer](const Tensor& u) {
    EMBER_CHECK(u.defined() && u.shape() == out.shape(), "vjp",
                "the cotangent has shape " << (u.defined() ? shape_str(u.shape()) : std::string("undefined"))
                                           << " but the output has shape " << shape_str(out.shape()));
    std::vector<Tensor> wrt;
    std::vector<size_t> where;
    for (size_t i = 0; i < ins->size(); ++i)
      if (differentiable((*ins)[i])) {
        wrt.push_back((*ins)[i]);
        where.push_back(i);
      }
    std::vector<Tensor> result(ins->size());
    std::vector<Tensor> gs;
    if (out.requires_grad() && !wrt.empty())
      gs = grad({out}, wrt, {u.to(out.dtype())}, {.retain_graph = true, .create_graph = outer, .allow_unused = true});
    for (size_t k = 0; k < where.size(); ++k) {
      const Tensor& x = (*ins)[where[k]];
      result[where[k]] = k < gs.size() && gs[k].defined() ? gs[k] : zeros(x.shape(), x.dtype());
    }
    return result;
  };
  return r;
}

JacobianFn jacrev(const TensorFn& f, int argnum) {
  return [f, argnum](const std::vector<Tensor>& inputs) {
    check_argnum(argnum, inputs, "jacrev");
    VjpResult r = vjp(f, inputs);
    const Tensor& x = inputs[static_cast<size_t>(argnum)];
    std::vector<Tensor> rows;  // row i: d out_i / d x
    for (int64_t i = 0; i < r.output.numel(); ++i) {
      std::vector<Tensor> pulled = r.pullback(one_hot_at(r.output.shape(), i, r.output.dtype()));
      rows.push_back(reshape(pulled[static_cast<size_t>(argnum)], {-1}));
    }
    if (rows.empty()) return zeros(joined(r.output.shape(), x.shape()), x.dtype());
    return reshape(stack(rows, 0), joined(r.output.shape(), x.shape()));
  };
}

JacobianFn jacfwd(const TensorFn& f, int argnum) {
  return [f, argnum](const std::vector<Tensor>& inputs) {
    check_argnum(argnum, inputs, "jacfwd");
    const Tensor& x = inputs[static_cast<size_t>(argnum)];
    std::vector<Tensor> cols;  // column j: J e_j
    Shape out_shape;
    for (int64_t j = 0; j < x.numel(); ++j) {
      std::vector<Tensor> ts(inputs.size());
      ts[static_cast<size_t>(argnum)] = one_hot_at(x.shape(), j, x.dtype());
      JvpResult r = jvp(f, inputs, ts);
      out_shape = r.output.shape();
      cols.push_back(reshape(r.tangent, {-1}));
    }
    if (cols.empty()) {
      Tensor out = call(f, inputs, "jacfwd");
      return zeros(joined(out.shape(), x.shape()), out.dtype());
    }
    return reshape(stack(cols, 1), joined(out_shape, x.shape()));
  };
}

JacobianFn hessian(const TensorFn& f, int argnum) { return jacfwd(jacrev(f, argnum), argnum); }

Tensor hvp(const TensorFn& f, const std::vector<Tensor>& primals, const Tensor& v, int argnum) {
  check_argnum(argnum, primals, "hvp");
  // The direction is what is differentiated along: unlike a tangent of jvp,
  // where undefined means "this input is not differentiated", it must be there.
  const Tensor& x = primals[static_cast<size_t>(argnum)];
  EMBER_CHECK(v.defined(), "hvp", "the direction v is undefined; give a tensor of input " << argnum << "'s shape "
                                                                                     << shape_str(x.shape()));
  EMBER_CHECK(is_floating(v.dtype()) && v.shape() == x.shape(), "hvp",
              "the direction v is " << dtype_name(v.dtype()) << " of shape " << shape_str(v.shape()) << "; input "
                                    << argnum << " is " << dtype_name(x.dtype()) << " of shape " << shape_str(x.shape()));
  const TensorFn gradient = [f, argnum](const std::vector<Tensor>& xs) {
    VjpResult r = vjp(f, xs);
    EMBER_CHECK(r.output.numel() == 1, "hvp",
                "the function must return one element, got shape " << shape_str(r.output.shape()));
    return r.pullback(ones(r.output.shape(), r.output.dtype()))[static_cast<size_t>(argnum)];
  };
  std::vector<Tensor> ts(primals.size());
  ts[static_cast<size_t>(argnum)] = v;
  return jvp(gradient, primals, ts).tangent;
}

}  // namespace ember
