/// @file
/// Sharded data parallelism: ZeRO stages 1 and 2 (Rajbhandari et al. 2020)
/// over the same Open MPI collectives as DataParallel.
///
/// DataParallel keeps a whole copy of everything on every rank. For AdamW
/// that is, per parameter, 4 bytes of weight, 4 of gradient and 8 of the two
/// moments. Every rank takes the same step from the same gradient, so every
/// rank computes the same moments: N copies of one thing. Zero cuts that
/// redundancy:
///
///   stage 1  the optimizer's state is sharded. Rank r keeps AdamW's moments
///            for its shard of the parameters only and updates only that
///            shard, after the same gradient all-reduce as DataParallel; an
///            all-gather then gives every rank the updated parameters.
///   stage 2  the gradients are sharded too. A reduce-scatter replaces the
///            all-reduce: rank r receives only the sum of its shard, and keeps
///            only that (each whole .grad is dropped once it has been sent).
///
/// The cut is by element range, not by tensor: the parameters laid end to end
/// in registration order (P elements) are cut into N ranges of about P / N,
/// each starting on a multiple of optim::kNormBlock (256). By tensor, the
/// shards would be as uneven as the tensors (the token embedding alone can be
/// a quarter of a small GPT), and the largest shard is what a rank must fit.
/// By range the shards differ by less than 256 elements, and a tensor may be
/// split between two ranks (each keeps the moments of its piece).
///
/// The same training, exactly. Every element's AdamW update is the code of
/// optim::Adam, on the same gradient value, so what can differ is only how
/// the gradient is summed:
///   * the norm for clipping: each rank adds the squares of its shard in
///     blocks of 256 (optim::clip_grad_norm_'s own order), one all-reduce of
///     the block sums (each entry nonzero on one rank only, so MPI adds zeros
///     to it: exact), and every rank adds the blocks in order: the very bits
///     of clip_grad_norm_ on the whole gradient;
///   * stage 1 all-reduces the buckets of DataParallel, with the same calls:
///     the same bits as DataParallel at any number of ranks;
///   * stage 2's reduce-scatter adds the ranks' gradients in an order MPI
///     chooses. With 2 ranks every order adds the same two numbers (a + b =
///     b + a), so stage 2 equals DataParallel bit for bit; with 3 or more
///     the association can differ from the all-reduce's by the last bits of
///     float32 (tests/distributed check both).
///
/// Checkpoints: optimizer_state() gathers the moments onto rank 0, which
/// writes them in the format of a run of one process, so a checkpoint
/// resumes at any number of ranks and any stage (adopt() takes each rank's
/// part). While saving, rank 0 holds the whole state once more.
///
/// What ember does not do (DeepSpeed and PyTorch's FSDP do): stage 3 (the
/// parameters sharded, each layer's all-gathered before its forward and its
/// backward), prefetching the next layer's parameters, and overlapping the
/// reduce-scatter with backward. ember's engine hands out the gradients when
/// backward ends, so during backward a rank still holds every gradient once:
/// stage 2 shrinks the gradients a rank keeps, not their peak
/// (docs/book/10_several_processes.md measures both).
#pragma once

#include <memory>

#include "distributed/data_parallel.h"
#include "train/optim.h"

namespace ember::distributed {

struct ZeroOptions {
  int stage = 1;                               // 1: optimizer state sharded; 2: gradients as well
  int64_t bucket_bytes = int64_t{4} << 20;     // the most bytes in one collective (as DataParallelOptions)
};

/// Where the shards are: rank r owns elements [begin[r], begin[r + 1]) of the
/// parameters laid end to end in registration order.
struct ShardPlan {
  std::vector<int64_t> first;  // where each parameter starts in that order
  std::vector<int64_t> begin;  // world + 1 cut points: 0, multiples of optim::kNormBlock, numel
  int64_t numel = 0;
  int64_t size(int r) const { return begin[static_cast<size_t>(r) + 1] - begin[static_cast<size_t>(r)]; }
  /// How many parameter tensors have elements in rank r's shard.
  int64_t tensors(int r) const;
};
/// The cut points r * numel / world, each rounded to the nearest multiple of
/// optim::kNormBlock (and kept in order). No MPI involved.
ShardPlan plan_shards(const std::vector<Tensor>& params, int world);

/// The model state one rank keeps between steps, in bytes, in closed form
/// (f bytes per element, P elements, n tensors; P_r = plan.size(r) and n_r =
/// plan.tensors(r) for rank r's shard):
///   parameters       f P                     every stage
///   gradients        f P                     stage 0 (DataParallel) and 1: every .grad
///                    f P_r                   stage 2: its shard of the reduced gradient
///   optimizer_state  2 f P + 8 n             stage 0: AdamW's two moments and a step count per tensor
///                    2 f P_r + 8 n_r         stages 1 and 2: those of its shard
/// Buffers for the collectives come on top (DataParallel's buckets, f P;
/// Zero's one span, at most bucket_bytes): the memory timeline counts them
/// as temporaries.
struct ModelStateBytes {
  int64_t parameters = 0, gradients = 0, optimizer_state = 0;
};
ModelStateBytes model_state_bytes(const std::vector<Tensor>& params, int world, int rank, int stage);

/// What a step moved, per rank (the elements handed to each collective, as
/// bytes) and how long it took.
struct ZeroStats {
  int64_t steps = 0;
  int64_t all_reduce_bytes = 0;      // per step: stage 1's gradient all-reduce
  int64_t reduce_scatter_bytes = 0;  // per step: stage 2's reduce-scatter (the whole gradient is its input)
  int64_t all_gather_bytes = 0;      // per step: the parameters gathered
  int64_t norm_bytes = 0;            // per step: the all-reduce of the norm's block sums
  double update_seconds = 0;         // in update(): synchronisation, the shard's update, the gather
  double mpi_seconds = 0;            // of which inside MPI
};

class Zero final : public DataParallel {
 public:
  /// params: model.parameters(), one floating dtype. Collective, like
  /// DataParallel's constructor (which it is, with its checks and its
  /// broadcast of rank 0's parameters); the stage and bucket size are checked
  /// to be the same on every rank.
  explicit Zero(std::vector<Tensor> params, ZeroOptions options = {});

