// Reductions: sum, mean, var, max, argmax and sum_to_shape.
//
// The sum-like reductions (sum, mean, var) share one engine, sum_terms(). It
// looks at x as
//
//   kept dims (one output element each)  x  reduced dims (summed over)
//
// with both lists simplified (size-1 dims dropped, neighbours that step as one
// merged: MergedDims, which StridedLoop uses too), then picks a loop by layout,
// one function each:
//
//   rows     (sum_rows) the reduced elements of an output are one contiguous
//            run (the last dim of a contiguous tensor): a vectorised run sum
//            per output.
//   columns  (sum_columns) the innermost kept dim has stride 1 (leading dims
//            reduced, e.g. a bias gradient (B, T, C) -> (C,)): each reduced row
//            is added into a block of output accumulators, vectorised across
//            the outputs. One row of at most kSplitWidth outputs over many rows
//            (that bias gradient) is split by rows instead
//            (sum_columns_by_row_blocks): fixed blocks of kRowBlock rows sum
//            into partial rows, which are then added in block order, so each
//            thread streams whole rows.
//   general  (sum_general) anything else: per output, a walk over the reduced
//            dims.
//
// Determinism: each output is computed by one thread, in an order fixed by the
// layout alone, so results never depend on the thread count. A contiguous run
// is summed in blocks of kBlock elements (each block in kLanes interleaved
// partial sums, combined pairwise), and the block sums are added in order;
// that is also what lets one long run be split over threads.
//
// Empty reductions follow PyTorch: sum = 0, mean = NaN, var = NaN; max over an
// empty dim throws.
#include "tinygpt/tensor/reduce.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "tinygpt/tensor/runtime/profile.h"
#include "tinygpt/tensor/strided_loop.h"
#include "tinygpt/tensor/runtime/threads.h"
#include "tinygpt/tensor/view.h"

namespace tg::raw {

namespace {

constexpr int64_t kLanes = 16;     // partial sums per run: enough independent adds to fill the vector units
constexpr int64_t kBlock = 4096;   // a run is summed in blocks this long (the unit of splitting a run over threads)
constexpr int64_t kColumns = 1024;  // output accumulators per task in the columns loop (8 KB of doubles)
constexpr int64_t kRowBlock = 64;     // rows per partial sum when the columns loop splits by rows
constexpr int64_t kSplitWidth = 4096;  // the widest row the columns loop splits by rows (32 KB of doubles)

// Float32 sums accumulate in double; int64 in int64.
template <class T> using Accumulator = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;

// Dims of x (one operand): strides[0] are x's.
using Dims = MergedDims<1>;

struct ReductionPlan {
  Shape out_shape;
  Dims kept;         // output element o walks these in row-major order
  Dims reduced;      // never empty: a lone size-1 dim with stride 0 when nothing is reduced
  int64_t outputs = 1;
  int64_t count = 1;  // elements summed into each output
  bool empty = false;  // x has no elements

