// Everything a user of the engine calls: tensors, factories, differentiable ops,
// backward, the no-grad guard and activation checkpointing.
#pragma once
#include "tinygpt/autograd/activation_checkpoint.h"
#include "tinygpt/autograd/backward.h"
#include "tinygpt/autograd/elementwise_ops.h"
#include "tinygpt/autograd/grad_mode.h"
#include "tinygpt/autograd/index_ops.h"
#include "tinygpt/autograd/linear_op.h"
#include "tinygpt/autograd/matmul_op.h"
#include "tinygpt/autograd/reduce_ops.h"
#include "tinygpt/autograd/view_ops.h"
#include "tinygpt/tensor/factory.h"
#include "tinygpt/tensor/print.h"
#include "tinygpt/tensor/random.h"
#include "tinygpt/tensor/tensor.h"
#include "tinygpt/tensor/runtime/threads.h"
