#include "compile/capture.h"

#include <map>
#include <set>
#include <optional>
#include <sstream>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "autograd/forward.h"
#include "autograd/node.h"
#include "autograd/observer.h"
#include "base/hooks.h"
#include "base/error.h"
#include "compile/op_table.h"
#include "tensor/random.h"
#include "tensor/shape.h"
#include "tensor/storage.h"

namespace ember::compiler {

namespace {

// The tracer: an observer of this thread's ops, a watcher of its random
// draws and of its reads of values. Depth counts the ops open: only calls
// at depth 1 (made by the function itself) go into the graph.
class Tracer final : public AutogradObserver, TensorObserver, detail::DrawWatcher, detail::ValueReadWatcher {
 public:
  Tracer(Graph& g, const CaptureOptions& o) : g_(g), options_(o), thread_(std::this_thread::get_id()) {}

  // Installs the tracer on this thread's hooks; the destructor puts back what was there.
  struct Installed {
    Tracer& t;
    AutogradObserver* observer;
    TensorObserver* kernels;
    detail::DrawWatcher* draws;
    detail::ValueReadWatcher* reads;
    bool composes;
    explicit Installed(Tracer& tr)
        : t(tr), observer(autograd_observer()), kernels(tensor_observer()), draws(detail::draw_watcher),
          reads(detail::value_read_watcher), composes(detail::capture_composes) {
      set_autograd_observer(&t);
      set_tensor_observer(&t);
      detail::draw_watcher = &t;
      detail::value_read_watcher = &t;
      detail::capture_composes = true;  // a backward pass inside runs its rules as ops
    }
    ~Installed() {
      set_autograd_observer(observer);
      set_tensor_observer(kernels);
      detail::draw_watcher = draws;
      detail::value_read_watcher = reads;
      detail::capture_composes = composes;
    }
  };

  void add_input(const Tensor& x) {
    auto known = ids_.find(x.impl());
    if (known != ids_.end()) {  // the same tensor twice: compile.h keys graphs on it
      g_.inputs.push_back(known->second);
      return;
    }
    const int id = g_.add_value(x.shape(), x.dtype(), Origin::Input);
    g_.inputs.push_back(id);
    remember(x, id);
  }
  int value_of(const Tensor& t) { return id_of(t); }
  // A refusal an op's end noted (an observer must not throw there).
  void check() const {
    if (!refusal_.empty()) EMBER_FAIL(options_.transform, refusal_);
  }

  // ---- AutogradObserver ----
  bool wants_calls() const override { return true; }
  bool reads_gradients() const override { return false; }
  void op_begin(const char*, const std::vector<const Tensor*>&) override {
    if (mine()) ++raw_depth_;
  }
  void op_end(const char* op) override {
    if (!mine()) return;
    if (!composites_.empty() && composites_.back() == raw_depth_) {  // a composite op ends: its ops were the calls
      composites_.pop_back();
    } else {
      if (depth() == 1 && pending_ && refusal_.empty())
        refusal_ = std::string("op ") + op + " ended without handing over a result to capture";
      if (depth() == 1) pending_.reset();
    }
    --raw_depth_;
  }
  void op_call(const char* op, const std::vector<OpArg>& args) override {
    if (!mine() || depth() != 1) return;
    check();
    const std::string name = op;
    if (!name.empty() && name.back() == '_') in_place(name, nullptr);
    const OpRule* rule = find_rule(name, args);
    if (!rule)
      EMBER_FAIL(options_.transform, "op " << name << " (" << args.size() << " arguments) has no capture rule "
                                  "(compile/op_table.h): it cannot be captured");
    if (rule->composite) {  // made of ops whose results its backward reads: those are the calls
      composites_.push_back(raw_depth_);
      return;
    }
    Call c;
    c.op = name;
    c.rule = rule;
    if (!modules_.empty()) c.module = modules_.back();
    for (const OpArg& a : args) c.args.push_back(to_arg(a));
    pending_ = std::move(c);
  }
  void op_results(const char*, const std::vector<Tensor>& results) override {
    if (!mine() || depth() != 1 || !pending_) return;
    for (const Tensor& r : results) {
      const int id = g_.add_value(r.shape(), r.dtype(), Origin::Result);
      pending_->results.push_back(id);
      remember(r, id);
    }
    g_.calls.push_back(std::move(*pending_));
    pending_.reset();
  }
  void module_begin(const std::string& path, const std::string&) override {
    if (mine()) modules_.push_back(path);
  }
  void module_end() override {
    if (mine() && !modules_.empty()) modules_.pop_back();
  }
  // ---- a backward pass inside the function: its rules, as ops ----
  void backward_begin(const Tensor&) override {
    if (mine()) g_.backward = true;
  }
  void node_begin(const Node& node, const Tensor&) override {
    if (mine()) node_ = node.name();
  }
  void node_end(const Node&) override {
    if (mine()) node_.clear();
  }
  void backward_into_grad() override {
    if (!mine()) return;
    EMBER_FAIL(options_.transform, "backward() writes .grad while the function is captured, and a graph returns values "
                          "without side effects: use grad(outputs, inputs), which returns the gradients");
  }