  // The innermost reduced dim: its size and stride, and how many runs along it each output sums.
  int64_t inner_size() const { return reduced.shape.back(); }
  int64_t inner_stride() const { return reduced.strides[0].back(); }
  int64_t outer_runs() const { return count / inner_size(); }
};

ReductionPlan plan_reduction(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim, const char* op) {
  std::vector<bool> is_reduced(std::max<int64_t>(x.dim(), 1), dims.empty());
  for (int64_t dim : dims) {
    // A 0-d tensor accepts dim 0 or -1, as in PyTorch, and has nothing to reduce, but names it once only.
    const int64_t d = normalize_dim(dim, x.dim(), op);
    check(!is_reduced[d], op, ": dim ", dim, " appears more than once in dims ", Shape(dims), " for a tensor of shape ",
          x.shape());
    is_reduced[d] = true;
  }
  if (x.dim() == 0) is_reduced.clear();
  ReductionPlan plan;
  for (int64_t d = 0; d < x.dim(); ++d) {
    const int64_t size = x.shape()[d];
    if (is_reduced[d]) {
      plan.count *= size;
      plan.reduced.push(size, {x.strides()[d]});
      if (keepdim) plan.out_shape.push_back(1);
    } else {
      plan.outputs *= size;
      plan.kept.push(size, {x.strides()[d]});
      plan.out_shape.push_back(size);
    }
  }
  plan.reduced.keep_one_dim();
  plan.empty = x.numel() == 0;
  return plan;
}

// How many neighbouring outputs one task of the columns loop owns: wide chunks
// read x row by row (what the prefetchers like), but every thread needs a task.
// Each column is summed on its own, so the width never changes a result.
int64_t column_chunk(int64_t width, int64_t kept_rows, int threads) {
  int64_t chunk = std::min(kColumns, width);
  const int64_t tasks = kept_rows * ((width + chunk - 1) / chunk);
  if (tasks < threads) {
    const int64_t pieces = (threads + kept_rows - 1) / kept_rows;
    chunk = std::max<int64_t>(16, ((width + pieces - 1) / pieces + 15) / 16 * 16);
  }
  return std::min(chunk, kColumns);
}

// Sum of term(x[i]) over a contiguous run of n <= kBlock elements, in kLanes
// interleaved partial sums (the fixed-size inner loop is what the compiler vectorises).
template <class Acc, class T, class Term>
Acc sum_block(const T* x, int64_t n, const Term& term) {
  Acc lanes[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int64_t lane = 0; lane < kLanes; ++lane) lanes[lane] += term(x[i + lane]);
  for (int64_t lane = 0; i < n; ++i, ++lane) lanes[lane] += term(x[i]);
  for (int64_t width = kLanes / 2; width > 0; width /= 2)
    for (int64_t lane = 0; lane < width; ++lane) lanes[lane] += lanes[lane + width];
  return lanes[0];
}

// Sum of term(x[i * stride]) for i < n: blockwise when contiguous, else in order.
template <class Acc, class T, class Term>
Acc sum_run(const T* x, int64_t n, int64_t stride, const Term& term) {
  Acc total = 0;
  if (stride == 1) {
    for (int64_t start = 0; start < n; start += kBlock) total += sum_block<Acc>(x + start, std::min(kBlock, n - start), term);
  } else {
    for (int64_t i = 0; i < n; ++i) total += term(x[i * stride]);
  }
  return total;
}

// The four loops of sum_terms, one per layout (the comment at the top of the
// file says when each applies). Each stores every output once: store(o, sum over
// its reduced elements v of term(v, o)); `x` points at element (0, ..., 0).

// rows: each output's reduced elements are one contiguous run of inner_size.
template <class Acc, class T, class Term, class Store>
void sum_rows(const ReductionPlan& plan, const T* x, int threads, const Term& term, const Store& store) {
  const Dims& kept = plan.kept;
  const int64_t inner_size = plan.inner_size();
  const int64_t blocks = (inner_size + kBlock - 1) / kBlock;
  if (threads > 1 && plan.outputs < 4 * threads && blocks > 1) {
    // Few long rows: split them into blocks so every thread has work. Adding
    // the block sums in order gives exactly what sum_run would.
    std::vector<Acc> block_sums(plan.outputs * blocks);
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int64_t unit = 0; unit < plan.outputs * blocks; ++unit) {
      const int64_t o = unit / blocks, start = (unit % blocks) * kBlock;
      const T* row = x + kept.offsets_of(o, kept.ndim())[0];
      block_sums[unit] = sum_block<Acc>(row + start, std::min(kBlock, inner_size - start),
                                        [&](T v) { return term(v, o); });
    }
    for (int64_t o = 0; o < plan.outputs; ++o) {
      Acc total = 0;
      for (int64_t b = 0; b < blocks; ++b) total += block_sums[o * blocks + b];
      store(o, total);
    }
    return;
  }
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
  for (int64_t o = 0; o < plan.outputs; ++o) {
    const T* row = x + kept.offsets_of(o, kept.ndim())[0];
    store(o, sum_run<Acc>(row, inner_size, 1, [&](T v) { return term(v, o); }));
  }
}

// columns, one row of at most kSplitWidth outputs over many reduced rows (a bias
// gradient): fixed blocks of kRowBlock rows sum into partial rows, added in block order.
template <class Acc, class T, class Term, class Store>
void sum_columns_by_row_blocks(const ReductionPlan& plan, const T* x, int threads, const Term& term,
                               const Store& store) {
  const int64_t inner_size = plan.inner_size(), inner_stride = plan.inner_stride();
  const int64_t width = plan.outputs, blocks = (inner_size + kRowBlock - 1) / kRowBlock;
  std::vector<Acc> partials(blocks * width);  // (blocks, width)
#pragma omp parallel num_threads(threads) if (threads > 1)
  {
#pragma omp for schedule(static)
    for (int64_t block = 0; block < blocks; ++block) {
      Acc* sums = partials.data() + block * width;
      const int64_t end = std::min(inner_size, (block + 1) * kRowBlock);
      for (int64_t i = block * kRowBlock; i < end; ++i) {
        const T* values = x + i * inner_stride;
        for (int64_t j = 0; j < width; ++j) sums[j] += term(values[j], j);
      }
    }
#pragma omp for schedule(static)
    for (int64_t j = 0; j < width; ++j) {
      Acc total = 0;
      for (int64_t block = 0; block < blocks; ++block) total += partials[block * width + j];
      store(j, total);
    }
  }
}

// columns: the innermost kept dim has stride 1; each task adds every reduced row
// into a block of up to kColumns output accumulators.
template <class Acc, class T, class Term, class Store>
void sum_columns(const ReductionPlan& plan, const T* x, int threads, const Term& term, const Store& store) {
  const Dims& kept = plan.kept;
  const Dims& reduced = plan.reduced;
  const int64_t inner_size = plan.inner_size(), inner_stride = plan.inner_stride(), outer_runs = plan.outer_runs();
  const int64_t width = kept.shape.back();
  const int64_t chunk = column_chunk(width, plan.outputs / width, threads);
  const int64_t chunks = (width + chunk - 1) / chunk;
  const int64_t units = plan.outputs / width * chunks;
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
  for (int64_t unit = 0; unit < units; ++unit) {
    const int64_t kept_row = unit / chunks, first = (unit % chunks) * chunk;
    const int64_t columns = std::min(chunk, width - first);
    const int64_t o_first = kept_row * width + first;
    const T* base = x + kept.offsets_of(kept_row, kept.ndim() - 1)[0] + first;
    Acc sums[kColumns];
    std::fill(sums, sums + columns, Acc(0));
    for (int64_t run = 0; run < outer_runs; ++run) {
      const T* run_base = base + reduced.offsets_of(run, reduced.ndim() - 1)[0];
      for (int64_t i = 0; i < inner_size; ++i) {
        const T* values = run_base + i * inner_stride;
        for (int64_t j = 0; j < columns; ++j) sums[j] += term(values[j], o_first + j);
      }
    }
    for (int64_t j = 0; j < columns; ++j) store(o_first + j, sums[j]);
  }
}

// general: per output, a walk over the reduced dims, a run of the innermost at a time.
template <class Acc, class T, class Term, class Store>
void sum_general(const ReductionPlan& plan, const T* x, int threads, const Term& term, const Store& store) {
  const int64_t outer_runs = plan.outer_runs();
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
  for (int64_t o = 0; o < plan.outputs; ++o) {
    const T* base = x + plan.kept.offsets_of(o, plan.kept.ndim())[0];
    Acc total = 0;
    for (int64_t run = 0; run < outer_runs; ++run)
      total += sum_run<Acc>(base + plan.reduced.offsets_of(run, plan.reduced.ndim() - 1)[0], plan.inner_size(),
                            plan.inner_stride(), [&](T v) { return term(v, o); });
    store(o, total);
  }
}

// For every output o: store(o, sum over its reduced elements v of term(v, o)),
// by the loop that fits the layout. `x` points at element (0, ..., 0).
template <class Acc, class T, class Term, class Store>
void sum_terms(const ReductionPlan& plan, const T* x, const Term& term, const Store& store) {
  if (plan.outputs == 0) return;
  if (plan.empty) {
    for (int64_t o = 0; o < plan.outputs; ++o) store(o, Acc(0));
    return;
  }
  const Dims& kept = plan.kept;
  const int threads = plan.outputs * plan.count >= kParallelThreshold ? omp_get_max_threads() : 1;
  const bool inner_kept_dim_contiguous = kept.ndim() > 0 && kept.strides[0].back() == 1;
  if (plan.reduced.ndim() == 1 && plan.inner_stride() == 1) {
    sum_rows<Acc>(plan, x, threads, term, store);
  } else if (inner_kept_dim_contiguous && kept.ndim() == 1 && plan.reduced.ndim() == 1 && plan.outputs <= kSplitWidth &&
             plan.inner_size() >= 2 * kRowBlock) {
    sum_columns_by_row_blocks<Acc>(plan, x, threads, term, store);
  } else if (inner_kept_dim_contiguous) {
    sum_columns<Acc>(plan, x, threads, term, store);
  } else {
    sum_general<Acc>(plan, x, threads, term, store);
  }
}

// v beats the best so far when larger, or when it is the first NaN (NaN is the
// max, as in PyTorch). Ties keep the earlier index.
template <class T>
bool beats(T v, T best) {
  if constexpr (std::is_floating_point_v<T>) return v > best || (v != v && best == best);
  else return v > best;
}

// The max of a contiguous line and its first index. Two vectorisable passes
// instead of one branchy one: the max (and whether a NaN occurs), then the
// first position holding it.
template <class T>
std::pair<T, int64_t> contiguous_line_max(const T* x, int64_t n) {
  T lanes[kLanes];
  std::fill(lanes, lanes + kLanes, x[0]);
  bool has_nan = false;
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int64_t lane = 0; lane < kLanes; ++lane) {
      lanes[lane] = x[i + lane] > lanes[lane] ? x[i + lane] : lanes[lane];
      has_nan |= x[i + lane] != x[i + lane];
    }
  }
  for (int64_t lane = 0; i < n; ++i, ++lane) {
    lanes[lane] = x[i] > lanes[lane] ? x[i] : lanes[lane];
    has_nan |= x[i] != x[i];
  }
  T best = lanes[0];
  for (int64_t lane = 1; lane < kLanes; ++lane) best = lanes[lane] > best ? lanes[lane] : best;
  int64_t at = 0;
  if (has_nan) {
    while (x[at] == x[at]) ++at;
  } else {
    while (x[at] != best) ++at;
  }
  return {x[at], at};
}

}  // namespace

