// What each rank keeps, with every rank keeping everything (DataParallel) and
// with ZeRO stages 1 and 2 (distributed/zero.h), measured by the memory
// timeline on every rank and set beside the closed form; the bytes each step
// hands to MPI, and the step time.
//
//   mpirun -np 1 ./build/examples/zero_memory                 one rank
//   mpirun -np 2 ./build/examples/zero_memory --rows m.tsv    2 ranks (rows appended to m.tsv)
//   ./build/examples/zero_memory --plot m.tsv --png zero_memory.png   the picture of the rows
//
// The model and step are train_gpt's defaults (GPT dim 128, 3 layers,
// context 64, batch 16, AdamW, clipping at 1). For each of DataParallel,
// stage 1 and stage 2: a fresh model, a memory timeline on each rank, 3
// steps; what the timeline holds after the last one, by kind, is what a rank
// keeps between steps; the timeline's peaks are of the gradients and of
// the whole step (every kind at once). Then, with no instrument, --reps
// timed steps.
// Exit status 1 if any rank's parameters, gradients or optimizer state
// differ from the closed form (distributed::model_state_bytes) by one byte.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "common/program.h"
#include "common/report.h"
#include "common/tiny_gpt.h"
#include "distributed/zero.h"
#include "ember.h"
#include "inspect/memory.h"
#include "plot/plot.h"

using namespace ember;

