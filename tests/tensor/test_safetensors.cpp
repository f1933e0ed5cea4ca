#include "tinygpt/tensor/io/safetensors.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tinygpt/tensor/io/atomic_file.h"
#include "tinygpt/tensor/factory.h"
#include "tinygpt/tensor/view.h"

namespace fs = std::filesystem;
using tg::DType;
using tg::Tensor;

namespace {

// A fresh directory per test case, removed afterwards.
struct ScratchDirectory {
  fs::path path;
  ScratchDirectory() {
    static int counter = 0;
    path = fs::temp_directory_path() /
           ("tinygpt_safetensors_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~ScratchDirectory() { fs::remove_all(path); }
  std::string file(const std::string& name) const { return (path / name).string(); }
};

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// A hand-made file: the length field, the header text as given, then `data`.
void write_file(const std::string& path, const std::string& header, const std::string& data) {
  std::string bytes;
  for (int i = 0; i < 8; ++i) bytes.push_back(static_cast<char>((header.size() >> (8 * i)) & 0xff));
  write_bytes(path, bytes + header + data);
}

// Both readers must reject `path` with a message naming the reader, the path and `what`.
void check_rejected(const std::string& path, const std::string& what) {
  CAPTURE(what);
  for (const auto& [reader, read] : {std::pair{"load_safetensors", &tg::load_safetensors},
                                     std::pair{"map_safetensors", &tg::map_safetensors}}) {
    CAPTURE(reader);
    try {
      read(path);
      FAIL("reading did not throw");
    } catch (const tg::Error& error) {
      const std::string message = error.what();
      CAPTURE(message);
      CHECK(message.find(std::string(reader) + ": " + path) != std::string::npos);
      CHECK(message.find(what) != std::string::npos);
    }
  }
}

// Two float32 tensors, a (2) at [0, 8) and b (1) at [8, 12): a valid file to spoil.
std::string good_file(const ScratchDirectory& scratch) {
  const std::string path = scratch.file("good.safetensors");
  tg::save_safetensors(path, {{"a", tg::from_vector<float>({1, 2})}, {"b", tg::from_vector<float>({3})}});
  return path;
}

}  // namespace

TEST_CASE("safetensors: every dtype and shape round trips, in the order given") {
  ScratchDirectory scratch;
  const std::string path = scratch.file("all.safetensors");
  const std::vector<tg::NamedTensor> tensors = {
      {"weights", tg::from_vector<float>({1.5f, -2, 0, 3e-8f, 7, 1e30f}, {2, 3})},
      {"doubles", tg::from_vector<double>({0.1, -0.2, 1e-300, 4})},
      {"ids", tg::from_vector<int64_t>({-1, 0, 1, int64_t{1} << 40, 5, 6, 7, 8}, {2, 2, 2})},
      {"mask", tg::from_vector<bool>({true, false, false, true, true})},
      {"loss", tg::scalar(2.5)},
      {"no_rows", tg::zeros({0, 3}, DType::Int64)},
      {"after_empty", tg::from_vector<float>({9}, {1, 1})},
  };
  tg::save_safetensors(path, tensors);
  const tg::SafetensorsFile file = tg::load_safetensors(path);

  REQUIRE(file.tensors.size() == tensors.size());
  CHECK(file.metadata.empty());
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& expected = tensors[i].tensor;
    const Tensor& loaded = file.tensors[i].tensor;
    CAPTURE(tensors[i].name);
    CHECK(file.tensors[i].name == tensors[i].name);
    CHECK(loaded.name() == tensors[i].name);
    CHECK(loaded.dtype() == expected.dtype());
    CHECK(loaded.shape() == expected.shape());
    CHECK(loaded.is_contiguous());
    CHECK(loaded.to_vector<double>() == expected.to_vector<double>());
  }
  CHECK(file.at("ids").to_vector<int64_t>()[3] == int64_t{1} << 40);
  CHECK(file.at("loss").dim() == 0);
}

TEST_CASE("safetensors: loaded tensors are views into one aligned storage") {
  ScratchDirectory scratch;
  const std::string path = scratch.file("views.safetensors");
  tg::save_safetensors(path, {{"a", tg::ones({3, 4})}, {"b", tg::zeros({7}, DType::Float64)}});
  const tg::SafetensorsFile file = tg::load_safetensors(path);
  const Tensor a = file.at("a"), b = file.at("b");
  CHECK(a.storage() == b.storage());
  CHECK(reinterpret_cast<uintptr_t>(a.storage()->data()) % tg::Storage::kAlignment == 0);
  CHECK(a.offset() == 0);
  CHECK(b.offset() == 48 / 8);  // b's data follows a's 48 bytes; the offset counts float64 elements
  CHECK(b.to_vector<double>() == std::vector<double>(7, 0));
}

TEST_CASE("safetensors: non-contiguous tensors are written row-major") {
  ScratchDirectory scratch;
  const std::string path = scratch.file("views.safetensors");
  const Tensor matrix = tg::arange(0, 12, 1, DType::Float32);
  const Tensor grid = tg::raw::view(matrix, {3, 4});
  const Tensor transposed = tg::raw::transpose(grid, 0, 1);    // (4, 3)
  const Tensor strided = tg::raw::slice(grid, 1, 0, 4, 2);      // (3, 2), every other column
  const Tensor broadcast = tg::raw::expand(tg::raw::slice(grid, 0, 1, 2), {2, 4});  // stride 0
  REQUIRE_FALSE(transposed.is_contiguous());
  tg::save_safetensors(path, {{"t", transposed}, {"s", strided}, {"e", broadcast}});

  const tg::SafetensorsFile file = tg::load_safetensors(path);
  CHECK(file.at("t").shape() == tg::Shape{4, 3});
  CHECK(file.at("t").to_vector<float>() == transposed.to_vector<float>());
  CHECK(file.at("s").to_vector<float>() == std::vector<float>{0, 2, 4, 6, 8, 10});
  CHECK(file.at("e").to_vector<float>() == std::vector<float>{4, 5, 6, 7, 4, 5, 6, 7});
}

TEST_CASE("safetensors: metadata round trips") {
  ScratchDirectory scratch;
  const std::string path = scratch.file("meta.safetensors");
  const tg::Metadata metadata = {{"step", "1000"}, {"config", R"({"n_layer": 2})"}, {"empty", ""}, {"note", "caf\u00e9"}};
  tg::save_safetensors(path, {{"x", tg::ones({2})}}, metadata);
  CHECK(tg::load_safetensors(path).metadata == metadata);

  tg::save_safetensors(path, {}, metadata);  // metadata alone is a valid file
  const tg::SafetensorsFile only_metadata = tg::load_safetensors(path);
  CHECK(only_metadata.tensors.empty());
  CHECK(only_metadata.metadata == metadata);
}

TEST_CASE("safetensors: the header is padded so the data starts 8-byte aligned") {
  ScratchDirectory scratch;
  const std::string path = scratch.file("pad.safetensors");
  tg::save_safetensors(path, {{"x", tg::ones({1})}});
  const std::string bytes = read_bytes(path);
  uint64_t header_length = 0;
  for (int i = 0; i < 8; ++i) header_length |= uint64_t{static_cast<unsigned char>(bytes[i])} << (8 * i);
  CHECK(header_length % 8 == 0);
  CHECK(bytes.size() == 8 + header_length + 4);
}

TEST_CASE("safetensors: find and at") {
  ScratchDirectory scratch;
  const std::string path = good_file(scratch);
  const tg::SafetensorsFile file = tg::load_safetensors(path);
  REQUIRE(file.find("a") != nullptr);
  CHECK(file.find("a")->to_vector<float>() == std::vector<float>{1, 2});
  CHECK(file.find("zz") == nullptr);
  CHECK_THROWS_WITH_AS(file.at("zz"), doctest::Contains(("no tensor named 'zz' in " + path).c_str()), tg::Error);
}

TEST_CASE("safetensors: saving replaces the file atomically and leaves no temporary file") {
  ScratchDirectory scratch;
  const std::string path = scratch.file("ckpt.safetensors");
  tg::save_safetensors(path, {{"x", tg::ones({4})}});
  tg::save_safetensors(path, {{"y", tg::zeros({2})}});
  const tg::SafetensorsFile file = tg::load_safetensors(path);
  CHECK(file.find("x") == nullptr);
  CHECK(file.at("y").to_vector<float>() == std::vector<float>{0, 0});

  // A save that fails leaves the old file as it was, and nothing else behind.
  CHECK_THROWS_WITH_AS(tg::save_safetensors(path, {{"z", tg::ones({1})}, {"z", tg::ones({1})}}),
                       doctest::Contains("two tensors are named 'z'"), tg::Error);
  CHECK_THROWS_WITH_AS(tg::save_safetensors(path, {{"__metadata__", tg::ones({1})}}),
                       doctest::Contains("reserved"), tg::Error);
  CHECK_THROWS_WITH_AS(tg::save_safetensors(path, {{"u", Tensor()}}), doctest::Contains("'u' is undefined"),
                       tg::Error);
  const Tensor huge = tg::raw::expand(tg::zeros({1}, DType::Float64), {int64_t{1} << 61});  // 2^64 bytes
  CHECK_THROWS_WITH_AS(tg::save_safetensors(path, {{"h", huge}}),
                       doctest::Contains("tensor 'h' of shape (2305843009213693952,) takes the data past INT64_MAX bytes"),
                       tg::Error);
  CHECK(tg::load_safetensors(path).at("y").numel() == 2);

  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(scratch.path)) names.push_back(entry.path().filename().string());
  CHECK(names == std::vector<std::string>{"ckpt.safetensors"});

