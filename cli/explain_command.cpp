// tinygpt explain: follows one prompt through every layer of a model and shows
// what each stage computes, with the real numbers (inspect/walkthrough.h).
//
//   tinygpt explain --ckpt runs/shakespeare-char --prompt "ROMEO:" --target " I"
//   tinygpt explain --config cpu-small --prompt "To be" --layer 0 --head 1
//   tinygpt explain --weights gpt2/ --prompt "The cat sat" --html explain.html
//   tinygpt explain --ckpt runs/shakespeare-char --prompt "ROMEO:" --json walk.json
//   tinygpt explain --config cpu-small --prompt "To be" --graph graph.html
//   tinygpt explain --ckpt runs/shakespeare-char --prompt "ROMEO:" --serve --port 8080
//
// stdout gets the report (plain text, or nothing with --html FILE, which writes
// a self-contained web page instead, or --json FILE, every stage's numbers for a
// script, or --graph FILE, the autograd graph of a neuron and of one block with
// backward animated node by node); what was loaded goes to stderr. The live
// page is tinygpt serve's /explain: --serve starts that server on the model
// (cli/serve_command.h) and prints the page's address, the prompt, target and
// block in it.

#include <cctype>
#include <chrono>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/output_paths.h"
#include "cli/flag_checks.h"
#include "cli/model_source.h"
#include "cli/serve_command.h"
#include "cli/usage_errors.h"
#include "tinygpt/inspect/autograd_graph_examples.h"
#include "tinygpt/inspect/autograd_graph_page.h"
#include "tinygpt/inspect/html_report.h"
#include "tinygpt/inspect/text_report.h"
#include "tinygpt/inspect/walkthrough_json.h"
#include "tinygpt/inspect/walkthrough.h"
#include "tinygpt/tensor/io/atomic_file.h"
#include "tinygpt/tensor/error.h"
#include "tinygpt/tensor/runtime/threads.h"
#include "tinygpt/tokenizer/errors.h"

