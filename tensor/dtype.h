// Element types. float32 is the working type; float64 exists so gradient checks
// can be tight; int64 holds token ids and indices; bool holds masks. bfloat16
// and int8 hold reduced-precision weights (nn/quantize.h): they are stored,
// copied, converted and printed, and the arithmetic ops refuse them (only the
// quantized matrix products in tensor/quantized_matmul.h read them). float16
// is only read from files (published weights) and converted on the way in.
#pragma once
#include <cstddef>
#include <cstdint>

#include "tinygpt/tensor/bfloat16.h"
#include "tinygpt/tensor/float16.h"
#include "tinygpt/tensor/error.h"

namespace tg {

enum class DType : uint8_t { Float32, Float64, Int64, Bool, BFloat16, Int8, Float16 };

constexpr size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::Float32: return 4;
    case DType::Float64: return 8;
    case DType::Int64: return 8;
    case DType::Bool: return 1;
    case DType::BFloat16: return 2;
    case DType::Int8: return 1;
    case DType::Float16: return 2;
  }
  return 0;
}

constexpr const char* dtype_name(DType dtype) {
  switch (dtype) {
    case DType::Float32: return "float32";
    case DType::Float64: return "float64";
    case DType::Int64: return "int64";
    case DType::Bool: return "bool";
    case DType::BFloat16: return "bfloat16";
    case DType::Int8: return "int8";
    case DType::Float16: return "float16";
  }
  return "?";
}

constexpr bool is_floating(DType dtype) { return dtype == DType::Float32 || dtype == DType::Float64; }

template <class T> constexpr DType dtype_of();
template <> constexpr DType dtype_of<float>() { return DType::Float32; }
template <> constexpr DType dtype_of<double>() { return DType::Float64; }
template <> constexpr DType dtype_of<int64_t>() { return DType::Int64; }
template <> constexpr DType dtype_of<bool>() { return DType::Bool; }
template <> constexpr DType dtype_of<bfloat16>() { return DType::BFloat16; }
template <> constexpr DType dtype_of<int8_t>() { return DType::Int8; }
template <> constexpr DType dtype_of<float16>() { return DType::Float16; }

// Calls fn.template operator()<T>() with T the C++ type of `dtype`:
//   visit_floating(x.dtype(), "exp", [&]<class T>() { ... });
template <class Fn>
decltype(auto) visit_floating(DType dtype, const char* op, Fn&& fn) {
  switch (dtype) {
    case DType::Float32: return fn.template operator()<float>();
    case DType::Float64: return fn.template operator()<double>();
    default: fail(op, ": needs a floating-point tensor, got ", dtype_name(dtype));
  }
}

// Numbers: float32, float64 and int64 (not bool).
template <class Fn>
decltype(auto) visit_numeric(DType dtype, const char* op, Fn&& fn) {
  switch (dtype) {
    case DType::Float32: return fn.template operator()<float>();
    case DType::Float64: return fn.template operator()<double>();
    case DType::Int64: return fn.template operator()<int64_t>();
    default: fail(op, ": needs a numeric tensor, got ", dtype_name(dtype));
  }
}

template <class Fn>
decltype(auto) visit_any(DType dtype, Fn&& fn) {
  switch (dtype) {
    case DType::Float32: return fn.template operator()<float>();
    case DType::Float64: return fn.template operator()<double>();
    case DType::Int64: return fn.template operator()<int64_t>();
    case DType::Bool: return fn.template operator()<bool>();
    case DType::BFloat16: return fn.template operator()<bfloat16>();
    case DType::Int8: return fn.template operator()<int8_t>();
    case DType::Float16: return fn.template operator()<float16>();
  }
  fail("unknown dtype");
}

}  // namespace tg