  /// The step of train::Replicas::update, sharded: synchronise the gradients
  /// (stage 1: all-reduce; stage 2: reduce-scatter, after which every .grad
  /// is undefined), clip by the global norm, update this rank's shard with
  /// opt's rule and hyperparameters (Adam or AdamW; opt itself keeps no
  /// state), all-gather the parameters. Every rank must pass the same
  /// optimizer over the same parameters as the constructor.
  double update(optim::Adam& opt, const std::vector<Tensor>& params, double grad_clip) override;
  /// Takes this rank's part of opt's state (after a resume) and empties opt.
  void adopt(optim::Adam& opt) override;
  /// Collective: the whole state, named as opt.state() would name it, on rank
  /// 0 (the others get an empty list).
  std::vector<std::pair<std::string, Tensor>> optimizer_state(const optim::Optimizer& opt) override;
  /// Stage 2: drops the shard of the last step's gradient (like zero_grad's
  /// set_to_none), so that it is not kept beside the next backward's.
  void zero_grad() override { shard_grad_ = Tensor(); }

  int stage() const { return zero_options_.stage; }
  const ShardPlan& plan() const { return plan_; }
  /// How many reduce-scatters (stage 2) and all-gathers a step makes.
  size_t spans() const { return spans_.size(); }
  /// This rank's shard of the reduced gradient, from the last update to the
  /// next zero_grad (stage 2; undefined in stage 1).
  const Tensor& shard_gradient() const { return shard_grad_; }
  /// The optimizer that updates this rank's shard (null before the first
  /// update or adopt): its state is what this rank keeps.
  const optim::Adam* shard_optimizer() const { return inner_.get(); }
  const ZeroStats& zero_stats() const { return zero_stats_; }

 private:
  struct Piece {           // the part of parameter `param` in this rank's shard
    size_t param;          // index into the parameters
    int64_t begin, end;    // its elements [begin, end) of the parameter (flattened)
  };
  struct Span {            // one collective's worth of consecutive parameters
    std::vector<size_t> params;  // ascending
    int64_t lo = 0, hi = 0;      // their elements in the flat order
  };
  void bind(optim::Adam& opt);
  std::vector<int64_t> counts(const Span& s) const;  // each rank's part of the span
  void check_update(const std::vector<Tensor>& params, double grad_clip) const;
  void synchronise_gradients();  // stage 1: DataParallel's all-reduce; stage 2: the reduce-scatter
  void reduce_scatter_gradients();
  double clip_to_global_norm(std::vector<Tensor>& grads, double grad_clip);
  void step_shard(optim::Adam& opt);
  void gather_parameters();
  void count_step();  // the bytes a step moved
  std::vector<Tensor> piece_gradients() const;

  ZeroOptions zero_options_;
  ShardPlan plan_;
  std::vector<Span> spans_;
  std::vector<Piece> pieces_;       // in flat order
  Tensor comm_;                     // one span's elements: the buffer of the reduce-scatter and the gather
  Tensor shard_grad_;               // stage 2
  const optim::Adam* bound_ = nullptr;
  std::unique_ptr<optim::Adam> inner_;
  std::vector<std::vector<std::pair<size_t, size_t>>> inner_of_;  // inner (group, index) -> (outer index, piece)
  std::vector<std::pair<size_t, size_t>> outer_of_;               // parameter -> its (group, index) in the optimizer
  ZeroStats zero_stats_;
};

}  // namespace ember::distributed
