// LoRA (Hu et al. 2021, "Low-Rank Adaptation"): a frozen Linear plus a
// trained low-rank update,
//
//   y (..., out) = x W^T + b  +  (alpha / r) dropout(x) A^T B^T
//                  the frozen base    the adapter: A (r, in), B (out, r)
//
// A starts as Hugging Face PEFT starts it (Kaiming-uniform with a = sqrt(5),
// that is U(-1/sqrt(in), 1/sqrt(in))) and B at zero, so at step 0 the adapted
// layer computes exactly what its base computes.
//
// A fused Linear whose rows stack several projections (attention's qkv =
// [q; k; v], SwiGLU's c_fc = [gate; up]) gets one (A, B) per row block, as
// PEFT adapts Hugging Face's separate q_proj, k_proj and v_proj; the blocks'
// updates are joined along the output:
//
//   forward                                   backward (autograd: linear_product, cat)
//   u   = dropout(x)              (N, in)
//   h   = u [A_0; A_1; ...]^T     (N, P r)    dA_j = dh_j^T u,   du = dh [A_0; A_1; ...]
//   d_j = h_j B_j^T               (N, rows_j) dB_j = dd_j^T h_j, dh_j = dd_j B_j
//   update = (alpha / r) [d_0 | d_1 | ...]   (N, out)
//
// A block left out of the adaptation contributes zeros to the join.
//
// Parameter names: A and B for a whole Linear, A_q, B_q, A_k, ... for its row
// blocks; under the Linear they read blocks.0.attn.qkv.lora.A_q.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "tinygpt/nn/module.h"
#include "tinygpt/tensor/random.h"

namespace tg::nn {

struct LoraSettings {
  int64_t rank = 8;
  double alpha = 16;   // the update is scaled by alpha / rank
  double dropout = 0;  // on the adapter's input only (the base sees x itself)
};

// One row block of the adapted weight: its name ("q"; empty for a whole Linear),
// its rows, and whether it is adapted (PEFT's usual Llama targets adapt q and v
// but not k: k's rows then get no update and no parameters).
struct LoraPart {
  std::string name;
  int64_t rows;
  bool adapted = true;
};

class LoraAdapter : public Module {
 public:
  // parts' rows add up to the adapted Linear's out_features.
  LoraAdapter(int64_t in_features, std::vector<LoraPart> parts, const LoraSettings& settings,
              std::shared_ptr<Generator> dropout_generator, DType dtype = DType::Float32);

  // Draws every A from `generator` (B stays zero): the adapter starts as the identity update 0.
  void initialize(Generator& generator);

  // x (..., in) -> the update (..., out), to be added to the base's output.
  Tensor forward(const Tensor& x) const;

  const LoraSettings& settings() const { return settings_; }
  double scale() const { return settings_.alpha / static_cast<double>(settings_.rank); }
  const std::vector<LoraPart>& parts() const { return parts_; }
  // The factors of the j-th adapted block (in parts() order, skipping those left out).
  const Tensor& a(size_t adapted_part) const { return a_.at(adapted_part); }  // (r, in)
  const Tensor& b(size_t adapted_part) const { return b_.at(adapted_part); }  // (rows, r)
  int64_t in_features() const { return in_features_; }
  int64_t out_features() const;
  std::string describe() const override;

 private:
  int64_t in_features_;
  std::vector<LoraPart> parts_;
  LoraSettings settings_;
  std::shared_ptr<Generator> dropout_generator_;
  std::vector<Tensor> a_, b_;
};

}  // namespace tg::nn
