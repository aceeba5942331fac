// What every example's main() shares: flags whose --help shows the defaults
// (CLI11, Debian libcli11-dev), numbers on the command line checked with
// messages in words, and one clear line instead of an abort for whatever goes
// wrong.
//
//   int main(int argc, char** argv) {
//     CLI::App app{"What the program shows."};
//     ember::examples::show_defaults(app);
//     app.add_option("--steps", steps, "training steps")->check(ember::examples::at_least<int64_t>(1));
//     app.add_option("--out", out, "directory for the pictures");
//     EMBER_PARSE("program_name", app, argc, argv);
//     return ember::examples::run("program_name", [&] { ...; return 0; });
//   }
//
// Every failure, of the flags or of the program, is one line on stderr
// ("train_gpt: --steps must be at least 1, got 0") and exit status 1.
#pragma once

#include <CLI/CLI.hpp>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <limits>
#include <new>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>

#include "base/error.h"
#include "tensor/machine/blas_library.h"
#include "tensor/parallel.h"

namespace ember::examples {

// --help prints every option's default value beside it.
// A flag given twice takes its last value, as in most Unix programs (a
// command line with a flag appended overrides it).
inline void show_defaults(CLI::App& app) {
  app.option_defaults()->always_capture_default()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
}

// ---- numeric flags ----
// CLI11's own range checks speak of "Value 0 not in range 0.000000 to
// 1797693...", read "abc" as out of range, and read -1 into an unsigned flag
// as 2^64 - 1. These read the text themselves (std::from_chars: the whole text
// must be one number of the flag's type) and refuse in words; CLI11 puts the
// flag's name in front ("--steps: must be ...", which parse() makes
// "--steps must be ...").

namespace detail {
template <typename T>
std::string number_text(T v) {
  std::ostringstream os;
  os << v;
  return os.str();
}
// "" when text is a T in [lo, hi]; otherwise why not.
template <typename T>
std::string check_number(const std::string& text, T lo, T hi) {
  T v{};
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, v);
  const char* kind = std::is_floating_point_v<T> ? "a number" : std::is_signed_v<T> ? "an integer" : "a non-negative integer";
  const bool read = ec == std::errc() && ptr == end && (!std::is_floating_point_v<T> || std::isfinite(static_cast<double>(v)));
  const bool whole_range = lo == std::numeric_limits<T>::lowest() && hi == std::numeric_limits<T>::max();
  std::string range = "must be ";
  if (whole_range) range += kind;
  else if (hi == std::numeric_limits<T>::max()) range += "at least " + number_text(lo);
  else range += "between " + number_text(lo) + " and " + number_text(hi);
  if (!read) {
    // A number beyond the type's range is out of the flag's range too.
    if (ec == std::errc::result_out_of_range) return range + ", got " + text;
    return "must be " + std::string(kind) + (whole_range ? "" : " (" + range.substr(8) + ")") + ", got \"" + text + "\"";
  }
  return v >= lo && v <= hi ? std::string() : range + ", got " + text;
}
template <typename T>
std::string range_description(T lo, T hi) {
  if (hi == std::numeric_limits<T>::max()) return lo == std::numeric_limits<T>::lowest() ? "" : "at least " + number_text(lo);
  return number_text(lo) + " to " + number_text(hi);
}
}  // namespace detail

// A number of type T in [lo, hi]: ->check(at_least<int64_t>(1)), ->check(between(0.0, 0.9)).
template <typename T>
CLI::Validator between(T lo, T hi) {
  return CLI::Validator([lo, hi](std::string& v) { return detail::check_number<T>(v, lo, hi); },
                        detail::range_description(lo, hi));
}
template <typename T>
CLI::Validator at_least(T lo) {
  return between<T>(lo, std::numeric_limits<T>::max());
}
// Any value of T, read strictly (a seed: "-1" is refused, not read as 2^64 - 1).
template <typename T>
CLI::Validator any_number() {
  return between<T>(std::numeric_limits<T>::lowest(), std::numeric_limits<T>::max());
}
// A finite number > 0 (a learning rate).
inline CLI::Validator positive_number() {
  return CLI::Validator(
      [](std::string& v) {
        const std::string why = detail::check_number<double>(v, std::numeric_limits<double>::lowest(),
                                                             std::numeric_limits<double>::max());
        if (!why.empty()) return why;
        double x = 0;  // read as check_number read it (std::stod throws on a subnormal such as 1e-310)
        std::from_chars(v.data(), v.data() + v.size(), x);
        return x > 0 ? std::string() : "must be positive, got " + v;
      },
      "positive");
}

// --help shows each option as "--steps INT (at least 1; default 1000)".
inline void describe_options(CLI::App& app) {
  for (CLI::Option* opt : app.get_options()) {
    if (opt->get_type_size() == 0 || !opt->get_option_text().empty()) continue;  // a flag, or described already
    const std::string type = opt->get_type_name();
    const size_t colon = type.find(':');
    std::string what = colon == std::string::npos ? "" : type.substr(colon + 1);
    for (size_t at; (at = what.find(':')) != std::string::npos;) what.replace(at, 1, "; ");
    if (!opt->get_default_str().empty()) what += (what.empty() ? "" : "; ") + ("default " + opt->get_default_str());
    opt->option_text(type.substr(0, colon) + (what.empty() ? "" : " (" + what + ")"));
  }
}

// Parses the command line. Returns -1 to go on; otherwise the exit status:
// 0 after --help, 1 after one line "name: what is wrong" on stderr.
inline int parse(const char* name, CLI::App& app, int argc, char** argv) {
  describe_options(app);
  try {
    app.parse(argc, argv);
    return -1;
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);  // --help
    std::string what = e.what();
    // CLI11 writes "--steps: must be at least 1"; ember's validators start with "must".
    if (const size_t at = what.find(": must "); at != std::string::npos && at < what.find(' ')) what.erase(at, 1);
    for (char& c : what)
      if (c == '\n') c = ' ';
    std::fprintf(stderr, "%s: %s (--help lists the options)\n", name, what.c_str());
    return 1;
  }
}
#define EMBER_PARSE(name, app, argc, argv)                                                \
  do {                                                                                    \
    if (const int ember_parse_status = ::ember::examples::parse(name, app, argc, argv); \
        ember_parse_status >= 0)                                                          \
      return ember_parse_status;                                                          \
  } while (0)

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
