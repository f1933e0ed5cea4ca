// ModuleList: children named by their index ("0", "1", ...), so a stack of
// layers gets paths like blocks.3.attn.qkv.weight. It only registers; the
// owner keeps typed pointers and calls the layers itself.
#pragma once
#include <memory>
#include <string>

#include "tinygpt/nn/module.h"

namespace tg::nn {

class ModuleList : public Module {
 public:
  template <class M>
  std::shared_ptr<M> append(std::shared_ptr<M> module) {
    return register_module(std::to_string(size_++), std::move(module));
  }
  int64_t size() const { return size_; }
  std::string describe() const override { return "ModuleList(" + std::to_string(size_) + ")"; }

 private:
  int64_t size_ = 0;
};

}  // namespace tg::nn
