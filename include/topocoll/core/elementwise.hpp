#pragma once
// Elementwise combination and block copies, the only data work the collectives
// do. `lo` always holds the lower ranks' partial: the operand order of the
// seeds' "sum := sum + X" made explicit so non-commutative operators keep rank
// order. Trivially copyable blocks move as raw bytes; an inert type
// (core/inert.hpp) is neither copied nor combined.

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <span>
#include <type_traits>
#include <utility>

#include "../version.hpp"
#include "inert.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::detail {

// acc[i] = acc[i] op x[i]   (acc covers lower ranks than x)
template <class T, class Op>
void combine_right(std::span<T> acc, std::span<const T> x, const Op& op) {
  if constexpr (inert_element<T>) return;
  for (std::size_t i = 0; i < acc.size(); ++i) acc[i] = op(std::as_const(acc[i]), x[i]);
}

// acc[i] = x[i] op acc[i]   (x covers lower ranks than acc)
template <class T, class Op>
void combine_left(std::span<T> acc, std::span<const T> x, const Op& op) {
  if constexpr (inert_element<T>) return;
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

// dst[i] = lo[i] op hi[i]: a combination written straight into a third buffer,
// which saves the copy that an in-place combine would need first.
template <class T, class Op>
void combine_into(std::span<T> dst, std::span<const T> lo, std::span<const T> hi, const Op& op) {
  if constexpr (inert_element<T>) return;
  for (std::size_t i = 0; i < dst.size(); ++i) dst[i] = op(lo[i], hi[i]);
}

// to = from (to.size() == from.size()), copying or (move_to) moving; nothing
// when they are the same elements. The two never overlap otherwise (the
// aliasing rule of collectives/arguments.hpp and the kernels' own buffers).
enum class assign_by { copy, move };
template <assign_by K, class T, class U>
void assign_elements(std::span<U> from, std::span<T> to) {
  if (from.data() == to.data() || from.empty()) return;
  if constexpr (copy_counted<T>)
    T::topocoll_copied(from.size());
  else if constexpr (inert_element<T>)
    return;
  else if constexpr (std::is_trivially_copyable_v<T>)
    std::memcpy(to.data(), from.data(), from.size_bytes());
  else if constexpr (K == assign_by::move)
    std::move(from.begin(), from.end(), to.begin());
  else
    std::copy(from.begin(), from.end(), to.begin());
}
template <class T>
void copy_to(std::span<const T> from, std::span<T> to) {
  assign_elements<assign_by::copy>(from, to);
}
template <class T>
void copy_to(std::span<T> from, std::span<T> to) {
  assign_elements<assign_by::copy>(from, to);
}
template <class T>
void move_to(std::span<T> from, std::span<T> to) {
  assign_elements<assign_by::move>(from, to);
}

template <class T>
std::span<const T> cspan(std::span<T> s) {
  return s;
}

}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::detail
