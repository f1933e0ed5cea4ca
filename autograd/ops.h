// Everything a user of the engine calls: tensors, factories, differentiable ops,
// backward, the no-grad guard and activation checkpointing.
#pragma once
#include "autograd/activation_checkpoint.h"
#include "autograd/backward.h"
#include "autograd/elementwise_ops.h"
#include "autograd/grad_mode.h"
#include "autograd/index_ops.h"
#include "autograd/linear_op.h"
#include "autograd/matmul_op.h"
#include "autograd/reduce_ops.h"
#include "autograd/view_ops.h"
#include "tensor/factory.h"
#include "tensor/print.h"
#include "tensor/random.h"
#include "tensor/tensor.h"
#include "tensor/threads.h"