  // ---- kernels: work done outside any op would be a value the graph cannot remake ----
  // Memory allocated inside an op: a value the op computed for itself (a
  // max's winning index, saved for its backward), which no call returns.
  void allocated(const void* data, size_t) override {
    if (mine()) (depth() > 0 ? inner_ : made_).insert(data);
  }
  void freed(const void* data, size_t) override {
    if (!mine()) return;
    inner_.erase(data);
    made_.erase(data);
  }
  void work(double, double bytes_read, double) override {
    if (!mine() || depth() != 0 || bytes_read == 0) return;  // a fill (zeros, ones) makes a constant
    if (!node_.empty())
      EMBER_FAIL(options_.transform, "the backward rule of " << node_ << " computes with a kernel of its own, not with ember "
                                                           "ops, so it cannot be captured");
    EMBER_FAIL(options_.transform, "the function computes with a kernel (ember::kernel::...) outside ember's ops; a graph "
                          "cannot remake that value: use the op");
  }
  void writes_in_place(const char* op, const Tensor& t) override {
    if (!mine() || depth() != 0) return;
    in_place(op, &t);
  }
  [[noreturn]] void in_place(const std::string& op, const Tensor* t) const {
    std::string into;
    if (t) into.append(" into a tensor of shape ").append(shape_str(t->shape()));
    if (std::string(options_.transform) == "vmap")
      EMBER_FAIL("vmap", op << " writes in place" << into
                            << " under vmap, which runs the function once for the whole batch (a write into "
                               "one sample's tensor would be a write into the batch's): use the op that returns "
                               "a new tensor");
    EMBER_FAIL(options_.transform, op << " writes in place" << into
                                      << ", and a captured function must not (a graph is pure): use the op that "
                                         "returns a new tensor");
  }

  // ---- random draws and reads of values ----
  void drawing(Generator&) override {
    if (options_.draws_are_constants) return;
    if (std::string(options_.transform) == "vmap")
      EMBER_FAIL("vmap", "the function draws random numbers (dropout, rand, randn) under vmap; say whether the "
                         "samples draw different numbers or share one draw: randomness = Randomness::Different "
                         "or Randomness::Same");
    EMBER_FAIL(options_.transform, "the function draws random numbers (dropout, rand, randn) while it is captured; the "
                          "graph would repeat this run's numbers: draw them outside and pass them in");
  }
  void reading_values(const Tensor& t, const char* how) override {
    if (depth() != 0) return;  // an op reading its own ids
    EMBER_FAIL(options_.transform, "the function reads a tensor's values (" << how << "() of a tensor of shape "
                              << shape_str(t.shape())
                              << ") while it is captured; what it does next would depend on them, and a graph "
                                 "cannot: compile the parts before and after that read separately");
  }

 private:
  bool mine() const { return std::this_thread::get_id() == thread_; }

