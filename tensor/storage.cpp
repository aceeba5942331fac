#include "tensor/storage.h"

#include <bit>
#include <cstdlib>
#include <mutex>
#include <new>
#include <utility>
#include <vector>

#include <unistd.h>

#include <climits>

#include "base/error.h"
#include "base/hooks.h"

namespace ember {

namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kCacheEnabled = false;
#else
constexpr bool kCacheEnabled = true;
#endif

constexpr size_t kAlign = 64;
constexpr int kNumClasses = 40;                  // 64 B .. 2^45 B
constexpr size_t kMaxCachedBlock = size_t{1} << 28;  // blocks above 256 MiB go straight to the OS
constexpr size_t kMaxCachedTotal = size_t{1} << 30;  // keep at most 1 GiB idle

struct Cache {
  std::mutex mu;
  std::vector<void*> free_lists[kNumClasses];
  allocator::Stats stats;
};

Cache& cache() {
  static Cache* c = new Cache();  // never destroyed: tensors may outlive static destructors
  return *c;
}

size_t round_up(size_t n) { return std::bit_ceil(std::max(n, kAlign)); }
int size_class(size_t rounded) { return std::countr_zero(rounded) - 6; }

}  // namespace

namespace allocator {

void* allocate(size_t nbytes) {
  size_t sz = round_up(nbytes);
  Cache& c = cache();
  if (kCacheEnabled && sz <= kMaxCachedBlock) {
    std::lock_guard<std::mutex> lock(c.mu);
    ++c.stats.allocations;
    auto& list = c.free_lists[size_class(sz)];
    if (!list.empty()) {
      void* p = list.back();
      list.pop_back();
      ++c.stats.cache_hits;
      c.stats.cached_bytes -= sz;
      return p;
    }
  }
  void* p = std::aligned_alloc(kAlign, sz);
  if (!p) throw std::bad_alloc();
  return p;
}

void deallocate(void* p, size_t nbytes) {
  if (!p) return;
  size_t sz = round_up(nbytes);
  Cache& c = cache();
  if (kCacheEnabled && sz <= kMaxCachedBlock) {
    std::lock_guard<std::mutex> lock(c.mu);
    if (c.stats.cached_bytes + sz <= kMaxCachedTotal) {
      c.free_lists[size_class(sz)].push_back(p);
      c.stats.cached_bytes += sz;
      return;
    }
  }
  std::free(p);
}

Stats stats() {
  std::lock_guard<std::mutex> lock(cache().mu);
  return cache().stats;
}

void empty_cache() {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mu);
  for (auto& list : c.free_lists) {
    for (void* p : list) std::free(p);
    list.clear();
  }
  c.stats.cached_bytes = 0;
}

int64_t physical_memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return INT64_MAX;  // unknown: no limit
  return static_cast<int64_t>(pages) * static_cast<int64_t>(page);
}

}  // namespace allocator

void (*storage_freed_hook)(const Storage* s) = nullptr;

Storage::Storage(size_t nbytes) : data_(allocator::allocate(nbytes)), nbytes_(nbytes) {
  if (TensorObserver* o = tensor_observer()) o->allocated(data_, nbytes_);
}

Storage::Storage(void* data, size_t nbytes, std::shared_ptr<void> owner)
    : data_(data), nbytes_(nbytes), owner_(std::move(owner)) {
  EMBER_CHECK(owner_ != nullptr, "Storage", "borrowed memory needs an owner to keep it alive");
}

Storage::~Storage() {
  if (storage_freed_hook != nullptr) storage_freed_hook(this);
  if (owner_) return;  // owner_'s destructor releases the memory (after this body)
  if (TensorObserver* o = tensor_observer()) o->freed(data_, nbytes_);
  allocator::deallocate(data_, nbytes_);
}

}  // namespace ember
