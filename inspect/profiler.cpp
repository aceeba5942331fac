#include "inspect/profiler.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <nlohmann/json.hpp>
#include <sstream>

#include <unistd.h>

#include "autograd/node.h"
#include "base/io.h"
#include "tensor/machine/blas_library.h"
#include "tensor/parallel.h"
#include "tensor/storage.h"

namespace ember::inspect {

// ---- what this machine can do ----
namespace {

std::string cpu_model() {
  // The BLAS kernels in use decide the sgemm peak as much as the CPU does.
  const BlasInfo b = blas_info();
  return b.cpu + ", OpenBLAS " + b.core;
}

std::filesystem::path cache_file() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  if (xdg && *xdg) return std::filesystem::path(xdg) / "ember" / "peaks.txt";
  if (home && *home) return std::filesystem::path(home) / ".cache" / "ember" / "peaks.txt";
  return {};
}

// A peak is what the machine can do: the fastest of `reps` runs, after
// running for `warm_ms` first (threads woken, caches and clocks up; on a
// virtual machine an idle core can take milliseconds to come back).
template <typename F>
double fastest_ms(int reps, double warm_ms, const F& f) {
  for (const double t0 = now_ms(); now_ms() - t0 < warm_ms;) f();
  double best = 0;
  for (int r = 0; r < reps; ++r) {
    const double t0 = now_ms();
    f();
    const double t = now_ms() - t0;
    if (r == 0 || t < best) best = t;
  }
  return best;
}

// Clock ticks of CPU time since boot: the whole machine's busy time (every
// core, steal included: a hypervisor's other guests count as load) and this
// process's (all its threads). Linux's /proc; -1 where it cannot be read.
struct CpuTicks {
  long long machine_busy = -1;
  long long self = -1;
};

CpuTicks cpu_ticks() {
  CpuTicks t;
  std::ifstream stat("/proc/stat");
  std::string cpu;
  long long user = 0, nice = 0, sys = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  if (stat >> cpu >> user >> nice >> sys >> idle >> iowait >> irq >> softirq >> steal && cpu == "cpu")
    t.machine_busy = user + nice + sys + irq + softirq + steal;
  // /proc/self/stat: "pid (name) state ..." with utime and stime the 14th
  // and 15th fields; the name may hold spaces, so count from its ")".
  std::ifstream self("/proc/self/stat");
  std::string line;
  std::getline(self, line);
  const size_t close = line.rfind(')');
  if (close != std::string::npos) {
    std::istringstream rest(line.substr(close + 1));
    std::vector<std::string> f;
    for (std::string x; rest >> x;) f.push_back(x);
    if (f.size() > 12) t.self = std::atoll(f[11].c_str()) + std::atoll(f[12].c_str());
  }
  return t;
}

MachinePeaks measure() {
  MachinePeaks p;
  const CpuTicks before = cpu_ticks();
  const double t0 = now_ms();
  // With every configured thread, whatever else runs: a peak measured on
  // fewer threads would make every later %peak wrong.
  const bool adaptive = adaptive_threads();
  set_adaptive_threads(false);
  // sgemm: 1024^3, the kernel ember's matmul calls (2 n^3 operations).
  const int n = 1024;
  std::vector<float> a(static_cast<size_t>(n) * n, 1.0f), b(a), c(a);
  auto gemm = [&] { blas::sgemm(false, false, n, n, n, 1, a.data(), n, b.data(), n, 0, c.data(), n); };
  blas::set_num_threads(get_num_threads());  // OpenBLAS's own split, for this one call (ember's runs it on 1)
  p.sgemm_gflops = 2.0 * n * n * n / (fastest_ms(10, 200, gemm) * 1e6);
  blas::set_num_threads(1);
  // bandwidth: copying 256 MiB with ember's threads (read + write counted)
  const size_t bytes = size_t{256} << 20;
  void* src = allocator::allocate(bytes);
  void* dst = allocator::allocate(bytes);
  std::memset(src, 1, bytes);
  std::memset(dst, 0, bytes);
  auto copy = [&] {
    detail::parallel_for(static_cast<int64_t>(bytes), int64_t{1} << 20, [&](int64_t b0, int64_t b1) {
      std::memcpy(static_cast<char*>(dst) + b0, static_cast<char*>(src) + b0, static_cast<size_t>(b1 - b0));
    });
  };
  p.memory_gbps = 2.0 * static_cast<double>(bytes) / (fastest_ms(5, 100, copy) * 1e6);
  allocator::deallocate(src, bytes);
  allocator::deallocate(dst, bytes);
  set_adaptive_threads(adaptive);
  // What the rest of the machine used meanwhile, in cores: a peak measured
  // beside other work is too low, and every %peak against it too high.
  const CpuTicks after = cpu_ticks();
  const double seconds = (now_ms() - t0) / 1e3;
  const long ticks = sysconf(_SC_CLK_TCK);
  if (before.machine_busy >= 0 && before.self >= 0 && after.machine_busy >= 0 && after.self >= 0 && ticks > 0 &&
      seconds > 0) {
    const double others = static_cast<double>((after.machine_busy - before.machine_busy) - (after.self - before.self));
    p.others_cores = std::max(0.0, others / static_cast<double>(ticks) / seconds);
  }
  return p;
}

// The cache's lines: "cpu|threads|gflops|gbps|others" (others: the cores
// the rest of the machine used during the measurement). Lines without it
// were written before that was checked, and are not trusted.
std::vector<MachinePeaks> cached_peaks(const std::filesystem::path& file) {
  std::vector<MachinePeaks> all;
  std::ifstream in(file);
  std::string line;
  while (!file.empty() && std::getline(in, line)) {
    std::vector<std::string> f;
    std::stringstream ss(line);
    for (std::string x; std::getline(ss, x, '|');) f.push_back(x);
    if (f.size() != 5) continue;
    MachinePeaks p;
    p.cpu = f[0];
    p.threads = std::atoi(f[1].c_str());
    p.sgemm_gflops = std::atof(f[2].c_str());
    p.memory_gbps = std::atof(f[3].c_str());
    p.others_cores = std::atof(f[4].c_str());
    p.from_cache = true;
    if (p.threads > 0 && p.sgemm_gflops > 0 && p.memory_gbps > 0 && p.quiet()) all.push_back(p);
  }
  return all;
}

// Appends a quiet measurement to the cache (best effort: a read-only home
// only means measuring again next time); one taken beside other work is
// used by this process only.
void cache_peaks(const MachinePeaks& p) {
  const std::filesystem::path file = cache_file();
  if (file.empty() || !p.quiet()) return;
  std::error_code ec;
  std::filesystem::create_directories(file.parent_path(), ec);
  std::ofstream out(file, std::ios::app);
  out << p.cpu << "|" << p.threads << "|" << p.sgemm_gflops << "|" << p.memory_gbps << "|" << p.others_cores << "\n";
}

}  // namespace

