#include "tinygpt/autograd/gradcheck.h"

#include <cmath>
#include <sstream>

#include "tinygpt/autograd/backward.h"
#include "tinygpt/autograd/grad_mode.h"
#include "tinygpt/tensor/random.h"

namespace tg {

namespace {

// Offsets (in elements, from data<double>()) of every element of a strided view, row-major.
std::vector<int64_t> element_offsets(const Tensor& x) {
  std::vector<int64_t> offsets;
  std::vector<int64_t> index(x.shape().size(), 0);
  for (int64_t n = 0; n < x.numel(); ++n) {
    int64_t offset = 0;
    for (size_t d = 0; d < index.size(); ++d) offset += index[d] * x.strides()[d];
    offsets.push_back(offset);
    for (size_t d = index.size(); d-- > 0;) {
      if (++index[d] < x.shape()[d]) break;
      index[d] = 0;
    }
  }
  return offsets;
}

double weighted_sum(const Tensor& y, const std::vector<double>& weights) {
  const std::vector<double> values = y.to_vector<double>();
  double total = 0;
  for (size_t i = 0; i < values.size(); ++i) total += values[i] * weights[i];
  return total;
}

}  // namespace

GradcheckResult gradcheck(const std::function<Tensor(const std::vector<Tensor>&)>& f, const std::vector<Tensor>& inputs,
                          const GradcheckOptions& options) {
  for (const Tensor& input : inputs) {
    check(input.dtype() == DType::Float64 || !input.requires_grad(), "gradcheck: inputs that require grad must be float64, got ",
          dtype_name(input.dtype()));
    for (size_t d = 0; d < input.strides().size(); ++d)
      check(input.strides()[d] != 0 || input.shape()[d] <= 1, "gradcheck: input of shape ", input.shape(),
            " is expanded (stride 0); perturbing it would move several elements at once");
  }

  // Analytic: backpropagate w through f.
  for (Tensor input : inputs) input.set_grad(Tensor());
  const Tensor output = f(inputs);
  check(output.dtype() == DType::Float64, "gradcheck: f must return float64, got ", dtype_name(output.dtype()));
  Generator generator(options.seed);
  const Tensor projection = randn(output.shape(), generator, DType::Float64);
  const std::vector<double> weights = projection.to_vector<double>();
  backward(output, projection);

  GradcheckResult result;
  NoGradGuard no_grad;
  for (size_t k = 0; k < inputs.size(); ++k) {
    const Tensor& input = inputs[k];
    if (!input.requires_grad()) continue;
    const Tensor analytic_grad = input.grad();
    const std::vector<double> analytic =
        analytic_grad.defined() ? analytic_grad.to_vector<double>() : std::vector<double>(input.numel(), 0.0);
    double* data = input.data<double>();
    const std::vector<int64_t> offsets = element_offsets(input);
    for (size_t i = 0; i < offsets.size(); ++i) {
      double& element = data[offsets[i]];
      const double original = element;
      element = original + options.eps;
      const double plus = weighted_sum(f(inputs), weights);
      element = original - options.eps;
      const double minus = weighted_sum(f(inputs), weights);
      element = original;
      const double numeric = (plus - minus) / (2 * options.eps);
      const double error = std::abs(numeric - analytic[i]);
      result.max_abs_error = std::max(result.max_abs_error, error);
      if (!(error <= options.atol + options.rtol * std::abs(numeric)) && result.ok) {
        result.ok = false;
        std::ostringstream report;
        report << "gradcheck: input " << k << " (shape " << shape_str(input.shape()) << "), element " << i
               << ": analytic " << analytic[i] << " vs numeric " << numeric << " (error " << error << ")";
        result.report = report.str();
      }
    }
  }
  return result;
}

}  // namespace tg
