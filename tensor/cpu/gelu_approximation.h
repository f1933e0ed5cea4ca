// Which form of GELU a model uses (nn/functional/gelu.h has both formulas):
// GPT-2's tanh approximation or the exact erf one. Its own header so that the
// options and configs that name it do not pull in the kernels.
#pragma once

namespace tg::nn {

enum class GeluApproximation { Tanh, Erf };

}  // namespace tg::nn
