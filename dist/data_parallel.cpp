// DataParallel: broadcast, buckets, the all-reduce of gradients, and the
// overlapped variant driven by the engine's leaf hooks. Only dist/dist.h's
// collectives talk to the other ranks.
#include "dist/data_parallel.h"

#include <chrono>
#include <sstream>

#include "autograd/grad_mode.h"
#include "tensor/factory.h"
#include "tensor/kernels.h"

namespace ember::dist {

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

// A short fingerprint of the parameter list (count, elements, and a hash of
// every dtype and shape) that the ranks compare before anything else.
std::vector<int64_t> fingerprint(const std::vector<Tensor>& params) {
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
  return {static_cast<int64_t>(params.size()), numel, static_cast<int64_t>(h >> 1)};
}

}  // namespace

struct DataParallel::State {
  std::vector<Tensor> params;
  std::vector<Bucket> buckets;
  std::vector<Tensor> flat;                         // one buffer per bucket
  std::vector<std::pair<size_t, size_t>> place;     // parameter -> (bucket, position in it)
  // One backward's progress (overlap): which gradients are packed, how many
  // each bucket still waits for, the reductions started.
  std::vector<char> packed;
  std::vector<int64_t> missing;
  std::vector<PendingReduce> inflight;
  size_t started = 0;  // buckets 0..started-1 have started (always in order: see start_ready)
  bool armed = false;
  SyncStats stats;

  // The buffer's slice that holds parameter i's gradient, shaped like it.
  Tensor slot(size_t i) {
    auto [b, k] = place[i];
    return kernel::view(kernel::slice(flat[b], 0, buckets[b].offsets[k], buckets[b].offsets[k] + params[i].numel(), 1),
                        params[i].shape());
  }

  void pack(size_t i, const Tensor& grad) {
    Tensor dst = slot(i);
    if (grad.defined()) kernel::copy_(dst, grad, "DataParallel");
    else kernel::fill_(dst, 0.0);  // no gradient on this rank: it adds nothing to the sum
  }

  // Every rank's grad = the reduced slice (a copy into the existing .grad,
  // or a new .grad when backward left none).
  void unpack(size_t b) {
    for (size_t i : buckets[b].params) {
      Tensor src = slot(i);
      const Tensor g = params[i].grad();
      if (g.defined() && g.dtype() == src.dtype() && g.shape() == src.shape()) kernel::copy_(g, src, "DataParallel");
      else params[i].set_grad(kernel::to(src, src.dtype()));
    }
  }

  // Collectives must be issued in the same order on every rank, so bucket b
  // starts only after buckets 0..b-1, however the gradients arrive.
  void start_ready() {
    while (started < buckets.size() && missing[started] == 0) {
      auto t0 = Clock::now();
      inflight[started] = all_reduce_start(flat[started], ReduceOp::Mean);
      stats.mpi_seconds += since(t0);
      ++started;
    }
  }

  // The hook of parameter i (overlap): its gradient is complete.
  void gradient_ready(size_t i, const Tensor& g) {
    auto t0 = Clock::now();
    EMBER_CHECK(!packed[i], "DataParallel",
                "parameter " << i << " received a second gradient before average_gradients(); call before_backward() "
                                 "before each backward (one backward per step)");
    pack(i, g);
    packed[i] = 1;
    --missing[place[i].first];
    start_ready();
    // MPI moves a nonblocking reduction along only inside its calls: give
    // the ones in flight a chance now, between two parts of backward.
    auto t1 = Clock::now();
    for (size_t b = 0; b < started; ++b) inflight[b].test();
    stats.mpi_seconds += since(t1);
    stats.sync_seconds += since(t0);
  }
};

