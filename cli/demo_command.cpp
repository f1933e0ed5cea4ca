// tinygpt demo: a tour of tensors and autograd in a dozen lines of output.
#include <iostream>

#include "autograd/ops.h"
#include "cli/commands.h"

namespace tg::cli {

namespace {

void run_demo() {
  std::cout << "threads: " << thread_info() << "\n\n";
  Generator generator(0);
  Tensor w = randn({3, 2}, generator).set_name("w");
  w.set_requires_grad();
  Tensor x = arange(0, 6, 1, DType::Float32);
  Tensor x2 = reshape(x, {2, 3}).set_name("x");
  std::cout << "x = " << x2 << "\n";
  std::cout << "w = " << w << "\n";
  Tensor y = matmul(x2, w);
  std::cout << "y = x @ w = " << y << "\n";
  Tensor loss = mean(tanh(y));
  std::cout << "loss = mean(tanh(y)) = " << loss << "\n";
  backward(loss);
  std::cout << "d loss / d w = " << w.grad() << "\n";
}

}  // namespace

void add_demo_command(CLI::App& app) {
  CLI::App* demo = app.add_subcommand("demo", "A tour of tensors and autograd: views, matmul, backward");
  demo->callback(run_demo);
}

}  // namespace tg::cli
