#include "tinygpt/inspect/metrics_file.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>

#include "tinygpt/tensor/error.h"

namespace tg::inspect {

namespace {

using Field = MetricsLineFields::Field;
using Kind = MetricsLineFields::Kind;

// Losses and learning rates are far below this; a value past it (1e308) is no run's, and a
// chart's padded range around it would overflow to infinity.
constexpr double kLargestPlottedValue = 1e30;
// A metrics line is a few hundred bytes; a longer one is no metrics line, and is
// not held whole (a file of one endless line would otherwise fill memory).
constexpr std::size_t kLongestLine = std::size_t{1} << 20;
constexpr std::size_t kBlockBytes = std::size_t{1} << 20;

// The field of `fields` that a key names, or null for a key the plot does not read.
Field* field_named(MetricsLineFields& fields, std::string_view key) {
  if (key == "iter") return &fields.iter;
  if (key == "train_loss") return &fields.train_loss;
  if (key == "val_loss") return &fields.val_loss;
  if (key == "lr") return &fields.lr;
  if (key == "eval") return &fields.eval;
  return nullptr;
}

// A left-to-right reader of the JSON grammar (RFC 8259) restricted to what
// scan_flat_metrics_line accepts. Each step returns false where the text leaves
// that subset, which is where the scan hands the line to nlohmann.
class FlatScanner {
 public:
  explicit FlatScanner(std::string_view text) : next_(text.data()), end_(text.data() + text.size()) {}

  void skip_whitespace() {
    while (next_ < end_ && (*next_ == ' ' || *next_ == '\t' || *next_ == '\n' || *next_ == '\r')) ++next_;
  }
  bool at_end() const { return next_ == end_; }
  bool take(char c) {
    if (next_ == end_ || *next_ != c) return false;
    ++next_;
    return true;
  }

  // A string of printable ASCII without escapes (no '"' or '\' inside).
  bool plain_string(std::string_view& text) {
    if (!take('"')) return false;
    const char* start = next_;
    while (next_ < end_ && *next_ != '"') {
      if (*next_ < 0x20 || *next_ > 0x7E || *next_ == '\\') return false;
      ++next_;
    }
    if (next_ == end_) return false;
    text = std::string_view(start, static_cast<std::size_t>(next_ - start));
    ++next_;
    return true;
  }

  // -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? into `value`, or only checked when `value` is null.
  bool number(double* value) {
    const char* start = next_;
    take('-');
    const char* integer_part = next_;
    if (!take('0') && !digits()) return false;
    const std::ptrdiff_t integer_digits = next_ - integer_part;
    const bool fraction = take('.');
    if (fraction && !digits()) return false;
    const bool exponent = next_ < end_ && (*next_ == 'e' || *next_ == 'E');
    if (exponent) {
      ++next_;
      if (!take('+')) take('-');
      if (!digits()) return false;
    }
    // nlohmann refuses a number beyond double's range (1e400); one without an exponent is below 1e300.
    if (value == nullptr && !exponent && integer_digits < 300) return true;
    // Correctly rounded, as strtod (nlohmann's floats) and an int64 -> double conversion (its integers) are.
    // Out of range (1e400, 1e-400) is left to nlohmann.
    double converted = 0;
    const std::from_chars_result result = std::from_chars(start, next_, converted);
    if (result.ec != std::errc() || result.ptr != next_) return false;
    if (!fraction && !exponent && converted == 0) converted = 0;  // nlohmann reads "-0" as the integer 0, not -0.0
    if (value != nullptr) *value = converted;
    return true;
  }

  bool word(std::string_view text) {
    if (static_cast<std::size_t>(end_ - next_) < text.size() || std::memcmp(next_, text.data(), text.size()) != 0)
      return false;
    next_ += text.size();
    return true;
  }

  char peek() const { return next_ < end_ ? *next_ : '\0'; }

