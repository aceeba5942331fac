#include "inspect/hub.h"

#include <algorithm>

#include "autograd/node.h"

namespace ember::inspect {

namespace {

// The one observer installed in both hooks while any instrument exists.
class Hub final : public AutogradObserver, public TensorObserver {
 public:
  std::vector<Instrument*> instruments;
  std::vector<double> spent_ms;  // by instrument: time in its own handlers (when several watch)
  std::vector<std::string> modules;  // paths, innermost last
  std::vector<std::string> ops;      // forward op labels, innermost last
  std::vector<const Node*> nodes;    // the backward node running (a stack: a hook may run a nested backward)

  void install() {
    set_autograd_observer(this);
    set_tensor_observer(this);
  }
  void uninstall() {
    set_autograd_observer(nullptr);
    set_tensor_observer(nullptr);
    modules.clear();
    ops.clear();
    nodes.clear();
    backward_depth = 0;
  }

  int backward_depth = 0;  // backward passes running (a hook may start a nested one)

  // Passes an event to every instrument. With several, each one's time is
  // clocked, so that an instrument that times the program can leave out the
  // others' bookkeeping (Context::others_ms).
  template <typename F>
  void each(const F& f) {
    if (instruments.size() == 1) {
      f(instruments.front());
      return;
    }
    for (size_t k = 0; k < instruments.size(); ++k) {
      const double t0 = now_ms();
      f(instruments[k]);
      spent_ms[k] += now_ms() - t0;
    }
  }

  // During backward: the running node (and where it was recorded), or the
  // engine's own work between nodes; else the innermost forward op with its
  // module path.
  std::string label() const {
    if (!nodes.empty()) {
      const Node* n = nodes.back();
      return n->meta.label.empty() ? std::string(n->name()) : n->meta.label + " (" + n->name() + ")";
    }
    if (backward_depth > 0) return "backward engine: seeding, or summing into .grad";
    return ops.empty() ? std::string() : ops.back();
  }

  // ---- AutogradObserver: keep the context, then pass the event on ----
  void op_begin(const char* op, const std::vector<const Tensor*>& inputs) override {
    const std::string& m = modules.empty() ? empty_ : modules.back();
    ops.push_back(m.empty() ? std::string(op) : m + "." + op);
    each([&](Instrument* i) { i->op_begin(op, inputs); });
  }
  void op_end(const char* op) override {
    each([&](Instrument* i) { i->op_end(op); });
    if (!ops.empty()) ops.pop_back();
  }
  void module_begin(const std::string& path, const std::string& type) override {
    modules.push_back(path);
    each([&](Instrument* i) { i->module_begin(path, type); });
  }
  void module_end() override {
    each([&](Instrument* i) { i->module_end(); });
    if (!modules.empty()) modules.pop_back();
  }
  void node_recorded(Node& node, const Tensor& out) override {
    if (node.meta.label.empty() && !ops.empty()) node.meta.label = ops.back();
    each([&](Instrument* i) { i->node_recorded(node, out); });
  }
  void backward_begin(const Tensor& root) override {
    ++backward_depth;
    each([&](Instrument* i) { i->backward_begin(root); });
  }
  void node_begin(const Node& node, const Tensor& grad_out) override {
    nodes.push_back(&node);
    each([&](Instrument* i) { i->node_begin(node, grad_out); });
  }
  void node_sent(const Node& node, size_t edge, const Tensor& grad) override {
    each([&](Instrument* i) { i->node_sent(node, edge, grad); });
  }
  void node_end(const Node& node) override {
    each([&](Instrument* i) { i->node_end(node); });
    if (!nodes.empty()) nodes.pop_back();
  }
  void node_failed(const Node& node, const std::string& error) override {
    each([&](Instrument* i) { i->node_failed(node, error); });
    if (!nodes.empty()) nodes.pop_back();
  }
  void leaf_accumulated(const TensorImpl& leaf, const Tensor& total) override {
    each([&](Instrument* i) { i->leaf_accumulated(leaf, total); });
  }
  void backward_end(bool ok) override {
    each([&](Instrument* i) { i->backward_end(ok); });
    if (backward_depth > 0) --backward_depth;
  }
  bool reads_gradients() const override {
    return std::any_of(instruments.begin(), instruments.end(), [](const Instrument* i) { return i->reads_gradients(); });
  }
  void tag_memory(const Tensor& t, MemoryKind kind) override {
    each([&](Instrument* i) { i->tag_memory(t, kind); });
  }

  // ---- TensorObserver ----
  void allocated(const void* data, size_t nbytes) override {
    each([&](Instrument* i) { i->allocated(data, nbytes); });
  }
  void freed(const void* data, size_t nbytes) override {
    each([&](Instrument* i) { i->freed(data, nbytes); });
  }
  void work(double flops, double bytes_read, double bytes_written) override {
    each([&](Instrument* i) { i->work(flops, bytes_read, bytes_written); });
  }

 private:
  const std::string empty_;
};

Hub& hub() {
  static Hub* h = new Hub();  // never destroyed: instruments may outlive static destructors
  return *h;
}

}  // namespace

Instrument::~Instrument() { stop(); }

void Instrument::start() {
  if (started_) return;
  Hub& h = hub();
  h.instruments.push_back(this);
  h.spent_ms.push_back(0);
  if (h.instruments.size() == 1) h.install();
  started_ = true;
}

void Instrument::stop() {
  if (!started_) return;
  Hub& h = hub();
  const auto it = std::find(h.instruments.begin(), h.instruments.end(), this);
  if (it != h.instruments.end()) {
    h.spent_ms.erase(h.spent_ms.begin() + (it - h.instruments.begin()));
    h.instruments.erase(it);
  }
  if (h.instruments.empty()) h.uninstall();
  started_ = false;
}

const std::string& Context::module() {
  static const std::string none;
  return hub().modules.empty() ? none : hub().modules.back();
}
std::string Context::label() { return hub().label(); }
bool Context::in_backward() { return !hub().nodes.empty(); }
double Context::others_ms(const Instrument* self) {
  const Hub& h = hub();
  double sum = 0;
  for (size_t k = 0; k < h.instruments.size(); ++k)
    if (h.instruments[k] != self) sum += h.spent_ms[k];
  return sum;
}

double now_ms() {
  using namespace std::chrono;
  return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}

std::string shape_text(const Shape& s) { return s.empty() ? "scalar" : shape_str(s); }

}  // namespace ember::inspect
