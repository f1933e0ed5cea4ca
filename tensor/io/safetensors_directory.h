// A model's weights in a directory as Hugging Face saves them: one
// model.safetensors, or, for larger models, shards listed by an index:
//
//   DIR/model.safetensors.index.json
//     {"metadata": {"total_size": 2471645184},
//      "weight_map": {"model.embed_tokens.weight": "model-00001-of-00002.safetensors", ...}}
//   DIR/model-00001-of-00002.safetensors, DIR/model-00002-of-00002.safetensors
//
// Every shard is memory-mapped (map_safetensors: nothing is read up front) and
// checked as one file is. The index must agree with the shards exactly: each
// name it lists is in the shard it names, each tensor of a shard is listed for
// that shard, no name is stored twice, and shard names are plain file names in
// DIR (an index from a stranger cannot point outside it).
#pragma once
#include <map>
#include <string>
#include <vector>

#include "tinygpt/tensor/io/safetensors.h"

namespace tg {

struct SafetensorsDirectory {
  struct Located {
    const Tensor* tensor;         // a view into its shard's mapping
    const SafetensorsFile* file;  // the shard holding it (for evict and for errors)
  };

  SafetensorsDirectory() = default;
  // `tensors` points into `files`: moving keeps those addresses (the vector's buffer moves), copying would not.
  SafetensorsDirectory(SafetensorsDirectory&&) = default;
  SafetensorsDirectory(const SafetensorsDirectory&) = delete;

  std::string directory;
  std::string source;                 // "DIR/model.safetensors", or the index's path (named in errors)
  std::vector<SafetensorsFile> files;  // one, or the shards in the order of their names
  std::map<std::string, Located> tensors;  // every tensor of every shard, by name

  // The tensor called `name`, or nullptr.
  const Located* find(const std::string& name) const;
  // Bytes of all the tensors' data.
  double stored_bytes() const;
};

inline constexpr const char* kSafetensorsFileName = "model.safetensors";
inline constexpr const char* kSafetensorsIndexName = "model.safetensors.index.json";

// Whether DIR holds model.safetensors or model.safetensors.index.json.
bool has_safetensors_weights(const std::string& directory);

// Maps DIR/model.safetensors, or when it is absent the shards that
// DIR/model.safetensors.index.json lists. Throws tg::Error naming the file and
// what is wrong: neither file, an index that is not JSON or has no weight_map, a
// shard name with a path in it, a missing shard, and the disagreements above.
SafetensorsDirectory map_safetensors_directory(const std::string& directory);

}  // namespace tg