 private:
  bool digits() {
    const char* start = next_;
    while (next_ < end_ && *next_ >= '0' && *next_ <= '9') ++next_;
    return next_ > start;
  }

  const char* next_;
  const char* end_;
};

// One value into `field` (null: a value the plot does not read, only checked to be JSON).
bool scan_value(FlatScanner& scanner, Field* field) {
  Field value;
  std::string_view text;
  switch (scanner.peek()) {
    case '"':
      if (!scanner.plain_string(text)) return false;
      value.kind = Kind::other;
      break;
    case 't':
    case 'f':
      value.kind = Kind::boolean;
      value.boolean = scanner.peek() == 't';
      if (!scanner.word(value.boolean ? "true" : "false")) return false;
      break;
    case 'n':
      if (!scanner.word("null")) return false;
      value.kind = Kind::other;
      break;
    default:
      value.kind = Kind::number;
      if (!scanner.number(field ? &value.number : nullptr)) return false;
  }
  if (field) *field = value;  // a repeated key: the last one counts, as in nlohmann
  return true;
}

Field field_of(const nlohmann::json& object, const char* key) {
  const auto found = object.find(key);
  if (found == object.end()) return {};
  if (found->is_number()) return {Kind::number, found->get<double>(), false};
  if (found->is_boolean()) return {Kind::boolean, 0, found->get<bool>()};
  return {Kind::other, 0, false};
}

// The lines of a stream, read a block at a time; no line is held past kLongestLine bytes.
class LineReader {
 public:
  LineReader(std::istream& input, const std::string& source) : input_(input), source_(source) {}

  // The next line, without its '\n', as a view valid until the next call; false at the end.
  // `ended` says whether a '\n' ended it (the last line of a file may have none).
  bool next(std::string_view& line, bool& ended) {
    while (true) {
      const char* newline = static_cast<const char*>(
          std::memchr(buffer_.data() + searched_, '\n', buffer_.size() - searched_));
      if (newline != nullptr) {
        const std::size_t length = static_cast<std::size_t>(newline - buffer_.data()) - start_;
        if (length > kLongestLine) fail_too_long();
        line = std::string_view(buffer_.data() + start_, length);
        ended = true;
        start_ = searched_ = start_ + length + 1;
        ++number_;
        return true;
      }
      if (buffer_.size() - start_ > kLongestLine) fail_too_long();
      if (input_.eof()) {
        if (start_ == buffer_.size()) return false;
        line = std::string_view(buffer_.data() + start_, buffer_.size() - start_);
        ended = false;
        start_ = searched_ = buffer_.size();
        ++number_;
        return true;
      }
      read_block();
    }
  }
  int64_t number() const { return number_; }  // of the line returned last, from 1

 private:
  [[noreturn]] void fail_too_long() const {
    fail("metrics '", source_, "' line ", number_ + 1, ": longer than ", kLongestLine >> 20,
         " MB, which no metrics line is");
  }

  void read_block() {
    buffer_.erase(0, start_);  // the part of a line read so far moves to the front
    searched_ = buffer_.size();
    start_ = 0;
    const std::size_t used = buffer_.size();
    buffer_.resize(used + kBlockBytes);
    input_.read(buffer_.data() + used, static_cast<std::streamsize>(kBlockBytes));
    buffer_.resize(used + static_cast<std::size_t>(input_.gcount()));
    check(!input_.bad(), "metrics '", source_, "': cannot read the file after line ", number_);
  }

