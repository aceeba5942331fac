// What bench_compile and bench_vmap share: a median of timed runs, and the
// command line (--threads N, --help, the workloads to run).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

namespace bench {

using Clock = std::chrono::steady_clock;

inline double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

/// The median of `reps` timed calls of body, after two calls untimed.
inline double median_ms(const std::function<void()>& body, int reps) {
  body();
  body();
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = Clock::now();
    body();
    t.push_back(ms_since(t0));
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

struct CommandLine {
  int threads = 2;
  std::vector<std::string> wanted;  // empty: every workload
  int exit_status = -1;             // >= 0: exit now with it (--help, or a bad flag)
  bool runs(const std::string& name) const {
    return wanted.empty() || std::find(wanted.begin(), wanted.end(), name) != wanted.end();
  }
};

/// Reads `program [--threads N] [workload ...]`; --help lists `names`.
inline CommandLine command_line(int argc, char** argv, const char* program, const std::vector<std::string>& names) {
  CommandLine c;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--threads" && i + 1 < argc) {
      c.threads = std::atoi(argv[++i]);
    } else if (arg == "-h" || arg == "--help") {
      std::printf("usage: %s [--threads N] [workload ...]\nworkloads:", argv[0]);
      for (const std::string& n : names) std::printf(" %s", n.c_str());
      std::printf("\n");
      c.exit_status = 0;
      return c;
    } else {
      c.wanted.push_back(arg);
    }
  }
  if (c.threads < 1) {
    std::fprintf(stderr, "%s: --threads needs a positive number\n", program);
    c.exit_status = 2;
  }
  return c;
}

}  // namespace bench
