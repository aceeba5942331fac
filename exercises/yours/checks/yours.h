// What the build-your-own checkers share (exercises/yours/checks/NN_<name>.cpp).
//
// One program checks stages 1 ... N of the learner's framework, `mini`, in
// order (stage N re-checks the stages it builds on): each stage's checker
// registers its check::Exercise here, and main.cpp runs them with check::run.
// A step's body runs the learner's code beside ember's and compares; the
// helpers below turn mini's own exceptions into the checker's words.
#pragma once

#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "exercises/checks/check.h"
#include "mini/error.h"

namespace yours {

using Make = check::Exercise (*)();

/// The stages linked into this program, by number.
std::map<int, Make>& stages();

/// Registers stage n's checker: `const yours::Stage stage{1, values};`
struct Stage {
  Stage(int n, Make make) { stages()[n] = make; }
};

/// A step whose body calls mini: a mini::Todo becomes "still to do" (with
/// the file and line of the MINI_TODO), and a mini::Error, which no step
/// asks for unless it says so, a failure with `refused` as its hint.
inline check::Step step(std::string name, std::function<void()> body,
                        std::string refused = "ember accepts this input: what made your code refuse it?") {
  return {std::move(name), [body = std::move(body), refused = std::move(refused)] {
            try {
              body();
            } catch (const mini::Todo& todo) {
              throw exercise::Todo(todo.what());
            } catch (const mini::Error& e) {
              check::fail(std::string("your code refused something it should do: ") + e.what(), refused);
            }
          }};
}

/// Runs f, which must refuse with a mini::Error naming every one of `parts`;
/// `what` says what should be refused, `hint` what missing the refusal means,
/// `context` (lines after the message) where it happened.
inline void expect_refusal(const std::function<void()>& f, const std::vector<std::string>& parts,
                           const std::string& what, const std::string& hint, const std::string& context = "") {
  std::string message;
  try {
    f();
  } catch (const mini::Error& e) {
    message = e.what();
  } catch (const mini::Todo&) {
    throw;
  } catch (const std::exception& e) {
    check::fail(what + ": it threw, but not a mini::Error (use MINI_CHECK from mini/error.h): " + e.what() + context);
  }
  check::expect(!message.empty(), what + ": nothing was refused" + context, hint);
  for (const std::string& p : parts)
    check::expect(message.find(p) != std::string::npos,
                  what + ": the message \"" + message + "\" should mention \"" + p + "\"" + context,
                  "a refusal names the op and the values it was given, so that the reader sees what was wrong");
}

/// Whether got is want within a relative tolerance (an absolute one below 1).
inline bool close(double got, double want, double rel) {
  return std::abs(got - want) <= rel * std::max(1.0, std::abs(want));
}

}  // namespace yours
