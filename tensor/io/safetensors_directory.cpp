#include "tinygpt/tensor/io/safetensors_directory.h"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>

#include "tinygpt/tensor/error.h"
#include "tinygpt/tensor/io/bounded_json.h"

namespace tg {

namespace {

namespace fs = std::filesystem;

// An index lists a few hundred names; real ones are tens of kilobytes.
constexpr std::uintmax_t kMaxIndexBytes = 64u << 20;
constexpr size_t kMaxShards = 4096;

nlohmann::json read_index(const fs::path& path) {
  const std::string where = path.string();
  std::error_code error;
  const std::uintmax_t bytes = fs::file_size(path, error);
  check(!error, where, ": cannot read it: ", error.message());
  check(bytes <= kMaxIndexBytes, where, ": ", bytes, " bytes is too large for an index of tensor names (at most ",
        kMaxIndexBytes, ")");
  std::ifstream file(path, std::ios::binary);
  check(file.good(), where, ": cannot open it");
  const std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  try {
    return parse_bounded_json(text, where);
  } catch (const nlohmann::json::exception& parse_error) {
    fail(where, ": not valid JSON: ", json_error_text(parse_error));
  }
}

// A shard's name must be a file in the directory itself: no separator, not "." or "..".
void check_shard_name(const std::string& where, const std::string& tensor, const std::string& shard) {
  check(!shard.empty() && shard.find('/') == std::string::npos && shard.find('\\') == std::string::npos &&
            shard != "." && shard != ".." && shard.ends_with(".safetensors"),
        where, ": \"weight_map\" puts tensor '", tensor, "' in '", shard,
        "', which is not the name of a .safetensors file in the model's directory");
}

void index_file(SafetensorsDirectory& result, const SafetensorsFile& file) {
  for (const NamedTensor& named : file.tensors) {
    const auto [existing, inserted] = result.tensors.emplace(named.name, SafetensorsDirectory::Located{&named.tensor, &file});
    check(inserted, result.source, ": tensor '", named.name, "' is stored twice, in ", existing->second.file->path,
          " and in ", file.path);
  }
}

}  // namespace

const SafetensorsDirectory::Located* SafetensorsDirectory::find(const std::string& name) const {
  const auto found = tensors.find(name);
  return found == tensors.end() ? nullptr : &found->second;
}

double SafetensorsDirectory::stored_bytes() const {
  double bytes = 0;
  for (const auto& [name, located] : tensors)
    bytes += static_cast<double>(located.tensor->numel()) * static_cast<double>(dtype_size(located.tensor->dtype()));
  return bytes;
}

bool has_safetensors_weights(const std::string& directory) {
  return fs::is_regular_file(fs::path(directory) / kSafetensorsFileName) ||
         fs::is_regular_file(fs::path(directory) / kSafetensorsIndexName);
}

SafetensorsDirectory map_safetensors_directory(const std::string& directory) {
  const fs::path single = fs::path(directory) / kSafetensorsFileName, index_path = fs::path(directory) / kSafetensorsIndexName;
  SafetensorsDirectory result;
  result.directory = directory;
  if (fs::is_regular_file(single)) {
    result.source = single.string();
    result.files.push_back(map_safetensors(single.string()));
    index_file(result, result.files.front());
    return result;
  }
  check(fs::is_regular_file(index_path), directory, ": neither ", kSafetensorsFileName, " nor ", kSafetensorsIndexName,
        " is there (tinygpt reads weights in the safetensors format)",
        fs::exists(fs::path(directory) / "pytorch_model.bin") ? "; pytorch_model.bin is a pickle, which it does not read"
                                                              : "");
  result.source = index_path.string();
  const nlohmann::json index = read_index(index_path);
  check(index.is_object() && index.contains("weight_map") && index["weight_map"].is_object(), result.source,
        ": \"weight_map\" is missing or not an object of tensor name -> file name");
  std::map<std::string, std::string> shard_of;  // tensor name -> shard file name
  std::set<std::string> shard_names;
  for (const auto& [tensor, shard] : index["weight_map"].items()) {
    check(shard.is_string(), result.source, ": \"weight_map\" gives tensor '", tensor, "' the file ", shard.dump(),
          ", not a file name");
    check_shard_name(result.source, tensor, shard.get<std::string>());
    shard_of.emplace(tensor, shard.get<std::string>());
    shard_names.insert(shard.get<std::string>());
  }
  check(!shard_names.empty(), result.source, ": \"weight_map\" lists no tensors");
  check(shard_names.size() <= kMaxShards, result.source, ": \"weight_map\" names ", shard_names.size(),
        " files; at most ", kMaxShards, " shards are read");
  result.files.reserve(shard_names.size());  // Located points into it: no reallocation from here
  for (const std::string& shard : shard_names) {
    const fs::path path = fs::path(directory) / shard;
    check(fs::is_regular_file(path), result.source, ": the shard ", shard, " it lists is not in ", directory);
    result.files.push_back(map_safetensors(path.string()));
    index_file(result, result.files.back());
  }
  for (const auto& [tensor, shard] : shard_of) {
    const SafetensorsDirectory::Located* located = result.find(tensor);
    check(located != nullptr, result.source, ": tensor '", tensor, "' is listed in ", shard, " but no shard holds it");
    check(fs::path(located->file->path).filename() == shard, result.source, ": tensor '", tensor, "' is listed in ",
          shard, " but stored in ", located->file->path);
  }
  for (const auto& [tensor, located] : result.tensors)
    check(shard_of.contains(tensor), result.source, ": tensor '", tensor, "' of ", located.file->path,
          " is not listed in \"weight_map\"");
  return result;
}

}  // namespace tg
