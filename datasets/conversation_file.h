// A file of conversations for supervised fine-tuning (chat SFT), JSON Lines:
// one conversation per line,
//
//   {"messages": [{"role": "user", "content": "What is 2+2?"},
//                 {"role": "assistant", "content": "4."}]}
//
// roles "system", "user" or "assistant", contents strings; other keys (an
// "id", a message's "name") are ignored; blank lines are allowed. The files
// come from strangers, so everything is bounded before it is used: the length
// of a line, the messages of a conversation, the number of conversations and
// the JSON's nesting. Any fault is a tg::Error "<where> line N: <what is wrong>",
// where `where` is e.g. "train: --data chats.jsonl". A conversation with no
// assistant text (no assistant message, or only empty ones) has nothing to
// train on and is refused too.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace tg {

inline constexpr size_t kMaxConversationLineBytes = size_t{4} << 20;  // 4 MiB of JSON a conversation
inline constexpr size_t kMaxConversationMessages = 256;
inline constexpr size_t kMaxConversations = 10'000'000;

struct Conversation {
  nlohmann::ordered_json messages;  // [{"role", "content"}, ...], only those two keys
  int64_t line = 0;                 // 1-based, for errors
};

// The conversations of a JSON Lines text, in order. Throws tg::Error as above,
// and when the text holds no conversation at all.
std::vector<Conversation> parse_conversations(std::string_view text, const std::string& where);

// The same one conversation at a time, for a file too large to hold parsed
// (`tinygpt prepare --chat`); returns how many there were.
int64_t for_each_conversation(std::string_view text, const std::string& where,
                              const std::function<void(Conversation&&)>& visit);

// The same of a file (datasets/data.h's read_text_file: devices refused, pipes bounded).
std::vector<Conversation> read_conversations(const std::string& path, const std::string& where);

}  // namespace tg
