#include "inspect/trace.h"

#include <array>

#include <cmath>
#include <cstdio>
#include <iomanip>
#include <ostream>
#include <sstream>

#include "autograd/node.h"
#include "tensor/kernels.h"
#include "tensor/parallel.h"

namespace ember::inspect {

// ---- summaries ----
namespace {

// Sum of squares, min and max of n values, in four independent lanes so the
// compiler can keep them in vector registers (a summary runs for every
// gradient the trace sees). NaN never wins a comparison and turns `sq` into
// NaN; Inf makes it Inf: the caller then takes the careful loop.
template <typename T>
void fast_stats(const T* p, int64_t n, double& sq, double& lo, double& hi) {
  double s[4] = {0, 0, 0, 0}, l[4] = {INFINITY, INFINITY, INFINITY, INFINITY},
         h[4] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY};
  int64_t i = 0;
  for (; i + 4 <= n; i += 4)
    for (int k = 0; k < 4; ++k) {
      const double v = static_cast<double>(p[i + k]);
      s[k] += v * v;
      l[k] = v < l[k] ? v : l[k];
      h[k] = v > h[k] ? v : h[k];
    }
  for (; i < n; ++i) {
    const double v = static_cast<double>(p[i]);
    s[0] += v * v;
    l[0] = v < l[0] ? v : l[0];
    h[0] = v > h[0] ? v : h[0];
  }
  sq = (s[0] + s[1]) + (s[2] + s[3]);
  lo = std::min(std::min(l[0], l[1]), std::min(l[2], l[3]));
  hi = std::max(std::max(h[0], h[1]), std::max(h[2], h[3]));
}

}  // namespace

TensorSummary TensorSummary::of(const Tensor& t, int64_t first_values) {
  TensorSummary s;
  if (!t.defined()) return s;
  s.shape = t.shape();
  s.dtype = t.dtype();
  s.numel = t.numel();
  if (s.numel == 0) return s;
  // bfloat16 values are summarized as the float32 values they are exactly.
  Tensor c = t.dtype() == kBFloat16 ? kernel::to(t, kFloat32) : kernel::contiguous(t);
  double sq = 0, lo = INFINITY, hi = -INFINITY;
  EMBER_DISPATCH_ALL(c.dtype(), "TensorSummary", [&]<typename T>() {
    const T* p = c.data_ptr<T>();
    for (int64_t i = 0; i < std::min(s.numel, first_values); ++i) s.first.push_back(static_cast<double>(p[i]));
    // Fixed pieces (not one per thread), added in order: the same summary
    // whatever the thread count.
    constexpr int64_t kPiece = 65536;
    const int64_t pieces = (s.numel + kPiece - 1) / kPiece;
    std::vector<std::array<double, 3>> part(static_cast<size_t>(pieces));
    detail::parallel_for(pieces, pieces * kPiece >= 2 * detail::kGrain ? 1 : pieces + 1, [&](int64_t b, int64_t e) {
      for (int64_t k = b; k < e; ++k) {
        const int64_t from = k * kPiece, n = std::min(kPiece, s.numel - from);
        auto& r = part[static_cast<size_t>(k)];
        fast_stats(p + from, n, r[0], r[1], r[2]);
      }
    });
    for (const auto& r : part) {
      sq += r[0];
      lo = std::min(lo, r[1]);
      hi = std::max(hi, r[2]);
    }
    if (std::isfinite(sq)) return;
    sq = 0, lo = INFINITY, hi = -INFINITY;  // NaN or Inf among the values: count them, summarise the rest
    for (int64_t i = 0; i < s.numel; ++i) {
      const double v = static_cast<double>(p[i]);
      if (!std::isfinite(v)) {
        ++s.nonfinite;
        continue;
      }
      sq += v * v;
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  });
  s.norm = std::sqrt(sq);
  s.min = std::isfinite(lo) ? lo : 0;
  s.max = std::isfinite(hi) ? hi : 0;
  return s;
}

namespace {
std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}
}  // namespace

