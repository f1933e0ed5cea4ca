// Everything a user of the engine calls: tensors, factories, differentiable ops,
// backward and the no-grad guard.
#pragma once
#include "autograd/backward.h"
#include "autograd/elementwise_ops.h"
#include "autograd/grad_mode.h"
#include "autograd/index_ops.h"
#include "autograd/matmul_op.h"
#include "autograd/reduce_ops.h"
#include "autograd/view_ops.h"
#include "tensor/factory.h"
#include "tensor/print.h"
#include "tensor/random.h"
#include "tensor/tensor.h"
#include "tensor/threads.h"
