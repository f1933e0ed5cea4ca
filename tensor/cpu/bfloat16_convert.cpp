#include "tinygpt/tensor/cpu/bfloat16_convert.h"

#include <algorithm>

namespace tg::cpu {

namespace {

// Elements per piece of a row that one thread converts at a time, so that a
// single long row (a flat buffer) is shared out as well as many short ones.
constexpr int64_t kPieceElements = 16384;
// Below this many elements the conversion runs on the calling thread: one core
// streams it near memory's speed, and waking a second thread cost more than it
// saved for cpu-small's operands (docs/performance.md).
constexpr int64_t kParallelElements = int64_t{1} << 20;

// One element, each way. Through the bits rather than bfloat16's constructor:
// GCC vectorises the loop then, not when it builds a bfloat16 temporary.
void convert(float value, bfloat16& out) { out.bits = bfloat16::round_to_bfloat16_bits(value); }
void convert(bfloat16 value, float& out) { out = static_cast<float>(value); }

// dst (rows, cols) = To(src (rows, cols)) element by element, in pieces, on the OpenMP threads.
template <class From, class To>
void convert_rows(int64_t rows, int64_t cols, const From* src, int64_t src_row_stride, To* dst,
                  int64_t dst_row_stride) {
  const int64_t pieces_per_row = std::max<int64_t>(1, (cols + kPieceElements - 1) / kPieceElements);
#pragma omp parallel for schedule(static) if (rows * cols > kParallelElements)
  for (int64_t piece = 0; piece < rows * pieces_per_row; ++piece) {
    const int64_t row = piece / pieces_per_row, first_col = piece % pieces_per_row * kPieceElements;
    const int64_t end_col = std::min(cols, first_col + kPieceElements);
    const From* src_row = src + row * src_row_stride;
    To* dst_row = dst + row * dst_row_stride;
#pragma omp simd
    for (int64_t col = first_col; col < end_col; ++col) convert(src_row[col], dst_row[col]);
  }
}

}  // namespace

void float_to_bfloat16_rows(int64_t rows, int64_t cols, const float* src, int64_t src_row_stride, bfloat16* dst,
                            int64_t dst_row_stride) {
  convert_rows(rows, cols, src, src_row_stride, dst, dst_row_stride);
}

void bfloat16_to_float_rows(int64_t rows, int64_t cols, const bfloat16* src, int64_t src_row_stride, float* dst,
                            int64_t dst_row_stride) {
  convert_rows(rows, cols, src, src_row_stride, dst, dst_row_stride);
}

}  // namespace tg::cpu
