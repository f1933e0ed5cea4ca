#include "tinygpt/tensor/cpu/gemv.h"

#include <algorithm>

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#endif

namespace tg::cpu {

namespace {

// Weights per chunk of rows a thread takes at a time (192 KB). A product of one
// chunk or less runs on the calling thread: waking the others would cost more
// than it saves (the attention's per-head products over the cache stay serial).
constexpr int64_t kChunkFloats = 48 * 1024;

// out_row = alpha * dot + beta * out_row, with beta == 0 ignoring out_row.
inline void store(float dot, float alpha, float beta, float* out_row) {
  *out_row = beta == 0.0f ? alpha * dot : alpha * dot + beta * *out_row;
}

#if defined(__AVX2__) && defined(__FMA__)

float horizontal_sum(__m256 v) {
  __m128 sum = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));  // 4 lanes
  sum = _mm_add_ps(sum, _mm_movehl_ps(sum, sum));                                   // 2 lanes
  sum = _mm_add_ss(sum, _mm_movehdup_ps(sum));                                      // 1 lane
  return _mm_cvtss_f32(sum);
}

// How far ahead of its reads dot_row asks for w (_mm_prefetch): the hardware
// prefetcher alone falls behind one core's reads (figures: docs/performance.md,
// "The measurements behind the kernels' constants"). Past a matrix's end the
// requests fetch memory that is not read and never fault.
constexpr int64_t kGemvPrefetchBytes = 8 * 1024;

// w_row (K) . x (K). One row at a time keeps each thread's reads of w one
// sequential stream, which the prefetchers follow (reading 4 rows side by side
// measured 20-30% slower for K = 768). Four
// independent sums of 8 lanes each hide the latency of the multiply-adds; the
// K % 32 columns left go 8 at a time, then one by one.
float dot_row(int64_t k, const float* w_row, const float* x) {
  __m256 sums[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
  int64_t col = 0;
  for (; col + 32 <= k; col += 32) {
    _mm_prefetch(reinterpret_cast<const char*>(w_row + col) + kGemvPrefetchBytes, _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(w_row + col + 16) + kGemvPrefetchBytes, _MM_HINT_T0);
    for (int part = 0; part < 4; ++part)
      sums[part] = _mm256_fmadd_ps(_mm256_loadu_ps(w_row + col + 8 * part), _mm256_loadu_ps(x + col + 8 * part),
                                   sums[part]);
  }
  for (; col + 8 <= k; col += 8)
    sums[0] = _mm256_fmadd_ps(_mm256_loadu_ps(w_row + col), _mm256_loadu_ps(x + col), sums[0]);
  float dot = horizontal_sum(_mm256_add_ps(_mm256_add_ps(sums[0], sums[1]), _mm256_add_ps(sums[2], sums[3])));
  for (; col < k; ++col) dot += w_row[col] * x[col];
  return dot;
}

// dots[s] = w_row (K) . xs[s] (K) for the N rows of activations xs, each the same
// sums in the same order as dot_row(k, w_row, xs[s]), w_row's pieces loaded once
// for all N. N <= 3 keeps the 4 N sums and the piece of w in AVX2's 16 registers.
template <int N>
void dot_row_with(int64_t k, const float* w_row, const float* const* xs, float* dots) {
  __m256 sums[N][4];
  for (int s = 0; s < N; ++s)
    for (int part = 0; part < 4; ++part) sums[s][part] = _mm256_setzero_ps();
  int64_t col = 0;
  for (; col + 32 <= k; col += 32) {
    _mm_prefetch(reinterpret_cast<const char*>(w_row + col) + kGemvPrefetchBytes, _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(w_row + col + 16) + kGemvPrefetchBytes, _MM_HINT_T0);
    for (int part = 0; part < 4; ++part) {
      const __m256 w = _mm256_loadu_ps(w_row + col + 8 * part);
      for (int s = 0; s < N; ++s)
        sums[s][part] = _mm256_fmadd_ps(w, _mm256_loadu_ps(xs[s] + col + 8 * part), sums[s][part]);
    }
  }
  for (; col + 8 <= k; col += 8) {
    const __m256 w = _mm256_loadu_ps(w_row + col);
    for (int s = 0; s < N; ++s) sums[s][0] = _mm256_fmadd_ps(w, _mm256_loadu_ps(xs[s] + col), sums[s][0]);
  }
  for (int s = 0; s < N; ++s) {
    float dot = horizontal_sum(_mm256_add_ps(_mm256_add_ps(sums[s][0], sums[s][1]), _mm256_add_ps(sums[s][2], sums[s][3])));
    for (int64_t tail = col; tail < k; ++tail) dot += w_row[tail] * xs[s][tail];
    dots[s] = dot;
  }
}

#else

// Without AVX2 + FMA: the plain loop, left to the compiler.
float dot_row(int64_t k, const float* w_row, const float* x) {
  float dot = 0.0f;
  for (int64_t col = 0; col < k; ++col) dot += w_row[col] * x[col];
  return dot;
}

template <int N>
void dot_row_with(int64_t k, const float* w_row, const float* const* xs, float* dots) {
  for (int s = 0; s < N; ++s) dots[s] = dot_row(k, w_row, xs[s]);
}

#endif

}  // namespace

void gemv_rows(int64_t n, int64_t k, float alpha, const float* w, int64_t w_row_stride, const float* x, float beta,
               float* out) {
  // Rows are handed out in chunks of about 192 KB of w, each one sequential
  // stream. Dynamic rather than static shares: with idle threads asleep
  // (OMP_WAIT_POLICY=PASSIVE) the others wake tens of microseconds after the
  // calling thread starts, and a fixed half each would leave it waiting for them.
  const int64_t rows_per_chunk = std::max<int64_t>(8, kChunkFloats / std::max<int64_t>(1, k));
#pragma omp parallel for schedule(dynamic, rows_per_chunk) if (n > rows_per_chunk)
  for (int64_t row = 0; row < n; ++row) store(dot_row(k, w + row * w_row_stride, x), alpha, beta, out + row);
}

void gemv_rows_serial(int64_t n, int64_t k, float alpha, const float* w, int64_t w_row_stride, const float* x,
                      float beta, float* out) {
  for (int64_t row = 0; row < n; ++row) store(dot_row(k, w + row * w_row_stride, x), alpha, beta, out + row);
}

void gemv_rows_serial_batch(int64_t n, int64_t k, const float* w, int64_t w_row_stride, const float* const* xs,
                            float* const* outs, int64_t count) {
  float dots[3];
  for (int64_t row = 0; row < n; ++row) {
    const float* w_row = w + row * w_row_stride;
    for (int64_t first = 0; first < count; first += 3) {  // sequences 3 at a time, w_row from L1 after the first
      const int64_t group = std::min<int64_t>(3, count - first);
      if (group == 3)
        dot_row_with<3>(k, w_row, xs + first, dots);
      else if (group == 2)
        dot_row_with<2>(k, w_row, xs + first, dots);
      else
        dots[0] = dot_row(k, w_row, xs[first]);
      for (int64_t s = 0; s < group; ++s) outs[first + s][row] = dots[s];
    }
  }
}

void gemv_rows_reference(int64_t n, int64_t k, float alpha, const float* w, int64_t w_row_stride, const float* x,
                         float beta, float* out) {
  for (int64_t row = 0; row < n; ++row) {
    float dot = 0.0f;
    for (int64_t col = 0; col < k; ++col) dot += w[row * w_row_stride + col] * x[col];
    store(dot, alpha, beta, out + row);
  }
}

}  // namespace tg::cpu
