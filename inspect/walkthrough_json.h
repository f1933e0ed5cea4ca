// The walk-through (inspect/walkthrough.h) as JSON: what the live step-through
// page of `tinygpt serve` (POST /v1/explain) draws, and what `tinygpt explain
// --json` writes for a notebook or a script.
//
// Every tensor goes as its shape and its float32 values exactly, base64 of the
// little-endian bytes in row-major order ("f32"), so that a reader sees the very
// numbers the model computed (a masked score is -Infinity) at a third of the size
// of decimal text. The fields are listed in docs/walkthrough/live.md.
#pragma once
#include <cstdint>
#include <string>

#include "tinygpt/inspect/walkthrough.h"

namespace tg::inspect {

struct WalkthroughJsonOptions {
  // A stage's tensors together above this many values are left out (the stage says
  // "omitted": true): the logits and probabilities of a large vocabulary.
  int64_t max_stage_values = int64_t{1} << 22;
  double milliseconds = 0;  // what the walk-through took to compute: "milliseconds"
};

// The walk-through as one JSON object (serialised, UTF-8: invalid bytes of a
// token's text are replaced), with "layer" and "head" as `options` chose them.
std::string walkthrough_json(const Walkthrough& walkthrough, const WalkthroughOptions& options,
                             const WalkthroughJsonOptions& json_options = {});

// The bytes of `values` as base64 (RFC 4648, with padding).
std::string base64_of(const void* data, size_t bytes);

}  // namespace tg::inspect
