#include "tinygpt/tensor/index.h"

#include <omp.h>

#include <algorithm>
#include <string>

#include "tinygpt/tensor/factory.h"
#include "tinygpt/tensor/runtime/profile.h"
#include "tinygpt/tensor/strided_loop.h"
#include "tinygpt/tensor/runtime/threads.h"
#include "tinygpt/tensor/view.h"

namespace tg::raw {

namespace {

// "(1, 2)" for a multi-dim position, "5" for a position in a 1-D tensor.
std::string position_str(int64_t flat, const Shape& shape) {
  if (shape.size() == 1) return std::to_string(flat);
  Shape position(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    position[d] = flat % shape[d];
    flat /= shape[d];
  }
  return shape_str(position);
}

// What the errors call one value of an index tensor, and several.
struct IndexWords {
  const char* one;
  const char* many;
};
constexpr IndexWords kIndexWords{"index", "indices"}, kIdWords{"id", "ids"};

// The indices as a contiguous int64 tensor, each checked to lie in [0, bound).
// `words` and `target` ("dim 0 of shape (5, 3)") word the error.
Tensor checked_indices(const Tensor& index, int64_t bound, const char* op, const IndexWords& words,
                       const std::string& target) {
  check(index.dtype() == DType::Int64, op, ": ", words.many, " must be int64, got ", dtype_name(index.dtype()),
        " of shape ", index.shape());
  const Tensor indices = contiguous(index);
  const int64_t* values = indices.data<int64_t>();
  for (int64_t i = 0; i < indices.numel(); ++i)
    check(values[i] >= 0 && values[i] < bound, op, ": ", words.one, " ", values[i], " at position ",
          position_str(i, indices.shape()), " is out of range for ", target);
  return indices;
}

std::string dim_target(int64_t dim, const Shape& shape) {
  return "dim " + std::to_string(dim) + " of size " + std::to_string(shape[dim]) + " (shape " + shape_str(shape) + ")";
}

// A contiguous tensor seen as (outer, size, inner) around `dim`.
struct AroundDim {
  int64_t outer = 1, size = 1, inner = 1;
  AroundDim(const Shape& shape, int64_t dim) {
    for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
      if (d < dim) outer *= shape[d];
      if (d == dim) size = shape[d];
      if (d > dim) inner *= shape[d];
    }
  }
};

// out (outer, count, inner) = x (outer, size, inner) at the checked indices (count,).
Tensor select_along(const Tensor& x, int64_t dim, const Tensor& indices) {
  const Tensor source = contiguous(x);
  Shape out_shape = x.shape();
  out_shape[dim] = indices.numel();
  Tensor out = Tensor::empty(out_shape, x.dtype());
  const AroundDim in(x.shape(), dim);
  const int64_t count = indices.numel(), rows = in.outer * count;
  const int threads = out.numel() >= kParallelThreshold ? omp_get_max_threads() : 1;
  visit_any(x.dtype(), [&]<class T>() {
    const T* from = source.data<T>();
    const int64_t* ids = indices.data<int64_t>();
    T* to = out.data<T>();
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
    for (int64_t row = 0; row < rows; ++row) {
      const int64_t o = row / count, i = row % count;
      std::copy_n(from + (o * in.size + ids[i]) * in.inner, in.inner, to + row * in.inner);
    }
  });
  return out;
}

// out = zeros(shape); out (outer, size, inner)[:, indices[i], :] += source (outer, count, inner)[:, i, :].
// Repeated indices make this a reduction, so threads split the (outer, inner)
// columns, never the indices: each output element is summed by one thread in
// index order (race-free and the same for any thread count).
Tensor add_along(const Shape& shape, int64_t dim, const Tensor& indices, const Tensor& source) {
  const Tensor from_tensor = contiguous(source);
  Tensor out = zeros(shape, source.dtype());
  const AroundDim around(shape, dim);
  const int64_t count = indices.numel();
  const int threads = source.numel() >= kParallelThreshold ? omp_get_max_threads() : 1;
  // Enough column blocks to feed every thread, each at least a cache line wide.
  int64_t blocks = 1;
  if (threads > 1 && around.outer < 4 * threads)
    blocks = std::clamp<int64_t>((4 * threads + around.outer - 1) / around.outer, 1,
                                 std::max<int64_t>(1, around.inner / 16));
  const int64_t block = (around.inner + blocks - 1) / blocks;
  const int64_t units = around.outer * blocks;
  visit_numeric(source.dtype(), "index_add", [&]<class T>() {
    const T* from = from_tensor.data<T>();
    const int64_t* ids = indices.data<int64_t>();
    T* to = out.data<T>();
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
    for (int64_t unit = 0; unit < units; ++unit) {
      const int64_t o = unit / blocks;
      const int64_t begin = (unit % blocks) * block, end = std::min(around.inner, begin + block);
      for (int64_t i = 0; i < count; ++i) {
        T* to_row = to + (o * around.size + ids[i]) * around.inner;
        const T* from_row = from + (o * count + i) * around.inner;
        for (int64_t c = begin; c < end; ++c) to_row[c] += from_row[c];
      }
    }
  });
  return out;
}

// gather and scatter_add take an index with x's number of dims, no larger than
// the other operand in any dim but `dim`.
void check_gather_shapes(const char* op, const Shape& x_shape, int64_t dim, const Tensor& index) {
  check(index.dim() == static_cast<int64_t>(x_shape.size()), op, ": index of shape ", index.shape(),
        " needs as many dims as the tensor of shape ", x_shape);
  for (int64_t d = 0; d < index.dim(); ++d)
    check(d == dim || index.shape()[d] <= x_shape[d], op, ": index of shape ", index.shape(),
          " is larger than the tensor of shape ", x_shape, " in dim ", d);
}

}  // namespace

Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index) {
  check(x.dim() >= 1, "index_select: needs at least 1 dim, got shape ", x.shape());
  dim = normalize_dim(dim, x.dim(), "index_select");
  check(index.dim() <= 1, "index_select: index must be 1-D, got shape ", index.shape());
  const Tensor indices =
      checked_indices(index, x.shape()[dim], "index_select", kIndexWords, dim_target(dim, x.shape()));
  return select_along(x, dim, indices);
}

