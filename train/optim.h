/// @file
/// Optimizers: what turns gradients into updated parameters.
///
/// Each optimizer holds parameter groups (a group = parameters that share a
/// learning rate and weight decay, e.g. "decayed" matrices vs "not decayed"
/// embeddings, LayerNorm and biases) and per-parameter state (momentum, Adam's
/// moments). step() updates in place under NoGradGuard, reading .grad();
/// parameters whose grad is undefined are skipped, as in PyTorch.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "tensor/tensor.h"

namespace ember::optim {

struct ParamGroup {
  std::vector<Tensor> params;
  double lr = 1e-3;
  double weight_decay = 0.0;
};

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  virtual void step() = 0;
  virtual std::string type_name() const = 0;
  void zero_grad(bool set_to_none = true);
  std::vector<ParamGroup>& groups() { return groups_; }
  void set_lr(double lr);  // every group
  int64_t steps() const { return steps_; }
  /// Counts one step taken on this optimizer's behalf by another that holds
  /// a shard of its parameters (distributed::Zero): steps() stays the run's.
  void count_step() { ++steps_; }

  /// Named state tensors ("<group>.<index>.<slot>", e.g. "0.3.exp_avg") plus
  /// the step count, for checkpoints. load_state validates everything first
  /// and leaves the optimizer unchanged on error: names and shapes, slots
  /// this optimizer has (slot_names()), and completeness: a parameter has all
  /// of its slots or none (with require_every_parameter and steps > 0: all,
  /// as after a training step that updated every parameter). The error names
  /// the parameter and the missing slots.
  std::vector<std::pair<std::string, Tensor>> state() const;
  void load_state(const std::vector<std::pair<std::string, Tensor>>& state, int64_t steps,
                  bool require_every_parameter = false);
  /// The state one parameter carries once updated ("exp_avg", ...).
  virtual std::vector<std::string> slot_names() const = 0;

 protected:
  explicit Optimizer(std::vector<ParamGroup> groups);
  /// The state slot `slot` of parameter (g, i), created as zeros on first use.
  Tensor& slot(size_t g, size_t i, const std::string& name);
  /// Calls f(g, i, param, contiguous grad, group) for every parameter that has
  /// a gradient (the others are skipped, as in PyTorch), then bumps its version.
  /// skip(param, group) leaves out those its caller updates otherwise.
  template <typename F, typename Skip = bool (*)(const Tensor&, const ParamGroup&)>
  void for_each_param_with_grad(const F& f, const Skip& skip = [](const Tensor&, const ParamGroup&) { return false; }) {
    for (size_t g = 0; g < groups_.size(); ++g) {
      for (size_t i = 0; i < groups_[g].params.size(); ++i) {
        Tensor& p = groups_[g].params[i];
        if (skip(p, groups_[g]) || !p.grad().defined()) continue;
        f(g, i, p, p.grad().contiguous(), groups_[g]);
        p.storage()->bump_version();
      }
    }
  }
  std::vector<ParamGroup> groups_;
  std::map<std::string, Tensor> state_;
  int64_t steps_ = 0;
};

/// SGD with optional momentum (dampening 0), Nesterov momentum and L2 weight decay:
///   g = grad + wd p;  b = momentum b + g (b = g on the first step)
///   p -= lr (g + momentum b)  if nesterov,  p -= lr b  otherwise
/// A gradient left as rows (nn::Embedding with sparse = true) updates only
/// those rows when a zero gradient would change nothing (no momentum, no
/// weight decay): the same arithmetic, so the rows get the dense update's
/// bits and the others stay as they are. Otherwise .grad() is read dense.
class SGD : public Optimizer {
 public:
  SGD(std::vector<ParamGroup> groups, double momentum = 0.0, bool nesterov = false);
  SGD(std::vector<Tensor> params, double lr, double momentum = 0.0, bool nesterov = false, double weight_decay = 0.0);
  void step() override;
  std::string type_name() const override { return "SGD"; }
  std::vector<std::string> slot_names() const override;
  double momentum;
  bool nesterov;
};