std::string TensorSummary::text() const {
  if (shape.empty() && numel == 0) return "none";
  std::ostringstream os;
  os << shape_text(shape);
  if (numel == 0) return os.str() + " (empty)";
  if (numel == 1) return os.str() + " = " + num(first.empty() ? 0 : first[0]);
  os << " |g| " << num(norm) << " in [" << num(min) << ", " << num(max) << "]";
  if (nonfinite) os << ", " << nonfinite << " NaN/Inf";
  os << ":";
  for (size_t i = 0; i < first.size(); ++i) os << (i ? ", " : " ") << num(first[i]);
  if (static_cast<int64_t>(first.size()) < numel) os << ", ...";
  return os.str();
}

// ---- recording ----
BackwardTrace::BackwardTrace(Options options) : options_(options) { start(); }
BackwardTrace::BackwardTrace() : BackwardTrace(Options{}) {}
BackwardTrace::~BackwardTrace() { stop(); }

void BackwardTrace::name_leaves(const std::vector<std::pair<std::string, Tensor>>& named) {
  for (const auto& [name, t] : named)
    if (t.defined()) leaf_names_.emplace_back(t.impl(), name);
}

// A leaf's own name (set_name), else the one name_leaves gave it, else the
// name its module knows it by, else "leaf".
std::string BackwardTrace::leaf_name(const TensorImpl& leaf) const {
  if (!leaf.name.empty()) return leaf.name;
  for (const auto& [impl, name] : leaf_names_)
    if (impl == &leaf) return name;
  if (leaf.owner) {
    std::string owned = leaf.owner->name_of(leaf);
    if (!owned.empty()) return owned;
  }
  return "leaf";
}

void BackwardTrace::node_recorded(Node& node, const Tensor& out) {
  if (options_.forward_values) forward_values_.emplace_back(&node, TensorSummary::of(out, options_.first_values));
}

void BackwardTrace::backward_begin(const Tensor&) {
  if (depth_++ > 0) return;  // a backward inside a hook: not part of this trace
  steps_.clear();
  leaves_.clear();
  parts_.clear();
  sent_to_.clear();
  complete_ = false;
}

void BackwardTrace::node_begin(const Node& node, const Tensor& grad_out) {
  if (depth_ != 1) return;
  TraceStep s;
  s.step = static_cast<int64_t>(steps_.size());
  s.node = &node;
  s.name = node.name();
  s.label = node.meta.label;
  s.gradient_graph = node.meta.in_gradient_graph;
  if (s.gradient_graph) s.label = (s.label.empty() ? "" : s.label + " ") + "(gradient graph)";
  // A node with one consumer receives exactly the tensor that consumer sent:
  // its summary is already made.
  auto sent = sent_to_.find(&node);
  if (sent != sent_to_.end() && sent->second.first.lock().get() == grad_out.impl_ptr().get())
    s.grad_in = sent->second.second;
  else
    s.grad_in = TensorSummary::of(grad_out, options_.first_values);
  if (sent != sent_to_.end()) sent_to_.erase(sent);
  // The saved tensors, before the rule reads them (a freed one has no tensor).
  for (const SavedRef& saved : const_cast<Node&>(node).saved()) {
    const Tensor& t = saved->peek();
    if (!t.defined()) continue;
    s.saved.push_back({saved.name, t.shape(), t.dtype(), saved->saved_version(), t.version()});
  }
  for (const auto& [n, value] : forward_values_)
    if (n == &node) s.forward = value;
  steps_.push_back(std::move(s));
  bookkeeping_ms_ = -Context::others_ms(this);  // node_end adds what the others spent meanwhile
  step_start_ = now_ms();
}

void BackwardTrace::node_sent(const Node& node, size_t edge, const Tensor& grad) {
  if (depth_ != 1 || steps_.empty() || steps_.back().node != &node) return;
  const Edge& e = node.next[edge];
  TraceEdge out;
  out.input = edge;
  out.to_leaf = e.leaf != nullptr;
  if (e.leaf) {
    out.target = e.leaf.get();
    out.target_name = leaf_name(*e.leaf);
    parts_.push_back({e.leaf.get(), steps_.back().step, grad});
    // From now on the trace keeps this gradient alive (a memory timeline says so).
    if (AutogradObserver* o = autograd_observer()) o->tag_memory(grad, MemoryKind::Instruments);
  } else {
    out.target = e.node.get();
    out.target_name = e.node->name();
  }
  const double t0 = now_ms();
  out.grad = TensorSummary::of(grad, options_.first_values);
  bookkeeping_ms_ += now_ms() - t0;  // not the node's time
  if (!e.leaf) sent_to_[e.node.get()] = {grad.impl_ptr(), out.grad};
  steps_.back().sent.push_back(std::move(out));
}

