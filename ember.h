// ember: the one header users include.
#pragma once

#include "tensor/dtype.h"
#include "tensor/error.h"
#include "tensor/factory.h"
#include "tensor/parallel.h"
#include "tensor/random.h"
#include "tensor/shape.h"
#include "tensor/tensor.h"
#include "autograd/engine.h"
#include "autograd/grad_mode.h"
#include "autograd/gradcheck.h"
#include "autograd/graph_export.h"
#include "autograd/node.h"
#include "autograd/ops.h"
