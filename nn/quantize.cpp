// Weights in fewer bits (nn/quantize.h): the stored form, its products and
// the walk over a model that quantizes its layers.
#include "nn/quantize.h"

#include <cmath>
#include <sstream>

#include "autograd/grad_mode.h"
#include "autograd/op_scope.h"
#include "base/hooks.h"
#include "autograd/ops.h"
#include "tensor/gemm/microkernels.h"
#include "tensor/kernels.h"

namespace ember::nn {

std::string QuantizeOptions::to_string() const {
  if (format == gemm::WeightFormat::BFloat16) return "bfloat16";
  return "int8 group=" + std::to_string(group);
}

QuantizeOptions QuantizeOptions::from_string(const std::string& s) {
  QuantizeOptions o;
  std::istringstream in(s);
  std::string word;
  in >> word;
  const auto fail = [&] {
    EMBER_FAIL("quantize", "\"" << s
                                << "\" is not a quantization ember knows (\"int8 group=G\" with G 32, 64, 128 or 256, "
                                   "or \"bfloat16\")");
  };
  if (word == "bfloat16") {
    o.format = gemm::WeightFormat::BFloat16;
    if (in >> word) fail();
    return o;
  }
  if (word != "int8") fail();
  if (!(in >> word) || word.rfind("group=", 0) != 0) fail();
  const std::string v = word.substr(6);
  if (v.empty() || v.size() > 3 || v.find_first_not_of("0123456789") != std::string::npos) fail();
  o.group = std::stoll(v);
  if (!gemm::valid_int8_group(o.group) || (in >> word)) fail();
  return o;
}

QuantizedWeight::QuantizedWeight(const Tensor& weight, const QuantizeOptions& options, const char* op)
    : options_(options) {
  EMBER_CHECK(weight.defined() && weight.dim() == 2 && weight.dtype() == kFloat32, op,
              "quantize takes a float32 weight (N, K) (its products take float32 inputs), got "
                  << (weight.defined() ? shape_str(weight.shape()) + " " + dtype_name(weight.dtype()) : "none"));
  EMBER_CHECK(options.format == gemm::WeightFormat::BFloat16 || gemm::valid_int8_group(options.group), op,
              "the group size must be 32, 64, 128 or 256, got " << options.group);
  const Tensor w = kernel::contiguous(kernel::to(weight.detach(), kFloat32));
  const float* p = w.data_ptr<float>();
  for (int64_t i = 0; i < w.numel(); ++i)
    EMBER_CHECK(std::isfinite(p[i]), op,
                "the weight " << shape_str(weight.shape()) << " has " << p[i] << " at element " << i
                              << ": a non-finite value has no quantized form");
  const int64_t N = w.size(0), K = w.size(1);
  if (options.format == gemm::WeightFormat::BFloat16) {
    values = kernel::to(w, kBFloat16);
  } else {
    const int64_t groups = (K + options.group - 1) / options.group;
    values = empty({N, K}, kInt8);
    scale = empty({N, groups}, kFloat32);
    int8_t* q = values.data_ptr<int8_t>();
    float* s = scale.data_ptr<float>();
    for (int64_t j = 0; j < N; ++j) gemm::quantize_row(p + j * K, K, options.group, q + j * K, s + j * groups);
  }
  values_shape_ = values.shape();
  if (scale.defined()) scale_shape_ = scale.shape();
  refresh();
}

std::vector<std::pair<std::string, Tensor>> QuantizedWeight::buffers() const {
  if (!scale.defined()) return {{"weight", values}};
  return {{"weight", values}, {"weight_scale", scale}};
}

void QuantizedWeight::refresh() {
  const bool int8 = options_.format == gemm::WeightFormat::Int8;
  EMBER_CHECK(values.defined() && values.shape() == values_shape_ && (!int8 || (scale.defined() && scale.shape() == scale_shape_)),
              "quantize", "the weight's values " << (values.defined() ? shape_str(values.shape()) : "none")
                                                 << " or scales were replaced by tensors of other shapes (made as "
                                                 << shape_str(values_shape_) << ")");
  const uint64_t v = values.version(), s = int8 ? scale.version() : 0;
  if (v == seen_values_ && s == seen_scale_ && packed_mode_ == options_.mode && packed_.data) return;
  const int64_t N = values.size(0), K = values.size(1);
  Tensor deq = empty({N, K}, kFloat32);
  float* d = deq.data_ptr<float>();
  if (int8) {
    EMBER_CHECK(values.dtype() == kInt8 && scale.dtype() == kFloat32 && values.is_contiguous() && scale.is_contiguous(),
                "quantize", "the int8 weight's buffers changed dtype (" << dtype_name(values.dtype()) << ", "
                                                                       << dtype_name(scale.dtype()) << ")");
    const int8_t* q = values.data_ptr<int8_t>();
    const float* sc = scale.data_ptr<float>();
    const int64_t groups = scale.size(1), G = options_.group;
    for (int64_t j = 0; j < N; ++j)
      for (int64_t k = 0; k < K; ++k) d[j * K + k] = static_cast<float>(q[j * K + k]) * sc[j * groups + k / G];
    packed_ = gemm::pack_int8(q, sc, N, K, G, options_.mode);
  } else {
    EMBER_CHECK(values.dtype() == kBFloat16 && values.is_contiguous(), "quantize",
                "the bfloat16 weight's buffer changed dtype (" << dtype_name(values.dtype()) << ")");
    const bfloat16* b = values.data_ptr<bfloat16>();
    for (int64_t i = 0; i < N * K; ++i) d[i] = static_cast<float>(b[i]);
    packed_ = gemm::pack_bf16(reinterpret_cast<const uint16_t*>(b), N, K);
  }
  if (!dequantized_.defined()) {
    dequantized_ = deq;
  } else {
    NoGradGuard no_grad;
    kernel::copy_(dequantized_, deq, "quantize");  // in place: every handle to it sees the values
  }
  seen_values_ = v, seen_scale_ = s, packed_mode_ = options_.mode;
}

const Tensor& QuantizedWeight::dequantized() {
  std::lock_guard<std::mutex> lock(mutex_);
  refresh();
  return dequantized_;
}

void QuantizedWeight::set_mode(gemm::Int8Mode mode) {
  std::lock_guard<std::mutex> lock(mutex_);
  options_.mode = mode;
}

int64_t QuantizedWeight::bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return packed_.bytes();
}

