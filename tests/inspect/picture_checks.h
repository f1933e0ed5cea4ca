// Checks of the HTML and SVG that inspect/ writes, shared by its tests: a small
// well-formedness check (every tag closed in order, except HTML's void elements;
// the contents of <script> and <style> skipped as text: enough to catch an
// unescaped '<' in a token or a forgotten closing tag without a real parser),
// and counts of things in the text.
#pragma once
#include <set>
#include <string>
#include <vector>

namespace tg::testing {

// "" when `markup` is balanced, else what is wrong and where.
inline std::string markup_problem(const std::string& markup) {
  static const std::set<std::string> void_elements = {"meta", "br", "hr", "img", "input", "link"};
  std::vector<std::string> open;
  size_t at = 0;
  while ((at = markup.find('<', at)) != std::string::npos) {
    if (markup.compare(at, 4, "<!--") == 0) {
      at = markup.find("-->", at);
      if (at == std::string::npos) return "an unclosed comment";
      continue;
    }
    if (markup.compare(at, 2, "<!") == 0 || markup.compare(at, 2, "<?") == 0) {  // <!DOCTYPE>, <?xml?>
      at = markup.find('>', at);
      continue;
    }
    size_t end = at + 1;
    for (char quote = 0; end < markup.size() && (quote || markup[end] != '>'); ++end)
      if (markup[end] == '"' || markup[end] == '\'') quote = quote == markup[end] ? 0 : quote ? quote : markup[end];
    if (end >= markup.size()) return "an unclosed tag at byte " + std::to_string(at);
    const std::string tag = markup.substr(at + 1, end - at - 1);
    const bool closing = !tag.empty() && tag[0] == '/';
    const std::string name = tag.substr(closing, tag.find_first_of(" \t\n/", closing) - closing);
    if (name.empty()) return "a '<' that starts no tag at byte " + std::to_string(at);
    at = end + 1;
    if (closing) {
      if (open.empty() || open.back() != name)
        return "</" + name + "> at byte " + std::to_string(at) + " closes " +
               (open.empty() ? "nothing" : "<" + open.back() + ">");
      open.pop_back();
    } else if (tag.back() != '/' && !void_elements.contains(name)) {
      if (name == "script" || name == "style") {  // raw text up to its closing tag
        at = markup.find("</" + name + ">", at);
        if (at == std::string::npos) return "an unclosed <" + name + ">";
        at += name.size() + 3;
        continue;
      }
      open.push_back(name);
    }
  }
  return open.empty() ? "" : "<" + open.back() + "> is never closed";
}

// How many times `needle` occurs in `text`.
inline size_t occurrences(const std::string& text, const std::string& needle) {
  size_t count = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + needle.size())) ++count;
  return count;
}

// The heatmap cells drawn in `svg`: the sum of n over its runs "h{n}v1h-{n}z".
inline size_t heatmap_cells(const std::string& svg) {
  size_t cells = 0;
  for (size_t at = svg.find('h'); at != std::string::npos; at = svg.find('h', at + 1)) {
    const size_t digits = svg.find_first_not_of("0123456789", at + 1);
    if (digits == at + 1 || digits == std::string::npos) continue;
    const std::string length = svg.substr(at + 1, digits - at - 1);
    if (svg.compare(digits, 4 + length.size() + 1, "v1h-" + length + "z") == 0) cells += std::stoul(length);
  }
  return cells;
}

}  // namespace tg::testing
