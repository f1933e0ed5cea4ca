#include "tinygpt/inspect/text_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <sstream>

#include "tinygpt/inspect/format.h"
#include "tinygpt/inspect/stage_descriptions.h"

namespace tg::inspect {

namespace {

constexpr size_t kWidth = 100;           // columns of the terminal we write for
constexpr int64_t kHeadRows = 5;         // a slice shows the first rows ...
constexpr int64_t kTailRows = 3;         // ... and the last ones
constexpr int64_t kHeadColumns = 6;      // likewise for columns
constexpr int64_t kTailColumns = 2;
constexpr int64_t kHeatmapPositions = 48;  // heatmaps show at most this many positions
constexpr size_t kTokenColumn = 8;       // characters of a token shown in tables
constexpr size_t kBarWidth = 20;

std::string format(const char* pattern, double value) {
  char text[48];
  std::snprintf(text, sizeof text, pattern, value);
  return text;
}

// A probability in 5 characters: 0.254, or 2e-05 when it is that small.
std::string probability_text(double probability) {
  return format(probability >= 1e-3 || probability == 0 ? "%5.3f" : "%5.0e", probability);
}

// A value in a 9-character column, like PyTorch prints them.
std::string cell(double value) {
  if (std::isinf(value)) return value < 0 ? "     -inf" : "      inf";
  // Padded to 9: with two significant digits in exponent form a negative value keeps a space before it.
  char padded[48];
  std::snprintf(padded, sizeof padded, "%9s", table_value(value).c_str());
  return padded;
}

size_t display_width(const std::string& text) {  // code points, not bytes
  return static_cast<size_t>(std::count_if(text.begin(), text.end(), [](char byte) { return (byte & 0xC0) != 0x80; }));
}

// 'text' in quotes, cut to `limit` characters (never inside a UTF-8 character), padded to `limit` + 2.
std::string quoted(const std::string& text, size_t limit = kTokenColumn) {
  std::string clipped;
  size_t characters = 0;
  for (char byte : text) {
    const bool starts_character = (byte & 0xC0) != 0x80;
    if (starts_character && ++characters > limit) break;
    clipped += byte;
  }
  const std::string result = "'" + clipped + "'" + (characters > limit ? "~" : "");
  return result + std::string(limit + 3 > display_width(result) ? limit + 3 - display_width(result) : 0, ' ');
}

std::string bar(double value, double largest) {
  const size_t length = largest > 0 ? static_cast<size_t>(std::lround(kBarWidth * value / largest)) : 0;
  return std::string(length, '#') + std::string(kBarWidth - length, ' ');
}

// Words of `text` after `first`, wrapped at kWidth; later lines start with as many spaces.
void wrap(std::ostream& out, const std::string& first, const std::string& text) {
  const std::string indent(first.size(), ' ');
  std::istringstream words(text);
  std::string word, line = first;
  while (words >> word) {
    if (line.size() > indent.size() && line.size() + 1 + word.size() > kWidth) {
      out << line << "\n";
      line = indent;
    }
    line += (line.size() > indent.size() ? " " : "") + word;
  }
  if (line.size() > indent.size()) out << line << "\n";
}

// The indices a slice of `size` shows: the first `head`, then the last `tail` (-1 marks the gap).
std::vector<int64_t> shown_indices(int64_t size, int64_t head, int64_t tail) {
  std::vector<int64_t> indices;
  if (size <= head + tail) {
    for (int64_t i = 0; i < size; ++i) indices.push_back(i);
    return indices;
  }
  for (int64_t i = 0; i < head; ++i) indices.push_back(i);
  indices.push_back(-1);
  for (int64_t i = size - tail; i < size; ++i) indices.push_back(i);
  return indices;
}

// "  3 'e'       " for a row that is a position, "  row 3       " otherwise.
std::string row_label(const Walkthrough& walkthrough, int64_t row, bool rows_are_positions) {
  if (rows_are_positions) return format("%4.0f ", static_cast<double>(row)) + quoted(walkthrough.tokens[row].text, 6);
  return format("  row %-9.0f", static_cast<double>(row));
}

// The first (rows, columns) matrix of a tensor's last two dims, elided in the middle.
void print_slice(std::ostream& out, const Walkthrough& walkthrough, const ShownTensor& shown) {
  const Tensor& value = shown.value;
  const std::vector<float> values = value.to_vector<float>();
  const int64_t columns = value.dim() >= 1 ? value.size(-1) : 1;
  const int64_t rows = value.dim() >= 2 ? value.size(-2) : 1;
  const int64_t slices = value.numel() / std::max<int64_t>(rows * columns, 1);
  const bool rows_are_positions = value.dim() >= 2 && rows == static_cast<int64_t>(walkthrough.tokens.size());
  out << "  " << shown.label << " " << shape_text(value.shape())
      << (slices > 1 ? ", the first of " + std::to_string(slices) + " slices" : "") << ":\n";
  const std::vector<int64_t> column_indices = shown_indices(columns, kHeadColumns, kTailColumns);
  for (int64_t row : shown_indices(rows, kHeadRows, kTailRows)) {
    if (row < 0) {
      out << "    ...\n";
      continue;
    }
    std::string line = "  " + row_label(walkthrough, row, rows_are_positions) + " ";
    for (int64_t column : column_indices)
      line += column < 0 ? "   ..." : cell(values[static_cast<size_t>(row * columns + column)]);
    out << line << "\n";
  }
}

bool masked_cell(const Stage& stage, int64_t query, int64_t key, float value) {
  const bool after_mask = stage.id.ends_with(".mask") || stage.id.ends_with(".weights");
  return std::isinf(value) || (after_mask && key > query);
}

// Heads side by side, one character (or two, for short prompts) per cell.
void print_heatmaps(std::ostream& out, const Walkthrough& walkthrough, const Stage& stage) {
  if (stage.tensors.empty()) return;
  const int64_t time = stage.tensors[0].value.size(-1);
  const int64_t shown = std::min(time, kHeatmapPositions);
  const size_t cell_width = shown <= 24 ? 2 : 1;
  const size_t prefix_width = 2 + display_width(row_label(walkthrough, 0, true)) + 1;
  const size_t block_width = static_cast<size_t>(shown) * cell_width + 4;  // "|cells|  "
  const size_t per_line = std::max<size_t>(1, (kWidth - prefix_width) / block_width);
  const bool probabilities = stage.id.ends_with(".weights");
  const size_t levels = std::strlen(kHeatmapShades);

  for (size_t first = 0; first < stage.tensors.size(); first += per_line) {
    const size_t last = std::min(stage.tensors.size(), first + per_line);
    std::string header(prefix_width, ' ');
    for (size_t h = first; h < last; ++h) {
      std::string title = stage.tensors[h].label;
      header += title + std::string(block_width > title.size() ? block_width - title.size() : 1, ' ');
    }
    out << header << "\n";
    std::vector<std::vector<float>> values;
    std::vector<std::pair<float, float>> ranges;  // each head's finite (min, max): shades for the scores
    for (size_t h = first; h < last; ++h) {
      values.push_back(stage.tensors[h].value.to_vector<float>());
      float low = INFINITY, high = -INFINITY;
      for (float value : values.back())
        if (std::isfinite(value)) low = std::min(low, value), high = std::max(high, value);
      ranges.emplace_back(low, high);
    }
    for (int64_t query = 0; query < shown; ++query) {
      std::string line = "  " + row_label(walkthrough, query, true) + " ";
      for (size_t h = 0; h < values.size(); ++h) {
        line += "|";
        for (int64_t key = 0; key < shown; ++key) {
          const float value = values[h][static_cast<size_t>(query * time + key)];
          char mark = kMaskedCell;
          if (!masked_cell(stage, query, key, value)) {
            const auto [low, high] = ranges[h];
            const double level = probabilities ? value : (high > low ? (value - low) / (high - low) : 0.0);
            mark = kHeatmapShades[std::clamp<size_t>(static_cast<size_t>(std::lround(level * (levels - 1))), 0, levels - 1)];
          }
          line += std::string(cell_width, mark);
        }
        line += "|  ";
      }
      out << line << "\n";
    }
  }
  out << "  shades '" << kHeatmapShades << "': "
      << (probabilities ? "weight 0 -> 1" : "each head's lowest -> highest score") << "; '" << kMaskedCell
      << "' masked (key after query)"
      << (time > shown ? "; the first " + std::to_string(shown) + " of " + std::to_string(time) + " positions" : "")
      << "\n";
}

void print_tokens(std::ostream& out, const Walkthrough& walkthrough) {
  std::string line = "  ";
  for (const TokenRow& token : walkthrough.tokens) {
    std::string entry = std::to_string(token.position);  // "[3] 'e' 43"
    entry.insert(0, 1, '[');
    entry += "] '" + token.text + "' " + std::to_string(token.id);
    const bool prompt_ends = token.position + 1 == walkthrough.prompt_tokens;
    if (prompt_ends && static_cast<int64_t>(walkthrough.tokens.size()) > walkthrough.prompt_tokens) entry += "  |";
    if (display_width(line) + display_width(entry) + 3 > kWidth) {
      out << line << "\n";
      line = "  ";
    }
    line += entry + "   ";
  }
  out << line << "\n";
  if (static_cast<int64_t>(walkthrough.tokens.size()) > walkthrough.prompt_tokens)
    out << "  ('|' ends the prompt; the target follows)\n";
}

// With a target: the loss's gradient reaching the stage's output, its norm and
// its values laid out as the stage's (an attention stage: the first head shown).
void print_gradients(std::ostream& out, const Walkthrough& walkthrough, const Stage& stage) {
  if (stage.gradients.empty()) return;
  double squares = 0, largest = 0;
  for (const ShownTensor& gradient : stage.gradients)
    for (const float value : gradient.value.to_vector<float>()) {
      squares += static_cast<double>(value) * value;
      largest = std::max(largest, std::abs(static_cast<double>(value)));
    }
  out << "  grad     dLoss/d(output): norm " << number(std::sqrt(squares)) << "   largest |value| " << number(largest)
      << (stage.gradients.size() > 1 ? "   (the heads shown together)" : "") << "\n";
  const size_t shown = stage.view == StageView::Attention ? 1 : stage.gradients.size();
  for (size_t i = 0; i < shown; ++i)
    print_slice(out, walkthrough, {"dLoss/d(" + stage.gradients[i].label + ")", stage.gradients[i].value});
}

void print_stage(std::ostream& out, const Walkthrough& walkthrough, const Stage& stage) {
  std::string title = "--- " + stage.title + "  [" + stage.id + "]  (" + stage.group + ") ";
  out << "\n" << title << std::string(kWidth > title.size() ? kWidth - title.size() : 3, '-') << "\n";
  out << "  formula  " << stage.formula << "\n";
  wrap(out, "           ", stage.explanation);
  out << "  code     " << stage.implementation << "\n";
  if (stage.id == "tokens") {  // the statistics of ids say nothing; the table says more
    out << "  shapes   text -> " << shape_text(stage.output_shape) << "\n";
    for (const std::string& note : stage.notes) wrap(out, "  note     ", note);
    print_tokens(out, walkthrough);
    return;
  }
  std::string inputs;
  for (const auto& shape : stage.input_shapes) inputs += (inputs.empty() ? "" : ", ") + shape_text(shape);
  out << "  shapes   " << inputs << " -> " << shape_text(stage.output_shape) << "\n";
  const Statistics& statistics = stage.statistics;
  out << "  stats    mean " << number(statistics.mean) << "   std " << number(statistics.std) << "   min "
      << number(statistics.min) << "   max " << number(statistics.max) << "\n";
  for (const std::string& note : stage.notes) wrap(out, "  note     ", note);
  if (stage.view == StageView::Attention) {
    print_heatmaps(out, walkthrough, stage);
    if (!stage.tensors.empty()) print_slice(out, walkthrough, stage.tensors[0]);
  } else {
    for (const ShownTensor& shown : stage.tensors) print_slice(out, walkthrough, shown);
  }
  print_gradients(out, walkthrough, stage);
}

void print_section(std::ostream& out, const std::string& title) {
  out << "\n=== " << title << " " << std::string(kWidth > title.size() + 5 ? kWidth - title.size() - 5 : 3, '=') << "\n";
}

void print_predictions(std::ostream& out, const Walkthrough& walkthrough) {
  const size_t top = walkthrough.predictions.empty() ? 0 : walkthrough.predictions[0].top.size();
  print_section(out, "Predictions: the top " + std::to_string(top) + " next tokens after each position");
  for (const PositionPredictions& position : walkthrough.predictions) {
    std::string line = format("%5.0f ", static_cast<double>(position.position)) + quoted(position.token, 6) + " ->";
    for (const Prediction& prediction : position.top)
      line += "  " + quoted(prediction.text, 6) + probability_text(prediction.probability);
    out << line << "\n";
  }
}

void print_loss(std::ostream& out, const LossReport& loss) {
  print_section(out, "Loss on the target");
  out << "  loss " << number(loss.loss) << " (mean cross-entropy, nats)   perplexity " << number(loss.perplexity)
      << "\n  position  target        p(target)    -log p\n";
  for (const TargetProbability& target : loss.targets)
    out << format("  %8.0f  ", static_cast<double>(target.position)) << quoted(target.text)
        << format("  %9.3g", target.probability) << format("  %8.4f", -std::log(target.probability)) << "\n";

  print_section(out, "Gradients: one backward from the loss, layer by layer (output first)");
  double largest_activation = 0, largest_parameter = 0;
  for (const GradientNorm& gradient : loss.gradients) {
    largest_activation = std::max(largest_activation, gradient.activation_norm);
    largest_parameter = std::max(largest_parameter, gradient.parameter_norm);
  }
  out << "  layer            ||dLoss/dx|| entering the layer    ||dLoss/dparameters||\n";
  for (const GradientNorm& gradient : loss.gradients) {
    std::string name = gradient.layer;
    name.resize(std::max<size_t>(name.size(), 15), ' ');
    out << "  " << name << "  " << format("%10.4g ", gradient.activation_norm)
        << bar(gradient.activation_norm, largest_activation) << "   " << format("%10.4g ", gradient.parameter_norm)
        << bar(gradient.parameter_norm, largest_parameter) << "\n";
  }
  out << "  (for the embeddings: the gradient reaching the token embedding rows)\n";
}

void print_attribution(std::ostream& out, const Walkthrough& walkthrough) {
  const Attribution& attribution = walkthrough.attribution;
  std::string token = quoted(attribution.text);
  token.erase(token.find_last_not_of(' ') + 1);  // the column's padding
  print_section(out, "Why " + token + " after position " + std::to_string(attribution.position) + ": gradient x input");
  wrap(out, "  ",
       "Each position's share of the logit of the top next token (" + number(attribution.logit) +
           "): the sum over channels of the stream entering block 0 times the logit's gradient there. Positive "
           "pushes the prediction up, negative down; a first-order estimate over the whole model.");
  double largest = 0;
  for (const double score : attribution.scores) largest = std::max(largest, std::abs(score));
  for (size_t s = 0; s < attribution.scores.size(); ++s) {
    std::string line = "  " + row_label(walkthrough, static_cast<int64_t>(s), true) + " " + cell(attribution.scores[s]) +
                       "  " + bar(std::abs(attribution.scores[s]), largest) +
                       (attribution.scores[s] < 0 ? " lowers it" : "");
    line.erase(line.find_last_not_of(' ') + 1);
    out << line << "\n";
  }
}

void print_causality(std::ostream& out, const Walkthrough& walkthrough) {
  const CausalityCheck& causality = walkthrough.causality;
  print_section(out, "Causality: change the last token, the earlier logits must not move");
  out << "  position " << causality.changed_position << ": '" << causality.original << "' replaced by '"
      << causality.replacement << "', GPT::forward run again\n";
  if (causality.changed_position > 0)
    out << "  max |change of logits| at positions 0 .. " << causality.changed_position - 1 << ": "
        << number(causality.max_change_earlier)
        << (causality.max_change_earlier == 0 ? "  (exactly 0: no position sees a later one)" : "  (NOT 0: a leak!)")
        << "\n";
  else
    out << "  (a single token: there are no earlier positions)\n";
  out << "  max |change of logits| at position " << causality.changed_position << ": "
      << number(causality.max_change_last) << "\n";
}

}  // namespace

std::string render_text(const Walkthrough& walkthrough) {
  std::ostringstream out;
  const GPTConfig& config = walkthrough.config;
  print_section(out, "tinygpt explain: one prompt through every layer");
  if (!walkthrough.model_description.empty()) out << "  model    " << walkthrough.model_description << "\n";
  out << "  shape    " << config.n_layer << " layers, " << config.n_head << " heads, C = " << config.n_embd
      << ", block_size " << config.block_size << ", V = " << config.vocab_size << ", "
      << positional_encoding_name(config.positional) << " positions, "
      << (config.tie_embeddings ? "tied" : "untied") << " head\n";
  const std::string block = block_description(config);
  if (!block.empty()) wrap(out, "  block    ", block);
  out << "  prompt   \"" << walkthrough.prompt << "\"\n";
  if (!walkthrough.target.empty()) out << "  target   \"" << walkthrough.target << "\"\n";
  out << "  check    max |logits here - GPT::forward| = " << number(walkthrough.forward_match)
      << " (these steps vs the model's own forward)\n";
  if (block.empty())
    out << "  letters  B batch (1 here), T tokens, C channels, NH heads, HS = C / NH, V vocabulary\n";
  else
    wrap(out, "  letters  ",
         "B batch (1 here), T tokens, C channels, NH query heads, KVH key/value heads, HS head size, H MLP hidden "
         "size, V vocabulary");
  for (const Stage& stage : walkthrough.stages) print_stage(out, walkthrough, stage);
  print_predictions(out, walkthrough);
  if (walkthrough.loss) print_loss(out, *walkthrough.loss);
  print_attribution(out, walkthrough);
  print_causality(out, walkthrough);
  return out.str();
}

}  // namespace tg::inspect