  const std::string missing_directory = scratch.file("no/such/dir/ckpt.safetensors");
  CHECK_THROWS_WITH_AS(tg::save_safetensors(missing_directory, {{"x", tg::ones({1})}}),
                       doctest::Contains(("cannot create '" + missing_directory).c_str()), tg::Error);
}

TEST_CASE("safetensors: a file written by Python loads") {
  // Made by tests/reference/safetensors_io.py: "flags" (3 bools) comes first, so
  // every tensor after it sits at an unaligned offset and is copied out.
  const tg::SafetensorsFile file = tg::load_safetensors("tests/fixtures/python_written.safetensors");
  std::vector<std::string> names;
  for (const tg::NamedTensor& named : file.tensors) names.push_back(named.name);
  CHECK(names == std::vector<std::string>{"flags", "matrix", "ids", "scalar", "nothing"});
  CHECK(file.at("flags").to_vector<bool>() == std::vector<bool>{true, false, true});
  CHECK(file.at("matrix").shape() == tg::Shape{2, 3});
  CHECK(file.at("matrix").to_vector<float>() == std::vector<float>{-1, -0.5f, 0, 0.5f, 1, 1.5f});
  CHECK(file.at("ids").to_vector<int64_t>() == std::vector<int64_t>{-1, 0, 7, int64_t{1} << 40});
  CHECK(file.at("scalar").dtype() == DType::Float64);
  CHECK(file.at("scalar").dim() == 0);
  CHECK(file.at("scalar").item<double>() == 3.25);
  CHECK(file.at("nothing").shape() == tg::Shape{0, 2});
  CHECK(file.at("matrix").storage() != file.at("flags").storage());  // copied: offset 3 is not 4-aligned
  CHECK(file.metadata == tg::Metadata{{"producer", "safetensors_io.py"}, {"note", "caf\u00e9 \u2713"}});
}

