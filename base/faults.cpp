#include "base/faults.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>

namespace ember::testing {

namespace {
int64_t g_fail_after = -1;
int64_t g_kill_at = -1;
int64_t g_fs_steps = 0;
}  // namespace

void fail_next_write_after(int64_t bytes) { g_fail_after = bytes; }

size_t allowed_write(int64_t written, size_t wanted) {
  if (g_fail_after < 0) return wanted;
  if (written >= g_fail_after) {
    g_fail_after = -1;
    return 0;
  }
  return std::min<size_t>(wanted, static_cast<size_t>(g_fail_after - written));
}

void kill_at_fs_step(int64_t step) {
  g_kill_at = step;
  g_fs_steps = 0;
}

int64_t fs_steps() { return g_fs_steps; }

void fs_step() {
  if (g_kill_at >= 0 && g_fs_steps == g_kill_at) ::kill(::getpid(), SIGKILL);
  ++g_fs_steps;
}

}  // namespace ember::testing