DataParallel::DataParallel(std::vector<Tensor> params, DataParallelOptions options)
    : params_(std::move(params)), options_(options), state_(std::make_shared<State>()) {
  rank_ = dist::rank();
  world_ = dist::world_size();
  EMBER_CHECK(options_.bucket_bytes > 0, "DataParallel", "bucket_bytes must be positive, got " << options_.bucket_bytes);
  // Every rank must hold the same model: compare with rank 0's fingerprint,
  // then tell every rank whether any differs (so all of them throw).
  const std::vector<int64_t> mine = fingerprint(params_);
  Tensor root = tensor(mine);
  broadcast(root, 0);
  const std::vector<int64_t> theirs = root.to_vector<int64_t>();
  Tensor differs = tensor(std::vector<double>{mine == theirs ? 0.0 : 1.0});
  all_reduce(differs, ReduceOp::Sum);
  if (differs.item<double>() > 0) {
    std::ostringstream os;
    os << "the ranks hold different models: rank 0 has " << theirs[0] << " parameters with " << theirs[1]
       << " elements, this rank (" << where() << ") " << mine[0] << " with " << mine[1] << " elements"
       << (mine == theirs ? " (this rank matches rank 0; another does not)"
                          : (mine[0] == theirs[0] && mine[1] == theirs[1] ? ", with other shapes" : ""))
       << "; build the same model on every rank";
    EMBER_FAIL("DataParallel", os.str());
  }

  State& s = *state_;
  s.params = params_;
  s.buckets = plan_buckets(params_, options_.bucket_bytes);
  s.place.resize(params_.size());
  for (size_t b = 0; b < s.buckets.size(); ++b) {
    s.flat.push_back(zeros({s.buckets[b].numel}, s.buckets[b].dtype));
    for (size_t k = 0; k < s.buckets[b].params.size(); ++k) s.place[s.buckets[b].params[k]] = {b, k};
    s.stats.bytes += s.buckets[b].bytes();
  }
  s.packed.assign(params_.size(), 0);
  s.missing.assign(s.buckets.size(), 0);
  s.inflight.resize(s.buckets.size());

  if (options_.overlap) {
    // The hooks outlive nothing: they hold the state weakly, and do nothing
    // once this DataParallel is gone or when no step is armed.
    std::weak_ptr<State> weak = state_;
    for (size_t i = 0; i < params_.size(); ++i)
      params_[i].register_hook([weak, i](const Tensor& g) -> std::optional<Tensor> {
        if (auto s = weak.lock(); s && s->armed) s->gradient_ready(i, g);
        return std::nullopt;  // the gradient itself goes on unchanged
      });
  }
  broadcast_parameters();
}

DataParallel::~DataParallel() = default;

void DataParallel::broadcast_parameters() {
  NoGradGuard no_grad;
  for (const Tensor& p : params_) broadcast(p, 0);
}

void DataParallel::before_backward() {
  State& s = *state_;
  if (!options_.overlap) return;
  for (PendingReduce& r : s.inflight) r.wait();  // (a step that was not finished)
  std::fill(s.packed.begin(), s.packed.end(), 0);
  for (size_t b = 0; b < s.buckets.size(); ++b) s.missing[b] = static_cast<int64_t>(s.buckets[b].params.size());
  s.started = 0;
  s.armed = true;
}

void DataParallel::average_gradients() {
  NoGradGuard no_grad;
  State& s = *state_;
  auto t0 = Clock::now();
  if (!options_.overlap) {
    // After backward: each bucket packed, all-reduced, unpacked in turn.
    for (size_t b = 0; b < s.buckets.size(); ++b) {
      for (size_t i : s.buckets[b].params) s.pack(i, params_[i].grad());
      auto t1 = Clock::now();
      all_reduce_unchecked(s.flat[b], ReduceOp::Mean);
      s.stats.mpi_seconds += since(t1);
      s.unpack(b);
    }
  } else {
    EMBER_CHECK(s.armed, "DataParallel", "average_gradients() without before_backward() (overlap needs the hooks armed)");
    s.armed = false;
    // Parameters whose hook did not run got no gradient on this rank.
    for (size_t i = 0; i < params_.size(); ++i)
      if (!s.packed[i]) {
        s.pack(i, Tensor());
        --s.missing[s.place[i].first];
      }
    s.start_ready();
    for (size_t b = 0; b < s.buckets.size(); ++b) {
      auto t1 = Clock::now();
      s.inflight[b].wait();
      s.stats.mpi_seconds += since(t1);
      s.unpack(b);
    }
  }
  s.stats.sync_seconds += since(t0);
  ++s.stats.steps;
}

double DataParallel::average(double value) {
  Tensor t = tensor(std::vector<double>{value});
  all_reduce_unchecked(t, ReduceOp::Mean);
  return t.item<double>();
}

bool DataParallel::any(bool mine) {
  Tensor t = tensor(std::vector<double>{mine ? 1.0 : 0.0});
  all_reduce_unchecked(t, ReduceOp::Sum);
  return t.item<double>() > 0;
}

const std::vector<Bucket>& DataParallel::buckets() const { return state_->buckets; }
const SyncStats& DataParallel::stats() const { return state_->stats; }

}  // namespace ember::dist