TEST_CASE("safetensors: damaged files are rejected with a message naming the path and the problem") {
  ScratchDirectory scratch;
  const std::string good = good_file(scratch);
  const std::string good_bytes = read_bytes(good);
  const std::string bad = scratch.file("bad.safetensors");
  const std::string ok_data(12, '\0');  // room for a (2) and b (1) float32

  SUBCASE("missing file") { check_rejected(scratch.file("nope.safetensors"), "cannot open"); }
  SUBCASE("shorter than the length field") {
    write_bytes(bad, std::string("\x10\x00\x00", 3));
    check_rejected(bad, "3 bytes long, too short for the 8-byte header length");
  }
  SUBCASE("header length larger than the file") {
    write_bytes(bad, good_bytes.substr(0, 20));
    check_rejected(bad, "is larger than the 12 bytes that follow it");
  }
  SUBCASE("a flipped byte in the length field") {
    std::string flipped = good_bytes;
    flipped[6] = '\x01';
    write_bytes(bad, flipped);
    check_rejected(bad, "header length");
  }
  SUBCASE("a flipped byte in the header") {
    std::string flipped = good_bytes;
    flipped[8] = '(';  // the opening brace
    write_bytes(bad, flipped);
    check_rejected(bad, "the header is not valid JSON");
  }
  SUBCASE("cut mid-data (a checkpoint interrupted while being written)") {
    write_bytes(bad, good_bytes.substr(0, good_bytes.size() - 3));
    check_rejected(bad, "tensor 'b' ends at byte 12 of the data but the file holds only 9 bytes of data (truncated?)");
  }
  SUBCASE("trailing bytes after the last tensor") {
    write_bytes(bad, good_bytes + "xyz");
    check_rejected(bad, "3 trailing bytes after the last tensor");
  }
  SUBCASE("not JSON") {
    write_file(bad, "{not json", "");
    check_rejected(bad, "the header is not valid JSON");
  }
  SUBCASE("JSON but not an object") {
    write_file(bad, "[1, 2]  ", "");
    check_rejected(bad, "the header must be a JSON object, got array");
  }
  SUBCASE("a header nested 70,000 levels deep (printing it in the error would overflow the stack)") {
    write_file(bad, "{\"a\": " + std::string(70000, '[') + std::string(70000, ']') + "}", "");
    check_rejected(bad, "the header: the JSON nests deeper than 64 levels");
  }
  SUBCASE("a number beyond a double, said without nlohmann's error code (it would stand after the colon)") {
    write_file(bad, R"({"a":1e999})", "");
    check_rejected(bad, "the header is not valid JSON: number overflow parsing '1e999'");
  }
  SUBCASE("an entry that is not an object") {
    write_file(bad, R"({"a": 3})", "");
    check_rejected(bad, "tensor 'a': entry must be an object, got 3");
  }
  SUBCASE("missing fields") {
    write_file(bad, R"({"a": {"shape": [2], "data_offsets": [0, 8]}})", std::string(8, '\0'));
    check_rejected(bad, "tensor 'a': missing \"dtype\"");
    write_file(bad, R"({"a": {"dtype": "F32", "data_offsets": [0, 8]}})", std::string(8, '\0'));
    check_rejected(bad, "tensor 'a': missing \"shape\"");
    write_file(bad, R"({"a": {"dtype": "F32", "shape": [2]}})", std::string(8, '\0'));
    check_rejected(bad, "tensor 'a': missing \"data_offsets\"");
  }
  SUBCASE("fields of the wrong type") {
    write_file(bad, R"({"a": {"dtype": 5, "shape": [2], "data_offsets": [0, 8]}})", std::string(8, '\0'));
    check_rejected(bad, "tensor 'a': \"dtype\" must be a string, got 5");
    write_file(bad, R"({"a": {"dtype": "F32", "shape": "2", "data_offsets": [0, 8]}})", std::string(8, '\0'));
    check_rejected(bad, "tensor 'a': \"shape\" must be an array, got \"2\"");
    write_file(bad, R"({"a": {"dtype": "F32", "shape": [2.5], "data_offsets": [0, 8]}})", std::string(8, '\0'));
    check_rejected(bad, "tensor 'a': a size in \"shape\" must be an integer, got 2.5");
    write_file(bad, R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0]}})", std::string(8, '\0'));
    check_rejected(bad, "tensor 'a': \"data_offsets\" must be [begin, end], got [0]");
    write_file(bad, R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, "8"]}})", std::string(8, '\0'));
    check_rejected(bad, "tensor 'a': \"data_offsets\" must be an integer, got \"8\"");
  }
  SUBCASE("unknown dtype") {
    write_file(bad, R"({"a": {"dtype": "F8_E4M3", "shape": [2], "data_offsets": [0, 4]}})", std::string(4, '\0'));
    check_rejected(bad, "tensor 'a': unsupported dtype \"F8_E4M3\" (supported: F32, F64, F16, BF16, I64, I8, BOOL)");
  }
  SUBCASE("negative sizes and offsets") {
    write_file(bad, R"({"a": {"dtype": "F32", "shape": [-2], "data_offsets": [0, 8]}})", std::string(8, '\0'));
    check_rejected(bad, "tensor 'a': a size in \"shape\" is negative (-2)");
    write_file(bad, R"({"a": {"dtype": "F32", "shape": [0], "data_offsets": [-4, 0]}})", "");
    check_rejected(bad, "tensor 'a': \"data_offsets\" is negative (-4)");
  }
  SUBCASE("a shape whose byte count overflows") {
    write_file(bad, R"({"a": {"dtype": "F64", "shape": [4294967296, 4294967296], "data_offsets": [0, 8]}})", "");
    check_rejected(bad, "tensor 'a': shape [4294967296,4294967296] is too large");
    // Empty, but its other sizes multiply past INT64_MAX, which numel refuses.
    write_file(bad, R"({"a": {"dtype": "F32", "shape": [0, 4611686018427387904, 8], "data_offsets": [0, 0]}})", "");
    check_rejected(bad, "tensor 'a': shape [0,4611686018427387904,8] is too large");
  }
  SUBCASE("offsets that end before they begin") {
    write_file(bad, R"({"a": {"dtype": "F32", "shape": [0], "data_offsets": [8, 0]}})", std::string(8, '\0'));
    check_rejected(bad, "tensor 'a': data_offsets [8,0] end before they begin");
  }
  SUBCASE("offsets that do not match the shape") {
    write_file(bad, R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 12]}})", ok_data);
    check_rejected(bad, "tensor 'a': data_offsets [0,12] span 12 bytes but shape (2,) of F32 needs 8");
  }
  SUBCASE("overlapping tensors") {
    write_file(bad,
               R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                   "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}})",
               ok_data);
    check_rejected(bad, "tensors 'a' [0, 8) and 'b' [4, 12) overlap");
  }
  SUBCASE("a hole between tensors") {
    write_file(bad,
               R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
                   "b": {"dtype": "F32", "shape": [1], "data_offsets": [8, 12]}})",
               ok_data);
    check_rejected(bad, "a hole of 4 bytes in the data before tensor 'b'");
  }
  SUBCASE("offsets past the end of the file") {
    write_file(bad,
               R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                   "b": {"dtype": "F32", "shape": [2], "data_offsets": [8, 16]}})",
               ok_data);
    check_rejected(bad, "tensor 'b' ends at byte 16 of the data but the file holds only 12 bytes");
  }
  SUBCASE("metadata that is not strings") {
    write_file(bad, R"({"__metadata__": {"step": 5}})", "");
    check_rejected(bad, "metadata \"step\" must be a string, got 5");
    write_file(bad, R"({"__metadata__": ["step"]})", "");
    check_rejected(bad, "\"__metadata__\" must be an object");
  }
  SUBCASE("a BOOL byte that is neither 0 nor 1") {
    write_file(bad, R"({"m": {"dtype": "BOOL", "shape": [3], "data_offsets": [0, 3]}})", std::string("\x01\x00\x02", 3));
    check_rejected(bad, "BOOL tensor 'm' holds the byte 2 at element 2");
  }
}

