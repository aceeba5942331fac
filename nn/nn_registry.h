// The embedding lesson's modules in the op registry (autograd/op_registry.h),
// so that the registry test gradchecks them and examples/gradcheck_tour lists
// them next to the tensor ops.
//
// Why a function and not a static initializer: ember is a STATIC library, and
// the linker only pulls in an object file that something references. A file
// whose only content is `static const bool registered = register_op(...)` is
// never referenced, so it would be silently dropped. Calling this function
// references nn_registry.o, and with it the entries.
#pragma once

namespace ember::nn {

// Adds "nn.Embedding", "nn.LearnedPositionalEmbedding",
// "nn.EmbeddingComposer(learned)", "nn.EmbeddingComposer(sinusoidal)",
// "nn.LMHead" and "nn.LMHead(tied)" to op_registry(). Safe to call more than
// once (only the first call registers).
void register_embedding_ops();

}  // namespace ember::nn
