/// @file
/// Data parallelism the way PyTorch's DistributedDataParallel does it: every
/// rank holds the whole model, computes the gradient of its own shard of the
/// batch, and an all-reduce makes every rank's gradient the mean over the
/// ranks before each optimizer step. The ranks then take the same step from
/// the same parameters and stay equal, bit for bit.
///
///   1. Start: rank 0's parameters are broadcast to every rank.
///   2. Buckets: after backward, the gradients are packed into flat buffers
///      of at most `bucket_bytes` (in reverse registration order, the order
///      in which backward finishes them) and each buffer is all-reduced in
///      one call: a few large messages instead of one per parameter.
///
/// PyTorch's DDP also overlaps: each bucket's all-reduce starts from the
/// parameters' gradient hooks as soon as its last gradient is complete,
/// while backward goes on with the earlier layers. ember had that too
/// (MPI_Iallreduce started from the engine's leaf hooks) and measured it on
/// its 2-core machine: 1-4% slower than all-reducing after backward, since
/// there the transfer is a memory copy done by the same cores that compute.
/// The book's chapter 10 (docs/book/10_several_processes.md) has the numbers; the reverse
/// order of the buckets is the one an overlapped version would start them in.
///
/// DataParallel is the train::Replicas that a train::Trainer uses
/// (Trainer::set_replicas); it can also be driven by hand:
///   distributed::DataParallel ddp(model.parameters());
///   loss.backward(); ddp.average_gradients(); opt.step();
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "distributed/distributed.h"
#include "train/trainer.h"

namespace ember::distributed {

struct DataParallelOptions {
  /// The most bytes of gradients in one all-reduce (a parameter larger than
  /// this gets a bucket of its own). Without overlap a bucket only saves
  /// calls, so the default is large: on an idle machine 64 KiB .. 4 MiB
  /// train equally fast, and when another process shares the cores every
  /// call is a rendezvous that can wait a scheduler slice for the other rank,
  /// so fewer calls are faster (docs/book/10_several_processes.md).
  int64_t bucket_bytes = int64_t{4} << 20;
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
  double sync_seconds = 0;    // in average_gradients: packing, MPI, unpacking
  double mpi_seconds = 0;     // of which inside MPI_Allreduce (transfer, and waiting for the slowest rank)
};

class DataParallel : public train::Replicas {
 public:
  /// params: the model's parameters in registration order (model.parameters()).
  /// Collective: every rank must construct it, with the same parameter shapes
  /// and bucket size (checked: the same ember::Error on every rank
  /// otherwise), after distributed::init().
  /// Broadcasts rank 0's parameters to every rank.
  explicit DataParallel(std::vector<Tensor> params, DataParallelOptions options = {})
      : DataParallel(std::move(params), options, 0) {}

  /// Rank 0's parameters onto every rank (also after loading a checkpoint).
  void broadcast_parameters();

  int rank() const override { return rank_; }
  int world_size() const override { return world_; }
  /// After backward: every parameter's .grad becomes the mean over the ranks
  /// of their .grad (a parameter without one on this rank counts as zeros,
  /// and gets one).
  void average_gradients() override;
  /// The mean over the ranks of one number (the loss of this rank's shard).
  double average(double value) override;
  /// True on every rank when `mine` is true on any rank.
  bool any(bool mine) override;
  /// distributed::check_agreement: the same error on every rank unless they
  /// all pass the same values.
  void check_agreement(const char* op, const train::Settings& settings) override;

  const std::vector<Bucket>& buckets() const { return buckets_; }
  const SyncStats& stats() const { return stats_; }
  const DataParallelOptions& options() const { return options_; }

 protected:
  /// zero_stage: what distributed::Zero shards (0: nothing), one more setting
  /// every rank must agree on.
  DataParallel(std::vector<Tensor> params, DataParallelOptions options, int zero_stage);
  Tensor slot(size_t i) const;  // parameter i's gradient inside its bucket's buffer, shaped like it

  std::vector<Tensor> params_;
  DataParallelOptions options_;
  int rank_ = 0, world_ = 1;
  std::vector<Bucket> buckets_;
  std::vector<Tensor> flat_;                     // one buffer per bucket (made by the first average_gradients)
  std::vector<std::pair<size_t, size_t>> place_;  // parameter -> (bucket, position in it)
  SyncStats stats_;
};

}  // namespace ember::distributed
