// Limits that keep a hostile template from exhausting memory or running
// forever. A chat template comes from a downloaded tokenizer_config.json, so
// `{% for i in range(99999) %}{% for j in range(99999) %}` or a string doubled
// in a loop must end in an error, not a hang or an out-of-memory kill.
#pragma once

#include <cstddef>
#include <string>

#include "tinygpt/tokenizer/jinja/value.h"

namespace tg::tokenizer::jinja {

struct RenderLimits {
  std::size_t max_output_bytes = std::size_t{16} << 20;  // also the longest string a template may build
  std::size_t max_work_bytes = std::size_t{256} << 20;   // bytes of strings and list items built, summed
  std::size_t max_loop_iterations = 1'000'000;           // summed over every loop of the render
  std::size_t max_list_items = 1'000'000;                // the longest list a template may build
  int max_call_depth = 64;                               // nested macro calls
};

// What a render has spent so far; throws Failure when a limit is passed.
class Budget {
 public:
  explicit Budget(const RenderLimits& limits) : limits_(limits) {}
  const RenderLimits& limits() const { return limits_; }

  // A string of `bytes` is about to be built.
  void spend_string(std::size_t bytes) {
    check_string(bytes);
    spend_work(bytes);
  }
  // A string being built has reached `bytes` (charged once it is done).
  void check_string(std::size_t bytes) const {
    if (bytes > limits_.max_output_bytes)
      throw Failure("a string of " + std::to_string(bytes) + " bytes exceeds the limit of " +
                    std::to_string(limits_.max_output_bytes));
  }
  // A list of `items` is about to be built.
  void spend_list(std::size_t items) {
    if (items > limits_.max_list_items)
      throw Failure("a list of " + std::to_string(items) + " items exceeds the limit of " +
                    std::to_string(limits_.max_list_items));
    spend_work(items * sizeof(Value));
  }
  // An operation is about to read `bytes` of a string (a method, a filter, an
  // index): charged, so a loop cannot scan a 16 MiB string a million times.
  void spend_scan(std::size_t bytes) { spend_work(bytes); }
  void spend_iteration() {
    if (++iterations_ > limits_.max_loop_iterations)
      throw Failure("the template ran more than " + std::to_string(limits_.max_loop_iterations) + " loop iterations");
  }

 private:
  void spend_work(std::size_t bytes) {
    work_ += bytes;
    if (work_ > limits_.max_work_bytes)
      throw Failure("the template built more than " + std::to_string(limits_.max_work_bytes) +
                    " bytes of strings and lists");
  }

  const RenderLimits& limits_;
  std::size_t work_ = 0;
  std::size_t iterations_ = 0;
};

}  // namespace tg::tokenizer::jinja