namespace {

struct Options {
  int64_t reps = 9, batch = 16;
  std::string rows, plot_from, png;
};

const char* const kModes[] = {"DataParallel", "ZeRO stage 1", "ZeRO stage 2"};

struct Measured {  // one rank, one mode
  int64_t params = 0, grads = 0, state = 0, grads_peak = 0, peak = 0;
  int64_t handed = 0;  // bytes per step given to the collectives (the replicas' own count)
  double step_ms = 0;
};

double mib(int64_t b) { return static_cast<double>(b) / (1 << 20); }

Measured measure(int stage, const std::string& text, int64_t reps, int64_t batch) {
  const int ranks = distributed::is_initialized() ? distributed::world_size() : 1;
  train::CharTokenizer tok = train::CharTokenizer::from_text(text);
  nn::GPTConfig cfg;
  train::TrainOptions opt;
  examples::tiny_gpt_defaults(cfg, opt);
  cfg.vocab_size = tok.vocab_size();
  opt.batch = batch;
  opt.steps = 3 + reps;
  opt.eval_every = 1 << 30;  // only the step-0 evaluation
  opt.eval_batches = 1;
  Measured m;
  nn::GPT model(cfg);
  std::unique_ptr<distributed::DataParallel> replicas;
  std::optional<train::Trainer> trainer;
  {
    inspect::MemoryTimeline mem;
    mem.track(model.parameters(), MemoryKind::Parameters);
    if (stage > 0)
      replicas = std::make_unique<distributed::Zero>(model.parameters(), distributed::ZeroOptions{.stage = stage});
    else if (ranks > 1)
      replicas = std::make_unique<distributed::DataParallel>(model.parameters());
    trainer.emplace(model, tok.encode(text), opt);
    if (replicas) trainer->set_replicas(*replicas);
    for (int i = 0; i < 3; ++i) trainer->step();
    const inspect::MemoryTimeline::Bytes live = mem.live();
    m.params = live[static_cast<size_t>(MemoryKind::Parameters)];
    m.grads = live[static_cast<size_t>(MemoryKind::Gradients)];
    m.state = live[static_cast<size_t>(MemoryKind::OptimizerState)];
    for (const auto& s : mem.samples()) m.grads_peak = std::max(m.grads_peak, s.live[static_cast<size_t>(MemoryKind::Gradients)]);
    m.peak = mem.peak().bytes;  // every kind at once: activations, temporaries and the collectives' buffers too
  }
  std::vector<double> ms;
  for (int64_t i = 0; i < reps; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    trainer->step();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  m.step_ms = ms.empty() ? 0 : ms[ms.size() / 2];
  if (auto* z = dynamic_cast<distributed::Zero*>(replicas.get())) {
    const distributed::ZeroStats& st = z->zero_stats();
    m.handed = st.all_reduce_bytes + st.reduce_scatter_bytes + st.all_gather_bytes + st.norm_bytes;
  } else if (replicas) {
    m.handed = replicas->stats().bytes;
  }
  return m;
}

// The bytes one rank sends per step under ring algorithms, for a message of
// S bytes among N ranks: an all-reduce 2 (N-1)/N S, a reduce-scatter and an
// all-gather (N-1)/N S each.
double ring_sent(int stage, double grad_bytes, double norm_bytes, int n) {
  const double k = static_cast<double>(n - 1) / n;
  if (stage == 0) return 2 * k * grad_bytes;
  const double sync = stage == 1 ? 2 * k * grad_bytes : k * grad_bytes;
  return sync + k * grad_bytes + 2 * k * norm_bytes;
}

int measure_all(const Options& o) {
  const int ranks = distributed::is_initialized() ? distributed::world_size() : 1;
  const int rank = ranks > 1 ? distributed::rank() : 0;
  const std::string text = train::read_text_file(std::string(EMBER_DATA_DIR) + "/tinyshakespeare.txt.gz");
  // The closed form needs the parameter list: the same model, unbuilt by any replicas.
  train::CharTokenizer tok = train::CharTokenizer::from_text(text);
  nn::GPTConfig cfg;
  train::TrainOptions opt;
  examples::tiny_gpt_defaults(cfg, opt);
  cfg.vocab_size = tok.vocab_size();
  opt.batch = o.batch;
  const nn::GPT shape_model(cfg);
  const std::vector<Tensor> params = shape_model.parameters();
  const distributed::ShardPlan plan = distributed::plan_shards(params, ranks);
  const int64_t P = plan.numel, n = static_cast<int64_t>(params.size());

  bool all_equal = true;
  std::ostringstream rows;
  int64_t handed[3] = {0, 0, 0};
  if (rank == 0) {
    std::printf("%d rank(s); GPT dim %lld, %lld layers, context %lld, batch %lld: %lld parameters in %lld tensors, "
                "cut into %d shard(s) of",
                ranks, static_cast<long long>(cfg.dim), static_cast<long long>(cfg.layers),
                static_cast<long long>(cfg.context_length), static_cast<long long>(opt.batch), static_cast<long long>(P),
                static_cast<long long>(n), ranks);
    for (int r = 0; r < ranks; ++r) std::printf("%s %lld", r ? "," : "", static_cast<long long>(plan.size(r)));
    std::printf(" elements\n\nwhat each rank keeps between steps (MiB; measured = closed form, byte for byte, unless marked)\n");
    std::printf("%-13s %4s %11s %10s %16s %16s %14s %11s %9s\n", "", "rank", "parameters", "gradients", "optimizer state",
                "state x N / all", "gradient peak", "step peak", "ms/step");
  }
  for (int stage = 0; stage <= 2; ++stage) {
    const Measured m = measure(stage, text, o.reps, o.batch);
    const distributed::ModelStateBytes cf = distributed::model_state_bytes(params, ranks, rank, stage);
    const bool equal = m.params == cf.parameters && m.grads == cf.gradients && m.state == cf.optimizer_state;
    // The state of a rank against the ideal 1/N of the whole (2 f P + 8 n).
    const double whole = static_cast<double>(distributed::model_state_bytes(params, 1, 0, 0).optimizer_state);
    const double ratio = static_cast<double>(m.state) * (stage > 0 ? ranks : 1) / whole;
    char line[400];
    std::snprintf(line, sizeof line, "%-13s %4d %11.3f %10.3f %16.3f %16.4f %14.3f %11.3f %9.2f%s\n", kModes[stage], rank,
                  mib(m.params), mib(m.grads), mib(m.state), ratio, mib(m.grads_peak), mib(m.peak), m.step_ms,
                  equal ? "" : "  differs from the closed form");
    std::string mine = line;
    if (!equal) {
      std::ostringstream why;
      why << "    closed form: parameters " << cf.parameters << ", gradients " << cf.gradients << ", optimizer state "
          << cf.optimizer_state << " bytes; measured " << m.params << ", " << m.grads << ", " << m.state << "\n";
      mine += why.str();
    }
    const std::vector<std::string> lines = ranks > 1 ? distributed::all_gather_text(mine) : std::vector<std::string>{mine};
    for (const std::string& l : lines) {
      if (rank == 0) std::cout << l;
      if (l.find("differs") != std::string::npos) all_equal = false;
    }
    handed[stage] = m.handed;
    if (rank == 0)
      rows << ranks << '\t' << stage << '\t' << m.params << '\t' << m.grads << '\t' << m.state << '\t' << m.step_ms << '\n';
  }
  if (rank == 0) {
    const int64_t f = 4, blocks = (P + optim::kNormBlock - 1) / optim::kNormBlock;
    const double g = static_cast<double>(f * P), nb = static_cast<double>(8 * blocks);
    // Counted: what the replicas gave MPI (each collective's whole buffer);
    // closed form: f P for the all-reduce, 2 f P + 8 blocks for the shards.
    // Sent: what a ring algorithm makes each rank send (MPI picks its own).
    std::printf("\nbytes per step and rank given to the collectives, counted and in closed form, and sent by a ring algorithm\n");
    std::printf("%-13s %-40s %14s %12s %15s\n", "", "collectives", "counted (MiB)", "closed form", "ring sent (MiB)");
    const char* what[] = {"all-reduce of the gradients", "all-reduce, norm blocks, all-gather", "reduce-scatter, norm blocks, all-gather"};
    for (int stage = 0; stage <= 2; ++stage) {
      const double closed = stage == 0 ? (ranks > 1 ? g : 0) : 2 * g + nb;
      const bool same = static_cast<double>(handed[stage]) == closed;
      all_equal = all_equal && same;
      std::printf("%-13s %-40s %14.3f %12.3f %15.3f%s\n", kModes[stage], what[stage], mib(handed[stage]), closed / (1 << 20),
                  ring_sent(stage, g, nb, ranks) / (1 << 20), same ? "" : "  differs from the closed form");
    }
    if (!o.rows.empty()) {
      std::ofstream out(o.rows, std::ios::app);
      EMBER_CHECK(out, "zero_memory", "cannot append to " << o.rows);
      out << rows.str();
    }
    std::printf("%s\n", all_equal ? "every rank's model state, and every count of bytes, equals its closed form"
                                  : "zero_memory: a rank's model state or a count of bytes differs from its closed form");
  }
  return all_equal ? 0 : 1;
}

// The rows of several runs (1, 2, 4 ranks) as stacked bars: rank 0's model
// state by kind, for each rank count and mode.
int draw(const Options& o) {
  std::ifstream in(o.plot_from);
  EMBER_CHECK(in, "zero_memory", "cannot read " << o.plot_from);
  plot::BarChart c;
  c.title = "What rank 0 keeps between steps, by number of ranks: whole copies (DDP) or ZeRO's shards";
  c.y.label = "MiB on rank 0";
  c.width = 1600;
  plot::Series p{"parameters"}, g{"gradients"}, s{"optimizer state"};
  int ranks = 0, stage = 0;
  int64_t a = 0, b = 0, d = 0;
  double ms = 0;
  const char* const short_mode[] = {"DDP", "ZeRO-1", "ZeRO-2"};
  while (in >> ranks >> stage >> a >> b >> d >> ms) {
    EMBER_CHECK(stage >= 0 && stage <= 2 && ranks >= 1, "zero_memory", o.plot_from << ": a row with stage " << stage);
    c.names.push_back(std::to_string(ranks) + ": " + short_mode[stage]);
    p.y.push_back(mib(a));
    g.y.push_back(mib(b));
    s.y.push_back(mib(d));
  }
  EMBER_CHECK(!c.names.empty(), "zero_memory", o.plot_from << " holds no rows");
  c.stacks = {p, g, s};
  examples::check_picture(plot::layout_problems(plot::write_png(c, o.png)), "zero_memory", o.png);
  std::printf("wrote %s (%zu bars)\n", o.png.c_str(), c.names.size());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Model state per rank with DataParallel and ZeRO stages 1 and 2, against the closed form."};
  examples::show_defaults(app);
  Options o;
  app.add_option("--reps", o.reps, "timed steps per mode (the median is printed)")->check(examples::at_least<int64_t>(1));
  app.add_option("--batch", o.batch, "sequences per step, split over the ranks")->check(examples::at_least<int64_t>(1));
  app.add_option("--rows", o.rows, "append rank 0's numbers to this file (one row per mode)");
  app.add_option("--plot", o.plot_from, "draw the rows of this file instead of measuring (with --png)");
  app.add_option("--png", o.png, "the picture to write with --plot");
  EMBER_PARSE("zero_memory", app, argc, argv);
  if (!o.plot_from.empty()) {
    return examples::run("zero_memory", [&] {
      EMBER_CHECK(!o.png.empty(), "zero_memory", "--plot needs --png PATH");
      return draw(o);
    });
  }
  // The stages shard over the ranks of a job: even one rank is a job
  // (mpirun -np 1), so that every mode runs the same code.
  if (examples::run("zero_memory", [] {
        EMBER_CHECK(distributed::launched(), "zero_memory",
                    "ZeRO's shards are the ranks of an MPI job: start it with mpirun -np N (N = 1 too), e.g. "
                    "mpirun -np 2 ./build/examples/zero_memory");
        distributed::init();
        return 0;
      }) != 0)
    return 1;
  set_num_threads(distributed::is_initialized() && distributed::world_size() > 1 ? 1 : 2);
  const int status = examples::run("zero_memory", [&] { return measure_all(o); });
  if (distributed::is_initialized()) {
    if (status != 0 && distributed::world_size() > 1) distributed::abort(status);
    distributed::finalize();
  }
  return status;
}