Tensor sum(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  ProfileScope scope(ProfileFamily::reduce);
  const ReductionPlan plan = plan_reduction(x, dims, keepdim, "sum");
  Tensor out = Tensor::empty(plan.out_shape, x.dtype());
  scope.add_bytes_of(x, out);
  visit_numeric(x.dtype(), "sum", [&]<class T>() {
    using Acc = Accumulator<T>;
    T* result = out.data<T>();
    sum_terms<Acc>(plan, x.data<T>(), [](T v, int64_t) { return static_cast<Acc>(v); },
                   [result](int64_t o, Acc total) { result[o] = static_cast<T>(total); });
  });
  return out;
}

Tensor mean(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  ProfileScope scope(ProfileFamily::reduce);
  const ReductionPlan plan = plan_reduction(x, dims, keepdim, "mean");
  Tensor out = Tensor::empty(plan.out_shape, x.dtype());
  scope.add_bytes_of(x, out);
  visit_floating(x.dtype(), "mean", [&]<class T>() {
    T* result = out.data<T>();
    const double count = static_cast<double>(plan.count);  // 0 for an empty reduction: 0 / 0 = NaN
    sum_terms<double>(plan, x.data<T>(), [](T v, int64_t) { return static_cast<double>(v); },
                      [result, count](int64_t o, double total) { result[o] = static_cast<T>(total / count); });
  });
  return out;
}

