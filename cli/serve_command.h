// What `tinygpt serve` does once it has a model, for the commands that serve one
// too (`tinygpt explain --serve`): the server's settings, the flags that say where
// it listens, and running it until Ctrl-C or SIGTERM. Defined in serve_command.cpp.
#pragma once
#include <functional>
#include <string>

#include <CLI/CLI.hpp>

#include "cli/model_source.h"
#include "tinygpt/serve/engine.h"
#include "tinygpt/serve/http_server.h"

namespace tg::cli {

struct ServeArguments {
  ModelSourceArguments source;
  serve::ServerOptions server;
  serve::EngineOptions engine;
  int64_t max_tokens = 0;  // 0: the model's context
  int64_t max_kv_mib = 2048;
  int64_t timeout_seconds = 600;
  int64_t io_timeout_seconds = 10;
  int threads = 0;
};

// Registers --host, --port and --api-key on `command`.
void add_listen_options(CLI::App& command, ServeArguments& arguments);

// Serves `loaded` (what arguments.source names) until Ctrl-C or SIGTERM, then
// returns. `command` is the one whose flags were read (an --api-key given there
// wins over TINYGPT_API_KEY). `listening` is called with the server's address,
// "http://HOST:PORT", once it takes connections.
void serve_model(const CLI::App& command, const LoadedModel& loaded, ServeArguments arguments,
                 const std::function<void(const std::string& address)>& listening = {});

}  // namespace tg::cli
