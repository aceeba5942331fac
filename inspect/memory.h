/// @file
/// MemoryTimeline: the live bytes of tensor memory over time, by what the
/// memory is for.
///
///   inspect::MemoryTimeline mem;
///   mem.track(model.parameters(), MemoryKind::Parameters);   // what existed before
///   ... one training step ...
///   std::cout << mem.summary();
///   mem.write_png("memory.png", "one training step");
///
/// Every Storage allocation and free is an event (base/hooks.h). What a
/// block is for is decided in two ways:
///   * by ownership, when the library says so (autograd/observer.h): a tensor
///     saved for backward (SavedTensor), a leaf's new .grad (the engine), an
///     optimizer's state (Optimizer::slot), and whatever track() was given;
///   * otherwise it is a temporary: an activation or intermediate result that
///     nothing keeps (yet). A temporary that gets saved becomes "saved for
///     backward"; a parameter that gets saved stays a parameter;
///   * a tensor another instrument keeps (the trace's provenance parts) is
///     "kept by instruments": drawn, but left out of the peak, which is the
///     program's own.
/// The bytes are those the tensors hold (Storage sizes), not what the
/// process's allocator keeps in reserve.
#pragma once

#include <array>
#include <string>
#include <unordered_map>
#include <vector>

#include "inspect/hub.h"

namespace ember::inspect {

inline constexpr size_t kMemoryKinds = 6;  // the values of MemoryKind

class MemoryTimeline : public Instrument {
 public:
  bool reads_gradients() const override { return false; }  // times and bytes only
  using Bytes = std::array<int64_t, kMemoryKinds>;  // indexed by MemoryKind
  struct Sample {
    double ms = 0;      // since the timeline started, less the other instruments' own time
    Bytes live{};       // after the event
    std::string label;  // what ran: the op or backward node (Context::label)
  };
  struct Peak {
    int64_t bytes = 0;
    double ms = 0;
    std::string label;
    Bytes live{};
  };

  MemoryTimeline();
  ~MemoryTimeline() override;

  /// Counts tensors that existed before the timeline as live from its start
  /// (each storage once), under `kind`.
  void track(const std::vector<Tensor>& tensors, MemoryKind kind);

  const std::vector<Sample>& samples() const { return samples_; }
  Bytes live() const { return live_; }
  /// All the live bytes, the instruments' own included.
  static int64_t total(const Bytes& b);
  /// The program's live bytes: all but what instruments keep alive.
  static int64_t program_total(const Bytes& b);
  /// The highest program_total() and when it was.
  Peak peak() const;
  /// The peak and the live bytes by kind, as a few lines of text.
  std::string summary() const;
  /// A stacked area of the live bytes by kind over time, with the peak marked.
  /// y_max_mb > 0 fixes the top of the y axis (two timelines side by side on
  /// one scale); 0 fits the data. Returns what is wrong with the picture's
  /// layout (plot::layout_problems; empty when nothing is).
  std::vector<std::string> write_png(const std::string& path, const std::string& title, double y_max_mb = 0) const;

  // ---- the events it records ----
  void allocated(const void* data, size_t nbytes) override;
  void freed(const void* data, size_t nbytes) override;
  void tag_memory(const Tensor& t, MemoryKind kind) override;

 private:
  struct Block {
    int64_t bytes;
    MemoryKind kind;
  };
  void sample();
  std::unordered_map<const void*, Block> blocks_;
  Bytes live_{};
  std::vector<Sample> samples_;
  double t0_ = 0;
  double others0_ = 0;  // Context::others_ms() when the timeline started
};

}  // namespace ember::inspect