Tensor QuantizedWeight::linear(const Tensor& x, const Tensor& bias, const char* op) {
  const int64_t N = out_features(), K = in_features();
  EMBER_CHECK(x.defined() && x.dim() >= 1 && x.size(-1) == K, op,
              "the input has shape " << (x.defined() ? shape_str(x.shape()) : "none") << " but the " << options_.to_string()
                                     << " weight " << shape_str(values.shape()) << " takes a last dim of " << K);
  EMBER_CHECK(x.dtype() == kFloat32, op,
              "a " << options_.to_string() << " weight multiplies float32 inputs, got " << dtype_name(x.dtype()) << " "
                   << shape_str(x.shape()));
  EMBER_CHECK(!(is_grad_enabled() && x.requires_grad()), op,
              "the weight " << shape_str(values.shape()) << " is " << options_.to_string()
                            << " (quantized for inference): no gradient flows through it; run it under NoGradGuard");
  if (reference) {
    const Tensor& w = dequantized();
    Tensor y = matmul(x, transpose(w, 0, 1));
    return bias.defined() ? y + bias : y;
  }
  // an op of its own for the instruments (the profiler's table, a trace);
  // compile/ has no capture rule for it and says so
  OpScope scope(options_.format == gemm::WeightFormat::Int8 ? "int8_linear" : "bf16_linear", x, values);
  Shape out_shape = x.shape();
  out_shape.back() = N;
  const Tensor a = kernel::contiguous(x.detach());
  const int64_t M = K > 0 ? a.numel() / K : 0;
  Tensor y = empty(out_shape, kFloat32);
  if (K == 0) {
    kernel::fill_(y, 0.0);
  } else {
    gemm::PackedWeight packed;  // a copy of the handles: products of one weight run side by side
    {
      std::lock_guard<std::mutex> lock(mutex_);
      refresh();
      packed = packed_;
    }
    gemm::weight_product(a.data_ptr<float>(), M, K, packed, y.data_ptr<float>(), N, gemm::default_isa());
    // the profiler's columns: 2 M N K flop-equivalents; the activations, the weight's bytes and the result
    note_work(2.0 * double(M) * double(N) * double(K), 4.0 * double(M * K) + double(packed.bytes()), 4.0 * double(M * N));
  }
  scope.out(y);
  return bias.defined() ? y + bias : y;
}

}  // namespace ember::nn