// ------------------------------------------------------------ memory-mapped reading

namespace {

// How many of the process's mappings are of `path` (Linux: /proc/self/maps).
int mappings_of(const std::string& path) {
  std::ifstream maps("/proc/self/maps");
  int count = 0;
  for (std::string line; std::getline(maps, line);)
    if (line.ends_with(fs::canonical(path).string())) ++count;
  return count;
}

}  // namespace

TEST_CASE("map_safetensors: the same tensors and metadata as load_safetensors") {
  ScratchDirectory scratch;
  const std::string path = scratch.file("all.safetensors");
  tg::save_safetensors(path,
                       {{"weights", tg::from_vector<float>({1.5f, -2, 0, 3e-8f, 7, 1e30f}, {2, 3})},
                        {"mask", tg::from_vector<bool>({true, false, true})},
                        {"after_mask", tg::from_vector<float>({4, 5})},  // offset 27: misaligned, copied
                        {"ids", tg::from_vector<int64_t>({-1, int64_t{1} << 40}, {1, 2})},
                        {"loss", tg::scalar(2.5)}},
                       {{"step", "7"}});
  for (const std::string& source : {path, std::string("tests/fixtures/python_written.safetensors")}) {
    CAPTURE(source);
    const tg::SafetensorsFile loaded = tg::load_safetensors(source);
    const tg::SafetensorsFile mapped = tg::map_safetensors(source);
    CHECK(mapped.metadata == loaded.metadata);
    CHECK(mapped.path == source);
    REQUIRE(mapped.tensors.size() == loaded.tensors.size());
    for (size_t i = 0; i < loaded.tensors.size(); ++i) {
      CAPTURE(loaded.tensors[i].name);
      const Tensor &expected = loaded.tensors[i].tensor, &actual = mapped.tensors[i].tensor;
      CHECK(mapped.tensors[i].name == loaded.tensors[i].name);
      CHECK(actual.name() == expected.name());
      CHECK(actual.dtype() == expected.dtype());
      CHECK(actual.shape() == expected.shape());
      CHECK(actual.is_contiguous());
      CHECK(actual.to_vector<double>() == expected.to_vector<double>());
    }
  }
  CHECK(tg::load_safetensors(path).mapping == nullptr);
}