Tensor index_add(const Shape& shape, int64_t dim, const Tensor& index, const Tensor& source) {
  check(!shape.empty(), "index_add: needs at least 1 dim, got shape ", shape);
  dim = normalize_dim(dim, static_cast<int64_t>(shape.size()), "index_add");
  check(index.dim() <= 1, "index_add: index must be 1-D, got shape ", index.shape());
  Shape source_shape = shape;
  source_shape[dim] = index.numel();
  check(source.shape() == source_shape, "index_add: source of shape ", source.shape(), " does not match shape ", shape,
        " with ", index.numel(), " indices along dim ", dim, " (expected ", source_shape, ")");
  const Tensor indices = checked_indices(index, shape[dim], "index_add", kIndexWords, dim_target(dim, shape));
  return add_along(shape, dim, indices, source);
}

Tensor gather(const Tensor& x, int64_t dim, const Tensor& index) {
  check(x.dim() >= 1, "gather: needs at least 1 dim, got shape ", x.shape());
  dim = normalize_dim(dim, x.dim(), "gather");
  check_gather_shapes("gather", x.shape(), dim, index);
  const Tensor indices = checked_indices(index, x.shape()[dim], "gather", kIndexWords, dim_target(dim, x.shape()));
  Tensor out = Tensor::empty(index.shape(), x.dtype());
  // Walk the index's shape; x is read at its own strides except along `dim`,
  // where the index value chooses the element.
  Strides x_strides = x.strides();
  const int64_t x_dim_stride = x_strides[dim];
  x_strides[dim] = 0;
  visit_any(x.dtype(), [&]<class T>() {
    const T* from = x.data<T>();
    const int64_t* ids = indices.data<int64_t>();
    T* to = out.data<T>();
    StridedLoop<3>(index.shape(), {out.strides(), indices.strides(), x_strides})
        .run([&](auto offsets, int64_t count, auto steps) {
          for (int64_t e = 0; e < count; ++e)
            to[offsets[0] + e * steps[0]] =
                from[offsets[2] + e * steps[2] + ids[offsets[1] + e * steps[1]] * x_dim_stride];
        });
  });
  return out;
}

