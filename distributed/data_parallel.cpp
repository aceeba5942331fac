// DataParallel: broadcast, buckets, the all-reduce of gradients. Only
// distributed/distributed.h's collectives talk to the other ranks.
#include "distributed/data_parallel.h"

#include <chrono>

#include "autograd/grad_mode.h"
#include "tensor/factory.h"
#include "tensor/kernels.h"

namespace ember::distributed {

std::vector<Bucket> plan_buckets(const std::vector<Tensor>& params, int64_t bucket_bytes) {
  EMBER_CHECK(bucket_bytes > 0, "plan_buckets", "bucket_bytes must be positive, got " << bucket_bytes);
  std::vector<Bucket> out;
  // One open bucket per dtype; a gradient goes into the open bucket of its
  // dtype, or opens a new one when it would not fit.
  std::vector<size_t> open_of_dtype(4, SIZE_MAX);
  for (size_t k = params.size(); k-- > 0;) {
    const Tensor& p = params[k];
    EMBER_CHECK(p.defined() && is_floating(p.dtype()), "plan_buckets",
                "parameter " << k << " is " << (p.defined() ? dtype_name(p.dtype()) : "undefined")
                             << "; gradients are float32 or float64");
    size_t& open = open_of_dtype[static_cast<size_t>(p.dtype())];
    const int64_t bytes = p.numel() * static_cast<int64_t>(dtype_size(p.dtype()));
    if (open == SIZE_MAX || (out[open].numel > 0 && out[open].bytes() + bytes > bucket_bytes)) {
      out.push_back(Bucket{p.dtype(), {}, {}, 0});
      open = out.size() - 1;
    }
    Bucket& b = out[open];
    b.params.push_back(k);
    b.offsets.push_back(b.numel);
    b.numel += p.numel();
  }
  return out;
}

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// What every rank's parameter list must share, as settings to agree on: the
// count, the elements, every dtype and shape (as one hash: a list of 52
// shapes does not fit a message), and the bucket size, which decides how the
// gradients are cut into messages (ranks that cut them differently would
// pass MPI different counts).
train::Settings layout(const std::vector<Tensor>& params, int64_t bucket_bytes, int zero_stage) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a over dtype and dims
  auto mix = [&](int64_t v) {
    for (int i = 0; i < 8; ++i) h = (h ^ ((static_cast<uint64_t>(v) >> (8 * i)) & 0xff)) * 1099511628211ull;
  };
  int64_t numel = 0;
  for (const Tensor& p : params) {
    mix(static_cast<int64_t>(p.dtype()));
    mix(p.dim());
    for (int64_t d : p.shape()) mix(d);
    numel += p.numel();
  }
  return {{"parameters", std::to_string(params.size())},
          {"parameter elements", std::to_string(numel)},
          {"parameter dtypes and shapes (hash)", std::to_string(h)},
          {"bucket bytes", std::to_string(bucket_bytes)},
          {"ZeRO stage", std::to_string(zero_stage)}};
}

}  // namespace

DataParallel::DataParallel(std::vector<Tensor> params, DataParallelOptions options, int zero_stage)
    : params_(std::move(params)), options_(options) {
  rank_ = distributed::rank();
  world_ = distributed::world_size();
  EMBER_CHECK(options_.bucket_bytes > 0, "DataParallel", "bucket_bytes must be positive, got " << options_.bucket_bytes);
  // Every rank must hold the same model, cut into the same buckets.
  check_agreement("DataParallel", layout(params_, options_.bucket_bytes, zero_stage));

  buckets_ = plan_buckets(params_, options_.bucket_bytes);
  place_.resize(params_.size());
  for (size_t b = 0; b < buckets_.size(); ++b) {
    for (size_t k = 0; k < buckets_[b].params.size(); ++k) place_[buckets_[b].params[k]] = {b, k};
    stats_.bytes += buckets_[b].bytes();
  }
  broadcast_parameters();
}

void DataParallel::broadcast_parameters() {
  NoGradGuard no_grad;
  for (const Tensor& p : params_) broadcast(p, 0);
}

Tensor DataParallel::slot(size_t i) const {
  auto [b, k] = place_[i];
  const int64_t begin = buckets_[b].offsets[k];
  return kernel::view(kernel::slice(flat_[b], 0, begin, begin + params_[i].numel(), 1), params_[i].shape());
}

void DataParallel::average_gradients() {
  NoGradGuard no_grad;
  auto t0 = Clock::now();
  if (flat_.empty())  // (distributed::Zero's stage 2 never all-reduces: it has no such copy of the gradients)
    for (const Bucket& b : buckets_) flat_.push_back(zeros({b.numel}, b.dtype));
  for (size_t b = 0; b < buckets_.size(); ++b) {
    // Pack: each gradient into its place in the bucket (zeros for a parameter
    // that got none on this rank: it adds nothing to the sum).
    for (size_t i : buckets_[b].params) {
      const Tensor g = params_[i].grad();
      if (g.defined()) kernel::copy_(slot(i), g, "DataParallel");
      else kernel::fill_(slot(i), 0.0);
    }
    auto t1 = Clock::now();
    all_reduce_unchecked(flat_[b], ReduceOp::Mean);  // the layout was checked once, at construction
    stats_.mpi_seconds += since(t1);
    // Unpack: every rank's .grad = the mean (into the existing .grad, or a
    // new one when backward left none).
    for (size_t i : buckets_[b].params) {
      const Tensor src = slot(i), g = params_[i].grad();
      if (g.defined() && g.dtype() == src.dtype() && g.shape() == src.shape()) kernel::copy_(g, src, "DataParallel");
      else params_[i].set_grad(kernel::to(src, src.dtype()));
    }
  }
  stats_.sync_seconds += since(t0);
  ++stats_.steps;
}

double DataParallel::average(double value) {
  Tensor t = tensor(std::vector<double>{value});
  all_reduce_unchecked(t, ReduceOp::Mean);
  return t.item<double>();
}

void DataParallel::check_agreement(const char* op, const train::Settings& settings) {
  distributed::check_agreement(op, settings);
}

bool DataParallel::any(bool mine) {
  Tensor t = tensor(std::vector<double>{mine ? 1.0 : 0.0});
  all_reduce_unchecked(t, ReduceOp::Sum);
  return t.item<double>() > 0;
}

}  // namespace ember::distributed
