/// @file
/// Data parallelism the way PyTorch's DistributedDataParallel does it: every
/// rank holds the whole model, computes the gradient of its own shard of the
/// batch, and an all-reduce makes every rank's gradient the mean over the
/// ranks before each optimizer step. The ranks then take the same step from
/// the same parameters and stay equal, bit for bit.
///
///   1. Start: rank 0's parameters are broadcast to every rank.
///   2. Buckets: the gradients are packed into flat buffers of at most
///      `bucket_bytes` (in reverse registration order, the order in which
///      backward tends to finish them) and each buffer is all-reduced in one
///      call: a few large messages instead of one per parameter.
///   3. Overlap (options.overlap): a hook on each parameter copies its
///      gradient into its bucket as soon as backward has finished it, and the
///      bucket's MPI_Iallreduce starts when its last gradient arrives, while
///      backward goes on with the earlier layers. Without it, every bucket is
///      packed and all-reduced after backward.
///
/// DataParallel is the train::Replicas that a train::Trainer uses
/// (Trainer::set_replicas); it can also be driven by hand:
///   dist::DataParallel ddp(model.parameters());
///   ddp.before_backward(); loss.backward(); ddp.average_gradients(); opt.step();
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "dist/dist.h"
#include "train/trainer.h"

namespace ember::dist {

struct DataParallelOptions {
  /// The most bytes of gradients in one all-reduce (a parameter larger than
  /// this gets a bucket of its own). README, "Training on several processes",
  /// shows the measurement behind the default.
  int64_t bucket_bytes = int64_t{256} << 10;
  /// Start each bucket's all-reduce from the gradient hooks, during backward.
  bool overlap = false;
};

/// One all-reduce's worth of parameters: their gradients side by side in one
/// flat buffer of one dtype.
struct Bucket {
  DType dtype = kFloat32;
  std::vector<size_t> params;    // indices into the parameter list, in packing order
  std::vector<int64_t> offsets;  // where each one's gradient starts in the buffer (elements)
  int64_t numel = 0;
  int64_t bytes() const { return numel * static_cast<int64_t>(dtype_size(dtype)); }
};

/// The buckets for params (in registration order) at most bucket_bytes each:
/// the parameters from the last registered to the first, a new bucket when
/// the next one would not fit (or has another dtype). The same on every rank
/// for the same model and size; no MPI involved.
std::vector<Bucket> plan_buckets(const std::vector<Tensor>& params, int64_t bucket_bytes);

/// What gradient synchronisation cost so far (wall time on this rank).
struct SyncStats {
  int64_t steps = 0;          // average_gradients() calls
  int64_t bytes = 0;          // all-reduced per step (the buckets' sizes)
  double sync_seconds = 0;    // in hooks and average_gradients: packing, MPI, unpacking
  double mpi_seconds = 0;     // of which inside MPI calls (all-reduce, test, wait)
};

class DataParallel final : public train::Replicas {
 public:
  /// params: the model's parameters in registration order (model.parameters()).
  /// Collective: every rank must construct it, with the same parameter shapes
  /// (checked: an ember::Error on every rank otherwise), after dist::init().
  /// Broadcasts rank 0's parameters to every rank.
  explicit DataParallel(std::vector<Tensor> params, DataParallelOptions options = {});
  ~DataParallel() override;
  DataParallel(const DataParallel&) = delete;
  DataParallel& operator=(const DataParallel&) = delete;

  /// Rank 0's parameters onto every rank (also after loading a checkpoint).
  void broadcast_parameters();

  int rank() const override { return rank_; }
  int world_size() const override { return world_; }
  /// Arms the hooks (overlap) for the backward that follows.
  void before_backward() override;
  /// After backward: every parameter's .grad becomes the mean over the ranks
  /// of their .grad (a parameter without one on this rank counts as zeros,
  /// and gets one).
  void average_gradients() override;
  /// The mean over the ranks of one number (the loss of this rank's shard).
  double average(double value) override;
  /// True on every rank when `mine` is true on any rank.
  bool any(bool mine) override;

  const std::vector<Bucket>& buckets() const;
  const SyncStats& stats() const;
  const DataParallelOptions& options() const { return options_; }

 private:
  struct State;  // the buffers and in-flight reductions, shared with the hooks
  std::vector<Tensor> params_;
  DataParallelOptions options_;
  int rank_ = 0, world_ = 1;
  std::shared_ptr<State> state_;
};

}  // namespace ember::dist
