#include "tensor/machine/governor.h"

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

#include "base/error.h"
#include "tensor/machine/threads.h"

namespace ember {

namespace {
// EMBER_ADAPTIVE_THREADS: unset, empty or 1: on; 0: off; anything else is a
// mistake worth saying (a value ignored would leave the user guessing).
bool adaptive_from_environment() {
  const char* e = std::getenv("EMBER_ADAPTIVE_THREADS");
  if (!e || !*e || std::strcmp(e, "1") == 0) return true;
  EMBER_CHECK(std::strcmp(e, "0") == 0, "EMBER_ADAPTIVE_THREADS",
              "\"" << e << "\" is not a value it takes: 0 (a fixed thread count) or 1 (follow the machine's load)");
  return false;
}

std::atomic<bool>& adaptive() {
  static std::atomic<bool> on{adaptive_from_environment()};
  return on;
}

// ---- the load sensor ----

// Reads a small /proc file whole (no iostreams: this runs between ops).
int read_small(const char* path, char* buf, int size) {
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  const ssize_t n = ::read(fd, buf, static_cast<size_t>(size - 1));
  ::close(fd);
  if (n <= 0) return -1;
  buf[n] = '\0';
  return static_cast<int>(n);
}

int usable_cores() {
  cpu_set_t set;
  if (::sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

// Threads of this process in state R (running or waiting for a CPU). Spinning
// OpenMP workers count here, and so does the thread that reads.
int own_running_threads() {
  DIR* dir = ::opendir("/proc/self/task");
  if (!dir) return 1;
  int running = 0;
  while (dirent* e = ::readdir(dir)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    char path[300], buf[512];
    std::snprintf(path, sizeof path, "/proc/self/task/%s/stat", e->d_name);
    if (read_small(path, buf, sizeof buf) < 0) continue;
    const char* close = std::strrchr(buf, ')');  // the name may hold spaces and parentheses
    if (close && close[1] == ' ' && close[2] == 'R') ++running;
  }
  ::closedir(dir);
  return std::max(running, 1);
}

detail::LoadSample proc_sensor() {
  const int cores = usable_cores();
  // /proc/loadavg: "0.63 1.90 3.20 2/345 12345"; the 2 is how many threads
  // on the machine are runnable at this moment.
  char buf[128];
  if (read_small("/proc/loadavg", buf, sizeof buf) < 0) return {cores, 0};
  const char* p = buf;
  for (int field = 0; field < 3 && p; ++field) p = std::strchr(p, ' ') ? std::strchr(p, ' ') + 1 : nullptr;
  if (!p) return {cores, 0};
  const int runnable = std::atoi(p);
  return {cores, std::max(0, runnable - own_running_threads())};
}

std::atomic<detail::LoadSensor>& sensor() {
  static std::atomic<detail::LoadSensor> s{nullptr};
  return s;
}

struct Adaptation {
  std::mutex mutex;  // guards governor
  detail::ThreadGovernor governor;
  std::atomic<int> running{0};  // 0: run them all
  std::atomic<int64_t> next_sample_ns{0};
};
Adaptation& adaptation() {
  static Adaptation a;
  return a;
}

int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

constexpr int64_t kSampleEveryNs = 50'000'000;  // 50 ms

}  // namespace

void set_adaptive_threads(bool on) { adaptive().store(on, std::memory_order_relaxed); }
bool adaptive_threads() { return adaptive().load(std::memory_order_relaxed); }

int threads_in_use() {
  const int nt = get_num_threads();
  if (!adaptive_threads()) return nt;
  const int r = adaptation().running.load(std::memory_order_relaxed);
  return r >= 1 && r < nt ? r : nt;
}

namespace detail {

int ThreadGovernor::update(int wanted, int cores, int others) {
  const int now = running(wanted);
  const int target = std::clamp(std::min(wanted, cores - others), 1, wanted);
  if (target == now) {
    pending_ = streak_ = 0;
    return now;
  }
  if (target != pending_) {
    pending_ = target;
    streak_ = 0;
  }
  if (++streak_ >= (target < now ? down_ : up_)) {
    running_ = target;
    pending_ = streak_ = 0;
  }
  return running(wanted);
}

void set_load_sensor(LoadSensor s) {
  sensor().store(s);
  Adaptation& a = adaptation();
  std::lock_guard<std::mutex> lock(a.mutex);
  a.governor = ThreadGovernor();
  a.running.store(0);
  a.next_sample_ns.store(0);
}

int threads_to_run(int pieces) {
  if (!adaptive_threads()) return pieces;
  Adaptation& a = adaptation();
  const int64_t now = steady_ns();
  int64_t next = a.next_sample_ns.load(std::memory_order_relaxed);
  // One caller samples; the others use the last answer.
  if (now >= next && a.next_sample_ns.compare_exchange_strong(next, now + kSampleEveryNs)) {
    std::unique_lock<std::mutex> lock(a.mutex, std::try_to_lock);
    if (lock.owns_lock()) {
      const LoadSensor s = sensor().load();
      const LoadSample sample = s ? s() : proc_sensor();
      a.running.store(a.governor.update(get_num_threads(), sample.cores, sample.others), std::memory_order_relaxed);
    }
  }
  const int r = a.running.load(std::memory_order_relaxed);
  return r >= 1 && r < pieces ? r : pieces;
}

}  // namespace detail
}  // namespace ember