std::optional<MachinePeaks> cached_machine_peaks() {
  const std::string cpu = cpu_model();
  const int threads = get_num_threads();
  // The best of the quiet measurements: one is only ever too low, never too high.
  MachinePeaks best;
  for (const MachinePeaks& c : cached_peaks(cache_file())) {
    if (c.cpu != cpu || c.threads != threads) continue;
    best.sgemm_gflops = std::max(best.sgemm_gflops, c.sgemm_gflops);
    best.memory_gbps = std::max(best.memory_gbps, c.memory_gbps);
  }
  if (best.sgemm_gflops <= 0 || best.memory_gbps <= 0) return std::nullopt;
  best.cpu = cpu;
  best.threads = threads;
  best.from_cache = true;
  return best;
}

MachinePeaks machine_peaks() {
  static std::map<int, MachinePeaks> measured;  // by thread count, in this process
  const int threads = get_num_threads();
  if (auto it = measured.find(threads); it != measured.end()) return it->second;
  if (std::optional<MachinePeaks> c = cached_machine_peaks()) return measured[threads] = *c;
  return measured[threads] = measure_machine_peaks();
}

MachinePeaks measure_machine_peaks() {
  MachinePeaks p = measure();
  p.cpu = cpu_model();
  p.threads = get_num_threads();
  cache_peaks(p);
  return p;
}

