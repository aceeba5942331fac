/// @file
/// inspect/: the instruments that watch ember work — a backward trace with a
/// step-through page (trace.h), a per-op profiler (profiler.h) and a memory
/// timeline (memory.h). This header is what they share.
///
/// The library has two hook pointers (base/hooks.h: allocations and kernel
/// work; autograd/observer.h: ops, modules, nodes, backward). While at least
/// one instrument exists, both point to one hub that passes every event to
/// each instrument and keeps what they all need to know: which module and
/// which op are running now. When the last instrument goes, the hooks are
/// null again and watching costs nothing.
///
/// Instruments watch the thread that runs the model; make and use them on
/// that thread, one group at a time (they are not thread-safe).
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "autograd/observer.h"
#include "base/hooks.h"

namespace ember::inspect {

/// The base of every instrument: it receives every event (all the hooks of
/// AutogradObserver and TensorObserver), doing nothing unless overridden.
/// A derived instrument calls start() at the end of its constructor and
/// stop() at the start of its destructor.
class Instrument : public AutogradObserver, public TensorObserver {
 public:
  ~Instrument() override;
  /// Stops watching now (what was recorded stays readable).
  void stop_watching() { stop(); }
  void allocated(const void* /*data*/, size_t /*nbytes*/) override {}
  void freed(const void* /*data*/, size_t /*nbytes*/) override {}
  void work(double /*flops*/, double /*bytes_read*/, double /*bytes_written*/) override {}

 protected:
  void start();
  void stop();
  bool is_watching() const { return started_; }

 private:
  bool started_ = false;
};

/// What runs now, as the hub sees it.
struct Context {
  /// The innermost module's path ("blocks.0.attn"; "" outside any module).
  static const std::string& module();
  /// "blocks.0.attn.softmax": the innermost forward op with its module's
  /// path, or during backward the running node's label; "" when idle.
  static std::string label();
  /// True between node_begin and node_end of the backward pass.
  static bool in_backward();
  /// The time the other instruments have spent in their own handlers so far
  /// (clocked only while more than one instrument watches): an instrument
  /// that times the program subtracts what grew during an interval, so that
  /// one instrument's bookkeeping is not charged to the ops another times.
  static double others_ms(const Instrument* self);
};

/// Milliseconds since an arbitrary, fixed origin (steady clock).
double now_ms();

/// "scalar" for (), else "(2, 3)".
std::string shape_text(const Shape& s);

}  // namespace ember::inspect