TEST_CASE("map_safetensors: aligned tensors are views of the mapped file, misaligned ones copies") {
  ScratchDirectory scratch;
  const std::string path = scratch.file("views.safetensors");
  tg::save_safetensors(path, {{"a", tg::ones({3, 4})}, {"m", tg::from_vector<bool>({true})}, {"b", tg::ones({2})}});
  const tg::SafetensorsFile file = tg::map_safetensors(path);
  REQUIRE(file.mapping != nullptr);
  CHECK(file.mapping->bytes() == fs::file_size(path));
  CHECK(reinterpret_cast<uintptr_t>(file.mapping->data()) % tg::Storage::kAlignment == 0);
  CHECK(file.at("a").storage() == file.mapping);
  CHECK(file.at("m").storage() == file.mapping);
  CHECK(file.at("b").storage() != file.mapping);  // after 1 bool byte: not 4-aligned
  // The offset counts elements from the start of the file, header included.
  const auto* first = static_cast<const unsigned char*>(file.mapping->data()) + file.at("a").offset() * 4;
  uint64_t header_length = 0;
  for (int i = 0; i < 8; ++i) header_length |= uint64_t{static_cast<const unsigned char*>(file.mapping->data())[i]} << (8 * i);
  CHECK(first == static_cast<const unsigned char*>(file.mapping->data()) + 8 + header_length);
}