// ---- recording ----
Profiler::Profiler() { start(); }
Profiler::~Profiler() { stop(); }

namespace {
std::string shapes_of(const std::vector<const Tensor*>& inputs) {
  std::string s;
  for (const Tensor* t : inputs) {
    if (!s.empty()) s += " x ";
    s += shape_text(t->shape());
  }
  return s;
}
}  // namespace

void Profiler::open(std::string name, std::string module, std::string shapes, bool backward) {
  Event e;
  e.name = std::move(name);
  e.module = std::move(module);
  e.shapes = std::move(shapes);
  e.backward = backward;
  e.depth = static_cast<int>(open_.size());
  e.parent = open_.empty() ? -1 : static_cast<int>(open_.back());
  events_.push_back(std::move(e));
  open_.push_back(events_.size() - 1);
  open_others_.push_back(Context::others_ms(this));
  if (events_.size() == 1) others_at_first_ = open_others_.back();
  events_.back().start_ms = now_ms();
}

void Profiler::close() {
  if (open_.empty()) return;
  Event& e = events_[open_.back()];
  open_.pop_back();
  // Other instruments' bookkeeping during the event is not the op's time.
  const double others = Context::others_ms(this) - open_others_.back();
  open_others_.pop_back();
  e.total_ms = std::max(0.0, now_ms() - e.start_ms - others);
  // Between the events too (a trace summarising the leaves' gradients after
  // the last node): all of it is inside span_ms().
  if (open_.empty()) others_ms_ = Context::others_ms(this) - others_at_first_;
  e.self_ms += e.total_ms;  // self_ms held minus the children's totals so far
  if (!open_.empty()) {
    Event& parent = events_[open_.back()];
    parent.self_ms -= e.total_ms;
    parent.flops += e.flops;
    parent.bytes_read += e.bytes_read;
    parent.bytes_written += e.bytes_written;
  }
}

void Profiler::op_begin(const char* op, const std::vector<const Tensor*>& inputs) {
  // An op run by a backward rule is part of that rule's row.
  if (!open_.empty() && events_[open_.back()].backward) {
    ++ops_in_rule_;
    return;
  }
  open(op, Context::module(), shapes_of(inputs), false);
}
void Profiler::op_end(const char*) {
  if (ops_in_rule_ > 0) {
    --ops_in_rule_;
    return;
  }
  close();
}
void Profiler::node_begin(const Node& node, const Tensor& grad_out) {
  // "blocks.0.attn.softmax" -> module "blocks.0.attn"
  const std::string& label = node.meta.label;
  const size_t dot = label.rfind('.');
  open(node.name(), dot == std::string::npos ? "" : label.substr(0, dot), shape_text(grad_out.shape()), true);
}
void Profiler::node_end(const Node&) { close(); }
void Profiler::node_failed(const Node&, const std::string&) { close(); }
void Profiler::work(double flops, double bytes_read, double bytes_written) {
  if (open_.empty()) return;  // work outside any op (nothing to charge it to)
  Event& e = events_[open_.back()];
  e.flops += flops;
  e.bytes_read += bytes_read;
  e.bytes_written += bytes_written;
}

// ---- reading ----
double Profiler::span_ms() const {
  if (events_.empty()) return 0;
  double lo = events_.front().start_ms, hi = lo;
  for (const Event& e : events_) hi = std::max(hi, e.start_ms + e.total_ms);
  return hi - lo;
}

