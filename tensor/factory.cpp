#include "tensor/factory.h"

#include <cmath>
#include <cstring>

#include "tensor/kernels.h"
#include "tensor/parallel.h"

namespace ember {

namespace {

template <typename T>
Tensor from_values(const std::vector<T>& values, const Shape& shape) {
  int64_t n = checked_numel(shape, "tensor");
  EMBER_CHECK(n == static_cast<int64_t>(values.size()), "tensor",
              values.size() << " values cannot fill shape " << shape_str(shape) << " (" << n << " elements)");
  Tensor t = empty(shape, dtype_of<T>::value);
  T* p = t.data_ptr<T>();
  for (int64_t i = 0; i < n; ++i) p[i] = values[static_cast<size_t>(i)];
  return t;
}

Shape flat(size_t n) { return {static_cast<int64_t>(n)}; }

}  // namespace

Tensor tensor(const std::vector<float>& v) { return from_values(v, flat(v.size())); }
Tensor tensor(const std::vector<double>& v) { return from_values(v, flat(v.size())); }
Tensor tensor(const std::vector<int64_t>& v) { return from_values(v, flat(v.size())); }
Tensor tensor(const std::vector<bool>& v) { return from_values(v, flat(v.size())); }
Tensor tensor(const std::vector<float>& v, const Shape& s) { return from_values(v, s); }
Tensor tensor(const std::vector<double>& v, const Shape& s) { return from_values(v, s); }
Tensor tensor(const std::vector<int64_t>& v, const Shape& s) { return from_values(v, s); }
Tensor tensor(const std::vector<bool>& v, const Shape& s) { return from_values(v, s); }
Tensor tensor(std::initializer_list<double> v, DType dtype) { return tensor(v, flat(v.size()), dtype); }
Tensor tensor(std::initializer_list<double> v, const Shape& s, DType dtype) {
  EMBER_CHECK(dtype != kBool, "tensor", "a list of numbers makes a floating or int64 tensor; for bool pass a std::vector<bool>");
  Tensor values = from_values(std::vector<double>(v), s);
  if (dtype == kFloat64) return values;
  if (dtype == kInt64) {
    for (double x : v)
      EMBER_CHECK(x == std::trunc(x) && std::abs(x) < 9.2e18, "tensor", "value " << x << " is not an int64");
  }
  return kernel::to(values, dtype);
}

Tensor scalar_tensor(double value, DType dtype) { return full({}, value, dtype); }

Tensor full(const Shape& shape, double value, DType dtype) {
  Tensor t = empty(shape, dtype, "full");
  kernel::fill_(t, value);
  return t;
}
Tensor zeros(const Shape& shape, DType dtype) {
  Tensor t = empty(shape, dtype, "zeros");
  // Large buffers are zeroed by all threads: a big gradient (e.g. a (V, D)
  // embedding table) is bound by memory bandwidth.
  char* p = static_cast<char*>(t.raw_data());
  const int64_t nbytes = t.numel() * static_cast<int64_t>(dtype_size(dtype));
  detail::parallel_for(nbytes, int64_t{1} << 20, [&](int64_t b, int64_t e) { std::memset(p + b, 0, static_cast<size_t>(e - b)); });
  return t;
}
Tensor ones(const Shape& shape, DType dtype) {
  Tensor t = empty(shape, dtype, "ones");
  kernel::fill_(t, 1.0);
  return t;
}
Tensor zeros_like(const Tensor& t) { return zeros(t.shape(), t.dtype()); }
Tensor ones_like(const Tensor& t) { return ones(t.shape(), t.dtype()); }
Tensor full_like(const Tensor& t, double value) { return full(t.shape(), value, t.dtype()); }

Tensor arange(double end, DType dtype) { return arange(0, end, 1, dtype); }
Tensor arange(double start, double end, double step, DType dtype) {
  EMBER_CHECK(std::isfinite(step) && step != 0, "arange", "step must be finite and non-zero, got " << step);
  EMBER_CHECK(std::isfinite(start) && std::isfinite(end), "arange", "start " << start << " and end " << end << " must be finite");
  // a step pointing away from end gives no elements (NumPy's rule)
  const double count = std::max(0.0, std::ceil((end - start) / step));
  // the length must fit int64 before the cast (beyond it the cast is undefined)
  EMBER_CHECK(count < 9.0e18, "arange",
              "from " << start << " to " << end << " in steps of " << step << " is " << count << " elements: too many");
  if (dtype == kInt64 && count > 0) {
    const double last = start + (count - 1) * step;
    EMBER_CHECK(std::abs(start) < 9.2e18 && std::abs(last) < 9.2e18, "arange",
                "values from " << start << " to " << last << " do not fit int64");
  }
  const int64_t n = static_cast<int64_t>(count);
  Tensor t = empty({n}, dtype, "arange");
  EMBER_DISPATCH_NUMERIC(dtype, "arange", [&]<typename T>() {
    T* p = t.data_ptr<T>();
    for (int64_t i = 0; i < n; ++i) p[i] = static_cast<T>(start + static_cast<double>(i) * step);
  });
  return t;
}

Tensor eye(int64_t n, int64_t m, DType dtype) {
  if (m < 0) m = n;
  EMBER_CHECK(n >= 0, "eye", "negative size n = " << n);
  Tensor t = empty({n, m}, dtype, "eye");
  kernel::fill_(t, 0.0);
  EMBER_DISPATCH_ALL(dtype, "eye", [&]<typename T>() {
    T* p = t.data_ptr<T>();
    for (int64_t i = 0; i < std::min(n, m); ++i) p[i * m + i] = static_cast<T>(1);
  });
  return t;
}

// ---- random ----
// Values are drawn in row-major order from one generator, one after another,
// so they never depend on the thread count.

void uniform_(const Tensor& t, double lo, double hi, Generator& gen) {
  EMBER_CHECK(lo <= hi, "uniform_", "lo " << lo << " must be <= hi " << hi);
  Tensor c = kernel::contiguous(t);
  GeneratorLock lock(gen);
  EMBER_DISPATCH_FLOAT(t.dtype(), "uniform_", [&]<typename T>() {
    T* p = c.data_ptr<T>();
    for (int64_t i = 0; i < c.numel(); ++i) {
      double u = std::is_same_v<T, float> ? gen.next_float() : gen.next_double();
      p[i] = static_cast<T>(lo + (hi - lo) * u);
    }
  });
  if (!c.is_same(t)) kernel::copy_(t, c, "uniform_");
  else t.storage()->bump_version();
}

void normal_(const Tensor& t, double mean, double std, Generator& gen) {
  EMBER_CHECK(std >= 0, "normal_", "std must be >= 0, got " << std);
  Tensor c = kernel::contiguous(t);
  GeneratorLock lock(gen);
  EMBER_DISPATCH_FLOAT(t.dtype(), "normal_", [&]<typename T>() {
    T* p = c.data_ptr<T>();
    const int64_t n = c.numel();
    for (int64_t i = 0; i < n; i += 2) {
      double z0, z1;
      gen.next_normal_pair(z0, z1);
      p[i] = static_cast<T>(mean + std * z0);
      if (i + 1 < n) p[i + 1] = static_cast<T>(mean + std * z1);
    }
  });
  if (!c.is_same(t)) kernel::copy_(t, c, "normal_");
  else t.storage()->bump_version();
}

Tensor rand(const Shape& shape, Generator& gen, DType dtype) { return uniform(shape, 0.0, 1.0, gen, dtype); }
Tensor randn(const Shape& shape, Generator& gen, DType dtype) { return normal(shape, 0.0, 1.0, gen, dtype); }
Tensor uniform(const Shape& shape, double lo, double hi, Generator& gen, DType dtype) {
  EMBER_CHECK(is_floating(dtype), "uniform", "dtype must be floating, got " << dtype_name(dtype));
  Tensor t = empty(shape, dtype, "uniform");
  uniform_(t, lo, hi, gen);
  return t;
}
Tensor normal(const Shape& shape, double mean, double std, Generator& gen, DType dtype) {
  EMBER_CHECK(is_floating(dtype), "normal", "dtype must be floating, got " << dtype_name(dtype));
  Tensor t = empty(shape, dtype, "normal");
  normal_(t, mean, std, gen);
  return t;
}
Tensor randint(int64_t low, int64_t high, const Shape& shape, Generator& gen) {
  EMBER_CHECK(low < high, "randint", "low " << low << " must be < high " << high);
  Tensor t = empty(shape, kInt64, "randint");
  int64_t* p = t.data_ptr<int64_t>();
  uint64_t range = static_cast<uint64_t>(high) - static_cast<uint64_t>(low);
  GeneratorLock lock(gen);
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = static_cast<int64_t>(static_cast<uint64_t>(low) + gen.next_below(range));
  return t;
}

Tensor rand(const Shape& s, DType dt) { return rand(s, default_generator(), dt); }
Tensor randn(const Shape& s, DType dt) { return randn(s, default_generator(), dt); }
Tensor uniform(const Shape& s, double lo, double hi, DType dt) { return uniform(s, lo, hi, default_generator(), dt); }
Tensor normal(const Shape& s, double m, double sd, DType dt) { return normal(s, m, sd, default_generator(), dt); }
Tensor randint(int64_t low, int64_t high, const Shape& s) { return randint(low, high, s, default_generator()); }

}  // namespace ember
