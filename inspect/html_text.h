// How the walk-through's web page writes a token's text, in one place: every
// table, heatmap label, chart and tooltip of inspect/html_report.cpp shows a
// token the way the live page of serve (serve/explain_page.html, shown()) does,
// so a leading space is never a blank: a space as "␣", a line break as "↵", a
// tab as "⇥", a carriage return as "␍", the empty text as "∅". (The tokenizer's
// display text, TextTokenizer::display, already writes control characters as
// "\n", "\t", ...; those stay as they are, as on the live page.)
#pragma once
#include <string>

#include "tinygpt/inspect/svg.h"

namespace tg::inspect {

inline std::string shown_token(const std::string& text) {
  if (text.empty()) return "\u2205";
  std::string shown;
  for (char byte : text) {
    switch (byte) {
      case ' ': shown += "\u2423"; break;
      case '\n': shown += "\u21b5"; break;
      case '\t': shown += "\u21e5"; break;
      case '\r': shown += "\u240d"; break;
      default: shown += byte;
    }
  }
  return shown;
}

// A token as an inline code-like chip: <span class="token">the␣</span>.
inline std::string token_span(const std::string& text) {
  return "<span class=\"token\">" + svg::escape(shown_token(text)) + "</span>";
}

}  // namespace tg::inspect
