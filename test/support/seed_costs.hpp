#pragma once
// The machine the model tests evaluate the seeds' closed forms on: t_s = 100
// and t_w = 3 per element (integers, so the simulated times are exact), and
// the seeds' single-ported node (ports::single: one call at a time per rank).

#include <topocoll/model/network.hpp>
#include <topocoll/model/timeline.hpp>

namespace seed_costs {
inline constexpr double ts = 100, tw = 3;
inline const topocoll::model::cost_params cost{.t_s = ts, .t_w = tw};
inline topocoll::model::network single(topocoll::model::network n) {
  return n.with(topocoll::model::ports::single);
}
}  // namespace seed_costs
