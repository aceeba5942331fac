// bench_distributed: data-parallel training on this machine, measured (the numbers
// of docs/book/10_several_processes.md).
//
//   bench_distributed [--threads N] [--steps S] [--rounds R]       one process: the baseline
//   mpirun -np 2 bench_distributed [--steps S] [--rounds R]         2 ranks (1 thread each)
//   mpirun -np 2 bench_distributed --allreduce                      all-reduce time by message size
//   mpirun -np 2 bench_distributed --zero                           DataParallel against ZeRO stages 1 and 2
//
// The workload is train_gpt's default: GPT dim 128, 3 layers, 4 heads,
// context 64, a (global) batch of 16, AdamW, gradient clipping, through
// train::Trainer. Under mpirun it runs once per configuration (gradients
// all-reduced one tensor at a time, or in buckets of 64 KiB .. 4 MiB), R
// rounds taken in turn so that drift of the machine hits every configuration
// alike. Each round: a fresh model, 3 untimed steps, then S timed steps.
// Printed per configuration, medians over the rounds of rank 0's numbers:
// ms per step (the median step of each round), tokens per second (of the
// whole batch), ms per step spent synchronising gradients (packing, MPI,
// unpacking) and the part of it inside MPI_Allreduce (which includes waiting
// for the slower rank to arrive). With --zero the configurations are
// DataParallel and distributed::Zero at stages 1 and 2 (buckets of 4 MiB),
// and the sync columns are the whole sharded update for Zero (the gradients'
// synchronisation, the shard's AdamW step and the all-gather) against
// DataParallel's all-reduce alone; compare the ms/step.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "distributed/data_parallel.h"
#include "distributed/zero.h"
#include "ember.h"

using namespace ember;

