// What every example's main() shares: flags whose --help shows the defaults
// (CLI11, Debian libcli11-dev), and one clear line instead of an abort for
// whatever goes wrong.
//
//   int main(int argc, char** argv) {
//     CLI::App app{"What the program shows."};
//     ember::examples::show_defaults(app);
//     app.add_option("--out", out, "directory for the pictures");
//     CLI11_PARSE(app, argc, argv);
//     return ember::examples::run("program_name", [&] { ...; return 0; });
//   }
#pragma once

#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <new>
#include <string>
#include <utility>

#include "tensor/machine/blas_library.h"
#include "tensor/error.h"
#include "tensor/parallel.h"

namespace ember::examples {

// --help prints every option's default value beside it.
inline void show_defaults(CLI::App& app) { app.option_defaults()->always_capture_default(); }

// What the program runs on, for its header: the CPU, the BLAS kernels and
// ember's threads ("machine     Intel Xeon ..., OpenBLAS 0.3.21, SkylakeX
// kernels (chosen by ember for this CPU), each product split over 2 threads").
inline std::string machine_line() {
  const ember::BlasInfo b = ember::blas_info();
  return b.cpu + "; " + b.summary();
}

// Runs body() and returns its exit status. Anything thrown ends the program
// with "name: message" on stderr and status 1: an ember::Error (a user
// mistake), a file system error, running out of memory, or any other
// exception. Never std::terminate. For one process of several, `where` names
// it ("name (rank 1 of 2): message") and after_error() runs once the message
// is out (train_gpt ends the job there, so that the other ranks do not wait
// for this one forever).
template <typename F, typename G>
int run(const char* name, const std::string& where, F&& body, G&& after_error) {
  const std::string label = where.empty() ? std::string(name) : std::string(name) + " (" + where + ")";
  try {
    return body();
  } catch (const ember::Error& e) {
    // An ember::Error already starts with the op that raised it.
    const std::string what = e.what(), prefix = std::string(name) + ": ";
    const std::string rest = what.rfind(prefix, 0) == 0 ? what.substr(prefix.size()) : what;
    std::fprintf(stderr, "%s: %s\n", label.c_str(), rest.c_str());
  } catch (const std::filesystem::filesystem_error& e) {
    std::fprintf(stderr, "%s: file system error: %s\n", label.c_str(), e.what());
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "%s: out of memory (try smaller sizes)\n", label.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: unexpected error: %s\n", label.c_str(), e.what());
  } catch (...) {
    std::fprintf(stderr, "%s: unexpected error\n", label.c_str());
  }
  std::fflush(stderr);
  after_error();
  return 1;
}

// The same for a program of one process.
template <typename F>
int run(const char* name, F&& body) {
  return run(name, "", std::forward<F>(body), [] {});
}

}  // namespace ember::examples
