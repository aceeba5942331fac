/// @file
/// nn::init: in-place initializers for parameters, each drawing from a
/// Generator so the same seed gives the same weights on every machine. They
/// run under NoGradGuard (initialization is not part of the graph).
///
/// Where a module's initial weights come from: every module takes an options
/// struct with a `generator` field. Given, the weights are drawn from it;
/// left null, from the default generator (tensor/random.h), as in PyTorch:
/// two default-constructed modules differ, and manual_seed(s) before building
/// a model makes its weights reproducible. A module made of modules hands its
/// generator to its children, which draw from it in the order they are built.
#pragma once

#include "tensor/random.h"
#include "tensor/tensor.h"

namespace ember::nn {

/// dtype and where the initial weights come from: the options of the modules
/// that need nothing else (the others have the same two fields).
struct InitOptions {
  DType dtype = kFloat32;
  Generator* generator = nullptr;  // null: the default generator
};

}  // namespace ember::nn

namespace ember::nn::init {

/// gen itself, or the default generator when gen is null.
inline Generator& generator(Generator* gen) { return gen ? *gen : default_generator(); }

void normal_(Tensor& t, double mean, double std, Generator& gen);
void uniform_(Tensor& t, double lo, double hi, Generator& gen);
void zeros_(Tensor& t);
/// fan_in = t.shape[1] * receptive field, fan_out = t.shape[0] * receptive field
/// (PyTorch's convention for a (out, in) weight).
void xavier_uniform_(Tensor& t, Generator& gen, double gain = 1.0);  // U(±gain·sqrt(6/(fan_in+fan_out)))
void kaiming_uniform_(Tensor& t, Generator& gen, double a = 0.0);    // U(±sqrt(6/((1+a²)·fan_in)))

}  // namespace ember::nn::init
