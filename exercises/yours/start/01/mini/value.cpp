// Stage 1: a number that knows its gradient (docs/book/build_your_own/01_values.md).
// Each MINI_TODO asks a question; replace it with your code, then run
//   bash scripts/build_your_own.sh 1
#include "mini/value.h"

#include <cmath>

#include "mini/error.h"

namespace mini {

Value::Value(double data) : node_(std::make_shared<Node>()) { node_->data = data; }

Value::Value(std::shared_ptr<Node> node) : node_(std::move(node)) {}

double Value::data() const { return node_->data; }

double Value::grad() const { return node_->grad; }

// Each op makes a new Node: its data, its op's name, and one Input per value
// it reads, holding d(result)/d(that value) at these numbers.
Value operator+(const Value& a, const Value& b) {
  (void)a;
  (void)b;
  MINI_TODO("a + b: what is d(a + b)/da, and d(a + b)/db?");
}

Value operator*(const Value& a, const Value& b) {
  (void)a;
  (void)b;
  MINI_TODO("a * b: what is d(a * b)/da? And when a and b are the same value (x * x), what must still hold?");
}

Value operator-(const Value& a) {
  (void)a;
  MINI_TODO("-a: its value and d(-a)/da");
}

Value operator-(const Value& a, const Value& b) {
  (void)a;
  (void)b;
  MINI_TODO("a - b: a new rule, or made of ops you already have?");
}

Value operator/(const Value& a, const Value& b) {
  (void)a;
  (void)b;
  MINI_TODO("a / b: a rule of its own (what is d(a/b)/db?), or made of ops you already have?");
}

Value pow(const Value& a, double k) {
  (void)a;
  (void)k;
  MINI_TODO("a^k for a constant k: what is d(a^k)/da?");
}

Value exp(const Value& a) {
  (void)a;
  MINI_TODO("e^a: which number you have already computed is its derivative?");
}

Value log(const Value& a) {
  (void)a;
  MINI_TODO("log(a), the natural logarithm: its derivative?");
}

Value tanh(const Value& a) {
  (void)a;
  MINI_TODO("tanh(a): its derivative, written with the value you have just computed");
}

Value relu(const Value& a) {
  (void)a;
  MINI_TODO("relu(a) = max(a, 0): its derivative on each side of 0 (at 0: 0)");
}

void Value::backward() const {
  MINI_TODO(
      "a value may be used by several others (a diamond: c feeds a and b, which both feed out). When may c pass "
      "its grad on to its own inputs? In which order must the values be visited for that, and how do you find "
      "that order once, before the walk?");
}

void Value::zero_grad() const {
  MINI_TODO("which values must be reset, and how do you reach each of them exactly once?");
}

}  // namespace mini
