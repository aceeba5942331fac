#include "train/optim.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "autograd/grad_mode.h"
#include "autograd/op_scope.h"
#include "autograd/ops.h"
#include "base/hooks.h"
#include "base/parse.h"
#include "tensor/elementwise.h"
#include "tensor/factory.h"
#include "tensor/kernels.h"
#include "tensor/parallel.h"

namespace ember::optim {

Optimizer::Optimizer(std::vector<ParamGroup> groups) : groups_(std::move(groups)) {
  for (size_t g = 0; g < groups_.size(); ++g) {
    EMBER_CHECK(groups_[g].lr >= 0, "optimizer", "group " << g << " has a negative learning rate " << groups_[g].lr);
    for (size_t i = 0; i < groups_[g].params.size(); ++i) {
      const Tensor& p = groups_[g].params[i];
      EMBER_CHECK(p.defined() && p.is_leaf() && p.is_contiguous(), "optimizer",
                  "parameter " << i << " of group " << g << " must be a contiguous leaf tensor");
    }
  }
}

void Optimizer::zero_grad(bool set_to_none) {
  for (auto& group : groups_)
    for (Tensor& p : group.params) {
      if (set_to_none || !p.grad().defined()) p.set_grad(Tensor());
      else kernel::fill_(p.grad(), 0.0);
    }
}

void Optimizer::set_lr(double lr) {
  for (auto& g : groups_) g.lr = lr;
}

Tensor& Optimizer::slot(size_t g, size_t i, const std::string& name) {
  std::string key = std::to_string(g) + "." + std::to_string(i) + "." + name;
  auto it = state_.find(key);
  if (it == state_.end()) {
    // "step" counts this parameter's updates (a 0-d int64); other slots
    // have the parameter's shape.
    Tensor init = name == "step" ? zeros({}, kInt64) : zeros_like(groups_[g].params[i]);
    if (AutogradObserver* o = autograd_observer()) o->tag_memory(init, MemoryKind::OptimizerState);
    it = state_.emplace(key, init).first;
  }
  return it->second;
}

std::vector<std::pair<std::string, Tensor>> Optimizer::state() const {
  return {state_.begin(), state_.end()};
}

void Optimizer::load_state(const std::vector<std::pair<std::string, Tensor>>& state, int64_t steps,
                           bool require_every_parameter) {
  EMBER_CHECK(steps >= 0, "optimizer load_state", "the step count must be >= 0, got " << steps);
  const std::vector<std::string> slots = slot_names();
  std::map<std::string, Tensor> staged;
  for (const auto& [key, t] : state) {
    // "<group>.<index>.<slot>"; the two numbers are plain digits
    size_t a = key.find('.'), b = a == std::string::npos ? a : key.find('.', a + 1);
    auto digits = [](const std::string& n) {
      return !n.empty() && n.size() < 10 && n.find_first_not_of("0123456789") == std::string::npos;
    };
    EMBER_CHECK(b != std::string::npos && digits(key.substr(0, a)) && digits(key.substr(a + 1, b - a - 1)),
                "optimizer load_state", "malformed state name \"" << key << "\"");
    const size_t g = parse_uint64(key.substr(0, a), "optimizer load_state", "a group number"),
                 i = parse_uint64(key.substr(a + 1, b - a - 1), "optimizer load_state", "a parameter index");
    EMBER_CHECK(g < groups_.size() && i < groups_[g].params.size(), "optimizer load_state",
                "state \"" << key << "\" names a parameter this optimizer does not have");
    const Tensor& p = groups_[g].params[i];
    const std::string slot_name = key.substr(b + 1);
    EMBER_CHECK(std::find(slots.begin(), slots.end(), slot_name) != slots.end(), "optimizer load_state",
                "state \"" << key << "\": " << type_name() << " has no slot \"" << slot_name << "\"");
    EMBER_CHECK(!staged.count(key), "optimizer load_state", "state \"" << key << "\" appears twice");
    const bool is_step = slot_name == "step";
    const Shape want_shape = is_step ? Shape{} : p.shape();
    const DType want_dtype = is_step ? kInt64 : p.dtype();
    EMBER_CHECK(t.shape() == want_shape && t.dtype() == want_dtype, "optimizer load_state",
                "state \"" << key << "\" has shape " << shape_str(t.shape()) << " " << dtype_name(t.dtype())
                           << " but needs " << shape_str(want_shape) << " " << dtype_name(want_dtype));
    if (is_step) {
      const int64_t n = t.item<int64_t>();
      EMBER_CHECK(n >= 0 && n <= steps, "optimizer load_state",
                  "state \"" << key << "\" counts " << n << " updates, but the optimizer took " << steps);
    }
    staged[key] = kernel::to(t, t.dtype());  // an independent copy
  }
  // Complete: every parameter has all its slots, or none (one never updated).
  for (size_t g = 0; g < groups_.size(); ++g)
    for (size_t i = 0; i < groups_[g].params.size(); ++i) {
      const std::string prefix = std::to_string(g) + "." + std::to_string(i) + ".";
      std::string missing;
      size_t present = 0;
      for (const std::string& s : slots) {
        if (staged.count(prefix + s)) ++present;
        else missing += (missing.empty() ? "" : ", ") + s;
      }
      const bool must_have_all = present > 0 || (require_every_parameter && steps > 0);
      EMBER_CHECK(!must_have_all || missing.empty(), "optimizer load_state",
                  "parameter " << g << "." << i << " of shape " << shape_str(groups_[g].params[i].shape())
                               << " lacks its " << missing << " state (" << type_name() << " needs "
                               << slots.size() << " slots per parameter); the state is incomplete");
    }
  state_ = std::move(staged);
  steps_ = steps;
}

// ---- SGD ----
std::vector<std::string> SGD::slot_names() const {
  return momentum > 0 ? std::vector<std::string>{"momentum"} : std::vector<std::string>{};
}

SGD::SGD(std::vector<ParamGroup> groups, double m, bool n) : Optimizer(std::move(groups)), momentum(m), nesterov(n) {
  EMBER_CHECK(momentum >= 0, "SGD", "momentum must be >= 0, got " << momentum);
  EMBER_CHECK(!nesterov || momentum > 0, "SGD", "Nesterov momentum needs momentum > 0");
}
SGD::SGD(std::vector<Tensor> params, double lr, double m, bool n, double wd)
    : SGD(std::vector<ParamGroup>{{std::move(params), lr, wd}}, m, n) {}

namespace {
// SGD::step's update, w -= lr (g + wd w), on the rows of a row gradient
// (weight decay 0 here, written as in the dense loop so that the bits are
// the same).
void sgd_rows(Tensor& p, const ParamGroup& group) {
  const RowGrad rows = kernel::coalesce_rows(p.row_grad(), p.size(0));
  const Tensor grad = rows.rows.contiguous();
  const int64_t D = p.numel() / p.size(0);
  const int64_t* id = rows.ids.data_ptr<int64_t>();
  EMBER_DISPATCH_FLOAT(p.dtype(), "SGD", [&]<typename T>() {
    T* w = p.data_ptr<T>();
    const T* dg = grad.data_ptr<T>();
    const T lr = static_cast<T>(group.lr), wd = static_cast<T>(group.weight_decay);
    detail::parallel_for(rows.ids.numel(), std::max<int64_t>(1, detail::kGrain / std::max<int64_t>(D, 1)),
                         [&](int64_t r0, int64_t r1) {
                           for (int64_t r = r0; r < r1; ++r) {
                             T* wr = w + id[r] * D;
                             const T* gr = dg + r * D;
                             for (int64_t k = 0; k < D; ++k) {
                               T d = gr[k] + wd * wr[k];
                               wr[k] -= lr * d;
                             }
                           }
                         });
  });
}
}  // namespace

void SGD::step() {
  OpScope scope("SGD.step");  // one row of inspect/'s profiler
  NoGradGuard no_grad;
  ++steps_;
  auto by_rows = [&](const Tensor& p, const ParamGroup& group) {
    return !p.row_grad().empty() && momentum == 0 && group.weight_decay == 0;
  };
  for (ParamGroup& group : groups_)
    for (Tensor& p : group.params)
      if (by_rows(p, group)) {
        sgd_rows(p, group);
        p.storage()->bump_version();
      }
  for_each_param_with_grad([&](size_t g, size_t i, Tensor& p, const Tensor& grad, const ParamGroup& group) {
    const bool first = momentum > 0 && !state_.count(std::to_string(g) + "." + std::to_string(i) + ".momentum");
    Tensor buf = momentum > 0 ? slot(g, i, "momentum") : Tensor();
    EMBER_DISPATCH_FLOAT(p.dtype(), "SGD", [&]<typename T>() {
      T* w = p.data_ptr<T>();
      const T* dg = grad.data_ptr<T>();
      T* b = buf.defined() ? buf.data_ptr<T>() : nullptr;
      const T lr = static_cast<T>(group.lr), wd = static_cast<T>(group.weight_decay), mu = static_cast<T>(momentum);
      const bool nest = nesterov;
      // Every element's update is its own: the bits depend on neither the
      // split into threads nor the SIMD width (at_width, as AdamW's).
      detail::parallel_for(p.numel(), detail::kGrain, [&](int64_t k0, int64_t k1) {
        detail::at_width([&]() EMBER_INLINE {
          for (int64_t k = k0; k < k1; ++k) {
            T d = dg[k] + wd * w[k];
            if (b) {
              b[k] = first ? d : mu * b[k] + d;
              d = nest ? d + mu * b[k] : b[k];
            }
            w[k] -= lr * d;
          }
        });
      });
    });
  }, by_rows);
}

// ---- Adam / AdamW ----
Adam::Adam(std::vector<ParamGroup> groups, double b1, double b2, double e)
    : Optimizer(std::move(groups)), beta1(b1), beta2(b2), eps(e) {
  EMBER_CHECK(b1 >= 0 && b1 < 1 && b2 >= 0 && b2 < 1, "Adam", "betas must be in [0, 1), got (" << b1 << ", " << b2 << ")");
  EMBER_CHECK(e >= 0, "Adam", "eps must be >= 0, got " << e);
}
Adam::Adam(std::vector<Tensor> params, double lr, double b1, double b2, double e, double wd)
    : Adam(std::vector<ParamGroup>{{std::move(params), lr, wd}}, b1, b2, e) {}

void Adam::step() {
  OpScope scope(decoupled_ ? "AdamW.step" : "Adam.step");  // one row of inspect/'s profiler
  NoGradGuard no_grad;
  ++steps_;
  for_each_param_with_grad([&](size_t g, size_t i, Tensor& p, const Tensor& grad, const ParamGroup& group) {
    Tensor& m = slot(g, i, "exp_avg");
    Tensor& v = slot(g, i, "exp_avg_sq");
    // Bias correction counts this parameter's own updates (like PyTorch):
    // a parameter that had no gradient on earlier steps starts at t = 1.
    int64_t& t = slot(g, i, "step").data_ptr<int64_t>()[0];
    ++t;
    const double bc1 = 1 - std::pow(beta1, static_cast<double>(t));
    const double bc2 = 1 - std::pow(beta2, static_cast<double>(t));
    const double lr = group.lr, wd = group.weight_decay;
    EMBER_DISPATCH_FLOAT(p.dtype(), type_name().c_str(), [&]<typename T>() {
      T* w = p.data_ptr<T>();
      const T* dg = grad.data_ptr<T>();
      T *pm = m.data_ptr<T>(), *pv = v.data_ptr<T>();
      const T b1 = static_cast<T>(beta1), b2 = static_cast<T>(beta2);
      const T step_size = static_cast<T>(lr / bc1), sqrt_bc2 = static_cast<T>(std::sqrt(bc2));
      const T decay = static_cast<T>(1 - lr * wd), wd_t = static_cast<T>(wd), eps_t = static_cast<T>(eps);
      const bool decoupled = decoupled_;
      // One pass, on ember's threads, at the CPU's SIMD width: each
      // element's update is its own, so the bits depend on neither the
      // split nor the width.
      detail::parallel_for(p.numel(), detail::kGrain, [&](int64_t k0, int64_t k1) {
        detail::at_width([&]() EMBER_INLINE {
          for (int64_t k = k0; k < k1; ++k) {
            T d = dg[k];
            if (decoupled) w[k] *= decay;
            else d += wd_t * w[k];
            pm[k] = b1 * pm[k] + (1 - b1) * d;
            pv[k] = b2 * pv[k] + (1 - b2) * d * d;
            w[k] -= step_size * pm[k] / (std::sqrt(pv[k]) / sqrt_bc2 + eps_t);
          }
        });
      });
    });
    // ~13 operations per element; parameter, gradient and both moments read, parameter and moments written
    const double n = static_cast<double>(p.numel()), item = sizeof(float) * (p.dtype() == kFloat64 ? 2.0 : 1.0);
    note_work(13 * n, 4 * n * item, 3 * n * item);
  });
}

AdamWScalars adamw_scalars(double lr, double wd, int64_t t, double beta1, double beta2, DType dtype) {
  EMBER_CHECK(t >= 1, "adamw_scalars", "the step t counts from 1, got " << t);
  EMBER_CHECK(is_floating(dtype), "adamw_scalars", "needs float32 or float64, got " << dtype_name(dtype));
  const double bc1 = 1 - std::pow(beta1, static_cast<double>(t)), bc2 = 1 - std::pow(beta2, static_cast<double>(t));
  auto number = [&](double v) { return full({}, v, dtype); };  // rounded to dtype as step()'s T(...)
  return {number(1 - lr * wd), number(lr / bc1), number(std::sqrt(bc2))};
}

AdamWUpdate adamw_update(const Tensor& p, const Tensor& g, const Tensor& m, const Tensor& v, const AdamWScalars& s,
                         double beta1, double beta2, double eps) {
  // step()'s loop, one op per operation in its order. Its (1 - b1) is
  // computed in the parameter's dtype: so is this one.
  const bool f32 = p.dtype() == kFloat32;
  const double one_minus_b1 = f32 ? static_cast<double>(1.0f - static_cast<float>(beta1)) : 1 - beta1;
  const double one_minus_b2 = f32 ? static_cast<double>(1.0f - static_cast<float>(beta2)) : 1 - beta2;
  Tensor decayed = p * s.decay;
  Tensor m1 = beta1 * m + one_minus_b1 * g;
  Tensor v1 = beta2 * v + one_minus_b2 * g * g;
  Tensor p1 = decayed - s.step_size * m1 / (sqrt(v1) / s.sqrt_bc2 + eps);
  return {p1, m1, v1};
}

AdamW::AdamW(std::vector<ParamGroup> groups, double b1, double b2, double e) : Adam(std::move(groups), b1, b2, e) {
  decoupled_ = true;
}
AdamW::AdamW(std::vector<Tensor> params, double lr, double b1, double b2, double e, double wd)
    : AdamW(std::vector<ParamGroup>{{std::move(params), lr, wd}}, b1, b2, e) {}

// ---- gradient clipping ----
void add_squares_by_block(const Tensor& g, int64_t first, std::vector<double>& blocks) {
  EMBER_CHECK(g.is_contiguous() && first >= 0 && (g.numel() == 0 || (first + g.numel() - 1) / kNormBlock < static_cast<int64_t>(blocks.size())),
              "add_squares_by_block", "a contiguous gradient of " << g.numel() << " elements from element " << first
                                                                  << " needs more than the " << blocks.size() << " blocks given");
  EMBER_DISPATCH_FLOAT(g.dtype(), "add_squares_by_block", [&]<typename T>() {
    const T* d = g.data_ptr<T>();
    for (int64_t k = 0, n = g.numel(); k < n; ++k) {
      const double a = static_cast<double>(d[k]);
      blocks[static_cast<size_t>((first + k) / kNormBlock)] += a * a;
    }
  });
  const double n = static_cast<double>(g.numel());
  note_work(2 * n, n * static_cast<double>(dtype_size(g.dtype())), 0);  // a square and an add per element
}

double norm_of_blocks(const std::vector<double>& blocks) {
  double sq = 0;
  for (double b : blocks) sq += b;
  return std::sqrt(sq);
}

void scale_to_norm_(const std::vector<Tensor>& grads, double norm, double max_norm) {
  const double coef = max_norm / (norm + 1e-6);
  if (coef >= 1) return;
  for (const Tensor& g : grads)
    if (g.defined()) kernel::copy_(g, kernel::binary_scalar(kernel::Binary::Mul, g, coef), "clip_grad_norm_");
}

double clip_grad_norm_(const std::vector<Tensor>& params, double max_norm) {
  EMBER_CHECK(max_norm > 0, "clip_grad_norm_", "max_norm must be > 0, got " << max_norm);
  OpScope scope("clip_grad_norm_");
  NoGradGuard no_grad;
  int64_t total = 0;
  for (const Tensor& p : params) total += p.numel();
  std::vector<double> blocks(static_cast<size_t>((total + kNormBlock - 1) / kNormBlock), 0.0);
  std::vector<Tensor> grads;
  int64_t first = 0;
  for (const Tensor& p : params) {
    if (p.grad().defined()) {
      add_squares_by_block(p.grad().contiguous(), first, blocks);
      grads.push_back(p.grad());
    }
    first += p.numel();
  }
  const double norm = norm_of_blocks(blocks);
  scale_to_norm_(grads, norm, max_norm);
  return norm;
}

// ---- schedules ----
WarmupCosineLR::WarmupCosineLR(double max_lr, double min_lr, int64_t warmup, int64_t total)
    : max_lr_(max_lr), min_lr_(min_lr), warmup_(warmup), total_(total) {
  EMBER_CHECK(warmup >= 0 && total >= warmup, "WarmupCosineLR",
              "need 0 <= warmup_steps (" << warmup << ") <= total_steps (" << total << ")");
}
double WarmupCosineLR::lr(int64_t step) const {
  if (step < warmup_) return max_lr_ * static_cast<double>(step + 1) / static_cast<double>(warmup_);
  if (step >= total_) return min_lr_;
  double progress = static_cast<double>(step - warmup_) / static_cast<double>(std::max<int64_t>(total_ - warmup_, 1));
  return min_lr_ + 0.5 * (max_lr_ - min_lr_) * (1 + std::cos(std::numbers::pi * progress));
}

}  // namespace ember::optim
