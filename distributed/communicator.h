// Communicator: the collective operations data-parallel training needs, over
// every process (rank) of a job. Each rank holds the whole model and trains on
// its own share of each batch; the ranks meet only in these calls, which every
// rank must make in the same order with the same sizes (as in MPI, whose
// collectives they are: distributed/mpi_communicator.cpp).
//
// A single process is a job of one rank (SingleProcess): every collective is
// then the identity, so the training loop has no "if distributed" branches.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "tinygpt/tensor/error.h"
#include "tinygpt/tensor/tensor.h"

namespace tg::dist {

// An error every rank of a job raises at the same point, from values they all
// share (a loss reduced over the ranks, settings compared between them): rank 0
// reports it and every rank ends in order. Any other error on one rank ends the
// whole job through Communicator::abort.
class JobError : public Error {
 public:
  using Error::Error;
};

// check() for conditions every rank evaluates alike: throws JobError.
template <class... Parts>
void check_on_every_rank(bool condition, const Parts&... parts) {
  if (condition) return;
  std::ostringstream message;
  (detail::write_part(message, parts), ...);
  throw JobError(message.str());
}

class Communicator {
 public:
  virtual ~Communicator() = default;

  virtual int rank() const = 0;  // 0 .. size() - 1
  virtual int size() const = 0;
  bool is_root() const { return rank() == 0; }  // the rank that prints, logs and writes checkpoints
  // "single process", or "2 ranks over Open MPI v4.1.4".
  virtual std::string description() const = 0;

  // Afterwards every rank holds the element-wise sum over the ranks of `values`.
  // The sum is the same on every rank, bit for bit.
  virtual void all_reduce_sum(std::span<float> values) = 0;
  virtual void all_reduce_sum(std::span<double> values) = 0;
  // The `values` of every rank (the same count on each), rank 0's first.
  virtual std::vector<uint64_t> all_gather(std::span<const uint64_t> values) = 0;

  // Ends every process of the job with `exit_code`, never returning: after an
  // error on one rank, so that the others do not wait forever for it.
  [[noreturn]] virtual void abort(int exit_code) = 0;
};

class SingleProcess final : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::string description() const override { return "single process"; }
  void all_reduce_sum(std::span<float>) override {}
  void all_reduce_sum(std::span<double>) override {}
  std::vector<uint64_t> all_gather(std::span<const uint64_t> values) override {
    return {values.begin(), values.end()};
  }
  [[noreturn]] void abort(int exit_code) override;
};

// The one SingleProcess (it has no state).
Communicator& single_process();

// `values` (a contiguous float32 tensor, e.g. the gradient arena's (P,)) becomes
// the mean over the ranks of every rank's `values`, in place.
void all_reduce_mean(Communicator& job, Tensor& values);

}  // namespace tg::dist
