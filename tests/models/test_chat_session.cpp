// ChatSession (models/chat_session.h): each turn gives exactly the tokens a
// fresh generation on the same ids gives, while the cache keeps what the
// conversation shares with the turn before (and only that).
#include "tinygpt/models/chat_session.h"

#include <doctest/doctest.h>

#include "tinygpt/models/hf_directory.h"

using namespace tg;

namespace {

GenerationOptions greedy_options(int64_t tokens) {
  GenerationOptions options;
  options.max_new_tokens = tokens;
  options.sampling.greedy = true;
  return options;
}

std::vector<int64_t> concat(std::vector<int64_t> a, const std::vector<int64_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

}  // namespace

TEST_CASE("ChatSession: turns reuse the shared prefix and give a fresh run's tokens") {
  LoadedHfModel loaded = load_hf_model("tests/fixtures/hf_llama/qwen3");
  GPT& model = *loaded.model;
  ChatSession session(model, 64);
  const std::vector<int64_t> first = {5, 17, 250, 3, 99, 41};
  const std::vector<int64_t> reply = session.reply(first, greedy_options(6));
  CHECK(reply == generate(model, first, greedy_options(6)));
  CHECK(session.reused_last_turn() == 0);

  // The next turn renders the conversation again with the reply and a new message after it.
  const std::vector<int64_t> second = concat(concat(first, reply), {6, 12, 13, 200});
  const std::vector<int64_t> reply2 = session.reply(second, greedy_options(5));
  CHECK(reply2 == generate(model, second, greedy_options(5)));
  CHECK(session.reused_last_turn() == static_cast<int64_t>(first.size() + reply.size()) - 1);

  // A history rendered differently from position 3 on: the cache keeps 3 positions, and the tokens stay exact.
  std::vector<int64_t> edited = second;
  edited[3] = 7;
  const std::vector<int64_t> reply3 = session.reply(edited, greedy_options(5));
  CHECK(session.reused_last_turn() == 3);
  CHECK(reply3 == generate(model, edited, greedy_options(5)));

  // A stop id ends the reply and is not part of it.
  GenerationOptions stopping = greedy_options(8);
  stopping.stop_ids = {reply3.at(1)};
  session.reset();
  CHECK(session.reply(edited, stopping) == std::vector<int64_t>{reply3.at(0)});
}

TEST_CASE("ChatSession: a conversation past the context is refused with a sentence") {
  LoadedHfModel loaded = load_hf_model("tests/fixtures/hf_llama/qwen3");
  ChatSession session(*loaded.model, 8);
  CHECK_THROWS_WITH_AS(session.reply({1, 2, 3, 4, 5}, greedy_options(4)),
                       doctest::Contains("do not fit the context of 8 tokens"), Error);
}