  std::istream& input_;
  const std::string& source_;
  std::string buffer_;
  std::size_t start_ = 0;     // where the next line starts in buffer_
  std::size_t searched_ = 0;  // no '\n' in buffer_[start_, searched_)
  int64_t number_ = 0;
};

// Adds `point` to `points`, kept sorted by iteration: a repeated or earlier
// iteration (a resumed run) first drops the points from that iteration on.
template <class Point>
void add_point(std::deque<Point>& points, const Point& point) {
  if (!points.empty() && point.iter <= points.back().iter) {
    const auto from = std::lower_bound(points.begin(), points.end(), point.iter,
                                       [](const Point& kept, int64_t iter) { return kept.iter < iter; });
    points.erase(from, points.end());
  }
  points.push_back(point);
}

// Checks one line's fields and adds its point. `where` ("metrics 'F' line N") is made only for an error.
template <class Where>
void add_line(const MetricsLineFields& fields, const Where& where, TrainingMetrics& metrics) {
  const auto number = [&](const Field& field, const char* name) {
    if (field.kind != Kind::number) fail(where(), ": no number \"", name, "\"");
    if (!(std::abs(field.number) <= kLargestPlottedValue))
      fail(where(), ": \"", name, "\" is ", field.number, ", beyond any loss, learning rate or iteration a run logs");
    return field.number;
  };
  const auto iter = static_cast<int64_t>(number(fields.iter, "iter"));
  if (fields.eval.kind != Kind::absent && fields.eval.kind != Kind::boolean)
    fail(where(), ": \"eval\" must be true or false");
  if (fields.eval.boolean) {
    if (fields.lr.kind != Kind::absent && fields.lr.kind != Kind::number) fail(where(), ": no number \"lr\"");
    add_point(metrics.evals, EvalMetrics{iter, number(fields.train_loss, "train_loss"),
                                         number(fields.val_loss, "val_loss"), fields.lr.number});
  } else {
    add_point(metrics.steps, StepMetrics{iter, number(fields.train_loss, "train_loss"), number(fields.lr, "lr")});
  }
}

}  // namespace

std::optional<MetricsLineFields> scan_flat_metrics_line(std::string_view line) {
  FlatScanner scanner(line);
  MetricsLineFields fields;
  scanner.skip_whitespace();
  if (!scanner.take('{')) return std::nullopt;
  scanner.skip_whitespace();
  if (!scanner.take('}')) {
    do {
      std::string_view key;
      scanner.skip_whitespace();
      if (!scanner.plain_string(key)) return std::nullopt;
      scanner.skip_whitespace();
      if (!scanner.take(':')) return std::nullopt;
      scanner.skip_whitespace();
      if (!scan_value(scanner, field_named(fields, key))) return std::nullopt;
      scanner.skip_whitespace();
    } while (scanner.take(','));
    if (!scanner.take('}')) return std::nullopt;
  }
  scanner.skip_whitespace();
  if (!scanner.at_end()) return std::nullopt;
  return fields;
}

MetricsLineFields metrics_line_fields(const nlohmann::json& object) {
  return {field_of(object, "iter"), field_of(object, "train_loss"), field_of(object, "val_loss"),
          field_of(object, "lr"), field_of(object, "eval")};
}

TrainingMetrics parse_metrics(std::istream& lines, const std::string& source) {
  TrainingMetrics metrics;
  LineReader reader(lines, source);
  std::string_view text;
  for (bool ended; reader.next(text, ended);) {
    if (text.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    const auto where = [&] { return "metrics '" + source + "' line " + std::to_string(reader.number()); };
    if (const std::optional<MetricsLineFields> fields = scan_flat_metrics_line(text)) {
      add_line(*fields, where, metrics);
      continue;
    }
    const nlohmann::json line = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    // A last line without its newline that does not parse was cut short: the run was killed or ran out of disk
    // space while writing it, or is writing it now. train --resume drops it too (training/train_log.cpp).
    if (line.is_discarded() && !ended) break;
    if (!line.is_object()) fail(where(), ": not a JSON object: ", text.substr(0, 60));
    add_line(metrics_line_fields(line), where, metrics);
  }
  check(!metrics.steps.empty() || !metrics.evals.empty(), "metrics '", source, "': no step or evaluation lines");
  return metrics;
}

TrainingMetrics read_metrics(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  check(file.good(), "metrics '", path, "': cannot open the file");
  return parse_metrics(file, path);
}

}  // namespace tg::inspect
