#pragma once
// An inert element type: one whose values nothing reads or writes. The
// simulator (model/simulate.hpp) runs the library's own kernels on one, since
// it needs the sizes of their messages and none of their contents. A type opts
// in with two static members:
//
//   static constexpr bool topocoll_inert = true;
//   static T* topocoll_reserve(std::size_t n);  // room for n elements that is never touched
//
// and may declare a third, to be told of the copies it is spared:
//
//   static void topocoll_copied(std::size_t n);  // a block of n elements was copied
//
// Copies and combinations of an inert type do nothing (core/elementwise.hpp)
// and its work buffers come from topocoll_reserve (core/workspace.hpp). Every
// other type takes the ordinary path, compiled exactly as without this header.

#include <concepts>
#include <cstddef>

#include "../version.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::detail {

template <class T>
concept inert_element = requires(std::size_t n) {
  requires T::topocoll_inert;
  { T::topocoll_reserve(n) } -> std::same_as<T*>;
};

// An inert type that is told of its copies (the simulator's local
// rearrangement, t_r).
template <class T>
concept copy_counted = inert_element<T> && requires(std::size_t n) {
  T::topocoll_copied(n);
};

}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::detail
