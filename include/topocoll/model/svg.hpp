#pragma once
// A space-time drawing of a schedule (model/trace.hpp) as SVG: one horizontal
// line per rank, one column per round, an arrow per message labelled with its
// size in elements. The doc/ figures are drawn with it (example/draw.cpp).

#include <algorithm>
#include <cstddef>
#include <sstream>
#include <string>

#include "../version.hpp"
#include "trace.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::model {

struct svg_style {
  int column = 96;  // px per round
  int row = 30;     // px per rank
  int left = 70;    // room for the rank labels
  int top = 56;     // room for the title and round numbers
  bool label_counts = true;
};

// Text as XML character data ("Hypercube<3>" must not open a tag).
inline std::string xml_escape(const std::string& s) {
  std::string o;
  for (char ch : s) {
    switch (ch) {
      case '<':
        o += "&lt;";
        break;
      case '>':
        o += "&gt;";
        break;
      case '&':
        o += "&amp;";
        break;
      case '"':
        o += "&quot;";
        break;
      default:
        o += ch;
    }
  }
  return o;
}

inline std::string to_svg(const schedule& s, const std::string& title, svg_style st = {}) {
  const int width = st.left + (s.rounds + 1) * st.column + 20;
  const int height = st.top + s.p * st.row + 16;
  auto x = [&](int round) { return st.left + round * st.column; };
  auto y = [&](int rank) { return st.top + rank * st.row; };
  std::ostringstream o;
  o << R"(<svg xmlns="http://www.w3.org/2000/svg" width=")" << width << R"(" height=")" << height
    << R"(" font-family="Helvetica, Arial, sans-serif" font-size="12">)" << '\n'
    << R"(<defs><marker id="a" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#1f5fa8"/></marker></defs>)"
    << '\n'
    << R"(<rect width="100%" height="100%" fill="white"/>)" << '\n'
    << R"(<text x="10" y="20" font-size="15" font-weight="bold">)" << xml_escape(title)
    << "</text>\n";
  for (int r = 1; r <= s.rounds; ++r)
    o << R"(<text x=")" << x(r) - st.column / 2 << R"(" y=")" << st.top - 14
      << R"(" text-anchor="middle" fill="#666">step )" << r << "</text>\n";
  for (int q = 0; q < s.p; ++q)
    o << R"(<text x=")" << st.left - 12 << R"(" y=")" << y(q) + 4 << R"(" text-anchor="end">rank )"
      << q << "</text>\n"
      << R"(<line x1=")" << st.left << R"(" y1=")" << y(q) << R"(" x2=")" << x(s.rounds) + 10
      << R"(" y2=")" << y(q) << R"(" stroke="#bbb"/>)" << '\n';
  for (const message& m : s.messages) {
    // a message of round k travels during column k: from x(k-1) to x(k)
    const int x0 = x(m.round - 1) + 8, x1 = x(m.round) - 8;
    o << R"(<line x1=")" << x0 << R"(" y1=")" << y(m.src) << R"(" x2=")" << x1 << R"(" y2=")"
      << y(m.dest) << R"~(" stroke="#1f5fa8" stroke-width="1.6" marker-end="url(#a)"/>)~" << '\n';
    if (st.label_counts && m.src != m.dest)
      o << R"(<text x=")" << (x0 + x1) / 2 + 4 << R"(" y=")" << (y(m.src) + y(m.dest)) / 2 - 3
        << R"(" fill="#a33" font-size="10">)" << m.count << "</text>\n";
  }
  o << "</svg>\n";
  return o.str();
}

}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::model