namespace tg::cli {

namespace {

struct ExplainArguments {
  ModelSourceArguments source;
  std::string prompt;
  std::string target;
  int64_t layer = 0;
  int64_t head = 0;
  int64_t top_k = 5;
  std::string html;
  std::string json;
  std::string graph;
  bool shared_scale = false;
  int threads = 0;
  bool serve = false;
  ServeArguments server;  // with --serve: where it listens (its model is `source`)
};

// `text` as a URL's query value: every byte but the unreserved ones (RFC 3986) as %XX.
std::string query_escaped(const std::string& text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string escaped;
  for (const unsigned char byte : text) {
    if (std::isalnum(byte) || byte == '-' || byte == '.' || byte == '_' || byte == '~') {
      escaped += static_cast<char>(byte);
    } else {
      escaped += '%';
      escaped += kHex[byte >> 4];
      escaped += kHex[byte & 15];
    }
  }
  return escaped;
}

// The live page on the model, its fields filled from the flags given: /explain?prompt=...&layer=...
std::string explain_page_path(const CLI::App& command, const ExplainArguments& arguments) {
  std::string query;
  const auto add = [&](const char* name, const std::string& value) {
    query += (query.empty() ? "?" : "&") + std::string(name) + "=" + query_escaped(value);
  };
  if (!arguments.prompt.empty()) add("prompt", arguments.prompt);
  if (!arguments.target.empty()) add("target", arguments.target);
  if (command.count("--layer")) add("layer", std::to_string(arguments.layer));
  if (command.count("--top-k")) add("top_k", std::to_string(arguments.top_k));
  return "/explain" + query;
}

// explain --serve: the live page's server on the model, until Ctrl-C or SIGTERM.
void serve_explain(const CLI::App& command, const ExplainArguments& arguments) {
  std::vector<std::string> pointless;
  for (const char* flag : {"--html", "--json", "--graph", "--shared-scale", "--head"})
    if (command.count(flag)) pointless.emplace_back(flag);
  if (!pointless.empty()) {
    std::string names = pointless[0];
    for (size_t i = 1; i < pointless.size(); i++) names += (i + 1 < pointless.size() ? ", " : " and ") + pointless[i];
    check_usage(false, names, " cannot go with --serve: the page at /explain shows every head, live, and writes no file");
  }
  const LoadedModel loaded = load_model(arguments.source, "explain");
  ServeArguments server = arguments.server;
  server.source = arguments.source;
  const std::string page = explain_page_path(command, arguments);
  serve_model(command, loaded, server, [&](const std::string& address) {
    std::cout << address << page << std::endl;  // the one line on stdout: a script can read it
    std::cerr << "explain: open that address in a browser; Ctrl-C stops the server\n";
  });
}

// --graph: the neuron's graph, then block --layer's on the prompt (and target).
void write_graph_page(const ExplainArguments& arguments, const LoadedModel& loaded) {
  std::vector<inspect::AutogradGraph> graphs = {inspect::neuron_graph()};
  try {
    graphs.push_back(inspect::block_graph(*loaded.model, *loaded.tokenizer, arguments.prompt, arguments.target,
                                          arguments.layer));
  } catch (const tokenizer::TokenizerError& error) {
    fail("explain: ", error.what());
  }
  std::cerr << "explain: " << loaded.description << "\n";
  const std::string page = inspect::render_autograd_graph_page(graphs, loaded.description);
  write_file_atomically(arguments.graph, page, "explain: --graph");
  std::cerr << "explain: wrote " << arguments.graph << " (" << page.size() / 1024 << " KiB): open it in a browser\n";
}

void run_explain(const CLI::App& command, const ExplainArguments& arguments) {
  if (command.count("--threads")) set_num_threads(arguments.threads);
  if (arguments.serve) return serve_explain(command, arguments);
  check_usage(command.count("--prompt") > 0, "--prompt is required");
  for (const auto& [flag, path] : {std::pair{"--html", arguments.html}, std::pair{"--json", arguments.json},
                                   std::pair{"--graph", arguments.graph}})
    if (!path.empty())
      check_output_is_no_input(flag, path, {{"--ckpt", arguments.source.checkpoint},
                                            {"-m/--model", arguments.source.model},
                                            {"--data", arguments.source.data}});
  check(!arguments.prompt.empty(), "explain: --prompt is empty; give the text to follow through the model");
  const LoadedModel loaded = load_model(arguments.source, "explain");
  if (!arguments.graph.empty()) {
    write_graph_page(arguments, loaded);
    return;
  }

  inspect::WalkthroughOptions options;
  if (command.count("--layer")) options.layer = arguments.layer;
  if (command.count("--head")) options.head = arguments.head;
  options.top_k = arguments.top_k;
  options.target = arguments.target;
  options.model_description = loaded.description;
  inspect::Walkthrough walkthrough;
  const auto started = std::chrono::steady_clock::now();
  try {
    walkthrough = inspect::walk_through(*loaded.model, *loaded.tokenizer, arguments.prompt, options);
  } catch (const tokenizer::TokenizerError& error) {
    fail("explain: ", error.what());
  }
  std::cerr << "explain: " << loaded.description << "\n";  // after the checks: an error stays one line

  if (!arguments.json.empty()) {
    const std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - started;
    const std::string json = inspect::walkthrough_json(walkthrough, options, {.milliseconds = took.count()});
    write_file_atomically(arguments.json, json, "explain: --json");
    std::cerr << "explain: wrote " << arguments.json << " (" << json.size() / 1024 << " KiB)\n";
    return;
  }
  if (arguments.html.empty()) {
    std::cout << inspect::render_text(walkthrough) << std::flush;
    return;
  }
  const std::string page = inspect::render_html(walkthrough, {.shared_attention_scale = arguments.shared_scale});
  write_file_atomically(arguments.html, page, "explain: --html");
  std::cerr << "explain: wrote " << arguments.html << " (" << page.size() / 1024 << " KiB): open it in a browser\n";
}

}  // namespace

void add_explain_command(CLI::App& app) {
  auto arguments = std::make_shared<ExplainArguments>();
  CLI::App* command =
      app.add_subcommand("explain", "Follow a prompt through every layer of a model, with the numbers at each stage");
  add_model_source_options(*command, arguments->source, /*fresh_models=*/true);
  command->add_option("--prompt", arguments->prompt, "Text to follow through the model (with --serve: the page's first)");
  command->add_option("--target", arguments->target,
                      "Text the model should continue the prompt with: adds the loss and the gradients");
  command->add_option("--layer", arguments->layer, "Show only this block (0-based; all blocks still run)")
      ->check(non_negative_integer());
  command->add_option("--head", arguments->head, "Show only this attention head (0-based)")->check(non_negative_integer());
  command->add_option("--top-k", arguments->top_k, "Next tokens listed per position")
      ->capture_default_str()
      ->check(positive_integer());
  command->add_option("--html", arguments->html, "Write the walk-through as a web page to FILE instead");
  command->add_option("--json", arguments->json,
                      "Write the walk-through as JSON to FILE instead: every stage's tensors as base64 float32 "
                      "(docs/walkthrough/live.md)")
      ->excludes(command->get_option("--html"));
  command->add_option("--graph", arguments->graph,
                      "Write the autograd graph of a neuron and of block --layer on the prompt as a web page to FILE "
                      "instead, with backward animated node by node (docs/walkthrough/autograd-graph.md)")
      ->excludes(command->get_option("--html"))
      ->excludes(command->get_option("--json"));
  // The graph draws every head's ops of one block and lists no next tokens.
  command->get_option("--graph")->excludes(command->get_option("--head"))->excludes(command->get_option("--top-k"));
  command->add_flag("--shared-scale", arguments->shared_scale,
                    "With --html: one colour scale for all heads of a block's attention scores (and mask), "
                    "so equal colours mean equal values")
      ->excludes(command->get_option("--json"))
      ->excludes(command->get_option("--graph"));
  command->add_option("--threads", arguments->threads, "Threads for OpenMP and OpenBLAS")->check(positive_integer());
  CLI::Option* serve = command->add_flag(
      "--serve", arguments->serve,
      "Serve the live step-through of the model instead (tinygpt serve's /explain), and print its address");
  add_listen_options(*command, arguments->server);
  for (const char* flag : {"--host", "--port", "--api-key"}) command->get_option(flag)->needs(serve);
  command->callback([command, arguments] { run_explain(*command, *arguments); });
}

}  // namespace tg::cli
