#pragma once
// Elementwise combination, the only arithmetic the collectives do. `lo` always
// holds the lower ranks' partial: the operand order of the seeds' "sum := sum + X"
// made explicit so non-commutative operators keep rank order.

#include <cstddef>
#include <span>
#include <utility>

namespace topocoll::detail {

// acc[i] = acc[i] op x[i]   (acc covers lower ranks than x)
template <class T, class Op>
void combine_right(std::span<T> acc, std::span<const T> x, const Op& op) {
  for (std::size_t i = 0; i < acc.size(); ++i) acc[i] = op(std::as_const(acc[i]), x[i]);
}

// acc[i] = x[i] op acc[i]   (x covers lower ranks than acc)
template <class T, class Op>
void combine_left(std::span<T> acc, std::span<const T> x, const Op& op) {
  for (std::size_t i = 0; i < acc.size(); ++i) acc[i] = op(x[i], std::as_const(acc[i]));
}

// acc op= x, with x on the left when x_is_lower
template <class T, class Op>
void combine(std::span<T> acc, std::span<const T> x, bool x_is_lower, const Op& op) {
  if (x_is_lower)
    combine_left(acc, x, op);
  else
    combine_right(acc, x, op);
}

}  // namespace topocoll::detail