/// Adam (decoupled = false: weight decay is L2 added to the gradient) and
/// AdamW (decoupled = true: p -= lr wd p, separately from the Adam update):
///   m = b1 m + (1-b1) g,  v = b2 v + (1-b2) g²
///   p -= lr · (m / (1-b1^t)) / (sqrt(v / (1-b2^t)) + eps)
class Adam : public Optimizer {
 public:
  Adam(std::vector<ParamGroup> groups, double beta1 = 0.9, double beta2 = 0.999, double eps = 1e-8);
  Adam(std::vector<Tensor> params, double lr = 1e-3, double beta1 = 0.9, double beta2 = 0.999, double eps = 1e-8,
       double weight_decay = 0.0);
  void step() override;
  std::string type_name() const override { return decoupled_ ? "AdamW" : "Adam"; }
  std::vector<std::string> slot_names() const override { return {"exp_avg", "exp_avg_sq", "step"}; }
  double beta1, beta2, eps;

 protected:
  bool decoupled_ = false;
};

class AdamW : public Adam {
 public:
  AdamW(std::vector<ParamGroup> groups, double beta1 = 0.9, double beta2 = 0.999, double eps = 1e-8);
  AdamW(std::vector<Tensor> params, double lr = 1e-3, double beta1 = 0.9, double beta2 = 0.999, double eps = 1e-8,
        double weight_decay = 0.01);
};

/// AdamW's update of one parameter as ember ops, a pure function: the new
/// parameter and moments as new tensors, nothing written in place. What a
/// captured training step calls (compile/ refuses in-place writes): the
/// update fuses into one kernel per parameter, and gives the very bits of
/// AdamW::step (each op rounds where its loop does; tested). The numbers
/// that change from step to step (the learning rate, the step count t) come
/// in as 0-d tensors, so that one graph serves every step; the betas and
/// eps are numbers, fixed in the graph.
struct AdamWScalars {
  Tensor decay;      // 1 - lr wd
  Tensor step_size;  // lr / (1 - b1^t)
  Tensor sqrt_bc2;   // sqrt(1 - b2^t)
};
/// Those three for step t (counted from 1), as 0-d tensors of dtype.
AdamWScalars adamw_scalars(double lr, double weight_decay, int64_t t, double beta1, double beta2, DType dtype);
struct AdamWUpdate {
  Tensor param, exp_avg, exp_avg_sq;
};
AdamWUpdate adamw_update(const Tensor& param, const Tensor& grad, const Tensor& exp_avg, const Tensor& exp_avg_sq,
                         const AdamWScalars& s, double beta1 = 0.9, double beta2 = 0.999, double eps = 1e-8);

/// Scales all gradients so that their global L2 norm is at most max_norm
/// (each by max_norm / (norm + 1e-6) when that is below 1); returns the norm
/// before clipping.
///
/// The norm is summed in an order that does not depend on how the
/// gradients are cut into pieces: the parameters' elements laid end to end
/// (in the order given; a parameter without a gradient counts as zeros)
/// fall into blocks of kNormBlock elements; each block adds its squares in
/// double, in order, and then the blocks are added in order. A piece that
/// starts and ends on block boundaries can sum its blocks alone: that is how
/// distributed::Zero's ranks, each holding one shard of the gradient, get
/// the very bits of this function with one all-reduce of the block sums.
double clip_grad_norm_(const std::vector<Tensor>& params, double max_norm);
inline constexpr int64_t kNormBlock = 256;
/// Adds the square of each of g's elements (contiguous float32 or float64)
/// to blocks[(first + k) / kNormBlock]: g holds elements first, first + 1,
/// ... of the order above. blocks must be long enough.
void add_squares_by_block(const Tensor& g, int64_t first, std::vector<double>& blocks);
/// The square root of the blocks' sum, added in order.
double norm_of_blocks(const std::vector<double>& blocks);
/// clip_grad_norm_'s scaling: every g *= max_norm / (norm + 1e-6) when that
/// is below 1 (the same bits whether g is a whole gradient or a piece).
void scale_to_norm_(const std::vector<Tensor>& grads, double norm, double max_norm);

/// Learning-rate schedules: lr(step) for step = 0, 1, 2, ...
class LRSchedule {
 public:
  virtual ~LRSchedule() = default;
  virtual double lr(int64_t step) const = 0;
};
class ConstantLR : public LRSchedule {
 public:
  explicit ConstantLR(double lr) : lr_(lr) {}
  double lr(int64_t) const override { return lr_; }

 private:
  double lr_;
};
/// Linear warmup from 0 to max_lr over warmup_steps, then cosine decay to
/// min_lr at total_steps (and min_lr after).
class WarmupCosineLR : public LRSchedule {
 public:
  WarmupCosineLR(double max_lr, double min_lr, int64_t warmup_steps, int64_t total_steps);
  double lr(int64_t step) const override;

 private:
  double max_lr_, min_lr_;
  int64_t warmup_, total_;
};

}  // namespace ember::optim
