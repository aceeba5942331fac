/// @file
/// Profiler: every op call, forward and backward, with its time, its work
/// and how close it came to what this machine can do.
///
///   inspect::Profiler prof;
///   Tensor loss = model.loss(x, y);
///   loss.backward();
///   opt.step();
///   std::cout << prof.table();                 // by op, slowest first
///   std::cout << prof.report();                // by op, then by module
///   prof.write_chrome_trace("trace.json");     // chrome://tracing or ui.perfetto.dev
///
/// A forward row is one op (the OpScope of autograd/ops), labelled with the
/// module it ran in; a backward row is one Node's rule, labelled with where
/// it was recorded; an "upd" row is the optimizer's update or gradient
/// clipping (AdamW.step, clip_grad_norm_). An op's time includes the ops it
/// called ("total"); its "self" time does not. Ops that a backward rule runs
/// belong to that rule.
///
/// Work is what the kernels report (base/hooks.h), by these rules:
///   matmul        2·M·N·K floating-point operations per product (exact);
///                 reads A and B, writes C
///   elementwise   1 operation per output element (an exp or an erf costs
///                 more; the rule does not see it); reads every operand,
///                 writes the output; copies and fills: 0 operations
///   reductions    1 per input element (var 4, norm 2, softmax 4, log_softmax 5)
///   layer_norm    8 per element forward, 14 backward (dw and db included)
///   cross_entropy 4 per logit forward, 4 backward
///   index ops     0 operations (index_add_: 1 per source element); the rows moved
///   AdamW         13 per parameter element; parameter, gradient, two moments read
/// GFLOP/s and GB/s are work over total time; "% peak" compares them with
/// this machine's sgemm rate and memory bandwidth (machine_peaks()).
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "inspect/hub.h"

namespace ember::inspect {

/// What this machine can do: a 1024^3 float32 sgemm's rate and the
/// bandwidth of a large copy, with the current thread count. Measured once
/// (about a second), then cached in memory and in
/// $XDG_CACHE_HOME/ember/peaks.txt (or ~/.cache/ember/peaks.txt) by CPU
/// model, OpenBLAS kernel set and thread count — but only when the rest of
/// the machine stayed quiet meanwhile (less than a tenth of a core busy): a
/// peak measured beside other work is too low and would make every later
/// %peak too high, so it serves only the process that measured it.
struct MachinePeaks {
  double sgemm_gflops = 0;
  double memory_gbps = 0;
  std::string cpu;
  int threads = 0;
  bool from_cache = false;
  double others_cores = 0;  // what the rest of the machine used during the measurement, in cores
  bool quiet() const { return others_cores < 0.1; }
};
MachinePeaks machine_peaks();
/// The best quiet measurement cached for this CPU, kernel set and thread
/// count, if there is one (lines the cache holds from before ember checked
/// for quiet are not trusted).
std::optional<MachinePeaks> cached_machine_peaks();
/// Measures now, whatever is cached, and caches the result when it is
/// quiet (bench_ember --peaks: measure again after the machine has changed).
MachinePeaks measure_machine_peaks();

class Profiler : public Instrument {
 public:
  bool reads_gradients() const override { return false; }  // times and bytes only
  /// What an op or a node belongs to: "fwd" (a forward op), "bwd" (a node's
  /// rule) or "upd" (an optimizer's update, gradient clipping: AdamW.step,
  /// clip_grad_norm_). The one rule behind the table's "pass" column and
  /// the Chrome trace's categories.
  static const char* pass_of(const std::string& name, bool backward);

  /// One op call or one backward node run.
  struct Event {
    std::string name;          // "matmul", "MatmulBackward"
    std::string module;        // "blocks.0.attn" (forward) or where the node was recorded (backward)
    std::string shapes;        // the inputs' shapes, "(16, 64, 128) x (128, 128)"
    bool backward = false;     // a node's rule (else a forward op, or an optimizer update)
    double start_ms = 0, total_ms = 0, self_ms = 0;
    double flops = 0, bytes_read = 0, bytes_written = 0;  // including the ops it called
    int depth = 0;             // 0: called by the program; 1+: called by another op
    int parent = -1;           // the event that called it (index into events())
    const char* pass() const { return pass_of(name, backward); }
  };
  /// A row of the table: the events of one op (or one module) added up.
  struct Row {
    std::string key, module, shapes;
    bool backward = false;
    int64_t calls = 0;
    double total_ms = 0, self_ms = 0, flops = 0, bytes = 0;
    const char* pass() const { return pass_of(key, backward); }
  };
  enum class By { Op, Module };

  Profiler();
  ~Profiler() override;

  const std::vector<Event>& events() const { return events_; }
  /// Rows by op (name and forward/backward) or by module, slowest self time first.
  std::vector<Row> rows(By by = By::Op) const;
  /// The rows as a table (at most `limit`), with GFLOP/s, GB/s and % of this
  /// machine's peaks, and the totals.
  std::string table(By by = By::Op, size_t limit = 25) const;
  /// Both tables, by op then by module, and the totals and this machine's
  /// peaks once, below them.
  std::string report(size_t op_limit = 25, size_t module_limit = 25) const;
  /// Chrome trace-event JSON ("X" events in ms), for chrome://tracing or
  /// Perfetto: one row (tid) per pass, each event's "cat" its pass_of().
  void write_chrome_trace(const std::string& path) const;
  /// Wall time from the first event's start to the last event's end.
  double span_ms() const;
  /// The time other instruments watching at once spent in their handlers
  /// within span_ms(), inside the events (left out of each event's time) and
  /// between them.
  double others_ms() const { return others_ms_; }

  // ---- the events it records ----
  void op_begin(const char* op, const std::vector<const Tensor*>& inputs) override;
  void op_end(const char* op) override;
  void node_begin(const Node& node, const Tensor& grad_out) override;
  void node_end(const Node& node) override;
  void node_failed(const Node& node, const std::string& error) override;
  void work(double flops, double bytes_read, double bytes_written) override;

 private:
  void open(std::string name, std::string module, std::string shapes, bool backward);
  std::string rows_text(By by, size_t limit) const;
  std::string footer() const;
  void close();
  std::vector<Event> events_;
  std::vector<size_t> open_;  // indices of the events still running, innermost last
  std::vector<double> open_others_;  // Context::others_ms() when each of them opened
  double others_ms_ = 0;             // the other instruments' time from the first event's start to the last one's end
  double others_at_first_ = 0;       // Context::others_ms() when the first event opened
  int ops_in_rule_ = 0;       // ops open inside a backward rule (counted into the rule)
};

}  // namespace ember::inspect
