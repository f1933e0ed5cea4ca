#include "tinygpt/datasets/length_grouped_batches.h"

#include <algorithm>

#include "tinygpt/tensor/error.h"

namespace tg {

namespace {

// Fisher-Yates, one draw per swap.
template <typename T>
void shuffle(std::vector<T>& items, Generator& generator) {
  for (size_t i = items.size(); i > 1; --i) std::swap(items[i - 1], items[generator.next_below(i)]);
}

}  // namespace

std::vector<std::vector<int64_t>> length_grouped_batches(std::span<const int64_t> lengths, int64_t batch_size,
                                                         Generator& generator, int64_t chunk_batches) {
  const int64_t count = static_cast<int64_t>(lengths.size());
  check(count > 0 && batch_size > 0 && chunk_batches > 0, "length_grouped_batches: ", count, " items in batches of ",
        batch_size, " (", chunk_batches, " batches a chunk); need at least one of each");
  std::vector<int64_t> order(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) order[static_cast<size_t>(i)] = i;
  shuffle(order, generator);
  const int64_t batches = (count + batch_size - 1) / batch_size;
  for (int64_t i = count; i < batches * batch_size; ++i) order.push_back(order[static_cast<size_t>(i % count)]);

  const int64_t chunk = chunk_batches * batch_size;
  for (int64_t start = 0; start < batches * batch_size; start += chunk) {
    const auto first = order.begin() + start, last = order.begin() + std::min(start + chunk, batches * batch_size);
    std::stable_sort(first, last, [&](int64_t a, int64_t b) { return lengths[a] > lengths[b]; });
  }
  std::vector<std::vector<int64_t>> result(static_cast<size_t>(batches));
  for (int64_t b = 0; b < batches; ++b)
    result[static_cast<size_t>(b)].assign(order.begin() + b * batch_size, order.begin() + (b + 1) * batch_size);
  shuffle(result, generator);
  return result;
}

double padding_fraction(const std::vector<std::vector<int64_t>>& batches, std::span<const int64_t> lengths) {
  double computed = 0, padding = 0;
  for (const std::vector<int64_t>& batch : batches) {
    int64_t longest = 0, real = 0;
    for (const int64_t item : batch) longest = std::max(longest, lengths[item]), real += lengths[item];
    computed += static_cast<double>(longest) * static_cast<double>(batch.size());
    padding += static_cast<double>(longest) * static_cast<double>(batch.size()) - static_cast<double>(real);
  }
  return computed > 0 ? padding / computed : 0;
}

}  // namespace tg
