// Stage 1 of your framework: a number that knows its gradient
// (docs/book/build_your_own/01_values.md).
//
// Each Value is one number of a computation. An op (a + b, tanh(a), ...)
// makes a new Value that remembers what it was computed from and, for each
// of those inputs, the local derivative d(new value)/d(input), worked out
// right then from the numbers at hand. backward() on the last value then
// fills in grad = d(last value)/d(this value) for every value it was
// computed from, by the chain rule.
//
//   Value x = 2.0, y = -3.0;
//   Value out = tanh(x * y + x);
//   out.backward();            // x.grad() is d out/dx, y.grad() is d out/dy
#pragma once

#include <memory>
#include <vector>

namespace mini {

/// What a Value is, in memory: the number, its gradient, and where it came from.
struct Node {
  double data = 0;  // the value
  double grad = 0;  // d(output)/d(this value), once backward() has run
  /// One value this one was computed from, and d(this)/d(that value).
  struct Input {
    std::shared_ptr<Node> node;
    double local = 0;
  };
  std::vector<Input> inputs;  // none for a leaf (a value you made yourself)
  const char* op = "leaf";    // "add", "mul", ...: for printing and debugging
};

/// A handle to a Node. Copying a Value copies the handle, not the number:
/// after `Value b = a;` a and b are the same value, with one gradient.
class Value {
 public:
  /// A leaf: a number computed from nothing. (Not explicit, so that
  /// `x * 2.0` works: the 2.0 becomes a leaf of its own.)
  Value(double data);
  /// The value whose node this is (what the ops return).
  explicit Value(std::shared_ptr<Node> node);

  double data() const;
  double grad() const;
  const std::shared_ptr<Node>& node() const { return node_; }

  /// Sets this value's grad to 1 (d this/d this) and adds d(this)/d(v) into
  /// v.grad for every value v this one was computed from, directly or not.
  /// It adds: on a graph that has been through backward() before, call
  /// zero_grad() first.
  void backward() const;
  /// Sets grad to 0 on this value and on every value it was computed from.
  void zero_grad() const;

 private:
  std::shared_ptr<Node> node_;
};

// The ops. Each returns a new Value whose inputs hold the local derivatives.
Value operator+(const Value& a, const Value& b);
Value operator*(const Value& a, const Value& b);
Value operator-(const Value& a);                  // negation
Value operator-(const Value& a, const Value& b);
Value operator/(const Value& a, const Value& b);
Value pow(const Value& a, double k);              // a^k, k a constant
Value exp(const Value& a);
Value log(const Value& a);   // the natural logarithm
Value tanh(const Value& a);
Value relu(const Value& a);  // max(a, 0); its derivative at 0 is taken as 0

}  // namespace mini
