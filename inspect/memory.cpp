#include "inspect/memory.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "plot/plot.h"

namespace ember::inspect {

namespace {
size_t index(MemoryKind k) { return static_cast<size_t>(k); }
}  // namespace

MemoryTimeline::MemoryTimeline() : t0_(now_ms()) {
  sample();  // zero at the start
  start();
  others0_ = Context::others_ms(this);
}
MemoryTimeline::~MemoryTimeline() { stop(); }

int64_t MemoryTimeline::total(const Bytes& b) {
  int64_t s = 0;
  for (int64_t x : b) s += x;
  return s;
}

int64_t MemoryTimeline::program_total(const Bytes& b) {
  return total(b) - b[index(MemoryKind::Instruments)];
}

// The program's clock: the other instruments' time in their own handlers
// (a trace summarising every gradient) is left out, so it does not show as
// long flat stretches where the program did nothing.
// A sample taken inside another instrument's handler (its allocation) sees
// that handler's time counted only later: the clock never runs backwards.
void MemoryTimeline::sample() {
  const double others = is_watching() ? Context::others_ms(this) - others0_ : 0;
  const double ms = std::max(samples_.empty() ? 0.0 : samples_.back().ms, now_ms() - t0_ - others);
  samples_.push_back({ms, live_, Context::label()});
}

void MemoryTimeline::track(const std::vector<Tensor>& tensors, MemoryKind kind) {
  for (const Tensor& t : tensors) {
    if (!t.defined()) continue;
    const void* data = t.storage()->data();
    if (blocks_.count(data)) continue;
    const int64_t bytes = static_cast<int64_t>(t.storage()->nbytes());
    blocks_[data] = {bytes, kind};
    live_[index(kind)] += bytes;
  }
  sample();
}

void MemoryTimeline::allocated(const void* data, size_t nbytes) {
  const int64_t bytes = static_cast<int64_t>(nbytes);
  blocks_[data] = {bytes, MemoryKind::Temporaries};
  live_[index(MemoryKind::Temporaries)] += bytes;
  sample();
}

void MemoryTimeline::freed(const void* data, size_t) {
  auto it = blocks_.find(data);
  if (it == blocks_.end()) return;  // allocated before the timeline and not tracked
  live_[index(it->second.kind)] -= it->second.bytes;
  blocks_.erase(it);
  sample();
}

void MemoryTimeline::tag_memory(const Tensor& t, MemoryKind kind) {
  if (!t.defined()) return;
  auto it = blocks_.find(t.storage()->data());
  // Only a temporary changes hands: a parameter saved for backward stays a parameter.
  if (it == blocks_.end() || it->second.kind != MemoryKind::Temporaries || kind == MemoryKind::Temporaries) return;
  live_[index(MemoryKind::Temporaries)] -= it->second.bytes;
  live_[index(kind)] += it->second.bytes;
  it->second.kind = kind;
  sample();
}

MemoryTimeline::Peak MemoryTimeline::peak() const {
  Peak p;
  for (const Sample& s : samples_) {
    const int64_t b = program_total(s.live);
    if (b > p.bytes) p = {b, s.ms, s.label, s.live};
  }
  return p;
}

std::string MemoryTimeline::summary() const {
  const Peak p = peak();
  std::ostringstream os;
  char line[256];
  std::snprintf(line, sizeof line, "peak %.3f MB of the program's tensors at %.2f ms, during %s\n", p.bytes / 1e6, p.ms,
                p.label.empty() ? "(between ops)" : p.label.c_str());
  os << line;
  for (size_t k = 0; k < kMemoryKinds; ++k) {
    std::snprintf(line, sizeof line, "  %-20s %10.3f MB at the peak, %10.3f MB now\n",
                  memory_kind_name(static_cast<MemoryKind>(k)), p.live[k] / 1e6, live_[k] / 1e6);
    os << line;
  }
  return os.str();
}

std::vector<std::string> MemoryTimeline::write_png(const std::string& path, const std::string& title,
                                                   double y_max_mb) const {
  plot::StackedArea fig;
  fig.title = title;
  fig.x.label = "time (ms)";
  fig.y.label = "live tensor memory (MB)";
  for (const Sample& s : samples_) fig.xs.push_back(s.ms);
  const plot::Color colors[kMemoryKinds] = {{31, 119, 180}, {255, 127, 14}, {44, 160, 44}, {214, 39, 40}, {170, 170, 170},
                                            {148, 103, 189}};
  for (size_t k = 0; k < kMemoryKinds; ++k) {
    plot::Series layer{memory_kind_name(static_cast<MemoryKind>(k))};
    for (const Sample& s : samples_) layer.y.push_back(s.live[k] / 1e6);
    layer.color = colors[k];
    fig.layers.push_back(layer);
  }
  const Peak p = peak();
  // The legend holds the peak's op whole: its node on a line of its own.
  std::string at = p.label.empty() ? "between ops" : p.label;
  if (const size_t node = at.find(" ("); node != std::string::npos) at[node] = '\n';
  int64_t kept = 0;  // what the instruments keep: drawn as the top layer, left out of the peak
  for (const Sample& s : samples_) kept = std::max(kept, s.live[index(MemoryKind::Instruments)]);
  char label[300];
  std::snprintf(label, sizeof label, "program peak %.2f MB,\nduring %s%s", p.bytes / 1e6, at.c_str(),
                kept > 0 ? ";\nthe top layer is the\ninstruments' own, not\ncounted in the peak" : "");
  fig.vlines = {{p.ms, label}};
  // Room after the last sample, so that a peak at the end is not drawn on the frame.
  if (!samples_.empty() && samples_.back().ms > 0) fig.x.max = samples_.back().ms * 1.04;
  if (y_max_mb > 0) {
    fig.y.min = 0;
    fig.y.max = y_max_mb;
  }
  fig.legend = plot::Corner::Outside;
  fig.width = 1100;
  return plot::layout_problems(plot::write_png(fig, path));
}

}  // namespace ember::inspect
