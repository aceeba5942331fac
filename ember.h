/// @file
/// ember.h: the whole public API of ember (target ember::ember) in one include.
///
///   base/          what is not tensors: errors, strict parsing, files written
///                  whole or not at all, settings as text
///   tensor/        Tensor, dtypes, shapes, factories, random numbers, threads
///   tensor/machine/ what adapts to the machine: BLAS kernels, thread governor, SIMD width
///   autograd/      the differentiable ops, backward, grad modes, gradcheck, graph export
///   compile/       a function captured into a graph of ops, passes, the graph run again
///   vmap/          a function of one sample run on a batch, by each op's batching rule
///   nn/            Module and the modules: embeddings, layers, losses, recurrent
///                  cells, attention, the GPT
///   train/         optimizers, character data, GPT-2's byte-level BPE, the
///                  training loop and the memory of a step, safetensors,
///                  model checkpoints and GPT-2's, the run directory
///   plot/          the pictures (PLplot)
///   inspect/       the instruments: backward trace, profiler, memory timeline
///   distributed/   several processes training one model (MPI)
///
/// Each folder is also a library of its own (ember::base ... ember::distributed),
/// linked one way; ember::ember links them all.
#pragma once

#include "base/error.h"
#include "base/io.h"
#include "base/parse.h"
#include "base/text_fields.h"

#include "tensor/dtype.h"
#include "tensor/factory.h"
#include "tensor/machine/blas_library.h"
#include "tensor/machine/governor.h"
#include "tensor/machine/threads.h"
#include "tensor/parallel.h"
#include "tensor/random.h"
#include "tensor/shape.h"
#include "tensor/tensor.h"

#include "autograd/autocast.h"
#include "autograd/batching.h"
#include "autograd/checkpoint.h"
#include "autograd/engine.h"
#include "autograd/forward.h"
#include "autograd/functional.h"
#include "autograd/grad_mode.h"
#include "autograd/gradcheck.h"
#include "autograd/graph_export.h"
#include "autograd/node.h"
#include "autograd/op_scope.h"
#include "autograd/ops.h"

#include "compile/capture.h"
#include "compile/codegen.h"
#include "compile/compile.h"
#include "compile/fusion.h"
#include "compile/graph.h"
#include "compile/passes.h"
#include "compile/run.h"
#include "compile/toolchain.h"

#include "vmap/functional.h"
#include "vmap/vmap.h"

#include "nn/attention.h"
#include "nn/checkpoint.h"
#include "nn/embedding.h"
#include "nn/functional_call.h"
#include "nn/gpt.h"
#include "nn/gradcheck.h"
#include "nn/init.h"
#include "nn/kv_cache.h"
#include "nn/layers.h"
#include "nn/loss.h"
#include "nn/module.h"
#include "nn/quantize.h"
#include "nn/quantize_model.h"
#include "nn/recurrent.h"

#include "train/bpe.h"
#include "train/checkpoint.h"
#include "train/data.h"
#include "train/gpt2.h"
#include "train/optim.h"
#include "train/resume.h"
#include "train/run_dir.h"
#include "train/safetensors.h"
#include "train/step_memory.h"
#include "train/tokenizer.h"
#include "train/train_options.h"
#include "train/train_state.h"
#include "train/trainer.h"

#include "plot/plot.h"

#include "inspect/inspect.h"

#include "distributed/data_parallel.h"
#include "distributed/distributed.h"