std::vector<Profiler::Row> Profiler::rows(By by) const {
  std::map<std::pair<std::string, bool>, Row> grouped;
  std::map<std::pair<std::string, bool>, std::map<std::string, int>> modules;
  auto key_of = [by](const Event& e) { return by == By::Op ? e.name : (e.module.empty() ? "(top level)" : e.module); };
  for (const Event& e : events_) {
    const std::string key = key_of(e);
    Row& r = grouped[{key, e.backward}];
    r.key = key;
    r.backward = e.backward;
    ++r.calls;
    r.self_ms += e.self_ms;
    // An event inside another event of the same row is already in the outer one's total.
    bool nested = false;
    for (int p = e.parent; p >= 0 && !nested; p = events_[static_cast<size_t>(p)].parent)
      nested = key_of(events_[static_cast<size_t>(p)]) == key && events_[static_cast<size_t>(p)].backward == e.backward;
    if (!nested) {
      r.total_ms += e.total_ms;
      r.flops += e.flops;
      r.bytes += e.bytes_read + e.bytes_written;
    }
    ++modules[{key, e.backward}][by == By::Op ? e.module : e.name];
    if (r.shapes.empty()) r.shapes = e.shapes;
  }
  std::vector<Row> out;
  for (auto& [k, r] : grouped) {
    const auto& m = modules[k];
    r.module = m.size() == 1 ? m.begin()->first : std::to_string(m.size()) + (by == By::Op ? " modules" : " ops");
    out.push_back(r);
  }
  std::sort(out.begin(), out.end(), [](const Row& a, const Row& b) { return a.self_ms > b.self_ms; });
  return out;
}

const char* Profiler::pass_of(const std::string& name, bool backward) {
  // An optimizer's update is its step() ("AdamW.step", "SGD.step"); clipping rescales the gradients before it.
  const bool update = name == "clip_grad_norm_" || (name.size() > 5 && name.compare(name.size() - 5, 5, ".step") == 0);
  return backward ? "bwd" : update ? "upd" : "fwd";
}

std::string Profiler::table(By by, size_t limit) const { return rows_text(by, limit) + footer(); }

std::string Profiler::report(size_t op_limit, size_t module_limit) const {
  return rows_text(By::Op, op_limit) + "\n" + rows_text(By::Module, module_limit) + "\n" + footer();
}

std::string Profiler::rows_text(By by, size_t limit) const {
  const MachinePeaks peak = machine_peaks();
  const std::vector<Row> rs = rows(by);
  const double span = span_ms() - others_ms_;  // the program's time: the other instruments' left out
  std::ostringstream os;
  char line[512];
  std::snprintf(line, sizeof line, "%-24s %-5s %-22s %6s %9s %9s %6s %8s %6s %7s %6s\n", by == By::Op ? "op" : "module",
                "pass", by == By::Op ? "module" : "ops", "calls", "total ms", "self ms", "self%", "GFLOP/s", "%peak",
                "GB/s", "%bw");
  os << line << std::string(117, '-') << "\n";
  for (size_t i = 0; i < rs.size() && i < limit; ++i) {
    const Row& r = rs[i];
    const double gflops = r.total_ms > 0 ? r.flops / (r.total_ms * 1e6) : 0;
    const double gbps = r.total_ms > 0 ? r.bytes / (r.total_ms * 1e6) : 0;
    auto cut = [](const std::string& s, size_t n) { return s.size() <= n ? s : s.substr(0, n - 2) + ".."; };
    std::snprintf(line, sizeof line, "%-24s %-5s %-22s %6lld %9.3f %9.3f %5.1f%% %8.2f %5.1f%% %7.2f %5.1f%%\n",
                  cut(r.key, 24).c_str(), by == By::Op ? r.pass() : (r.backward ? "bwd" : "fwd"), cut(r.module, 22).c_str(),
                  static_cast<long long>(r.calls), r.total_ms, r.self_ms, span > 0 ? 100 * r.self_ms / span : 0, gflops,
                  peak.sgemm_gflops > 0 ? 100 * gflops / peak.sgemm_gflops : 0, gbps,
                  peak.memory_gbps > 0 ? 100 * gbps / peak.memory_gbps : 0);
    os << line;
  }
  if (rs.size() > limit) os << "... " << rs.size() - limit << " more rows\n";
  return os.str();
}