  void remember(const Tensor& t, int id) {
    ids_[t.impl()] = id;
    hold(t, id);
    if (t.storage()) storages_[t.storage().get()].push_back(id);
    if (t.grad_fn()) by_node_[t.grad_fn().get()].push_back(id);
  }
  // The value a tensor is: known, a detach() of a known one, or a new constant.
  // A handle is known only while it still looks as it did: functional_call
  // (nn/functional_call.h) swaps a parameter's contents for a while, so one
  // handle can be two values in turn.
  int id_of(const Tensor& t) {
    auto known = ids_.find(t.impl());
    if (known != ids_.end() && looks_as_seen(t, known->second)) return known->second;
    if (t.grad_fn()) {  // another handle on a value an op made (a parameter standing in for it)
      auto made_by = by_node_.find(t.grad_fn().get());
      if (made_by != by_node_.end())
        for (int id : made_by->second)
          if (looks_as_seen(t, id)) return id;
    }
    auto shared = t.storage() ? storages_.find(t.storage().get()) : storages_.end();
    if (shared != storages_.end() && read_only(t, shared->second)) {
      // another view of memory the function only reads (a backward pass
      // recorded before the capture saves views of its weights): a constant too
      return constant(t);
    }
    if (shared != storages_.end()) {
      for (int id : shared->second) {
        if (!looks_as_seen(t, id)) continue;
        if (!t.requires_grad()) return remade(id, t, "detach", std::nullopt);
        EMBER_FAIL(options_.transform, "a tensor that shares %" << id << "'s memory is a new leaf that requires grad "
                              "(x.detach().requires_grad_(), as checkpoint does with its inputs): a graph cannot "
                              "hold two leaves over one memory. Call checkpoint outside the captured function, "
                              "or capture the function that checkpoint runs");
      }
      // an op's own reshape of a value (the flat ids an embedding saves): the same elements in order
      for (int id : shared->second) {
        const Seen& v = seen_[static_cast<size_t>(id)];
        if (v.contiguous && t.is_contiguous() && v.offset == t.storage_offset() && numel_of(v.shape) == t.numel() &&
            v.dtype == t.dtype() && !t.requires_grad())
          return remade(id, t, "reshape", t.shape());
      }
      EMBER_FAIL(options_.transform, "a tensor of shape " << shape_str(t.shape()) << " shares memory with %"
                                                 << shared->second.front()
                                                 << " but was not made by an ember op (a view made by hand?): "
                                                    "it cannot be captured");
    }
    if (t.storage() && inner_.count(t.storage()->data()))
      EMBER_FAIL(options_.transform, (node_.empty() ? std::string("the function") : "the backward rule of " + node_)
                                << " reads a tensor of shape " << shape_str(t.shape())
                                << " that an op computed inside itself and did not return (saved for its backward); "
                                   "the graph cannot remake it");
    return constant(t);
  }
  int constant(const Tensor& t) {
    const int id = g_.add_value(t.shape(), t.dtype(), Origin::Constant);
    g_.values[static_cast<size_t>(id)].made = t.storage() && made_.count(t.storage()->data());
    g_.constants.emplace_back(id, t);
    remember(t, id);
    return id;
  }
  // Memory from before the capture that holds no input: what the function
  // reads there (a weight, a saved tensor, a view of either) is the same at
  // every call, so any view of it is a constant. (In-place writes are refused.)
  bool read_only(const Tensor& t, const std::vector<int>& ids) const {
    const void* data = t.storage()->data();
    if (inner_.count(data) || made_.count(data)) return false;
    for (int id : ids)
      if (g_.values[static_cast<size_t>(id)].origin == Origin::Input) return false;
    return true;
  }
  // Every tensor seen is kept alive, so no other tensor gets its address
  // while we trace; and what it looked like then is kept beside it.
  void hold(const Tensor& t, int id) {
    if (held_.size() <= static_cast<size_t>(id)) {
      held_.resize(static_cast<size_t>(id) + 1);
      seen_.resize(static_cast<size_t>(id) + 1);
    }
    held_[static_cast<size_t>(id)] = t;
    seen_[static_cast<size_t>(id)] = {t.storage().get(), t.storage_offset(), t.shape(), t.stride(), t.dtype(),
                                      t.is_contiguous()};
  }
  // t has the memory, offset, shape, strides and dtype value id had when it was seen.
  bool looks_as_seen(const Tensor& t, int id) const {
    const Seen& s = seen_[static_cast<size_t>(id)];
    return s.storage == t.storage().get() && s.offset == t.storage_offset() && s.shape == t.shape() &&
           s.strides == t.stride() && s.dtype == t.dtype();
  }
  // t, a tensor of value id's memory, as a call on id: detach(%id), or reshape(%id, shape)
  int remade(int id, const Tensor& t, const char* op, const std::optional<Shape>& shape) {
    Call c;
    c.op = op;
    std::vector<OpArg> args{OpArg(std::in_place_type<Tensor>, t)};
    if (shape) args.emplace_back(std::in_place_type<Shape>, *shape);
    c.rule = find_rule(op, args);
    c.args.push_back(ValueRef{id});
    if (shape) c.args.push_back(*shape);
    if (!modules_.empty()) c.module = modules_.back();
    const int out = g_.add_value(t.shape(), t.dtype(), Origin::Result);
    c.results.push_back(out);
    g_.calls.push_back(std::move(c));
    remember(t, out);
    return out;
  }
  Arg to_arg(const OpArg& a) {
    return std::visit(
        [this](const auto& v) -> Arg {
          using V = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<V, Tensor>) return ValueRef{id_of(v)};
          else if constexpr (std::is_same_v<V, std::vector<Tensor>>) {
            ValueList l;
            for (const Tensor& t : v) l.ids.push_back(id_of(t));
            return l;
          } else return v;
        },
        a);
  }

