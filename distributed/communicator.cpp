#include "tinygpt/distributed/communicator.h"

#include <cstdlib>

#include "tinygpt/tensor/error.h"

namespace tg::dist {

void SingleProcess::abort(int exit_code) { std::exit(exit_code); }

Communicator& single_process() {
  static SingleProcess job;
  return job;
}

void all_reduce_mean(Communicator& job, Tensor& values) {
  if (job.size() == 1) return;
  check(values.dtype() == DType::Float32 && values.is_contiguous(), "all_reduce_mean: needs a contiguous float32 "
        "tensor, got ", dtype_name(values.dtype()), values.is_contiguous() ? "" : " (not contiguous)");
  float* data = values.data<float>();
  const int64_t count = values.numel();
  job.all_reduce_sum(std::span<float>(data, static_cast<size_t>(count)));
  // Exact when the number of ranks is a power of two.
  const float scale = 1.0f / static_cast<float>(job.size());
#pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < count; ++i) data[i] *= scale;
}

}  // namespace tg::dist
