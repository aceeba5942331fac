// bench_distributed: data-parallel training on this machine, measured (the numbers
// of docs/book/10_several_processes.md).
//
//   bench_distributed [--threads N] [--steps S] [--rounds R]       one process: the baseline
//   mpirun -np 2 bench_distributed [--steps S] [--rounds R]         2 ranks (1 thread each)
//   mpirun -np 2 bench_distributed --allreduce                      all-reduce time by message size
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
// for the slower rank to arrive).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "distributed/data_parallel.h"
#include "ember.h"

using namespace ember;

namespace {

struct Config {
  std::string name;
  int64_t bucket_bytes;  // 0: no DataParallel (one process)
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
  std::optional<distributed::DataParallel> ddp;
  if (c.bucket_bytes > 0) {
    ddp.emplace(model.parameters(), distributed::DataParallelOptions{.bucket_bytes = c.bucket_bytes});
    trainer.set_replicas(*ddp);
  }
  for (int i = 0; i < 3; ++i) trainer.step();  // warm: caches, allocator, the step-0 evaluation
  const distributed::SyncStats before = ddp ? ddp->stats() : distributed::SyncStats{};
  std::vector<double> ms;
  for (int64_t i = 0; i < steps; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    trainer.step();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  Result r{ms[ms.size() / 2], 0, 0, 0, 0};
  if (ddp) {
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
  bool allreduce = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--threads" && i + 1 < argc) threads = std::atoi(argv[++i]);
    else if (arg == "--steps" && i + 1 < argc) steps = std::atoll(argv[++i]);
    else if (arg == "--rounds" && i + 1 < argc) rounds = std::atoll(argv[++i]);
    else if (arg == "--allreduce") allreduce = true;
    else {
      std::printf("usage: [mpirun -np N] %s [--threads T] [--steps S] [--rounds R] [--allreduce]\n", argv[0]);
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
  if (ranks == 1) {
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
    std::printf("%-18s %8s %9s %8s %8s %8s %9s\n", "gradients", "ms/step", "tok/s", "sync ms", "MPI ms", "buckets",
                "MiB/step");
    for (size_t c = 0; c < configs.size(); ++c) {
      std::vector<double> step, sync, mpi;
      for (const Result& r : results[c]) {
        step.push_back(r.step_ms);
        sync.push_back(r.sync_ms);
        mpi.push_back(r.mpi_ms);
      }
      const double s = median(step);
      std::printf("%-18s %8.2f %9.0f %8.2f %8.2f %8zu %9.2f\n", configs[c].name.c_str(), s, 16 * 64 / (s * 1e-3),
                  median(sync), median(mpi), results[c][0].buckets,
                  static_cast<double>(results[c][0].bytes) / (1 << 20));
    }
  }
  if (distributed::is_initialized()) distributed::finalize();
  return 0;
}
