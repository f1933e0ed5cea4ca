#include "tinygpt/datasets/conversation_file.h"

#include "tinygpt/datasets/data.h"
#include "tinygpt/tensor/error.h"
#include "tinygpt/tensor/io/bounded_json.h"

namespace tg {

namespace {

bool is_blank(std::string_view line) {
  return line.find_first_not_of(" \t\r") == std::string_view::npos;
}

// One line's conversation; `where` already names the line.
nlohmann::ordered_json parse_line(std::string_view line, const std::string& where) {
  nlohmann::json json;
  try {
    json = parse_bounded_json(line, where);
  } catch (const nlohmann::json::exception& error) {
    fail(where, ": not valid JSON: ", json_error_text(error));
  }
  check(json.is_object() && json.contains("messages"), where,
        ": expected an object {\"messages\": [{\"role\": ..., \"content\": ...}, ...]}");
  const nlohmann::json& messages = json["messages"];
  check(messages.is_array() && !messages.empty(), where, ": \"messages\" must be a non-empty array");
  check(messages.size() <= kMaxConversationMessages, where, ": ", messages.size(), " messages, more than the ",
        kMaxConversationMessages, " a conversation may have");
  nlohmann::ordered_json kept = nlohmann::ordered_json::array();
  bool assistant_text = false;
  for (size_t i = 0; i < messages.size(); ++i) {
    const nlohmann::json& message = messages[i];
    check(message.is_object(), where, ": message ", i, " is not an object {\"role\": ..., \"content\": ...}");
    check(message.contains("role") && message["role"].is_string(), where, ": message ", i,
          " has no \"role\" string");
    const std::string role = message["role"].get<std::string>();
    check(role == "system" || role == "user" || role == "assistant", where, ": message ", i, " has role \"", role,
          "\"; expected system, user or assistant");
    check(message.contains("content") && message["content"].is_string(), where, ": message ", i,
          " has no \"content\" string");
    const std::string content = message["content"].get<std::string>();
    assistant_text = assistant_text || (role == "assistant" && !content.empty());
    kept.push_back({{"role", role}, {"content", content}});
  }
  check(assistant_text, where, ": has no assistant text to learn from (no assistant message, or only empty ones)");
  return kept;
}

}  // namespace

std::vector<Conversation> parse_conversations(std::string_view text, const std::string& where) {
  std::vector<Conversation> conversations;
  for_each_conversation(text, where, [&](Conversation&& conversation) { conversations.push_back(std::move(conversation)); });
  return conversations;
}

int64_t for_each_conversation(std::string_view text, const std::string& where,
                              const std::function<void(Conversation&&)>& visit) {
  size_t count = 0;
  int64_t line_number = 0;
  size_t start = 0;
  while (start < text.size()) {
    const size_t newline = text.find('\n', start);
    const size_t end = newline == std::string_view::npos ? text.size() : newline;
    const std::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++line_number;
    const std::string here = where + " line " + std::to_string(line_number);
    check(line.size() <= kMaxConversationLineBytes, here, ": ", line.size(), " bytes, longer than the ",
          kMaxConversationLineBytes, " a conversation's line may have");
    if (is_blank(line)) continue;
    check(count < kMaxConversations, here, ": more than ", kMaxConversations, " conversations; split the file");
    visit({parse_line(line, here), line_number});
    ++count;
  }
  check(count > 0, where, ": holds no conversations (one JSON object a line: {\"messages\": [...]})");
  return static_cast<int64_t>(count);
}

std::vector<Conversation> read_conversations(const std::string& path, const std::string& where) {
  return parse_conversations(read_text_file(path), where);
}

}  // namespace tg
