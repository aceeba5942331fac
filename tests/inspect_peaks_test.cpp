// inspect/profiler.h's machine peaks: what a profile's %peak and %bw divide
// by. A peak measured beside other work is too low; it must never be cached
// (every later profile on the machine would report more than 100 %), and
// cache lines written before ember checked for that are not trusted.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "ember.h"
#include "inspect/inspect.h"
#include "tensor/machine/blas_library.h"
#include "test_util.h"

namespace {

using namespace ember;

// XDG_CACHE_HOME pointed at a scratch directory for the test's length, so
// the user's own cache is neither read nor written.
class ScratchCache {
 public:
  ScratchCache() {
    if (const char* v = std::getenv("XDG_CACHE_HOME")) old_ = v;
    ::setenv("XDG_CACHE_HOME", dir_.path().c_str(), 1);
  }
  ~ScratchCache() {
    if (old_) ::setenv("XDG_CACHE_HOME", old_->c_str(), 1);
    else ::unsetenv("XDG_CACHE_HOME");
  }
  std::filesystem::path file() const { return std::filesystem::path(dir_.path()) / "ember" / "peaks.txt"; }
  void write(const std::string& text) const {
    std::filesystem::create_directories(file().parent_path());
    std::ofstream(file()) << text;
  }

 private:
  ember::test::TempDir dir_{"ember_peaks"};
  std::optional<std::string> old_;
};

// The cache's key for this process: CPU, OpenBLAS kernels.
std::string this_cpu() { return blas_info().cpu + ", OpenBLAS " + blas_info().core; }

TEST(MachinePeaks, OnlyQuietMeasurementsOfThisCpuAndThreadCountAreReadFromTheCache) {
  ScratchCache cache;
  const std::string cpu = this_cpu();
  const std::string threads = std::to_string(get_num_threads());
  cache.write(cpu + "|" + threads + "|900|900\n"                       // written before quiet was checked: not trusted
              + cpu + "|" + threads + "|800|800|0.6\n"                  // measured beside 0.6 busy cores: not trusted
              + cpu + "|" + threads + "|120.5|20|0.02\n"                // quiet
              + cpu + "|" + threads + "|110|25.5|0\n"                   // quiet: the best of each is taken
              + cpu + "|" + std::to_string(get_num_threads() + 7) + "|700|700|0\n"  // another thread count
              + "Another CPU, OpenBLAS Zen|" + threads + "|600|600|0\n"
              + "a|line|that|is|broken\n");
  const std::optional<inspect::MachinePeaks> p = inspect::cached_machine_peaks();
  ASSERT_TRUE(p.has_value());
  EXPECT_DOUBLE_EQ(p->sgemm_gflops, 120.5);
  EXPECT_DOUBLE_EQ(p->memory_gbps, 25.5);
  EXPECT_TRUE(p->from_cache);
  EXPECT_EQ(p->cpu, cpu);
  EXPECT_EQ(p->threads, get_num_threads());

  cache.write(cpu + "|" + threads + "|900|900\n" + cpu + "|" + threads + "|800|800|0.6\n");
  EXPECT_FALSE(inspect::cached_machine_peaks().has_value());
}

TEST(MachinePeaks, AMeasurementBesideABusyProcessIsSeenAndNotCached) {
  ScratchCache cache;
  const pid_t busy = ::fork();
  ASSERT_GE(busy, 0);
  if (busy == 0) {  // another program on the machine: one core, busy
    ::alarm(120);   // never outlives a parent that died
    volatile unsigned long spin = 0;
    while (true) spin = spin + 1;
  }
  const inspect::MachinePeaks p = inspect::measure_machine_peaks();
  ::kill(busy, SIGKILL);
  ::waitpid(busy, nullptr, 0);
  EXPECT_GT(p.sgemm_gflops, 0);
  EXPECT_GT(p.memory_gbps, 0);
  EXPECT_FALSE(p.from_cache);
  // The spinning child had at least a third of a core (two cores, this
  // process's threads beside it); on one core, half of it.
  EXPECT_GE(p.others_cores, 0.25) << "the rest of the machine seemed idle while a process spun";
  EXPECT_FALSE(p.quiet());
  EXPECT_FALSE(std::filesystem::exists(cache.file())) << "a peak measured under load was cached";
  EXPECT_FALSE(inspect::cached_machine_peaks().has_value());
}

}  // namespace
