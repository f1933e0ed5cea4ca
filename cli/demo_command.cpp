// tinygpt demo: a tour of tensors and autograd in a few dozen lines of output.
// First views: transpose and slice are new shapes, strides and offsets over the
// same storage, so a write through the base shows in both. Then autograd: a
// matmul, a loss, and the gradient backward() leaves on the weights.
#include <iostream>
#include <string>

#include "tinygpt/autograd/ops.h"
#include "cli/commands.h"

namespace tg::cli {

namespace {

// "shape (3, 4), strides (4, 1), offset 0, contiguous": where each element of a view lives.
std::string layout(const Tensor& x) {
  return "shape " + shape_str(x.shape()) + ", strides " + shape_str(x.strides()) + ", offset " +
         std::to_string(x.offset()) + (x.is_contiguous() ? ", contiguous" : ", not contiguous");
}

std::string storage_note(const Tensor& view, const Tensor& base) {
  return view.storage() == base.storage() ? "the same storage as a (no copy)" : "a storage of its own (a copy)";
}

void show_views() {
  std::cout << "Views: element (i, j) lives at storage + offset + i * strides[0] + j * strides[1].\n"
            << "transpose and slice change shape, strides and offset; they copy nothing.\n\n";
  Tensor a = reshape(arange(12), {3, 4}).set_name("a");
  std::cout << "a = arange(12).reshape(3, 4): " << layout(a) << "\n" << a << "\n\n";
  Tensor t = transpose(a, 0, 1).set_name("t");
  std::cout << "t = transpose(a, 0, 1): " << layout(t) << "; " << storage_note(t, a) << "\n" << t << "\n\n";
  Tensor s = slice(a, 1, 1, 3).set_name("s");
  std::cout << "s = slice(a, dim 1, columns 1 to 2): " << layout(s) << "; " << storage_note(s, a) << "\n"
            << s << "\n\n";
  a.data<int64_t>()[1 * a.stride(0) + 2 * a.stride(1)] = 100;  // a[1, 2] = 100, through a's own pointer
  std::cout << "a[1, 2] = 100 is seen by both views: t[2, 1] = " << select(select(t, 0, 2), 0, 1).item<int64_t>()
            << ", s[1, 1] = " << select(select(s, 0, 1), 0, 1).item<int64_t>() << "\n";
  Tensor c = contiguous(t);
  std::cout << "contiguous(t) copies into row-major order: " << layout(c) << "; " << storage_note(c, a) << "\n\n";
}

void show_autograd() {
  std::cout << "Autograd: the tape records each op; backward() walks it newest first.\n\n";
  Generator generator(0);
  Tensor w = randn({3, 2}, generator).set_name("w");
  w.set_requires_grad();
  Tensor x = reshape(arange(0, 6, 1, DType::Float32), {2, 3}).set_name("x");
  std::cout << "x = " << x << "\n";
  std::cout << "w = " << w << "\n";
  Tensor y = matmul(x, w);
  std::cout << "y = x @ w = " << y << "\n";
  Tensor loss = mean(tanh(y));
  std::cout << "loss = mean(tanh(y)) = " << loss << "\n";
  backward(loss);
  std::cout << "d loss / d w = " << w.grad() << "\n";
}

void run_demo() {
  std::cout << "threads: " << thread_info() << "\n\n";
  show_views();
  show_autograd();
}

}  // namespace

void add_demo_command(CLI::App& app) {
  CLI::App* demo = app.add_subcommand("demo", "A tour of tensors and autograd: views, matmul, backward");
  demo->callback(run_demo);
}

}  // namespace tg::cli
