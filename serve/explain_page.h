// The live step-through page tinygpt serve answers GET /explain with: one
// self-contained HTML file (serve/explain_page.html, built into the program), no
// network beyond the server that sent it. It asks POST /v1/explain for the prompt
// being typed and draws every stage of the chosen block.
#pragma once
#include <string_view>

namespace tg::serve {

std::string_view explain_page_html();

}  // namespace tg::serve
