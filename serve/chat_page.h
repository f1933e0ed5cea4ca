// The chat page tinygpt serve answers GET / with: one self-contained HTML file
// (serve/chat_page.html, built into the program), no network beyond the server
// that sent it. It talks to /v1/chat/completions with streaming, turn after turn.
#pragma once
#include <string_view>

namespace tg::serve {

std::string_view chat_page_html();

}  // namespace tg::serve
