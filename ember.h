/// @file
/// ember.h: the whole public API of libember (target ember::ember) in one include.
///
///   tensor/    Tensor, dtypes, shapes, factories, random numbers, threads, files
///   autograd/  the differentiable ops, backward, grad modes, gradcheck, graph export
///   nn/        Module and the modules: embeddings, layers, losses, recurrent
///              cells, attention, the GPT
///   train/     optimizers, character data, the training loop and the memory
///              of a step, safetensors, model checkpoints, the run directory
///
/// The pictures are a library of their own (target ember::plot, header
/// plot/plot.h): they need PLplot, which a program that only computes does not.
#pragma once

#include "tensor/dtype.h"
#include "tensor/error.h"
#include "tensor/factory.h"
#include "tensor/io.h"
#include "tensor/parallel.h"
#include "tensor/parse.h"
#include "tensor/random.h"
#include "tensor/shape.h"
#include "tensor/tensor.h"

#include "autograd/engine.h"
#include "autograd/grad_mode.h"
#include "autograd/gradcheck.h"
#include "autograd/graph_export.h"
#include "autograd/node.h"
#include "autograd/op_scope.h"
#include "autograd/ops.h"

#include "nn/attention.h"
#include "nn/embedding.h"
#include "nn/gpt.h"
#include "nn/gradcheck.h"
#include "nn/init.h"
#include "nn/layers.h"
#include "nn/loss.h"
#include "nn/module.h"
#include "nn/recurrent.h"
#include "nn/text_fields.h"

#include "train/checkpoint.h"
#include "train/data.h"
#include "train/optim.h"
#include "train/run_dir.h"
#include "train/safetensors.h"
#include "train/step_memory.h"
#include "train/train_state.h"
#include "train/trainer.h"
