#include "compile/toolchain.h"

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include "base/error.h"
#include "base/io.h"

#ifndef EMBER_DEFAULT_CXX
#define EMBER_DEFAULT_CXX "c++"
#endif

namespace ember::compiler {

namespace fs = std::filesystem;

namespace {

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : fallback;
}

// The compiler's file: a path as given, or the first match on PATH.
std::string find_program(const std::string& name) {
  if (name.find('/') != std::string::npos) return ::access(name.c_str(), X_OK) == 0 ? name : "";
  std::stringstream path(env_or("PATH", "/usr/bin:/bin"));
  for (std::string dir; std::getline(path, dir, ':');) {
    const std::string p = (dir.empty() ? "." : dir) + "/" + name;
    if (::access(p.c_str(), X_OK) == 0) return p;
  }
  return "";
}

// What the kernel's bits depend on besides its source: the compiler (path,
// size, time: a new compiler is a new file), the flags, and the CPU
// (-march=native), read once.
std::string build_identity(const Toolchain& t) {
  static const std::string cpu = [] {
    std::ifstream f("/proc/cpuinfo");
    std::string line, model, flags;
    while (std::getline(f, line) && (model.empty() || flags.empty())) {
      if (line.rfind("model name", 0) == 0 && model.empty()) model = line;
      if (line.rfind("flags", 0) == 0 && flags.empty()) flags = line;
    }
    return model + "\n" + flags;
  }();
  std::string id = t.compiler + "\n" + t.flags + "\n" + cpu;
  const std::string exe = find_program(t.compiler);
  struct stat st {};
  if (!exe.empty() && ::stat(exe.c_str(), &st) == 0)
    id.append("\n").append(std::to_string(st.st_size)).append(" ").append(std::to_string(st.st_mtime));
  return id;
}

// FNV-1a, 64 bits, as 16 hex digits: a file name, not a secret.
std::string hash_hex(const std::string& text) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

// Runs a command; returns its exit status and what it printed.
int run_command(const std::string& cmd, std::string& output) {
  FILE* p = ::popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return -1;
  std::array<char, 4096> buf{};
  size_t n = 0;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) output.append(buf.data(), n);
  return ::pclose(p);
}

std::string quoted(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

KernelFn open_kernel(const std::string& so, std::string& why) {
  void* h = ::dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);  // kept open: its function serves the process
  if (!h) {
    const char* e = ::dlerror();
    why = e ? e : "dlopen failed";
    return nullptr;
  }
  auto fn = reinterpret_cast<KernelFn>(::dlsym(h, "ember_kernel"));
  if (!fn) why = "no symbol ember_kernel";
  return fn;
}

std::mutex loaded_mutex;
std::map<std::string, LoadedKernel> loaded;  // by hash: this process's kernels
KernelStats stats;

}  // namespace

Toolchain toolchain() {
  Toolchain t;
  t.compiler = env_or("EMBER_CXX", EMBER_DEFAULT_CXX);
  t.flags = "-std=c++20 -O3 -march=native -ffp-contract=off -fno-math-errno -fno-trapping-math -fPIC -shared";
  const std::string xdg = env_or("XDG_CACHE_HOME", env_or("HOME", "") + "/.cache");
  t.cache_dir = env_or("EMBER_KERNEL_CACHE", xdg + "/ember/kernels");
  return t;
}

LoadedKernel load_kernel(const std::string& source) {
  const Toolchain t = toolchain();
  const std::string name = hash_hex(source + "\n" + build_identity(t));
  std::lock_guard<std::mutex> lock(loaded_mutex);
  if (auto it = loaded.find(name); it != loaded.end()) {
    ++stats.from_memory;
    LoadedKernel k = it->second;
    k.compiled = false;
    return k;
  }
  const fs::path dir = t.cache_dir;
  const std::string so = (dir / (name + ".so")).string(), cpp = (dir / (name + ".cpp")).string();
  LoadedKernel k;
  k.file = so;
  std::string why;
  if (fs::exists(so)) k.fn = open_kernel(so, why);  // a damaged file is compiled again below
  if (k.fn) {
    ++stats.from_disk;
  } else {
    const std::string exe = find_program(t.compiler);
    EMBER_CHECK(!exe.empty(), "compile", "no C++ compiler '" << t.compiler << "' (set EMBER_CXX to one): cannot build "
                                                              << cpp);
    std::error_code ec;
    fs::create_directories(dir, ec);
    EMBER_CHECK(!ec, "compile", "cannot create the kernel cache " << dir.string() << ": " << ec.message()
                                                                   << " (set EMBER_KERNEL_CACHE to a writable folder)");
    write_file_atomically(cpp, {source}, "compile");
    const std::string tmp = so + "." + std::to_string(::getpid()) + ".tmp";
    std::string out;
    const auto start = std::chrono::steady_clock::now();
    const int status = run_command(quoted(exe) + " " + t.flags + " -o " + quoted(tmp) + " " + quoted(cpp), out);
    stats.compile_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (status != 0) {
      fs::remove(tmp, ec);
      EMBER_FAIL("compile", "the generated kernel " << cpp << " did not compile (" << t.compiler << " " << t.flags
                                                    << "):\n" << out.substr(0, 4000));
    }
    fs::rename(tmp, so, ec);
    EMBER_CHECK(!ec, "compile", "cannot move the kernel into " << so << ": " << ec.message());
    k.fn = open_kernel(so, why);
    EMBER_CHECK(k.fn, "compile", "cannot load the kernel " << so << ": " << why);
    k.compiled = true;
    ++stats.compiled;
  }
  loaded[name] = k;
  return k;
}

KernelStats kernel_stats() {
  std::lock_guard<std::mutex> lock(loaded_mutex);
  return stats;
}

}  // namespace ember::compiler
