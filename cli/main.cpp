// tinygpt: train, sample, tokenize, ... Every subcommand has --help.
// Errors end the program with one readable line on stderr and an exit code:
// 0 success, 1 runtime error, 2 usage error (cli/usage_errors.h); a training run
// stopped by Ctrl-C or SIGTERM saves, then exits 130 or 143 (cli/stop_signals.h).
#include <cstdio>
#include <exception>
#include <filesystem>
#include <new>
#include <iostream>
#include <string>
#include <utility>

#include "cli/commands.h"
#include "cli/flag_checks.h"
#include "cli/stop_signals.h"
#include "cli/usage_errors.h"
#include "cli/version.h"
#include "tinygpt/distributed/job.h"
#include "tinygpt/distributed/mpi_communicator.h"
#include "tinygpt/tensor/runtime/process_environment.h"
#include "tinygpt/tensor/runtime/thread_governor.h"

namespace {

// The library's errors start with the function that raised them ("map_safetensors: ...");
// a user reads what was being done instead.
std::string in_plain_words(std::string message) {
  static constexpr std::pair<const char*, const char*> kPlainWords[] = {
      {"map_safetensors: ", "cannot load "},   {"load_safetensors: ", "cannot load "},
      {"save_safetensors: ", ""},             {"load_hf_gpt2: ", "GPT-2 weights: "},
      {"walk_through: ", "explain: "},         {"GPTConfig: ", "model config: "},
  };
  for (const auto& [internal, plain] : kPlainWords)
    if (message.rfind(internal, 0) == 0) return plain + message.substr(std::char_traits<char>::length(internal));
  return message;
}

// Reports a runtime error. In a job of several ranks the line names the rank,
// and the whole job is ended (the other ranks may be waiting for this one);
// an error every rank raised alike (dist::JobError) is reported by rank 0 alone
// and every rank exits in order.
int report_error(const std::string& library_message, bool every_rank_raised_it) {
  const std::string message = in_plain_words(library_message);
  tg::dist::Communicator* job = tg::dist::joined_job();
  if (!job || job->size() == 1) {
    std::cerr << "tinygpt: error: " << message << "\n";
    return tg::cli::kRuntimeErrorExit;
  }
  if (every_rank_raised_it) {
    if (job->is_root()) std::cerr << "tinygpt: error: " << message << "\n";
    return tg::cli::kRuntimeErrorExit;
  }
  std::cerr << "tinygpt: error: rank " << job->rank() << " of " << job->size() << ": " << message
            << "\ntinygpt: ending all " << job->size() << " ranks of the job\n" << std::flush;
  job->abort(tg::cli::kRuntimeErrorExit);
  return tg::cli::kRuntimeErrorExit;  // not reached: abort ends the process
}

}  // namespace

int main(int argc, char** argv) {
  tg::dist::enable_mpi_jobs();  // under mpirun, one rank of a data-parallel job (distributed/job.h)
  tg::tune_process_environment(argv);  // may start the program again with its thread and BLAS settings
  tg::start_adapting_threads_to_load();  // one thread fewer while another process takes a core (tensor/runtime/thread_governor.h)
  CLI::App app{"tinygpt: a from-scratch tensor and autograd engine with a GPT on top"};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "Show help for every subcommand");
  app.set_version_flag("--version", [] { return tg::cli::version_text(); },
                       "Print the version, the vector extensions and the BLAS in use");
  tg::cli::add_demo_command(app);
  tg::cli::add_tokenize_command(app);
  tg::cli::add_bpe_train_command(app);
  tg::cli::add_prepare_command(app);
  tg::cli::add_train_command(app);
  tg::cli::add_sample_command(app);
  tg::cli::add_chat_command(app);
  tg::cli::add_eval_command(app);
  tg::cli::add_explain_command(app);
  tg::cli::add_plot_command(app);
  tg::cli::add_export_command(app);
  tg::cli::add_quantize_command(app);
  tg::cli::add_serve_command(app);
  tg::cli::check_numbers_are_numbers(app);
  if (const std::string unknown = tg::cli::unknown_command_message(app, argc, argv); !unknown.empty()) {
    std::cerr << "tinygpt: error: " << unknown << "\n";
    return tg::cli::kUsageErrorExit;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& help) {
    return app.exit(help);
  } catch (const CLI::CallForAllHelp& help) {
    return app.exit(help);
  } catch (const CLI::CallForVersion& version) {
    return app.exit(version);
  } catch (const tg::cli::StoppedBySignal& stopped) {
    return stopped.exit_code();
  } catch (const CLI::ParseError& error) {
    // One line, like every other error (CLI11's exit() would add a second one).
    std::cerr << "tinygpt: error: " << tg::cli::usage_error_message(app, error) << "\n";
    return tg::cli::kUsageErrorExit;
  } catch (const std::bad_alloc&) {
    return report_error("out of memory: the run needs more memory than this machine could give it "
                        "(a smaller model, batch or context needs less)", false);
  } catch (const std::filesystem::filesystem_error& error) {
    // The library's own words are "filesystem error: status: ..."; ours name the path and the reason.
    return report_error("cannot use '" + error.path1().string() + "': " + error.code().message(), false);
  } catch (const tg::dist::JobError& error) {
    return report_error(error.what(), true);
  } catch (const std::exception& error) {
    return report_error(error.what(), false);
  }
  // What went to standard output must have arrived: a full disk or /dev/full fails the command.
  std::cout.flush();
  if (!std::cout.good() || std::fflush(stdout) != 0 || std::ferror(stdout))
    return report_error("cannot write the output to standard output (is the disk full?)", false);
  return 0;
}