Tensor scatter_add(const Shape& shape, int64_t dim, const Tensor& index, const Tensor& source) {
  check(!shape.empty(), "scatter_add: needs at least 1 dim, got shape ", shape);
  dim = normalize_dim(dim, static_cast<int64_t>(shape.size()), "scatter_add");
  check_gather_shapes("scatter_add", shape, dim, index);
  check(source.shape() == index.shape(), "scatter_add: source of shape ", source.shape(),
        " must have the index's shape ", index.shape());
  const Tensor indices = checked_indices(index, shape[dim], "scatter_add", kIndexWords, dim_target(dim, shape));
  Tensor out = zeros(shape, source.dtype());
  // Threads take whole lines along `dim`: the elements of one line may hit the
  // same output element, elements of different lines never do (they differ in
  // another dim), so lines are race-free and each sums in a fixed order.
  Shape lines = index.shape();
  const int64_t line_length = lines[dim];
  lines[dim] = 1;
  const int64_t out_step = out.strides()[dim], index_step = indices.strides()[dim], source_step = source.strides()[dim];
  visit_numeric(source.dtype(), "scatter_add", [&]<class T>() {
    const T* from = source.data<T>();
    const int64_t* ids = indices.data<int64_t>();
    T* to = out.data<T>();
    StridedLoop<3>(lines, {out.strides(), indices.strides(), source.strides()})
        .run([&](auto offsets, int64_t count, auto steps) {
          for (int64_t e = 0; e < count; ++e) {
            T* to_line = to + offsets[0] + e * steps[0];
            const int64_t* ids_line = ids + offsets[1] + e * steps[1];
            const T* from_line = from + offsets[2] + e * steps[2];
            for (int64_t j = 0; j < line_length; ++j)
              to_line[ids_line[j * index_step] * out_step] += from_line[j * source_step];
          }
        });
  });
  return out;
}

Tensor embedding(const Tensor& table, const Tensor& ids) {
  ProfileScope scope(ProfileFamily::embedding);
  check(table.dim() == 2, "embedding: table must be 2-D (V, C), got shape ", table.shape());
  const int64_t vocab_size = table.size(0);
  const Tensor flat_ids = checked_indices(ids, vocab_size, "embedding", kIdWords,
                                          "a vocabulary of " + std::to_string(vocab_size) + " rows (table shape " +
                                              shape_str(table.shape()) + ")");
  Shape out_shape = ids.shape();  // ids (...) -> (..., C)
  out_shape.push_back(table.size(1));
  const Tensor rows = select_along(table, 0, view(flat_ids, {-1}));  // (N, C)
  scope.add_bytes_of(ids, rows, rows);  // each row read from the table and written
  return view(rows, out_shape);
}

Tensor embedding_backward(int64_t vocab_size, const Tensor& ids, const Tensor& grad_rows) {
  ProfileScope scope(ProfileFamily::embedding);
  check(grad_rows.dim() == ids.dim() + 1, "embedding_backward: gradient of shape ", grad_rows.shape(),
        " does not match ids of shape ", ids.shape(), " (expected ids.shape + (C,))");
  const int64_t channels = grad_rows.size(-1);
  Shape expected = ids.shape();
  expected.push_back(channels);
  check(grad_rows.shape() == expected, "embedding_backward: gradient of shape ", grad_rows.shape(),
        " does not match ids of shape ", ids.shape(), " (expected ", expected, ")");
  const Tensor flat_ids = checked_indices(ids, vocab_size, "embedding_backward", kIdWords,
                                          "a vocabulary of " + std::to_string(vocab_size) + " rows");
  if (channels == 0) return zeros({vocab_size, 0}, grad_rows.dtype());  // rows of nothing (reshape to -1 would be ambiguous)
  // (N, C) rows added into the (V, C) table gradient: repeated ids accumulate.
  const Tensor table_grad = add_along({vocab_size, channels}, 0, view(flat_ids, {-1}), reshape(grad_rows, {-1, channels}));
  scope.add_bytes_of(ids, grad_rows, table_grad);
  return table_grad;
}

}  // namespace tg::raw