// Two passes, both in double: the mean, then the squared deviations from it.
// Unlike the one-pass E[x^2] - E[x]^2 this does not cancel catastrophically
// when the mean is large compared with the spread.
Tensor var(const Tensor& x, const std::vector<int64_t>& dims, bool unbiased, bool keepdim) {
  ProfileScope scope(ProfileFamily::reduce);
  const ReductionPlan plan = plan_reduction(x, dims, keepdim, "var");
  Tensor out = Tensor::empty(plan.out_shape, x.dtype());
  scope.add_bytes_of(x, out);
  visit_floating(x.dtype(), "var", [&]<class T>() {
    T* result = out.data<T>();
    const T* data = x.data<T>();
    const double count = static_cast<double>(plan.count);
    std::vector<double> means(plan.outputs);
    sum_terms<double>(plan, data, [](T v, int64_t) { return static_cast<double>(v); },
                      [&means, count](int64_t o, double total) { means[o] = total / count; });
    // n - 1 (Bessel) or n; zero or fewer degrees of freedom give 0 / 0 = NaN, as in PyTorch.
    const double divisor = std::max(count - (unbiased ? 1.0 : 0.0), 0.0);
    const double* mean_of = means.data();
    sum_terms<double>(
        plan, data,
        [mean_of](T v, int64_t o) {
          const double deviation = static_cast<double>(v) - mean_of[o];
          return deviation * deviation;
        },
        [result, divisor](int64_t o, double total) { result[o] = static_cast<T>(total / divisor); });
  });
  return out;
}