TEST_CASE("map_safetensors: the mapping lives as long as a tensor views it") {
  ScratchDirectory scratch;
  const std::string path = scratch.file("kept.safetensors");
  tg::save_safetensors(path, {{"a", tg::from_vector<float>({1, 2, 3})}, {"b", tg::from_vector<float>({4, 5})}});
  REQUIRE(mappings_of(path) == 0);
  Tensor kept;
  {
    const tg::SafetensorsFile file = tg::map_safetensors(path);
    CHECK(mappings_of(path) == 1);
    kept = file.at("b");
  }
  CHECK(mappings_of(path) == 1);  // the file object is gone, the tensor keeps the mapping
  CHECK(kept.to_vector<float>() == std::vector<float>{4, 5});
  // Replacing the file (save_safetensors renames a new one over it) leaves the old data mapped.
  tg::save_safetensors(path, {{"b", tg::from_vector<float>({9, 9})}});
  CHECK(kept.to_vector<float>() == std::vector<float>{4, 5});
  kept = Tensor();
  CHECK(mappings_of(path) == 0);  // unmapped with the last tensor
}

TEST_CASE("map_safetensors: a write stays in memory, and evict drops resident pages but not the data") {
  ScratchDirectory scratch;
  const std::string path = scratch.file("big.safetensors");
  const Tensor values = tg::arange(0, 1 << 16, 1, DType::Float32);  // 256 KiB: whole pages inside
  tg::save_safetensors(path, {{"small", tg::ones({3})}, {"values", values}});
  const std::string bytes_before = read_bytes(path);
  {
    const tg::SafetensorsFile file = tg::map_safetensors(path);
    file.at("small").data<float>()[0] = 42;  // a private copy of the page: the file is untouched
    CHECK(file.at("small").to_vector<float>()[0] == 42);
    file.evict(file.at("values"));
    file.evict(tg::ones({2}));  // not a view of the mapping: nothing happens
    CHECK(file.at("values").to_vector<float>() == values.to_vector<float>());
  }
  CHECK(read_bytes(path) == bytes_before);
}

