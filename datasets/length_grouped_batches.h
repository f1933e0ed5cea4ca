// An epoch of batches of whole sequences (conversations), grouped by length so
// that padding each batch to its longest row wastes little:
//
//   1. shuffle all N items (the epoch's generator)
//   2. cut the shuffled list into chunks of `chunk_batches` batches and sort
//      each chunk by length, longest first
//   3. cut each chunk into batches of `batch_size`, and shuffle the batches' order
//
// Step 2 makes neighbours alike in length, step 3 keeps the long batches from
// all coming first; within a chunk the order is still random, so every epoch
// differs. When N does not divide by the batch size the list is filled up
// from its own start, so every batch has batch_size rows (an item may then be
// seen twice in the epoch). The chunk is 50 batches, as Hugging Face's
// group_by_length sorts "megabatches" of up to 50: big enough to find partners
// of a similar length, small enough that an epoch is still shuffled.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "tinygpt/tensor/random.h"

namespace tg {

// Items are 0 .. lengths.size()-1. Throws tg::Error when there are none or batch_size < 1.
std::vector<std::vector<int64_t>> length_grouped_batches(std::span<const int64_t> lengths, int64_t batch_size,
                                                         Generator& generator, int64_t chunk_batches = 50);

// The share of the positions a forward computes that are padding: each batch is
// (batch_size, longest row), of which the rows' own lengths are real.
double padding_fraction(const std::vector<std::vector<int64_t>>& batches, std::span<const int64_t> lengths);

}  // namespace tg