namespace {

// max and argmax: `op` names the one the caller called in errors.
MaxResult max_along(const Tensor& x, int64_t dim, bool keepdim, const char* op) {
  const int64_t d = normalize_dim(dim, x.dim(), op);
  const int64_t size = x.dim() == 0 ? 1 : x.shape()[d];
  check(size > 0, op, ": dim ", dim, " of a tensor of shape ", x.shape(), " is empty, so it has no max");
  const ReductionPlan plan = plan_reduction(x, {dim}, keepdim, op);
  MaxResult result{Tensor::empty(plan.out_shape, x.dtype()), Tensor::empty(plan.out_shape, DType::Int64)};
  if (plan.outputs == 0) return result;
  const Dims& kept = plan.kept;
  const int64_t stride = plan.reduced.strides[0][0];  // the one reduced dim (stride 0 when it has size 1)
  const int threads = plan.outputs * size >= kParallelThreshold ? omp_get_max_threads() : 1;
  int64_t* indices = result.indices.data<int64_t>();
  visit_numeric(x.dtype(), op, [&]<class T>() {
    const T* data = x.data<T>();
    T* values = result.values.data<T>();
    if (kept.ndim() > 0 && kept.strides[0].back() == 1 && stride != 1) {
      // columns: compare whole rows of outputs at a time (vectorises across outputs)
      const int64_t width = kept.shape.back();
      const int64_t chunk = column_chunk(width, plan.outputs / width, threads);
      const int64_t chunks = (width + chunk - 1) / chunk;
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
      for (int64_t unit = 0; unit < plan.outputs / width * chunks; ++unit) {
        const int64_t kept_row = unit / chunks, first = (unit % chunks) * chunk;
        const int64_t columns = std::min(chunk, width - first);
        const int64_t o_first = kept_row * width + first;
        const T* base = data + kept.offsets_of(kept_row, kept.ndim() - 1)[0] + first;
        T* best = values + o_first;
        int64_t* best_at = indices + o_first;
        for (int64_t j = 0; j < columns; ++j) {
          best[j] = base[j];
          best_at[j] = 0;
        }
        for (int64_t i = 1; i < size; ++i) {
          const T* row = base + i * stride;
          for (int64_t j = 0; j < columns; ++j) {
            const bool better = beats(row[j], best[j]);
            best[j] = better ? row[j] : best[j];
            best_at[j] = better ? i : best_at[j];
          }
        }
      }
      return;
    }
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
    for (int64_t o = 0; o < plan.outputs; ++o) {
      const T* line = data + kept.offsets_of(o, kept.ndim())[0];
      if (stride == 1) {
        std::tie(values[o], indices[o]) = contiguous_line_max(line, size);
        continue;
      }
      T best = line[0];
      int64_t best_at = 0;
      for (int64_t i = 1; i < size; ++i) {
        if (beats(line[i * stride], best)) {
          best = line[i * stride];
          best_at = i;
        }
      }
      values[o] = best;
      indices[o] = best_at;
    }
  });
  return result;
}

}  // namespace

MaxResult max(const Tensor& x, int64_t dim, bool keepdim) { return max_along(x, dim, keepdim, "max"); }

Tensor max(const Tensor& x) {
  check(x.numel() > 0, "max: a tensor of shape ", x.shape(), " has no elements, so it has no max");
  return max(raw::reshape(x, {-1}), 0).values;  // 1-d, reduced to 0-d
}

Tensor argmax(const Tensor& x, int64_t dim, bool keepdim) { return max_along(x, dim, keepdim, "argmax").indices; }

Tensor sum_to_shape(const Tensor& x, const Shape& shape) {
  const int64_t leading = x.dim() - static_cast<int64_t>(shape.size());
  check(leading >= 0, "sum_to_shape: shape ", shape, " has more dims than the input's shape ", x.shape());
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < x.dim(); ++d) {
    if (d < leading) {
      dims.push_back(d);
      continue;
    }
    const int64_t target = shape[d - leading];
    check(target == x.shape()[d] || target == 1, "sum_to_shape: shape ", shape, " does not broadcast to the input's shape ",
          x.shape());
    if (target != x.shape()[d]) dims.push_back(d);
  }
  if (dims.empty()) return x;  // same shape: nothing to sum
  return raw::view(sum(x, dims, /*keepdim=*/true), shape);
}

}  // namespace tg::raw
