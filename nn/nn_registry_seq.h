// Lesson C's layers, losses, recurrent cells and attention in the op registry
// (autograd/op_registry.h), so that the registry test gradchecks them and
// examples/gradcheck_tour lists them next to the tensor ops.
//
// A function, not a static initializer, for the reason nn/nn_registry.h
// gives: ember is a static library, and an object file that nothing
// references is dropped by the linker together with its registrations.
#pragma once

namespace ember::nn {

// Adds "nn.Linear", "nn.layer_norm", "nn.cross_entropy" (and its "(sum)",
// "(none)" forms), "nn.mse_loss", "nn.dropout", "nn.RNNCell", "nn.LSTMCell",
// "nn.GRUCell", "nn.LSTM", "nn.sdpa", "nn.sdpa(causal)",
// "nn.AdditiveAttention", "nn.MultiHeadAttention",
// "nn.MultiHeadAttention(causal)" and "nn.TransformerBlock" to op_registry().
// Safe to call more than once (only the first call registers).
void register_sequence_ops();

}  // namespace ember::nn
