// nn::init: in-place initializers for parameters, each drawing from a seeded
// Generator so the same seed gives the same weights on every machine. They
// run under NoGradGuard (initialization is not part of the graph).
#pragma once

#include "tensor/random.h"
#include "tensor/tensor.h"

namespace ember::nn::init {

// Lets a constructor taking `Generator&` be called with a temporary
// Generator(seed): the temporary lives until the end of the full expression.
template <typename T>
T& lvalue(T&& t) {
  return t;
}

void normal_(Tensor& t, double mean, double std, Generator& gen);
void uniform_(Tensor& t, double lo, double hi, Generator& gen);
void zeros_(Tensor& t);
// fan_in = t.shape[1] * receptive field, fan_out = t.shape[0] * receptive field
// (PyTorch's convention for a (out, in) weight).
void xavier_uniform_(Tensor& t, Generator& gen, double gain = 1.0);  // U(±gain·sqrt(6/(fan_in+fan_out)))
void kaiming_uniform_(Tensor& t, Generator& gen, double a = 0.0);    // U(±sqrt(6/((1+a²)·fan_in)))

}  // namespace ember::nn::init