  Graph& g_;
  CaptureOptions options_;
  std::thread::id thread_;
  // The ops open, and of those the composite ones (their raw depths):
  // depth() 1 is a call of the function itself.
  int depth() const { return raw_depth_ - static_cast<int>(composites_.size()); }
  int raw_depth_ = 0;
  std::vector<int> composites_;
  std::optional<Call> pending_;
  std::string refusal_;
  std::string node_;  // the backward node running, if any
  std::vector<std::string> modules_;
  std::unordered_map<const TensorImpl*, int> ids_;
  std::unordered_map<const Storage*, std::vector<int>> storages_;
  struct Seen {
    const Storage* storage = nullptr;
    int64_t offset = 0;
    Shape shape, strides;
    DType dtype = DType::Float32;
    bool contiguous = false;
  };
  std::vector<Tensor> held_;  // by value id
  std::vector<Seen> seen_;    // by value id: what each looked like when seen
  std::unordered_map<const Node*, std::vector<int>> by_node_;  // the values each autograd node made
  std::unordered_set<const void*> inner_;  // storages allocated inside ops, still alive
  std::unordered_set<const void*> made_;   // storages the function allocated outside ops (ones, zeros), still alive
};

}  // namespace

Capture capture(const Function& fn, const std::vector<Tensor>& inputs, const CaptureOptions& options) {
  const char* who = options.transform;
  EMBER_CHECK(static_cast<bool>(fn), who, "the function to capture is empty");
  for (size_t i = 0; i < inputs.size(); ++i) EMBER_CHECK(inputs[i].defined(), who, "input " << i << " is an undefined tensor");
  Capture c;
  Tracer tracer(c.graph, options);
  for (const Tensor& x : inputs) tracer.add_input(x);
  {
    Tracer::Installed on(tracer);
    c.results = fn(inputs);
    tracer.check();
    for (size_t i = 0; i < c.results.size(); ++i) {
      EMBER_CHECK(c.results[i].defined(), who, "the function's result " << i << " is an undefined tensor");
      c.graph.outputs.push_back(tracer.value_of(c.results[i]));
    }
  }
  // The tensors the function made are the caller's now (it may have
  // returned them, and may write into them): the graph keeps copies.
  for (auto& [id, t] : c.graph.constants)
    if (c.graph.values[static_cast<size_t>(id)].made) {
      Tensor own = t.detach().clone();
      t = t.requires_grad() ? own.requires_grad_() : own;
    }
  return c;
}

}  // namespace ember::compiler
