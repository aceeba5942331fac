#include "autograd/checkpoint.h"

#include <atomic>
#include <unordered_set>
#include <utility>

#include "autograd/autocast.h"
#include "autograd/composed_rule.h"
#include "autograd/engine.h"
#include "autograd/grad_mode.h"
#include "autograd/node.h"
#include "autograd/op_scope.h"
#include "tensor/random.h"

namespace ember {

namespace detail {
thread_local WriteWatcher* write_watcher = nullptr;
}  // namespace detail

namespace {

using Draw = std::pair<Generator*, Generator::State>;

// Notes each generator the piece draws from, with its state before the
// first draw; tells an enclosing checkpoint too (nested pieces).
class WatchDraws final : public detail::DrawWatcher {
 public:
  WatchDraws() : prev_(detail::draw_watcher) { detail::draw_watcher = this; }
  ~WatchDraws() { detail::draw_watcher = prev_; }
  WatchDraws(const WatchDraws&) = delete;
  WatchDraws& operator=(const WatchDraws&) = delete;
  void drawing(Generator& gen) override {
    if (prev_) prev_->drawing(gen);
    for (const Draw& d : draws) if (d.first == &gen) return;
    draws.emplace_back(&gen, gen.get_state());
  }
  std::vector<Draw> draws;

 private:
  detail::DrawWatcher* prev_;
};

// Sets the generators back to where the piece's forward found them, and
// restores where they are now when the recomputation is done.
class ReplayDraws {
 public:
  explicit ReplayDraws(const std::vector<Draw>& draws) : prev_(detail::draw_watcher) {
    detail::draw_watcher = nullptr;
    for (const Draw& d : draws) {
      GeneratorLock lock(*d.first);  // the default generator is shared
      now_.emplace_back(d.first, d.first->get_state());
      d.first->set_state(d.second);
    }
  }
  ~ReplayDraws() {
    for (const Draw& d : now_) {
      GeneratorLock lock(*d.first);
      d.first->set_state(d.second);
    }
    detail::draw_watcher = prev_;
  }
  ReplayDraws(const ReplayDraws&) = delete;
  ReplayDraws& operator=(const ReplayDraws&) = delete;

 private:
  std::vector<Draw> now_;
  detail::DrawWatcher* prev_;
};

// While the piece runs (its forward, and its recomputation in backward):
// refuses an in-place write into the memory of one of its inputs, or into a
// leaf that requires grad (a parameter), before it is made; and notes every
// storage written, so that a write into another tensor the piece reads that
// requires grad (known only when it returns) is refused then. Tells
// an enclosing checkpoint too (nested pieces).
class WatchWrites final : public detail::WriteWatcher {
 public:
  explicit WatchWrites(std::vector<const Storage*> inputs)
      : inputs_(std::move(inputs)), prev_(detail::write_watcher) {
    detail::write_watcher = this;
  }
  ~WatchWrites() { detail::write_watcher = prev_; }
  WatchWrites(const WatchWrites&) = delete;
  WatchWrites& operator=(const WatchWrites&) = delete;
  void writing(const Tensor& t, const char* op) override {
    if (prev_) prev_->writing(t, op);
    for (size_t i = 0; i < inputs_.size(); ++i)
      EMBER_CHECK(t.storage().get() != inputs_[i], "checkpoint",
                  op << " writes in place into input " << i << " (a tensor of shape " << shape_str(t.shape())
                     << ") of a checkpointed function: backward runs the function again, which would write it a "
                        "second time and differentiate the changed value; write into a copy (clone() it inside "
                        "the function) or outside the checkpoint");
    EMBER_CHECK(!(t.is_leaf() && t.requires_grad()), "checkpoint",
                op << " writes in place into a tensor of shape " << shape_str(t.shape())
                   << " that requires grad (a parameter) inside a checkpointed function: backward runs the function "
                      "again, which would write it a second time; make the write outside the checkpoint");
    written_.insert(t.storage().get());
  }
  // `read`: what the piece's graph reads besides its inputs (tensors_read).
  void check_reads(const std::vector<Tensor>& read) const {
    for (const Tensor& r : read)
      EMBER_CHECK(!written_.count(r.storage().get()), "checkpoint",
                  "the checkpointed function writes in place into a tensor of shape "
                      << shape_str(r.shape()) << " that it reads and that requires grad: backward runs the function "
                      << "again, which would write it a second time; make the write outside the checkpoint");
  }

