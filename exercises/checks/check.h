// The checkers' side of the exercises: each exercises/checks/<id>_<name>.cpp
// defines check::exercise(), a list of steps; check.cpp runs them in order
// against the learner's file and prints, in plain words, what passed and
// what is wrong. The first step that fails stops the run (later steps
// usually build on it).
//
// Exit status: 0 every step passed, 1 a step failed or is still TODO.
#pragma once

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "ember.h"
#include "exercises/exercise.h"

namespace check {

using ember::Shape;
using ember::Tensor;

/// A failed step: what is wrong, and (optionally) where to look.
struct Failure {
  std::string message, hint;
};

/// Fails the current step with a sentence the learner reads.
[[noreturn]] void fail(const std::string& message, const std::string& hint = "");
/// fail(message, hint) unless ok.
void expect(bool ok, const std::string& message, const std::string& hint = "");

/// "(1, -2, 3)" or "((1, 2), (3, 4))": the values of a small tensor, up to
/// 12 of them, with at most 6 significant digits.
std::string show(const Tensor& t);
std::string show(const std::vector<double>& v);
std::string show(const Shape& s);  // "(2, 3)"
std::string num(double v);         // 6 significant digits

/// The largest |got - want| (got and want are converted to float64; their
/// shapes must match, else fail() saying so).
double max_diff(const Tensor& got, const Tensor& want, const std::string& what);
/// Whether got is defined, has want's shape and every value within tol of
/// want's: no failure, for telling which mistake a wrong answer is.
bool matches(const Tensor& got, const Tensor& want, double tol = 1e-9);
/// Fails unless got has want's shape and every value is within tol of want's.
void expect_close(const Tensor& got, const Tensor& want, const std::string& what, double tol = 1e-6,
                  const std::string& hint = "");
/// The same for numbers.
void expect_near(double got, double want, const std::string& what, double tol = 1e-9, const std::string& hint = "");

/// Fails unless a predicted number of bytes equals the measured one, saying
/// by how much (and how many floats) it is off: the saved-bytes exercises.
void expect_bytes(int64_t predicted, int64_t measured, const std::string& what);

/// Runs f, which must throw ember::Error with every one of `parts` in its
/// message; returns the message. `what` says what should have been refused.
std::string expect_error(const std::function<void()>& f, const std::vector<std::string>& parts, const std::string& what);
/// The same, with the hint for the mistake each failure means: `unrefused`
/// when nothing was thrown (the check is missing, or lets this case through),
/// `unnamed` (when given) when the message leaves out one of `parts`.
std::string expect_error(const std::function<void()>& f, const std::vector<std::string>& parts, const std::string& what,
                         const std::string& unrefused, const std::string& unnamed = "");

/// A note the learner reads under the step once it passed (a report, a
/// number worth seeing).
void note(const std::string& text);

/// The names of every node reachable from t's grad_fn (t's own first).
std::vector<std::string> graph_nodes(const Tensor& t);

/// How many ops f calls itself (not the ops those call inside them): a
/// loop over a batch shows as calls that grow with it.
int64_t ops_called(const std::function<void()>& f);

struct Step {
  std::string name;            // "square(x) computes x * x"
  std::function<void()> body;  // fails, or returns
  /// When ember refuses something the learner's code asked for (an
  /// ember::Error) and its message holds `first`, the hint is `second`: the
  /// mistake such a refusal means in this step. Otherwise a general hint.
  std::vector<std::pair<std::string, std::string>> refusals = {};
};

struct Exercise {
  std::string id;       // "2.1"
  std::string title;    // "SquareBackward"
  std::string chapter;  // "docs/book/02_the_autograd_engine.md"
  std::vector<Step> steps;
};

/// Defined once per exercise, in its checker file.
Exercise exercise();

/// Runs exercises in order, each one's steps until one fails, and prints
/// PASS or NOT YET: the exit status (0 or 1). `kind` heads each ("Exercise",
/// "Stage"); `file` is the learner's file (a folder: "dir/"), or "". A book
/// exercise's program runs one (check.cpp's main); the build-your-own track
/// (exercises/yours/) runs stages 1 ... N in one program, so that a later
/// stage re-checks the earlier ones, with a main of its own (check.cpp is
/// then compiled with CHECK_SEVERAL_EXERCISES, which leaves its main out).
int run(const std::vector<Exercise>& exercises, const std::string& kind, const std::string& file);

}  // namespace check
