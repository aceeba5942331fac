// Zero: the shards, the sharded step, the state gathered for a checkpoint.
// Only distributed/distributed.h's collectives talk to the other ranks.
#include "distributed/zero.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <unordered_map>

#include "autograd/grad_mode.h"
#include "autograd/observer.h"
#include "tensor/factory.h"
#include "tensor/kernels.h"
#include "tensor/storage.h"

namespace ember::distributed {

namespace {

using Clock = std::chrono::steady_clock;
// Adds the seconds of its scope to a total.
class Timer {
 public:
  explicit Timer(double& total) : total_(total), t0_(Clock::now()) {}
  ~Timer() { total_ += std::chrono::duration<double>(Clock::now() - t0_).count(); }
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;

 private:
  double& total_;
  Clock::time_point t0_;
};

// A contiguous tensor's elements as one row, and a range of a row: views.
Tensor flat(const Tensor& t) { return kernel::view(t, {t.numel()}); }
Tensor part(const Tensor& row, int64_t begin, int64_t end) { return kernel::slice(row, 0, begin, end, 1); }

const char* const kMoments[] = {"exp_avg", "exp_avg_sq"};

std::string state_name(size_t g, size_t i, const char* slot) {
  return std::to_string(g) + "." + std::to_string(i) + "." + slot;
}

}  // namespace

ShardPlan plan_shards(const std::vector<Tensor>& params, int world) {
  EMBER_CHECK(world >= 1, "plan_shards", "the number of ranks must be at least 1, got " << world);
  ShardPlan plan;
  for (const Tensor& p : params) {
    plan.first.push_back(plan.numel);
    plan.numel += p.numel();
  }
  const int64_t block = optim::kNormBlock;
  plan.begin.push_back(0);
  for (int r = 1; r < world; ++r) {
    // r * numel / world without overflow, then to the nearest block boundary
    const double ideal = static_cast<double>(plan.numel) * r / world;
    int64_t cut = static_cast<int64_t>(std::llround(ideal / static_cast<double>(block))) * block;
    cut = std::clamp(cut, plan.begin.back(), plan.numel);
    plan.begin.push_back(cut);
  }
  plan.begin.push_back(plan.numel);
  return plan;
}

int64_t ShardPlan::tensors(int r) const {
  int64_t n = 0;
  for (size_t k = 0; k < first.size(); ++k) {
    const int64_t end = k + 1 < first.size() ? first[k + 1] : numel;
    n += std::max(first[k], begin[static_cast<size_t>(r)]) < std::min(end, begin[static_cast<size_t>(r) + 1]);
  }
  return n;
}

ModelStateBytes model_state_bytes(const std::vector<Tensor>& params, int world, int rank, int stage) {
  EMBER_CHECK(stage >= 0 && stage <= 2 && world >= 1 && rank >= 0 && rank < world, "model_state_bytes",
              "needs stage 0, 1 or 2 and a rank in 0.." << world - 1 << "; got stage " << stage << " and rank " << rank
                                                        << " of " << world);
  const ShardPlan plan = plan_shards(params, world);
  const int64_t f = params.empty() ? 4 : static_cast<int64_t>(dtype_size(params[0].dtype()));
  const int64_t n = static_cast<int64_t>(params.size());
  ModelStateBytes out;
  out.parameters = f * plan.numel;
  out.gradients = stage == 2 ? f * plan.size(rank) : f * plan.numel;
  out.optimizer_state = stage == 0 ? 2 * f * plan.numel + 8 * n : 2 * f * plan.size(rank) + 8 * plan.tensors(rank);
  return out;
}

namespace {
int checked_stage(int stage) {
  EMBER_CHECK(stage == 1 || stage == 2, "Zero", "stage must be 1 or 2, got " << stage);
  return stage;
}
}  // namespace

// (DataParallel's constructor checks that every rank has the same model,
// bucket size and stage: ranks that mix stages, or Zero and DataParallel,
// would make different collectives.)
Zero::Zero(std::vector<Tensor> params, ZeroOptions options)
    : DataParallel(std::move(params), {.bucket_bytes = options.bucket_bytes}, checked_stage(options.stage)),
      zero_options_(options) {
  for (size_t k = 0; k < params_.size(); ++k)
    EMBER_CHECK(params_[k].dtype() == params_[0].dtype(), "Zero",
                "parameter " << k << " is " << dtype_name(params_[k].dtype()) << " and parameter 0 "
                             << dtype_name(params_[0].dtype()) << "; the shards cut one flat row of one dtype");
  plan_ = plan_shards(params_, world_);
  const DType dtype = params_.empty() ? kFloat32 : params_[0].dtype();
  // The collectives go span by span: DataParallel's buckets (consecutive
  // parameters, the last ones first), each laid out in ascending order so
  // that its part of every rank's shard is one range of it, in rank order.
  int64_t longest = 0;
  for (const Bucket& b : buckets_) {
    Span s;
    s.params = b.params;
    std::sort(s.params.begin(), s.params.end());
    s.lo = plan_.first[s.params.front()];
    s.hi = plan_.first[s.params.back()] + params_[s.params.back()].numel();
    longest = std::max(longest, s.hi - s.lo);
    spans_.push_back(std::move(s));
  }
  comm_ = zeros({longest}, dtype);
  const int64_t lo = plan_.begin[static_cast<size_t>(rank_)], hi = plan_.begin[static_cast<size_t>(rank_) + 1];
  for (size_t k = 0; k < params_.size(); ++k) {
    const int64_t a = std::max(lo, plan_.first[k]), b = std::min(hi, plan_.first[k] + params_[k].numel());
    if (a < b) pieces_.push_back({k, a - plan_.first[k], b - plan_.first[k]});
  }
}

std::vector<int64_t> Zero::counts(const Span& s) const {
  std::vector<int64_t> out;
  for (int r = 0; r < world_; ++r)
    out.push_back(std::max<int64_t>(0, std::min(s.hi, plan_.begin[static_cast<size_t>(r) + 1]) -
                                           std::max(s.lo, plan_.begin[static_cast<size_t>(r)])));
  return out;
}

void Zero::bind(optim::Adam& opt) {
  if (bound_ == &opt) return;
  EMBER_CHECK(bound_ == nullptr, "Zero", "given another optimizer than the first; one Zero shards one optimizer's state");
  std::unordered_map<const TensorImpl*, size_t> index;
  for (size_t k = 0; k < params_.size(); ++k) index.emplace(params_[k].impl(), k);
  std::vector<int64_t> piece_of(params_.size(), -1);
  for (size_t pc = 0; pc < pieces_.size(); ++pc) piece_of[pieces_[pc].param] = static_cast<int64_t>(pc);
  std::vector<bool> seen(params_.size(), false);
  std::vector<optim::ParamGroup> groups;
  inner_of_.clear();
  outer_of_.assign(params_.size(), {SIZE_MAX, SIZE_MAX});
  NoGradGuard no_grad;
  for (size_t g = 0; g < opt.groups().size(); ++g) {
    const optim::ParamGroup& og = opt.groups()[g];
    optim::ParamGroup ig{{}, og.lr, og.weight_decay};
    inner_of_.emplace_back();
    for (size_t i = 0; i < og.params.size(); ++i) {
      auto it = index.find(og.params[i].impl());
      EMBER_CHECK(it != index.end() && !seen[it->second], "Zero",
                  "parameter " << i << " of the optimizer's group " << g << " (shape " << shape_str(og.params[i].shape())
                               << ") is " << (it == index.end() ? "not one of the parameters Zero was given" : "listed twice"));
      const size_t k = it->second;
      seen[k] = true;
      outer_of_[k] = {g, i};
      if (piece_of[k] < 0) continue;
      const Piece& pc = pieces_[static_cast<size_t>(piece_of[k])];
      ig.params.push_back(part(flat(params_[k]), pc.begin, pc.end));
      inner_of_.back().push_back({i, static_cast<size_t>(piece_of[k])});
    }
    groups.push_back(std::move(ig));
  }
  for (size_t k = 0; k < params_.size(); ++k)
    EMBER_CHECK(seen[k], "Zero",
                "parameter " << k << " (shape " << shape_str(params_[k].shape())
                             << ") is not in the optimizer: Zero updates every parameter it was given");
  if (opt.type_name() == "AdamW") inner_ = std::make_unique<optim::AdamW>(std::move(groups), opt.beta1, opt.beta2, opt.eps);
  else inner_ = std::make_unique<optim::Adam>(std::move(groups), opt.beta1, opt.beta2, opt.eps);
  bound_ = &opt;
}

void Zero::reduce_scatter_gradients() {
  const int64_t lo = plan_.begin[static_cast<size_t>(rank_)];
  bool first = true;
  for (const Span& s : spans_) {
    const Tensor buf = part(comm_, 0, s.hi - s.lo);
    for (size_t k : s.params) {
      const Tensor dst = part(buf, plan_.first[k] - s.lo, plan_.first[k] - s.lo + params_[k].numel());
      const Tensor g = params_[k].grad();
      if (g.defined()) kernel::copy_(dst, kernel::reshape(g, {g.numel()}), "Zero");
      else kernel::fill_(dst, 0.0);  // no gradient on this rank: it adds nothing
      params_[k].set_grad(Tensor());  // sent: this rank keeps only its shard of the sum
    }
    if (first) {  // made once the first span's gradients are gone: the shard does not add to their peak
      shard_grad_ = zeros({plan_.size(rank_)}, comm_.dtype());
      if (AutogradObserver* o = autograd_observer()) o->tag_memory(shard_grad_, MemoryKind::Gradients);
      first = false;
    }
    const std::vector<int64_t> c = counts(s);
    const int64_t at = c[static_cast<size_t>(rank_)] > 0 ? std::max(s.lo, lo) - lo : 0;
    const Timer mpi(zero_stats_.mpi_seconds);
    reduce_scatter_unchecked(buf, part(shard_grad_, at, at + c[static_cast<size_t>(rank_)]), c, ReduceOp::Mean);
  }
}

std::vector<Tensor> Zero::piece_gradients() const {
  std::vector<Tensor> out;
  int64_t at = 0;
  for (const Piece& pc : pieces_) {
    if (zero_options_.stage == 2) {
      out.push_back(part(shard_grad_, at, at + pc.end - pc.begin));
    } else {
      const Tensor g = params_[pc.param].grad().contiguous();  // (every parameter has one after the all-reduce)
      out.push_back(part(flat(g), pc.begin, pc.end));
    }
    at += pc.end - pc.begin;
  }
  return out;
}

void Zero::gather_parameters() {
  for (const Span& s : spans_) {
    const Tensor buf = part(comm_, 0, s.hi - s.lo);
    for (const Piece& pc : pieces_) {  // this rank's part, freshly updated, into its place
      const int64_t at = plan_.first[pc.param] + pc.begin;
      if (at < s.lo || at >= s.hi) continue;
      kernel::copy_(part(buf, at - s.lo, at - s.lo + pc.end - pc.begin), part(flat(params_[pc.param]), pc.begin, pc.end),
                    "Zero");
    }
    {
      const Timer mpi(zero_stats_.mpi_seconds);
      all_gather_unchecked(buf, counts(s));
    }
    for (size_t k : s.params) {
      kernel::copy_(flat(params_[k]), part(buf, plan_.first[k] - s.lo, plan_.first[k] - s.lo + params_[k].numel()), "Zero");
      params_[k].storage()->bump_version();
    }
  }
}

// The sharded step, as the header tells it; what it measures is counted by
// the helpers (Timer, count_step), not here.
double Zero::update(optim::Adam& opt, const std::vector<Tensor>& params, double grad_clip) {
  check_update(params, grad_clip);
  bind(opt);
  NoGradGuard no_grad;
  const Timer whole(zero_stats_.update_seconds);
  synchronise_gradients();
  std::vector<Tensor> grads = piece_gradients();
  for (size_t g = 0; g < inner_of_.size(); ++g)
    for (size_t j = 0; j < inner_of_[g].size(); ++j) inner_->groups()[g].params[j].set_grad(grads[inner_of_[g][j].second]);
  const double norm = grad_clip > 0 ? clip_to_global_norm(grads, grad_clip) : 0;
  step_shard(opt);
  gather_parameters();
  count_step();
  return norm;
}

void Zero::check_update(const std::vector<Tensor>& params, double grad_clip) const {
  EMBER_CHECK(params.size() == params_.size() &&
                  std::equal(params.begin(), params.end(), params_.begin(),
                             [](const Tensor& a, const Tensor& b) { return a.impl() == b.impl(); }),
              "Zero", "update was given " << params.size() << " parameters other than the " << params_.size()
                                          << " Zero was made with; pass the same list");
  EMBER_CHECK(grad_clip >= 0 && std::isfinite(grad_clip), "Zero", "grad_clip must be finite and >= 0, got " << grad_clip);
}

void Zero::synchronise_gradients() {
  if (zero_options_.stage == 2) {
    reduce_scatter_gradients();
    return;
  }
  const double before = stats().mpi_seconds;
  average_gradients();  // DataParallel's all-reduce, call for call
  zero_stats_.mpi_seconds += stats().mpi_seconds - before;
}

// The global norm: this rank's blocks, one all-reduce, every block added in
// order; grads (this rank's pieces) are scaled in place.
double Zero::clip_to_global_norm(std::vector<Tensor>& grads, double grad_clip) {
  const int64_t blocks = (plan_.numel + optim::kNormBlock - 1) / optim::kNormBlock;
  std::vector<double> sums(static_cast<size_t>(blocks), 0.0);
  for (size_t pc = 0; pc < pieces_.size(); ++pc)
    optim::add_squares_by_block(grads[pc], plan_.first[pieces_[pc].param] + pieces_[pc].begin, sums);
  Tensor t = tensor(sums);
  {
    const Timer mpi(zero_stats_.mpi_seconds);
    all_reduce_unchecked(t, ReduceOp::Sum);  // each block is nonzero on one rank only: exact
  }
  const double norm = optim::norm_of_blocks(t.to_vector<double>());
  optim::scale_to_norm_(grads, norm, grad_clip);
  zero_stats_.norm_bytes = blocks * 8;
  return norm;
}

// This rank's shard, with the optimizer's rule and today's hyperparameters.
void Zero::step_shard(optim::Adam& opt) {
  for (size_t g = 0; g < inner_of_.size(); ++g) {
    inner_->groups()[g].lr = opt.groups()[g].lr;
    inner_->groups()[g].weight_decay = opt.groups()[g].weight_decay;
  }
  inner_->beta1 = opt.beta1;
  inner_->beta2 = opt.beta2;
  inner_->eps = opt.eps;
  inner_->step();
  opt.count_step();
  for (auto& group : inner_->groups())
    for (Tensor& p : group.params) p.set_grad(Tensor());
}

void Zero::count_step() {
  const int64_t bytes = plan_.numel * static_cast<int64_t>(dtype_size(comm_.dtype()));
  zero_stats_.all_reduce_bytes = zero_options_.stage == 1 ? bytes : 0;
  zero_stats_.reduce_scatter_bytes = zero_options_.stage == 2 ? bytes : 0;
  zero_stats_.all_gather_bytes = bytes;
  ++zero_stats_.steps;
}

void Zero::adopt(optim::Adam& opt) {
  bind(opt);
  const std::vector<std::pair<std::string, Tensor>> whole = opt.state();
  if (whole.empty()) {  // a fresh run (or one resumed before its first update): no state yet
    inner_->load_state({}, opt.steps());
    return;
  }
  const std::map<std::string, Tensor> by_name(whole.begin(), whole.end());
  std::vector<std::pair<std::string, Tensor>> mine;
  for (size_t g = 0; g < inner_of_.size(); ++g)
    for (size_t j = 0; j < inner_of_[g].size(); ++j) {
      const auto [i, pc] = inner_of_[g][j];
      for (const char* slot : kMoments)
        if (auto it = by_name.find(state_name(g, i, slot)); it != by_name.end())
          mine.emplace_back(state_name(g, j, slot), part(flat(it->second.contiguous()), pieces_[pc].begin, pieces_[pc].end));
      if (auto it = by_name.find(state_name(g, i, "step")); it != by_name.end())
        mine.emplace_back(state_name(g, j, "step"), it->second);
    }
  inner_->load_state(mine, opt.steps());  // (copies its slices)
  opt.load_state({}, opt.steps());        // the whole state is no longer kept
}

std::vector<std::pair<std::string, Tensor>> Zero::optimizer_state(const optim::Optimizer& opt) {
  if (!inner_) return rank_ == 0 ? opt.state() : std::vector<std::pair<std::string, Tensor>>{};
  EMBER_CHECK(&opt == bound_, "Zero", "optimizer_state was given another optimizer than the one Zero shards");
  NoGradGuard no_grad;
  std::map<std::string, Tensor> inner;
  for (const auto& [name, t] : inner_->state()) inner.emplace(name, t);
  // Each parameter's update count, from the rank that holds its first element
  // (one nonzero entry per parameter: the sum is exact).
  Tensor steps = zeros({static_cast<int64_t>(params_.size())}, kFloat64);
  for (size_t g = 0; g < inner_of_.size(); ++g)
    for (size_t j = 0; j < inner_of_[g].size(); ++j) {
      const Piece& pc = pieces_[inner_of_[g][j].second];
      auto it = inner.find(state_name(g, j, "step"));
      if (pc.begin == 0 && it != inner.end())
        steps.data_ptr<double>()[pc.param] = static_cast<double>(it->second.item<int64_t>());
    }
  all_reduce_unchecked(steps, ReduceOp::Sum);
  std::vector<int64_t> sizes;
  for (int r = 0; r < world_; ++r) sizes.push_back(plan_.size(r));
  std::map<std::string, Tensor> out;
  const DType dtype = comm_.dtype();
  for (const char* slot : kMoments) {
    // This rank's shard of the slot, in flat order (zeros where a piece has none yet).
    Tensor mine = zeros({plan_.size(rank_)}, dtype);
    std::vector<int64_t> at(pieces_.size(), 0);
    for (size_t pc = 1; pc < pieces_.size(); ++pc) at[pc] = at[pc - 1] + pieces_[pc - 1].end - pieces_[pc - 1].begin;
    for (size_t g = 0; g < inner_of_.size(); ++g)
      for (size_t j = 0; j < inner_of_[g].size(); ++j)
        if (auto it = inner.find(state_name(g, j, slot)); it != inner.end()) {
          const size_t pc = inner_of_[g][j].second;
          kernel::copy_(part(mine, at[pc], at[pc] + pieces_[pc].end - pieces_[pc].begin), it->second, "Zero");
        }
    Tensor all = rank_ == 0 ? empty({plan_.numel}, dtype) : Tensor();
    gather_unchecked(mine, all, sizes, 0);
    if (rank_ != 0) continue;
    for (size_t k = 0; k < params_.size(); ++k) {
      if (steps.data_ptr<double>()[k] <= 0) continue;  // never updated: no state, as in Optimizer
      const auto [g, i] = outer_of_[k];
      out[state_name(g, i, slot)] =
          kernel::to(kernel::view(part(all, plan_.first[k], plan_.first[k] + params_[k].numel()), params_[k].shape()), dtype);
    }
  }
  if (rank_ != 0) return {};
  for (size_t k = 0; k < params_.size(); ++k) {
    const double n = steps.data_ptr<double>()[k];
    if (n <= 0) continue;
    Tensor t = zeros({}, kInt64);
    t.data_ptr<int64_t>()[0] = static_cast<int64_t>(n);
    out[state_name(outer_of_[k].first, outer_of_[k].second, "step")] = t;
  }
  return {out.begin(), out.end()};
}

}  // namespace ember::distributed
