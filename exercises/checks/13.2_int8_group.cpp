// Checks exercise 13.2: quantize_group on hand-picked groups (the largest
// value, ties both ways, a group of zeros, a single value) and on many random
// groups of 1 to 64 values of every magnitude, against ember's own
// quantization (gemm::quantize_row in tensor/gemm/step8_int8.cpp, one group
// of n), bit for bit; dequantize_group against q * s; error_bound against
// the largest error of thousands of groups, and for how tight it is. A wrong
// result is compared with the usual mistakes' (a scale of max/128 or of
// max x without |.|, rounding cut toward zero, ties away from zero, 0 / 0
// for a group of zeros, a bound of a whole or of a quarter step) to name the
// one it is.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "exercises/checks/check.h"
#include "tensor/gemm/int8.h"

namespace ex13_2 {
float quantize_group(const float* x, int n, int8_t* q);
void dequantize_group(const int8_t* q, int n, float s, float* out);
double error_bound(const float* x, int n);
}  // namespace ex13_2

namespace {

using Group = std::vector<float>;

// What q holds before quantize_group is called: a value left there was never written.
constexpr int8_t kUnwritten = 77;

std::string f9(double v) {  // enough digits to tell two float32s apart
  char s[32];
  std::snprintf(s, sizeof s, "%.9g", v);
  return s;
}

std::string show_group(const Group& x) {
  if (x.size() > 10) return "a group of " + std::to_string(x.size()) + " values";
  std::string s = "(";
  for (size_t k = 0; k < x.size(); ++k) s += (k ? ", " : "") + f9(x[k]);
  return s + ")";
}

float amax_of(const Group& x) {
  float m = 0;
  for (float v : x) m = std::max(m, std::fabs(v));
  return m;
}

// ember's answer: one group of n values.
struct Quantized {
  std::vector<int8_t> q;
  float s = 0;
};
Quantized ember_quantized(const Group& x) {
  Quantized r;
  r.q.assign(x.size(), 0);
  ember::gemm::quantize_row(x.data(), static_cast<int64_t>(x.size()), static_cast<int64_t>(x.size()), r.q.data(), &r.s);
  return r;
}

// The largest |x[k] - q[k] s| of ember's quantization (exact: q s fits a double), and where.
double largest_error(const Group& x, int64_t* where = nullptr) {
  const Quantized e = ember_quantized(x);
  double worst = -1;
  for (size_t k = 0; k < x.size(); ++k) {
    const double err = std::fabs(double(x[k]) - double(e.q[k]) * double(e.s));
    if (err > worst) {
      worst = err;
      if (where) *where = static_cast<int64_t>(k);
    }
  }
  return std::max(worst, 0.0);
}

// What a wrong scale is.
std::string scale_mistake(const Group& x, float got) {
  const float amax = amax_of(x);
  float smax = 0;  // the largest value with its sign (from 0, as a loop would start)
  for (float v : x) smax = std::max(smax, v);
  float smax_signed = x[0];
  for (float v : x) smax_signed = std::max(smax_signed, v);
  if (std::isnan(got)) return "s is NaN: s = max|x| / 127 is a number for every group, 0 for a group of zeros";
  if (got == amax / 128.0f)
    return "that divides by 128: then the largest value is 128 steps from zero, and int8's symmetric range is "
           "[-127, 127] (128 wraps around to -128, or must be clamped and loses a step). s = max|x| / 127";
  if (got == amax / 255.0f || got == amax / 256.0f || got == amax / 254.0f)
    return "that spreads max|x| over the whole int8 range, but the range is split around 0: the positive side has "
           "127 steps, so s = max|x| / 127";
  if (got != amax / 127.0f && (got == smax / 127.0f || got == smax_signed / 127.0f))
    return "that is the largest value with its sign, max x: the scale comes from the largest magnitude, max |x| "
           "(std::fabs), or a negative value of the group falls outside the 127 steps";
  if (got == amax) return "that is max|x| itself: s is the size of one step, max|x| / 127";
  if (amax > 0 && got == 127.0f / amax) return "that is 1 / s: s = max|x| / 127, the size of one step";
  if (std::fabs(double(got) - double(amax) / 127.0) <= 1e-6 * double(amax))
    return "nearly: compute it as ember does, one float32 division max|x| / 127.0f (a multiplication by 1 / 127 "
           "rounds differently in the last bit)";
  return "s = max|x| / 127: the largest magnitude of the group, over 127";
}

// What a wrong q[k] is, the scale s being right (x / s as ember computes it).
std::string q_mistake(float x, float s, int got, int want) {
  if (s == 0) {
    if (got == kUnwritten)
      return "q[k] still holds the 77 the checker put there before the call: a group of zeros needs its q written "
             "too, every q = 0";
    return "here s = 0, so x[k] / s is 0 / 0, which is NaN; a NaN clamped or turned into an integer can be anything. "
           "A group of zeros gets q = 0 without dividing (ember: s > 0 ? x / s : 0)";
  }
  const float r = x / s;
  const float lo = std::floor(r);
  const bool tie = r - lo == 0.5f;
  if (got == kUnwritten && want != kUnwritten)
    return "q[k] still holds the 77 the checker put there before the call: was it written?";
  if (want != 0 && got == -want) return "the sign is lost or flipped: q[k] has the sign of x[k]";
  if (tie && got == static_cast<int>(std::round(r)))
    return std::string(r > 0 ? "a tie went up, away from zero (std::round or floor(r + 0.5) do that)"
                             : "a tie went away from zero (std::round does that)") +
           ": exactly half-way goes to the even neighbour, so that ties do not all push the same way. "
           "std::nearbyint (or std::rint) rounds so in the default rounding mode";
  if (tie && got == static_cast<int>(lo) + 1)
    return "a tie went up, toward zero (floor(r + 0.5) does that, and so does cutting the fraction off): exactly "
           "half-way goes to the even neighbour, std::nearbyint";
  if (got == static_cast<int>(std::trunc(r)))
    return "that is x[k] / s cut toward zero (a cast to an integer drops the fraction), which can cost up to a "
           "whole step: round to the nearest step (std::nearbyint)";
  if (got == static_cast<int>(lo)) return "that is x[k] / s rounded down (floor): round to the nearest step";
  if (got == -128) return "-128 is outside the symmetric range [-127, 127]: clamp to it";
  if (std::abs(got - want) == 1 && std::fabs(r - (lo + 0.5f)) < 1e-4f)
    return "x[k] lies within a hair of half-way between two steps, and the last bit decides: divide as ember does, "
           "x[k] / s with both float32 (not in double, not x[k] * (1 / s))";
  return "q[k] = x[k] / s rounded to the nearest integer, ties to even, kept in [-127, 127]";
}

// quantize_group(x) must give ember's s and q exactly.
void expect_quantized(const Group& x, const std::string& what) {
  const int n = static_cast<int>(x.size());
  const Quantized want = ember_quantized(x);
  std::vector<int8_t> q(x.size(), kUnwritten);
  const float s = ex13_2::quantize_group(x.data(), n, q.data());
  const std::string group = what.empty() ? show_group(x) : what;
  if (!(s == want.s))
    check::fail("for " + group + " (max|x| = " + f9(amax_of(x)) + "), s is " + f9(s) + ", but should be " + f9(want.s),
                scale_mistake(x, s));
  for (int k = 0; k < n; ++k)
    if (q[k] != want.q[k]) {
      std::string where = "for " + group + ", q[" + std::to_string(k) + "] is " + std::to_string(q[k]) +
                          ", but should be " + std::to_string(want.q[k]) + " (x[" + std::to_string(k) + "] = " + f9(x[k]);
      if (want.s > 0) where += ", x[k] / s = " + f9(x[k] / want.s);
      check::fail(where + ")", q_mistake(x[k], want.s, q[k], want.q[k]));
    }
}

// Random groups: 1 to 64 values, of magnitudes from 2^-30 to 2^30, some with
// an outlier, some of ties only, some of zeros.
class Groups {
 public:
  explicit Groups(uint32_t seed) : rng_(seed) {}
  Group next() {
    const int n = std::uniform_int_distribution<int>(1, 64)(rng_);
    const int kind = std::uniform_int_distribution<int>(0, 9)(rng_);
    Group x(static_cast<size_t>(n));
    if (kind == 0) {  // ties: the step 2^e exactly, every other value half-way between two steps
      const float step = std::ldexp(1.0f, exponent());
      for (float& v : x) v = (float(std::uniform_int_distribution<int>(-126, 125)(rng_)) + 0.5f) * step;
      x[size_t(std::uniform_int_distribution<int>(0, n - 1)(rng_))] = (sign() ? 127.0f : -127.0f) * step;
    } else if (kind == 1 && n <= 8) {  // zeros
      for (float& v : x) v = sign() ? 0.0f : -0.0f;
    } else if (kind == 2) {  // each value of its own magnitude
      for (float& v : x) v = normal_(rng_) * std::ldexp(1.0f, exponent());
    } else {  // one magnitude, sometimes an outlier or a zero
      const float scale = std::ldexp(1.0f, exponent());
      for (float& v : x) {
        v = normal_(rng_) * scale;
        const int roll = std::uniform_int_distribution<int>(0, 31)(rng_);
        if (roll == 0) v *= 100.0f;
        if (roll == 1) v = 0.0f;
      }
    }
    return x;
  }

