// Checks of number-valued flags that say, in words, what a flag accepts.
//
// CLI11's own (CLI::Range, CLI::PositiveNumber) print their bounds as 309-digit
// numbers ("Value -5 not in range 0.000000 to 17976931348623157...") and call a
// word that is no number out of range. Each message here reads after the flag's
// name, which main() puts in front of it:
//
//   --tokens must be a positive integer, got -5
//   --top-p must be a number in (0, 1], got abc
//
// CLI11 runs a flag's checks on its text before converting it, so "abc" gets
// the same sentence as "-5".
#pragma once
#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

namespace tg::cli {

CLI::Validator positive_integer();
CLI::Validator non_negative_integer();
CLI::Validator integer_in(int64_t low, int64_t high);  // [low, high]
CLI::Validator positive_number();                      // (0, inf), finite
CLI::Validator non_negative_number();                  // [0, inf), finite
CLI::Validator fraction_below_one();                   // [0, 1)
CLI::Validator fraction_up_to_one();                   // (0, 1]

// Gives every number-valued flag of `app` and of its subcommands that has no
// check of its own one that the value is a number at all ("--iters must be an
// integer, got abc"), in place of CLI11's "Could not convert: --iters = abc".
void check_numbers_are_numbers(CLI::App& app);

}  // namespace tg::cli