namespace {

struct Config {
  std::string name;
  int64_t bucket_bytes;  // 0: no DataParallel (one process)
  int zero = 0;          // ZeRO stage (0: DataParallel)
};

struct Result {
  double step_ms, sync_ms, mpi_ms;
  size_t buckets;
  int64_t bytes;
};

std::string corpus() { return train::read_text_file(std::string(EMBER_DATA_DIR) + "/tinyshakespeare.txt.gz"); }

Result run(const Config& c, const std::string& text, int64_t steps) {
  train::CharTokenizer tok = train::CharTokenizer::from_text(text);
  nn::GPTConfig g;
  g.vocab_size = tok.vocab_size();
  g.context_length = 64;
  g.dim = 128;
  g.heads = 4;
  g.layers = 3;
  nn::GPT model(g);
  train::TrainOptions o;
  o.steps = steps + 3;
  o.batch = 16;
  o.eval_every = 1 << 30;  // no evaluation but the step-0 one (untimed)
  o.eval_batches = 1;
  train::Trainer trainer(model, tok.encode(text), o);
  std::unique_ptr<distributed::DataParallel> ddp;
  distributed::Zero* zero = nullptr;
  if (c.zero > 0) {
    auto z = std::make_unique<distributed::Zero>(model.parameters(),
                                                 distributed::ZeroOptions{.stage = c.zero, .bucket_bytes = c.bucket_bytes});
    zero = z.get();
    ddp = std::move(z);
  } else if (c.bucket_bytes > 0) {
    ddp = std::make_unique<distributed::DataParallel>(model.parameters(),
                                                      distributed::DataParallelOptions{.bucket_bytes = c.bucket_bytes});
  }
  if (ddp) trainer.set_replicas(*ddp);
  for (int i = 0; i < 3; ++i) trainer.step();  // warm: caches, allocator, the step-0 evaluation
  const distributed::SyncStats before = ddp ? ddp->stats() : distributed::SyncStats{};
  const distributed::ZeroStats zbefore = zero ? zero->zero_stats() : distributed::ZeroStats{};
  std::vector<double> ms;
  for (int64_t i = 0; i < steps; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    trainer.step();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  Result r{ms[ms.size() / 2], 0, 0, 0, 0};
  if (zero) {
    const distributed::ZeroStats& s = zero->zero_stats();
    const double n = static_cast<double>(s.steps - zbefore.steps);
    r.sync_ms = 1e3 * (s.update_seconds - zbefore.update_seconds) / n;
    r.mpi_ms = 1e3 * (s.mpi_seconds - zbefore.mpi_seconds) / n;
    r.buckets = ddp->buckets().size();
    r.bytes = s.all_reduce_bytes + s.reduce_scatter_bytes + s.all_gather_bytes + s.norm_bytes;
  } else if (ddp) {
    const distributed::SyncStats& s = ddp->stats();
    const double n = static_cast<double>(s.steps - before.steps);
    r.sync_ms = 1e3 * (s.sync_seconds - before.sync_seconds) / n;
    r.mpi_ms = 1e3 * (s.mpi_seconds - before.mpi_seconds) / n;
    r.buckets = ddp->buckets().size();
    r.bytes = s.bytes;
  }
  return r;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// MPI_Allreduce of float32 messages from 4 KiB to 4 MiB: the cost of one
// call against its size (the latency that buckets amortize).
void allreduce_table() {
  if (distributed::rank() == 0) std::printf("%10s %10s %10s\n", "bytes", "us", "GB/s");
  for (int64_t bytes = 4 << 10; bytes <= (4 << 20); bytes *= 4) {
    Tensor t = ones({bytes / 4});
    for (int i = 0; i < 5; ++i) distributed::all_reduce_unchecked(t);
    std::vector<double> us;
    for (int i = 0; i < 50; ++i) {
      distributed::barrier();
      auto t0 = std::chrono::steady_clock::now();
      distributed::all_reduce_unchecked(t);
      us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
    }
    const double m = median(us);
    if (distributed::rank() == 0) std::printf("%10lld %10.1f %10.2f\n", static_cast<long long>(bytes), m, bytes / m / 1e3);
  }
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 0;
  int64_t steps = 30, rounds = 5;
  bool allreduce = false, zero = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--threads" && i + 1 < argc) threads = std::atoi(argv[++i]);
    else if (arg == "--steps" && i + 1 < argc) steps = std::atoll(argv[++i]);
    else if (arg == "--rounds" && i + 1 < argc) rounds = std::atoll(argv[++i]);
    else if (arg == "--allreduce") allreduce = true;
    else if (arg == "--zero") zero = true;
    else {
      std::printf("usage: [mpirun -np N] %s [--threads T] [--steps S] [--rounds R] [--allreduce | --zero]\n", argv[0]);
      return arg == "-h" || arg == "--help" ? 0 : 2;
    }
  }
  if (distributed::launched()) distributed::init();
  const int ranks = distributed::is_initialized() ? distributed::world_size() : 1;
  const bool main_rank = ranks == 1 || distributed::rank() == 0;
  if (threads <= 0) threads = ranks > 1 ? 1 : 2;
  set_num_threads(threads);
  if (allreduce) {
    if (ranks > 1) allreduce_table();
    if (distributed::is_initialized()) distributed::finalize();
    return 0;
  }

  std::vector<Config> configs;
  if (zero) {
    const int64_t four = int64_t{4} << 20;
    configs = {{"DataParallel", four, 0}, {"ZeRO stage 1", four, 1}, {"ZeRO stage 2", four, 2}};
  } else if (ranks == 1) {
    configs.push_back({"one process", 0});
  } else {
    configs.push_back({"per tensor", 1});  // every parameter its own all-reduce
    for (int64_t kb : {64, 256, 1024, 4096}) configs.push_back({std::to_string(kb) + " KiB", kb << 10});
  }
  const std::string text = corpus();
  std::vector<std::vector<Result>> results(configs.size());
  for (int64_t r = 0; r < rounds; ++r)
    for (size_t c = 0; c < configs.size(); ++c) results[c].push_back(run(configs[c], text, steps));

  if (main_rank) {
    std::printf("%d process(es) x %d thread(s), %lld rounds of %lld steps, batch 16 x 64 tokens\n", ranks, threads,
                static_cast<long long>(rounds), static_cast<long long>(steps));
    std::printf("%-18s %8s %9s %8s %8s %8s %9s%s\n", "gradients", "ms/step", "tok/s", "sync ms", "MPI ms", "buckets",
                "MiB/step", zero ? "  vs DataParallel" : "");
    double ddp_ms = 0;
    for (size_t c = 0; c < configs.size(); ++c) {
      std::vector<double> step, sync, mpi;
      for (const Result& r : results[c]) {
        step.push_back(r.step_ms);
        sync.push_back(r.sync_ms);
        mpi.push_back(r.mpi_ms);
      }
      const double s = median(step);
      if (c == 0) ddp_ms = s;
      std::printf("%-18s %8.2f %9.0f %8.2f %8.2f %8zu %9.2f", configs[c].name.c_str(), s, 16 * 64 / (s * 1e-3),
                  median(sync), median(mpi), results[c][0].buckets,
                  static_cast<double>(results[c][0].bytes) / (1 << 20));
      if (zero) std::printf("  %.3fx", s / ddp_ms);
      std::printf("\n");
    }
  }
  if (distributed::is_initialized()) distributed::finalize();
  return 0;
}
