/// @file
/// From generated C++ to a function in this process: the system's compiler,
/// a cache of shared objects on disk, and dlopen.
///
/// load_kernel(source) names the kernel by a hash of its source, the
/// compiler (its path, size and time), the flags and this CPU (the flags
/// include -march=native). If the cache holds that shared object, it is
/// loaded and nothing is compiled: a second run, or a second process, starts
/// without the compiler's cost. Otherwise the source is written next to it
/// and compiled, to a temporary name renamed into place when done, so that
/// processes sharing the cache never load half a file.
///
/// The compiler is EMBER_CXX, else the one ember was built with; the cache
/// is EMBER_KERNEL_CACHE, else $XDG_CACHE_HOME/ember/kernels, else
/// ~/.cache/ember/kernels. A missing compiler, a cache that cannot be
/// written and a failed compile are ember::Errors; the last names the
/// generated file and quotes the compiler.
#pragma once

#include <string>

#include "compile/graph.h"

namespace ember::compiler {

struct Toolchain {
  std::string compiler;
  std::string flags;      // what every kernel is compiled with
  std::string cache_dir;
};
/// Read from the environment at each call (tests change it).
Toolchain toolchain();

struct LoadedKernel {
  KernelFn fn = nullptr;
  std::string file;       // the shared object
  bool compiled = false;  // this call ran the compiler
};
LoadedKernel load_kernel(const std::string& source);

/// What this process did: kernels compiled, loaded from the disk cache, and
/// found already loaded; the seconds spent in the compiler.
struct KernelStats {
  int compiled = 0, from_disk = 0, from_memory = 0;
  double compile_seconds = 0;
};
KernelStats kernel_stats();

}  // namespace ember::compiler