TEST_CASE("map_safetensors: a truncated file is rejected before any data is read") {
  ScratchDirectory scratch;
  const std::string good_bytes = read_bytes(good_file(scratch));
  const std::string bad = scratch.file("bad.safetensors");
  write_bytes(bad, good_bytes.substr(0, good_bytes.size() - 5));
  CHECK_THROWS_WITH_AS(tg::map_safetensors(bad),
                       doctest::Contains("tensor 'a' ends at byte 8 of the data but the file holds only 7 bytes"),
                       tg::Error);
  write_bytes(bad, "");
  CHECK_THROWS_WITH_AS(tg::map_safetensors(bad), doctest::Contains("0 bytes long, too short"), tg::Error);
  CHECK(mappings_of(bad) == 0);
}

TEST_CASE("Storage::adopt: the release function runs once, with the last handle") {
  alignas(tg::Storage::kAlignment) static float memory[16] = {1, 2, 3};
  int releases = 0;
  {
    std::shared_ptr<tg::Storage> storage = tg::Storage::adopt(memory, sizeof memory, [&] { ++releases; });
    const Tensor view = Tensor::view_of(storage, DType::Float32, {3}, {1}, 0);
    storage.reset();
    CHECK(view.to_vector<float>() == std::vector<float>{1, 2, 3});
    CHECK(releases == 0);
  }
  CHECK(releases == 1);
  CHECK_THROWS_WITH_AS(tg::Storage::adopt(memory + 1, 4, [] {}), doctest::Contains("is not 64-byte aligned"),
                       tg::Error);
}

TEST_CASE("write_file_atomically: replaces the file whole, leaves no temporary file, names the failure") {
  ScratchDirectory scratch;
  const std::string path = scratch.file("config.json");
  tg::write_file_atomically(path, "first", "test");
  tg::write_file_atomically(path, "second, longer", "test");
  CHECK(read_bytes(path) == "second, longer");
  CHECK(std::distance(fs::directory_iterator(scratch.path), fs::directory_iterator()) == 1);
  CHECK_THROWS_WITH_AS(tg::write_file_atomically(scratch.file("missing/config.json"), "x", "export: --out"),
                       doctest::Contains("export: --out: cannot create"), tg::Error);
  {
    tg::AtomicFile uncommitted(path, "test");
    uncommitted.write("half", 4);
  }  // never committed: the old file stays, the temporary one is gone
  CHECK(read_bytes(path) == "second, longer");
  CHECK(std::distance(fs::directory_iterator(scratch.path), fs::directory_iterator()) == 1);
}

TEST_CASE("remove_stale_temporary_files: a killed writer's temporary files go, a live writer's and others stay") {
  ScratchDirectory scratch;
  const std::string target = scratch.file("model.safetensors");
  const std::string dead = target + ".tmp.4999999.3";  // above Linux's largest pid: no such process
  const std::string live = target + ".tmp." + std::to_string(::getpid()) + ".0";
  const std::string unrelated = scratch.file("best.safetensors.tmp.4999999.1");
  const std::string not_ours = target + ".tmp.notes";
  for (const std::string& path : {dead, live, unrelated, not_ours}) write_bytes(path, "x");
  CHECK(tg::remove_stale_temporary_files(target) == 1);
  CHECK_FALSE(fs::exists(dead));
  CHECK(fs::exists(live));
  CHECK(fs::exists(unrelated));  // another target's: removed when that one is cleaned
  CHECK(fs::exists(not_ours));
  CHECK(tg::remove_stale_temporary_files(scratch.file("best.safetensors")) == 1);
}
