/// @file
/// Storage: one 64-byte-aligned buffer, shared by a tensor and all its views,
/// plus a version counter that every in-place write bumps (autograd checks it
/// to catch tensors modified after being saved for backward).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace ember {

/// A small caching allocator: freed blocks are kept in per-size-class free
/// lists and handed out again, so creating many small tensors does not call
/// malloc each time. Sizes are rounded up to a power of two (>= 64 bytes).
/// Disabled in sanitizer builds so that AddressSanitizer sees every free.
namespace allocator {
void* allocate(size_t nbytes);
void deallocate(void* p, size_t nbytes);
struct Stats {
  uint64_t allocations = 0;  // calls to allocate()
  uint64_t cache_hits = 0;   // served from a free list
  uint64_t cached_bytes = 0; // bytes sitting in free lists now
};
Stats stats();
void empty_cache();
/// This machine's physical memory in bytes (what sizes are checked against
/// before a model or a training run allocates).
int64_t physical_memory_bytes();
}  // namespace allocator

class Storage {
 public:
  explicit Storage(size_t nbytes);
  /// Memory that belongs to someone else (a NumPy array the Python package
  /// wraps without copying): the storage keeps `owner` alive while it lives
  /// and never frees `data` itself; dropping `owner` releases the memory.
  Storage(void* data, size_t nbytes, std::shared_ptr<void> owner);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  void* data() const { return data_; }
  size_t nbytes() const { return nbytes_; }
  /// Whether the memory is borrowed (the constructor with an owner).
  bool borrowed() const { return owner_ != nullptr; }
  uint64_t version() const { return version_; }
  void bump_version() { ++version_; }

 private:
  void* data_;
  size_t nbytes_;
  std::shared_ptr<void> owner_;  // set for borrowed memory
  uint64_t version_ = 0;
};

/// (Chapter 14; skip it on a first reading.) Called with each storage being
/// freed, while set (null: nothing to call).
/// Forward mode's tangent table (tensor/tangents.h) sets it while it holds a
/// tangent, so that a freed storage leaves the table (its address may be
/// reused).
extern void (*storage_freed_hook)(const Storage* s);

}  // namespace ember
