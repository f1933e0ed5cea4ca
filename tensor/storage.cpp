#include "tensor/storage.h"

#include <cstdlib>
#include <new>

namespace tg {

std::shared_ptr<Storage> Storage::allocate(size_t bytes) {
  const size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  void* data = std::aligned_alloc(kAlignment, rounded == 0 ? kAlignment : rounded);
  if (data == nullptr) throw std::bad_alloc();
  return std::shared_ptr<Storage>(new Storage(data, bytes));
}

Storage::~Storage() { std::free(data_); }

}  // namespace tg