void BackwardTrace::node_end(const Node& node) {
  if (depth_ != 1 || steps_.empty() || steps_.back().node != &node) return;
  steps_.back().ms = std::max(0.0, now_ms() - step_start_ - bookkeeping_ms_ - Context::others_ms(this));
}

void BackwardTrace::node_failed(const Node& node, const std::string& error) {
  if (depth_ != 1 || steps_.empty() || steps_.back().node != &node) return;
  steps_.back().ms = std::max(0.0, now_ms() - step_start_ - bookkeeping_ms_ - Context::others_ms(this));
  steps_.back().error = error;
}

void BackwardTrace::leaf_accumulated(const TensorImpl& leaf, const Tensor& total) {
  if (depth_ != 1) return;
  leaves_.push_back({&leaf, leaf_name(leaf), TensorSummary::of(total, options_.first_values),
                     static_cast<int64_t>(steps_.size())});
}

void BackwardTrace::backward_end(bool ok) {
  if (--depth_ > 0) return;
  complete_ = ok;
}

// ---- reading ----
std::vector<BackwardTrace::GradPart> BackwardTrace::provenance(const Tensor& leaf) const {
  EMBER_CHECK(leaf.defined(), "provenance", "the tensor is undefined");
  std::vector<GradPart> out;
  for (const Part& p : parts_) {
    if (p.leaf != leaf.impl()) continue;
    const TraceStep& s = steps_[static_cast<size_t>(p.step)];
    GradPart g{p.step, s.name, s.label, p.grad, 0, {}};
    Tensor c = kernel::contiguous(p.grad);
    EMBER_DISPATCH_FLOAT(c.dtype(), "provenance", [&]<typename T>() {
      const T* v = c.data_ptr<T>();
      double sq = 0;
      const int64_t rows = c.dim() == 2 ? c.size(0) : 0, cols = c.dim() == 2 ? c.size(1) : 0;
      for (int64_t i = 0; i < c.numel(); ++i) sq += static_cast<double>(v[i]) * v[i];
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t k = 0; k < cols; ++k)
          if (v[r * cols + k] != 0) {
            g.rows.push_back(r);
            break;
          }
      g.norm = std::sqrt(sq);
    });
    out.push_back(std::move(g));
  }
  EMBER_CHECK(!out.empty(), "provenance",
              "the leaf of shape " << shape_str(leaf.shape()) << " received no gradient in the traced backward");
  return out;
}

Tensor BackwardTrace::sum(const std::vector<GradPart>& parts) {
  EMBER_CHECK(!parts.empty(), "provenance", "no parts to add");
  // The engine's order: the first part, then each next one added to the running sum.
  Tensor total = parts[0].grad;
  for (size_t i = 1; i < parts.size(); ++i) total = kernel::binary(kernel::Binary::Add, total, parts[i].grad);
  return kernel::contiguous(total);
}

void BackwardTrace::print(std::ostream& os) const {
  os << "backward trace: " << steps_.size() << " nodes" << (complete_ ? "" : " (incomplete: backward failed)") << "\n";
  os << std::left << std::setw(5) << "step" << std::setw(22) << "node" << std::setw(30) << "recorded at"
     << "gradient in\n";
  for (const TraceStep& s : steps_) {
    os << std::left << std::setw(5) << s.step << std::setw(22) << s.name << std::setw(30)
       << (s.label.empty() ? "-" : s.label) << s.grad_in.text() << "\n";
    for (const SavedUse& u : s.saved)
      os << std::string(27, ' ') << "saved " << u.name << ": " << dtype_name(u.dtype) << " " << shape_text(u.shape) << " (version "
         << u.version_saved << (u.version_now == u.version_saved ? "" : ", now " + std::to_string(u.version_now))
         << ")\n";
    for (const TraceEdge& e : s.sent)
      os << std::string(27, ' ') << "-> input " << e.input << " " << (e.to_leaf ? "leaf " : "") << e.target_name
         << ": " << e.grad.text() << "\n";
    if (!s.error.empty()) os << std::string(27, ' ') << "FAILED: " << s.error << "\n";
  }
  for (const LeafGrad& l : leaves_) os << "leaf " << l.name << ": .grad += " << l.total.text() << "\n";
}

}  // namespace ember::inspect
