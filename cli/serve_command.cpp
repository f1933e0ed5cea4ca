// tinygpt serve: the model behind OpenAI's API, for any OpenAI client and the chat page.
//
//   tinygpt serve --weights SmolLM2-135M-Instruct/ --port 8080
//   TINYGPT_API_KEY=secret tinygpt serve --ckpt runs/tinybot --host 0.0.0.0
//
// One model, one engine thread running it for every request (serve/engine.h),
// an HTTP thread per request under way (serve/http_server.h). Ctrl-C or SIGTERM
// stops taking requests, gives those under way a few seconds to end, and exits 0.
// `tinygpt explain --serve` runs the same server (serve_model, cli/serve_command.h).
#include <csignal>
#include <filesystem>
#include <iostream>
#include <memory>
#include <thread>

#include "cli/serve_command.h"

#include "cli/commands.h"
#include "cli/flag_checks.h"
#include "cli/model_source.h"
#include "cli/stop_signals.h"
#include "cli/usage_errors.h"
#include "tinygpt/datasets/chat_format.h"
#include "tinygpt/serve/engine.h"
#include "tinygpt/serve/http_server.h"
#include "tinygpt/tensor/runtime/threads.h"

namespace tg::cli {

namespace {

// How long replies under way may go on once a stop is asked for.
constexpr std::chrono::seconds kShutdownGrace{3};

// The name clients give as "model": the directory's or checkpoint's, as the user named it
// (a fresh model, which explain --serve can serve, is its preset's name).
std::string model_id(const ModelSourceArguments& source) {
  if (!source.config.empty()) return source.config;
  std::filesystem::path path = !source.model.empty() ? source.model : !source.weights.empty() ? source.weights
                                                                                               : source.checkpoint;
  while (path.has_relative_path() && path.filename().empty()) path = path.parent_path();  // "dir/" -> "dir"
  path = std::filesystem::absolute(path).lexically_normal();
  if (path.filename().empty()) path = path.parent_path();
  // A checkpoint file is named for its run: runs/x/best.safetensors serves as "x".
  if (std::filesystem::is_regular_file(path)) path = path.parent_path();
  return path.filename().string();
}

void run_serve(const CLI::App& command, const ServeArguments& arguments) {
  if (command.count("--threads")) set_num_threads(arguments.threads);
  serve_model(command, load_model(arguments.source, "serve"), arguments);
}

}  // namespace

void serve_model(const CLI::App& command, const LoadedModel& loaded, ServeArguments arguments,
                 const std::function<void(const std::string& address)>& listening) {
  if (!command.count("--api-key"))
    if (const char* key = std::getenv("TINYGPT_API_KEY")) arguments.server.api_key = key;
  const int64_t context = loaded.model->config().block_size;
  check_usage(arguments.max_tokens <= context, "--max-tokens ", arguments.max_tokens, " is more than the model's context of ",
              context, " tokens");
  const ChatFormat chat_format = chat_format_for(*loaded.tokenizer, loaded.stop_ids);
  serve::ServedModel served;
  served.id = model_id(arguments.source);
  served.tokenizer = &*loaded.tokenizer;
  served.chat_format = &chat_format;
  served.text_stop_ids = loaded.stop_ids;
  served.context = context;
  served.max_tokens = arguments.max_tokens > 0 ? arguments.max_tokens : context;
  arguments.engine.max_kv_bytes = arguments.max_kv_mib << 20;
  arguments.server.request_timeout = std::chrono::seconds(arguments.timeout_seconds);
  arguments.server.io_timeout = std::chrono::seconds(arguments.io_timeout_seconds);
  // A thread for each sequence decoding and each request queued, and a few for
  // /health, /v1/models and refusals while all those are taken.
  arguments.server.handler_threads = arguments.engine.max_sequences + arguments.engine.max_queued + 8;

  // A client that goes away mid-answer is a failed write, not the end of the server.
  std::signal(SIGPIPE, SIG_IGN);
  const StopOnSignals stop_signals("\ntinygpt: stopping the server; a second Ctrl-C (or SIGTERM) quits at once\n");
  serve::Engine engine(*loaded.model, arguments.engine);
  serve::HttpServer server(engine, served, arguments.server);
  const int port = server.bind();
  const bool loopback = arguments.server.host == "127.0.0.1" || arguments.server.host == "localhost" ||
                        arguments.server.host == "::1";
  if (!loopback && arguments.server.api_key.empty())
    std::cerr << "serve: warning: listening on " << arguments.server.host
              << " without an API key: anyone who can reach this machine can use the model (--api-key KEY or "
                 "TINYGPT_API_KEY)\n";
  const std::string& host = arguments.server.host;
  const std::string address =
      "http://" + (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" + std::to_string(port);
  std::cerr << "serve: " << loaded.description << " as \"" << served.id << "\"; context " << context
            << " tokens; template: " << chat_format.template_source << "; " << arguments.engine.max_sequences
            << " sequences at once, " << arguments.engine.max_queued << " queued"
            << (arguments.server.api_key.empty() ? "" : "; API key required") << "; listening on " << address
            << "/\n" << std::flush;

  std::thread listener([&] { server.listen(); });
  if (listening) listening(address);
  while (!stop_signals.requested()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  server.stop();                     // no new connections
  engine.shutdown(kShutdownGrace);   // replies under way end by then; the rest get 503
  listener.join();                   // every connection's thread has answered
  std::cerr << "serve: stopped by " << stop_signals.signal_name() << " after " << engine.stats().completed
            << " replies\n";
}

void add_listen_options(CLI::App& command, ServeArguments& arguments) {
  command
      .add_option("--host", arguments.server.host,
                  "Address to listen on (any other than 127.0.0.1 lets other machines in: give --api-key)")
      ->capture_default_str();
  command.add_option("--port", arguments.server.port, "Port to listen on (0: a free one, printed at start)")
      ->capture_default_str()
      ->check(integer_in(0, 65535));
  command.add_option("--api-key", arguments.server.api_key,
                     "Ask every /v1/ request for Authorization: Bearer KEY (TINYGPT_API_KEY too, kept out of ps)");
}

void add_serve_command(CLI::App& app) {
  auto arguments = std::make_shared<ServeArguments>();
  CLI::App* command = app.add_subcommand("serve", "Serve a model over OpenAI's API (completions, chat) and a chat page");
  add_model_source_options(*command, arguments->source, /*fresh_models=*/false);
  add_listen_options(*command, *arguments);
  command->add_option("--max-sequences", arguments->engine.max_sequences, "Replies generated at once, in one batch")
      ->capture_default_str()
      ->check(integer_in(1, 1024));
  command->add_option("--max-queued", arguments->engine.max_queued,
                      "Requests waiting for a place; one more is answered 503")
      ->capture_default_str()
      ->check(integer_in(1, 100'000));
  command->add_option("--max-kv-mib", arguments->max_kv_mib,
                      "KV cache of the replies decoded at once, together, at most (MiB); others wait")
      ->capture_default_str()
      ->check(integer_in(1, 1 << 24));
  command->add_option("--max-tokens", arguments->max_tokens,
                      "Tokens a request may ask for at most (default: the model's context)")
      ->check(integer_in(1, 10'000'000));
  command->add_option("--max-body-bytes", arguments->server.max_body_bytes, "Largest request body (413 beyond)")
      ->capture_default_str()
      ->check(integer_in(1024, int64_t{1} << 30));
  command->add_option("--timeout", arguments->timeout_seconds,
                      "Seconds a reply may take, queue included; then it ends as at max_tokens")
      ->capture_default_str()
      ->check(integer_in(1, 86'400));
  command->add_option("--io-timeout", arguments->io_timeout_seconds,
                      "Seconds a client may take to send its request, or to take each piece of an answer")
      ->capture_default_str()
      ->check(integer_in(1, 3600));
  command->add_option("-t,--threads", arguments->threads, "Threads for OpenMP and OpenBLAS")->check(positive_integer());
  command->callback([command, arguments] { run_serve(*command, *arguments); });
}

}  // namespace tg::cli