 private:
  int exponent() { return std::uniform_int_distribution<int>(-30, 30)(rng_); }
  bool sign() { return std::uniform_int_distribution<int>(0, 1)(rng_) == 1; }
  std::mt19937 rng_;
  std::normal_distribution<float> normal_{0.0f, 1.0f};
};

// A group whose values all lie just below half-way between two steps: the
// error of each is nearly half a step, the most rounding to nearest costs.
Group just_below_half_way() {
  Group x = {127.0f};  // s = 1
  for (int m = -120; m <= 120; m += 7) x.push_back(float(m) + 0.5f - std::ldexp(1.0f, -12));
  return x;
}

// What a bound below a group's error is.
std::string low_bound_mistake(double bound, float amax) {
  const double half = double(amax) / 254.0;
  if (half > 0 && std::fabs(bound / half - 0.5) < 0.01)
    return "that is a quarter of a step, s / 4: rounding to the nearest step can move a value by up to half a "
           "step, s / 2 = max|x| / 254 (a value just below half-way between two steps comes close to that)";
  if (bound < 0 || std::isnan(bound)) return "a bound is a distance: a number >= 0";
  return "rounding to the nearest step can move a value by up to half a step, s / 2 = max|x| / 254 (and the "
         "rounding of x / s can add at most 2^-17 of a step)";
}

// What a bound far above the most a group's error can be is.
std::string loose_bound_mistake(double bound, float amax) {
  const double half = double(amax) / 254.0;
  if (half > 0 && std::fabs(bound / half - 2.0) < 0.02)
    return "that is a whole step, s = max|x| / 127: what cutting toward zero can cost. Rounding to the nearest "
           "step costs at most half of it, s / 2 = max|x| / 254";
  return "the most rounding to the nearest step costs is half a step, s / 2 = max|x| / 254 (plus at most 2^-17 "
         "of a step for the division): the bound should be that, not more";
}

// error_bound(x) must not be below the error ember's quantization makes
// (allowing the 2^-17 of a step the division can add: a bound of max|x| /
// 254 exactly passes).
void expect_bound_holds(const Group& x, const std::string& what) {
  const double bound = ex13_2::error_bound(x.data(), static_cast<int>(x.size()));
  int64_t k = 0;
  const double err = largest_error(x, &k);
  if (!(bound * (1.0 + std::ldexp(1.0, -14)) >= err)) {
    const Quantized e = ember_quantized(x);
    check::fail("error_bound says " + f9(bound) + " for " + what + " with max|x| = " + f9(amax_of(x)) +
                    " (s = " + f9(e.s) + "), but x[" + std::to_string(k) + "] = " + f9(x[size_t(k)]) + " comes back as " +
                    std::to_string(e.q[size_t(k)]) + " x s = " + f9(double(e.q[size_t(k)]) * e.s) + ", off by " + f9(err),
                low_bound_mistake(bound, amax_of(x)));
  }
}

// error_bound(x) must be at most 1.01 x max|x| / 254: half a step and a sliver.
double expect_bound_tight(const Group& x, const std::string& what) {
  const double bound = ex13_2::error_bound(x.data(), static_cast<int>(x.size()));
  const float amax = amax_of(x);
  const double most = 1.01 * double(amax) / 254.0 + 1e-30;
  check::expect(bound <= most,
                "error_bound says " + f9(bound) + " for " + what + " with max|x| = " + f9(amax) +
                    ", more than max|x| / 254 = " + f9(double(amax) / 254.0) + " (half a step) and a sliver",
                loose_bound_mistake(bound, amax));
  return bound;
}

}  // namespace