// The totals and this machine's peaks: what every table's numbers are measured against.
std::string Profiler::footer() const {
  const MachinePeaks peak = machine_peaks();
  const std::vector<Row> rs = rows(By::Op);
  const double span = span_ms() - others_ms_;
  double self_sum = 0, flops_sum = 0;
  for (const Row& r : rs) {
    self_sum += r.self_ms;
    flops_sum += r.flops;
  }
  std::ostringstream os;
  char line[512];
  std::string others;
  if (others_ms_ > 0) {
    char o[96];
    std::snprintf(o, sizeof o, ",\nand %.3f ms went to the other instruments watching (left out of every time above)", others_ms_);
    others = o;
  }
  std::snprintf(line, sizeof line,
                "%zu events in %.3f ms (self times add up to %.3f ms; the rest is the program between ops)%s\n"
                "%.3f GFLOP in all. This machine (%s, %d threads%s):\n"
                "sgemm %.1f GFLOP/s, memory %.1f GB/s (%%peak and %%bw are fractions of these);\n"
                "%%bw compares with a large copy: tensors small enough to stay in cache can go above 100%%\n",
                events_.size(), span, self_sum, others.c_str(), flops_sum / 1e9, peak.cpu.c_str(), peak.threads,
                peak.from_cache ? ", measured before and cached" : "", peak.sgemm_gflops, peak.memory_gbps);
  os << line;
  if (!peak.quiet()) {
    std::snprintf(line, sizeof line,
                  "(those were measured while other programs used %.1f cores: too low, so %%peak and %%bw are too high;\n"
                  " not cached: run bench_ember --peaks on a quiet machine)\n",
                  peak.others_cores);
    os << line;
  }
  // An op faster than the "peak": the peak was measured while the machine was
  // busy — unless products ran in bfloat16 (autocast), whose vdpbf16ps does
  // twice an FMA's work per instruction and passes a float32 peak honestly.
  double fastest = 0;
  bool bf16 = false;
  for (const Row& r : rs) {
    if (r.total_ms > 0) fastest = std::max(fastest, r.flops / (r.total_ms * 1e6));
    bf16 = bf16 || r.key == "matmul_bf16";
  }
  if (peak.sgemm_gflops > 0 && fastest > 1.1 * peak.sgemm_gflops) {
    if (bf16)
      os << "(an op ran at " << static_cast<int>(fastest) << " GFLOP/s, above that float32 sgemm peak: products ran "
         << "in bfloat16 (matmul_bf16 and its MatmulBackward), which can)\n";
    else
      os << "(an op ran at " << static_cast<int>(fastest) << " GFLOP/s, above that sgemm peak: it was measured while "
         << "something else ran; bench_ember --peaks measures it again)\n";
  }
  return os.str();
}

void Profiler::write_chrome_trace(const std::string& path) const {
  nlohmann::ordered_json trace;
  trace["displayTimeUnit"] = "ms";
  trace["traceEvents"] = nlohmann::ordered_json::array();
  const double origin = events_.empty() ? 0 : events_.front().start_ms;
  for (const Event& e : events_) {
    const std::string pass = e.pass();
    trace["traceEvents"].push_back({{"name", e.name},
                                    {"cat", pass},
                                    {"ph", "X"},
                                    {"ts", (e.start_ms - origin) * 1000.0},  // microseconds
                                    {"dur", e.total_ms * 1000.0},
                                    {"pid", 1},
                                    {"tid", pass == "bwd" ? 2 : pass == "upd" ? 3 : 1},
                                    {"args",
                                     {{"module", e.module},
                                      {"inputs", e.shapes},
                                      {"flops", e.flops},
                                      {"bytes", e.bytes_read + e.bytes_written},
                                      {"self_ms", e.self_ms}}}});
  }
  trace["traceEvents"].push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", 1}, {"tid", 1}, {"args", {{"name", "forward"}}}});
  trace["traceEvents"].push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", 1}, {"tid", 2}, {"args", {{"name", "backward"}}}});
  trace["traceEvents"].push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", 1}, {"tid", 3}, {"args", {{"name", "update"}}}});
  const std::string text = trace.dump(1);
  write_file_atomically(path, {text}, "write_chrome_trace");
}

}  // namespace ember::inspect
