#pragma once
// A drawing of a simulated collective (model::simulate_trace) as SVG: one
// horizontal line per rank, time running to the right, an arrow per message
// from its start on the sender to its arrival on the receiver. A message that
// shared a link with others (congestion c > 1) is drawn red and labelled c.

#include <algorithm>
#include <sstream>
#include <string>

#include "../version.hpp"
#include "simulate.hpp"
#include "svg.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::model {

inline std::string to_svg(const traced_result& t, const std::string& title, int width = 900) {
  int p = 1;
  for (const timed_message& m : t.messages) p = std::max({p, m.src + 1, m.dst + 1});
  const int left = 70, top = 56, row = 30, plot = width - left - 30;
  const int height = top + p * row + 40;
  const double span = std::max(t.summary.time, 1e-9);
  auto x = [&](double time) { return left + static_cast<int>(time / span * plot); };
  auto y = [&](int rank) { return top + rank * row; };
  std::ostringstream o;
  o << R"(<svg xmlns="http://www.w3.org/2000/svg" width=")" << width << R"(" height=")" << height
    << R"(" font-family="Helvetica, Arial, sans-serif" font-size="12">)" << '\n'
    << R"(<defs><marker id="a" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="context-stroke"/></marker></defs>)"
    << '\n'
    << R"(<rect width="100%" height="100%" fill="white"/>)" << '\n'
    << R"(<text x="10" y="20" font-size="15" font-weight="bold">)" << xml_escape(title)
    << "</text>\n"
    << R"(<text x="10" y="38" fill="#555">time )" << t.summary.time << ", " << t.summary.messages
    << " messages, largest congestion " << t.summary.max_congestion
    << R"( (red: a message sharing a link, labelled with c))"
    << "</text>\n";
  for (int q = 0; q < p; ++q)
    o << R"(<text x=")" << left - 12 << R"(" y=")" << y(q) + 4 << R"(" text-anchor="end">rank )"
      << q << "</text>\n"
      << R"(<line x1=")" << left << R"(" y1=")" << y(q) << R"(" x2=")" << left + plot << R"(" y2=")"
      << y(q) << R"(" stroke="#bbb"/>)" << '\n';
  o << R"(<text x=")" << left << R"(" y=")" << height - 12 << R"(" fill="#666">0</text>)"
    << R"(<text x=")" << left + plot << R"(" y=")" << height - 12
    << R"(" text-anchor="end" fill="#666">)" << t.summary.time << "</text>\n";
  for (const timed_message& m : t.messages) {
    const bool hot = m.congestion > 1;
    const int x0 = x(m.start) + 2, x1 = std::max(x(m.end) - 2, x0 + 4);
    o << R"(<line x1=")" << x0 << R"(" y1=")" << y(m.src) << R"(" x2=")" << x1 << R"(" y2=")"
      << y(m.dst) << R"(" stroke=")" << (hot ? "#c62828" : "#1f5fa8") << R"(" stroke-width=")"
      << (hot ? 2.2 : 1.4) << R"~(" marker-end="url(#a)"/>)~" << '\n';
    if (hot)
      o << R"(<text x=")" << (x0 + x1) / 2 + 4 << R"(" y=")" << (y(m.src) + y(m.dst)) / 2 - 3
        << R"(" fill="#c62828" font-size="10">c=)" << m.congestion << "</text>\n";
  }
  o << "</svg>\n";
  return o.str();
}

}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::model
