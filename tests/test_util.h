// Helpers shared by the test files.
#pragma once

#include <gtest/gtest.h>

#include <stdlib.h>  // mkdtemp

#include <algorithm>
#include <cmath>
#include <deque>
#include <filesystem>
#include <initializer_list>
#include <string>
#include <vector>

#include "ember.h"

namespace ember::test {

// Runs f, which must throw ember::Error containing every one of `parts`;
// returns the message (empty if nothing or something else was thrown).
template <typename F>
std::string expect_error(F&& f, std::initializer_list<std::string> parts, const char* file = __builtin_FILE(),
                         int line = __builtin_LINE()) {
  ::testing::ScopedTrace trace(file, line, "expect_error");
  std::string msg;
  try {
    f();
    ADD_FAILURE() << "expected ember::Error, nothing was thrown";
    return "";
  } catch (const Error& e) {
    msg = e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected ember::Error, got another exception: " << e.what();
    return "";
  }
  for (const auto& p : parts) EXPECT_NE(msg.find(p), std::string::npos) << "message \"" << msg << "\" lacks \"" << p << "\"";
  return msg;
}

// The same, and the message must start with "op: " (the op the user called).
template <typename F>
std::string expect_error(F&& f, const std::string& op, std::initializer_list<std::string> parts,
                         const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  std::string msg = expect_error(std::forward<F>(f), parts, file, line);
  if (!msg.empty() && !op.empty()) {
    EXPECT_EQ(msg.rfind(op + ": ", 0), 0u) << "message \"" << msg << "\" does not start with \"" << op << ": \"";
  }
  return msg;
}

// A seeded generator for module options that lives until the test process
// ends, so a module can be built in one expression:
//   nn::Linear lin(3, 4, {.dtype = kFloat64, .generator = test::seeded(7)});
inline Generator* seeded(uint64_t seed) {
  static std::deque<Generator> kept;  // a deque never moves what it holds
  return &kept.emplace_back(seed);
}

// Short factories for test values.
inline Tensor f64(const std::vector<double>& v) { return tensor(v); }  // 1-D
inline Tensor f64(const std::vector<double>& v, const Shape& s) { return tensor(v, s); }
inline Tensor i64(const std::vector<int64_t>& v) { return tensor(v); }
inline Tensor i64(const std::vector<int64_t>& v, const Shape& s) { return tensor(v, s); }
inline std::vector<double> vals(const Tensor& t) { return t.to_vector<double>(); }

// Row-major values as doubles, whatever the float dtype.
inline std::vector<double> values(const Tensor& t) { return t.to_vector<double>(); }

// Every element of `actual` within tol of `expected` (same count).
inline void expect_values(const Tensor& actual, const std::vector<double>& expected, double tol = 1e-9,
                          const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  ::testing::ScopedTrace trace(file, line, "expect_values");
  ASSERT_TRUE(actual.defined()) << "tensor is undefined";
  std::vector<double> v = values(actual);
  ASSERT_EQ(v.size(), expected.size()) << "shape " << shape_str(actual.shape());
  for (size_t i = 0; i < v.size(); ++i) EXPECT_NEAR(v[i], expected[i], tol) << "at flat index " << i;
}

// Two tensors of the same shape, elementwise within tol.
inline void expect_close(const Tensor& actual, const Tensor& expected, double tol = 1e-9,
                         const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  ::testing::ScopedTrace trace(file, line, "expect_close");
  ASSERT_TRUE(actual.defined()) << "tensor is undefined";
  ASSERT_EQ(shape_str(actual.shape()), shape_str(expected.shape()));
  expect_values(actual, values(expected), tol, file, line);
}

// A fresh directory under the system temp dir (named from `prefix`),
// removed with its contents when the test ends.
class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "ember_test") {
    std::string tmpl = (std::filesystem::temp_directory_path() / (prefix + "_XXXXXX")).string();
    EXPECT_NE(::mkdtemp(tmpl.data()), nullptr) << tmpl;
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return (std::filesystem::path(path_) / name).string(); }
  // Names of the entries in the directory (hidden temporaries included), sorted.
  std::vector<std::string> entries() const {
    std::vector<std::string> out;
    for (const auto& e : std::filesystem::directory_iterator(path_)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }

 private:
  std::string path_;
};

}  // namespace ember::test