check::Exercise check::exercise() {
  return {"13.2", "Quantizing a group to int8", "docs/book/13_gemm_and_bfloat16.md", {
    {"the largest magnitude is 127 steps: s = max|x| / 127, its q is 127 or -127", [] {
       expect_quantized({10.0f, -254.0f, 4.0f}, "");
       expect_quantized({-3.1f, 50.8f, 1.2f}, "");
       expect_quantized({0.1f, 0.2f, 0.3f}, "");
       expect_quantized({-7.0f, -1.0f, -0.5f}, "");
     }},
    {"each value goes to the nearest step, a tie to the even one (2.5 -> 2, 3.5 -> 4, -2.5 -> -2)", [] {
       expect_quantized({127.0f, 0.4f, 0.6f, -0.6f, 2.5f, 3.5f, -2.5f, -3.5f, 126.5f, -1.5f}, "");
     }},
    {"a group of zeros: s = 0 and every q = 0, with no division by zero", [] {
       expect_quantized({0.0f, 0.0f, 0.0f, 0.0f}, "");
       expect_quantized({0.0f, -0.0f, 0.0f}, "");
     }},
    {"a single value, and 32 random values, as ember's quantize_row gives them", [] {
       expect_quantized({-0.3f}, "");
       expect_quantized({1e6f}, "");
       std::mt19937 rng(132);
       std::normal_distribution<float> normal(0.0f, 1.0f);
       Group x(32);
       for (float& v : x) v = normal(rng);
       expect_quantized(x, "32 random values");
     }},
    {"20000 random groups of 1 to 64 values, of every magnitude, bit for bit as ember's", [] {
       Groups groups(1302);
       for (int i = 0; i < 20000; ++i) {
         const Group x = groups.next();
         expect_quantized(x, "random group " + std::to_string(i) + " " + show_group(x));
       }
     }},
    {"dequantize_group gives back q[k] * s", [] {
       Groups groups(2013);
       std::vector<Group> all = {{10.0f, -254.0f, 4.0f}, {127.0f, 2.5f, -3.5f}, {0.0f, 0.0f}};
       for (int i = 0; i < 2000; ++i) all.push_back(groups.next());
       for (const Group& x : all) {
         const Quantized e = ember_quantized(x);
         std::vector<float> out(x.size(), -1.0f);
         ex13_2::dequantize_group(e.q.data(), static_cast<int>(x.size()), e.s, out.data());
         for (size_t k = 0; k < x.size(); ++k) {
           const float want = static_cast<float>(e.q[k]) * e.s;
           if (out[k] == want && !std::isnan(out[k])) continue;
           std::string hint = "out[k] = q[k] * s: q[k] steps of size s, one float32 multiplication";
           if (e.s > 0 && out[k] == static_cast<float>(e.q[k]) / e.s)
             hint = "that divides by s: q[k] steps of size s are q[k] * s";
           if (std::isnan(out[k])) hint = "a NaN: for a group of zeros s = 0 and every q = 0, so q[k] * s is 0. " + hint;
           check::fail("for " + show_group(x) + " (s = " + f9(e.s) + "), q[" + std::to_string(k) + "] = " +
                           std::to_string(e.q[k]) + " gives back " + f9(out[k]) + ", but should give " + f9(want),
                       hint);
         }
       }
     }},
    {"error_bound is never below the largest error of a group (5000 random groups)", [] {
       expect_bound_holds({127.0f, 2.5f, -3.5f}, "the group (127, 2.5, -3.5)");
       expect_bound_holds(just_below_half_way(), "a group whose values all lie just below half-way between two steps");
       expect_bound_holds({0.0f, 0.0f, 0.0f}, "a group of zeros");
       Groups groups(1303);
       for (int i = 0; i < 5000; ++i) {
         const Group x = groups.next();
         expect_bound_holds(x, "random group " + std::to_string(i) + " " + show_group(x));
       }
     }},
    {"error_bound is tight: at most 1.01 x max|x| / 254", [] {
       double reached = 0;
       const Group worst = just_below_half_way();
       expect_bound_tight(worst, "a group whose values all lie just below half-way between two steps");
       expect_bound_tight({0.0f, 0.0f, 0.0f}, "a group of zeros");
       Groups groups(1303);
       for (int i = 0; i < 5000; ++i) {
         const Group x = groups.next();
         const double bound = expect_bound_tight(x, "random group " + std::to_string(i) + " " + show_group(x));
         if (bound > 0) reached = std::max(reached, largest_error(x) / bound);
       }
       const double worst_reached = largest_error(worst) / ex13_2::error_bound(worst.data(), int(worst.size()));
       check::note("The largest error of the 5000 random groups is " + f9(reached) + " of your bound (a value exactly "
                   "half-way between two steps is off by half a step); of the group just below half-way, " +
                   f9(worst_reached) + ".");
     }},
  }};
}