 private:
  std::vector<const Storage*> inputs_;
  std::unordered_set<const Storage*> written_;
  detail::WriteWatcher* prev_;
};

std::vector<const Storage*> storages_of(const std::vector<Tensor>& ts) {
  std::vector<const Storage*> out;
  for (const Tensor& t : ts) out.push_back(t.storage().get());
  return out;
}

// Marks the nodes recorded in its scope with a number no other checkpoint
// call has (a stack address could repeat from one call to the next).
class SegmentScope {
 public:
  SegmentScope() : id_(next_id_.fetch_add(1, std::memory_order_relaxed)), prev_(detail::recording_segment) {
    detail::recording_segment = id_;
  }
  ~SegmentScope() { detail::recording_segment = prev_; }
  SegmentScope(const SegmentScope&) = delete;
  SegmentScope& operator=(const SegmentScope&) = delete;
  uint64_t id() const { return id_; }

 private:
  static inline std::atomic<uint64_t> next_id_{1};  // 0: no segment
  uint64_t id_, prev_;
};

// What fn's graph reads that requires grad, besides its (detached) inputs:
// the leaves it reaches (parameters), and the tensors computed before it
// whose nodes it reaches (a weight made by make_dual, a tensor fn closes
// over), each with its graph. Such a tensor must still be alive (the node's
// weak link names it) to be differentiated against in backward; when it is
// not, fn read it through a temporary and is refused.
std::vector<Tensor> tensors_read(const Tensor& y, const std::vector<Tensor>& args, uint64_t segment) {
  std::unordered_set<const TensorImpl*> seen_leaf;
  for (const Tensor& a : args) seen_leaf.insert(a.impl());
  std::unordered_set<const Node*> seen_node;
  std::vector<Node*> todo{y.grad_fn().get()};
  std::vector<Tensor> read;
  seen_node.insert(todo.back());
  while (!todo.empty()) {
    Node* n = todo.back();
    todo.pop_back();
    for (const Edge& e : n->next) {
      if (e.leaf) {
        if (seen_leaf.insert(e.leaf.get()).second) read.emplace_back(e.leaf);
      } else if (e.node && seen_node.insert(e.node.get()).second) {
        if (e.node->meta.segment == segment) {
          todo.push_back(e.node.get());
          continue;
        }
        std::shared_ptr<TensorImpl> out = e.node->output.lock();
        EMBER_CHECK(out && out->grad_fn == e.node, "checkpoint",
                    "the function reads a tensor computed by " << e.node->name()
                        << " before it, through a temporary that no longer exists: its gradient would stop there. "
                           "Pass the tensor in the inputs");
        read.emplace_back(std::move(out));
      }
    }
  }
  return read;
}

struct CheckpointBackward final : Node {
  EMBER_NODE_NAME(CheckpointBackward)
  CheckpointFn fn;
  std::vector<SavedTensor> inputs, leaves;  // fn's arguments; what else its graph read (tensors_read)
  std::vector<Draw> draws;
  bool autocast;
  std::vector<std::string> names;  // "input 0", ..., "read 0", ...: the roles saved() shows
  CheckpointBackward(CheckpointFn f, const std::vector<Tensor>& in, const std::vector<Tensor>& lv,
                     std::vector<Draw> d, bool ac)
      : fn(std::move(f)), inputs(in.begin(), in.end()), leaves(lv.begin(), lv.end()), draws(std::move(d)),
        autocast(ac) {
    for (size_t i = 0; i < inputs.size(); ++i) names.push_back("input " + std::to_string(i));
    for (size_t i = 0; i < leaves.size(); ++i) names.push_back("read " + std::to_string(i));
  }
  std::vector<SavedRef> saved() override {
    std::vector<SavedRef> s;
    for (size_t i = 0; i < inputs.size(); ++i) s.push_back({names[i].c_str(), &inputs[i]});
    for (size_t i = 0; i < leaves.size(); ++i) s.push_back({names[inputs.size() + i].c_str(), &leaves[i]});
    return s;
  }
  // The recomputation hangs on stand-ins of the inputs (so that an input
  // passed twice, or one computed from another, gets each partial once) and
  // reads the other tensors as they are; the walk back from its output ends
  // at both (detail::partial_grad), and the engine that runs this rule takes
  // it from there. While backward records (create_graph) the gradient is
  // recorded too, and so depends on the inputs.
  std::vector<Tensor> apply(const Tensor& g) override {
    std::vector<Tensor> args, wrt;
    std::vector<size_t> slot;  // which of inputs ++ leaves each wrt entry is
    Tensor y;
    {
      ReplayDraws replay(draws);
      AutocastGuard cast(autocast);
      GradModeGuard on(true);
      std::vector<const Storage*> input_memory;
      for (size_t i = 0; i < inputs.size(); ++i) input_memory.push_back(inputs[i].get(*this).storage().get());
      WatchWrites watch_writes(std::move(input_memory));
      for (size_t i = 0; i < inputs.size(); ++i) {
        Tensor x = inputs[i].get(*this);
        if (x.requires_grad()) {
          x = detail::stand_in(x);
          wrt.push_back(x);
          slot.push_back(i);
        }
        args.push_back(x);
      }
      for (size_t i = 0; i < leaves.size(); ++i) {
        wrt.push_back(leaves[i].get(*this));
        slot.push_back(inputs.size() + i);
      }
      y = fn(args);
    }
    EMBER_CHECK(y.defined() && y.shape() == g.shape(), "checkpoint",
                "recomputing the function gave " << (y.defined() ? shape_str(y.shape()) : std::string("nothing"))
                                                 << ", its forward gave " << shape_str(g.shape()));
    std::vector<Tensor> out(inputs.size() + leaves.size());
    if (!y.requires_grad() || wrt.empty()) return out;
    std::vector<Tensor> grads = detail::partial_grad({y}, wrt, {g}, is_grad_enabled());
    for (size_t i = 0; i < grads.size(); ++i) out[slot[i]] = grads[i];
    return out;
  }
};

}  // namespace

Tensor checkpoint(const CheckpointFn& fn, const std::vector<Tensor>& inputs) {
  EMBER_CHECK(fn != nullptr, "checkpoint", "no function given");
  for (size_t i = 0; i < inputs.size(); ++i)
    EMBER_CHECK(inputs[i].defined(), "checkpoint", "input " << i << " is an undefined tensor");
  if (!is_grad_enabled()) return fn(inputs);
  // The inputs as leaves of a graph of fn's own.
  std::vector<Tensor> args;
  for (const Tensor& x : inputs) {
    Tensor a = x.detach();
    if (x.requires_grad()) a.requires_grad_();
    args.push_back(a);
  }
  WatchDraws watch;
  WatchWrites watch_writes(storages_of(inputs));
  Tensor y;
  uint64_t segment_id = 0;
  {
    SegmentScope segment;
    segment_id = segment.id();
    y = fn(args);
  }
  EMBER_CHECK(y.defined(), "checkpoint", "the function returned an undefined tensor");
  if (!y.requires_grad()) return y;  // nothing to differentiate: fn's graph is empty
  if (!y.grad_fn()) {                // fn returned one of its inputs (or a leaf) as it is
    for (size_t i = 0; i < args.size(); ++i)
      if (args[i].is_same(y)) return inputs[i];
    return y;
  }
  if (y.grad_fn()->meta.segment != segment_id) return y;  // a tensor computed before fn, returned as it is
  std::vector<Tensor> leaves = tensors_read(y, args, segment_id);
  watch_writes.check_reads(leaves);
  Tensor out = y.detach();  // drops fn's graph and everything it saved
  y = Tensor();
  std::vector<Tensor> edges = inputs;
  edges.insert(edges.end(), leaves.begin(), leaves.end());
  OpScope scope("checkpoint", edges);  // what the instruments see of the piece's node
  detail::no_forward_rule_needed();    // out shares y's memory, and so its tangent
  record(out, std::make_shared<CheckpointBackward>(fn, inputs, leaves, std::move(watch.draws), is_autocast_enabled()),
         edges);
  return out;
}

}  // namespace ember
