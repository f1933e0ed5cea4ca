// tinygpt chat: a conversation with a chat model in the terminal.
//
//   tinygpt chat --weights SmolLM2-135M-Instruct/ --system "You are terse."
//   tinygpt chat --ckpt runs/tinybot --greedy < questions.txt
//
// Each line read is a user message; the reply streams to stdout. The model's
// own chat template (tokenizer_config.json; ChatML without one) renders the
// whole conversation each turn, generation stops at the model's end-of-turn
// tokens, and the KV cache keeps what the conversation shares with the turn
// before (models/chat_session.h), so a turn costs only its new tokens.
// /reset forgets the conversation, /quit (or the end of input) ends it.
// What was loaded, and each turn's figures, go to stderr.
#include <unistd.h>

#include <chrono>
#include <iostream>
#include <memory>
#include <string>

#include "tinygpt/datasets/chat_format.h"
#include "cli/commands.h"
#include "cli/flag_checks.h"
#include "cli/model_source.h"
#include "cli/sampling_flags.h"
#include "tinygpt/models/chat_session.h"
#include "tinygpt/tensor/error.h"
#include "tinygpt/tensor/runtime/threads.h"

namespace tg::cli {

namespace {

struct ChatArguments {
  ModelSourceArguments source;
  std::string system;
  int64_t max_tokens = 512;
  int64_t context = 4096;
  int threads = 0;
  GenerationOptions generation;
};

void run_chat(const CLI::App& command, ChatArguments arguments) {
  if (command.count("--threads")) set_num_threads(arguments.threads);
  settle_sampling_options(command, arguments.generation.sampling, arguments.generation.seed);
  const LoadedModel loaded = load_model(arguments.source, "chat");
  const ChatFormat format = chat_format_for(*loaded.tokenizer, loaded.stop_ids);
  ChatSession session(*loaded.model, arguments.context);
  arguments.generation.max_new_tokens = arguments.max_tokens;
  arguments.generation.sampling.vocabulary_size = loaded.tokenizer->vocab_size();
  arguments.generation.stop_ids = format.stop_ids;
  const bool interactive = isatty(STDIN_FILENO) == 1;
  std::cerr << "chat: " << loaded.description << "; template: " << format.template_source << "; context "
            << session.context() << " tokens; seed " << arguments.generation.seed << "\n";
  if (interactive) std::cerr << "chat: one message a line; /reset starts again, /quit ends\n";

  nlohmann::ordered_json messages = nlohmann::ordered_json::array();
  const auto start_conversation = [&] {
    messages = nlohmann::ordered_json::array();
    if (!arguments.system.empty()) messages.push_back({{"role", "system"}, {"content", arguments.system}});
    session.reset();
  };
  start_conversation();
  std::string line;
  while (true) {
    if (interactive) std::cerr << "> " << std::flush;
    if (!std::getline(std::cin, line) || line == "/quit") break;
    if (line == "/reset") {
      start_conversation();
      std::cerr << "chat: the conversation starts again\n";
      continue;
    }
    if (line.empty()) continue;
    messages.push_back({{"role", "user"}, {"content", line}});
    const RenderedConversation prompt = render_conversation(format, *loaded.tokenizer, messages, "chat");
    if (static_cast<int64_t>(prompt.ids.size()) + arguments.max_tokens > session.context()) {
      std::cerr << "chat: the conversation (" << prompt.ids.size() << " tokens) and a reply of up to "
                << arguments.max_tokens << " tokens do not fit the context of " << session.context()
                << " tokens; the message was not sent: /reset starts again\n";
      messages.erase(messages.size() - 1);
      continue;
    }
    tokenizer::StreamingDecoder decoder(*loaded.tokenizer);
    const auto began = std::chrono::steady_clock::now();
    const std::vector<int64_t> reply = session.reply(prompt.ids, arguments.generation, [&](int64_t id) {
      std::cout << decoder.push(id) << std::flush;
      return true;
    });
    std::cout << decoder.finish() << "\n" << std::flush;
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
    messages.push_back({{"role", "assistant"}, {"content", loaded.tokenizer->decode(reply, /*skip_special_tokens=*/true)}});
    std::cerr << "chat: " << reply.size() << " tokens in " << seconds << " s (" << reply.size() / std::max(seconds, 1e-9)
              << " tokens/s); prompt " << prompt.ids.size() << " tokens, " << session.reused_last_turn()
              << " of them from the cache\n";
  }
}

}  // namespace

void add_chat_command(CLI::App& app) {
  auto arguments = std::make_shared<ChatArguments>();
  CLI::App* command = app.add_subcommand("chat", "Talk with a chat model in the terminal, turn by turn");
  add_model_source_options(*command, arguments->source, /*fresh_models=*/false);
  command->add_option("--system", arguments->system, "A system message that opens the conversation");
  command->add_option("-n,--max-tokens", arguments->max_tokens, "Tokens a reply has at most")
      ->capture_default_str()
      ->check(integer_in(1, 1'000'000));
  command->add_option("--context", arguments->context, "Tokens of conversation kept (at most the model's context)")
      ->capture_default_str()
      ->check(integer_in(1, 10'000'000));
  add_sampling_options(*command, arguments->generation.sampling, arguments->generation.seed);
  command->add_option("-t,--threads", arguments->threads, "Threads for OpenMP and OpenBLAS")->check(positive_integer());
  command->callback([command, arguments] { run_chat(*command, *arguments); });
}

}  // namespace tg::cli
