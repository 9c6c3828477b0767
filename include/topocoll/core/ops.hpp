#pragma once
// Operators for the reductions and the trait that says whether an operator may
// be reordered. Any callable T op(const T&, const T&) works as an operator; the
// left operand always stands for the lower ranks.

#include <functional>
#include <type_traits>

#include "../version.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE {
namespace ops {

struct min {
  template <class T>
  constexpr const T& operator()(const T& a, const T& b) const {
    return b < a ? b : a;  // ties keep the lower rank's value
  }
};

struct max {
  template <class T>
  constexpr const T& operator()(const T& a, const T& b) const {
    return a < b ? b : a;
  }
};

using plus = std::plus<>;
using multiplies = std::multiplies<>;
using bit_and = std::bit_and<>;
using bit_or = std::bit_or<>;
using bit_xor = std::bit_xor<>;
using logical_and = std::logical_and<>;
using logical_or = std::logical_or<>;

}  // namespace ops

// is_commutative<Op, T>: may an algorithm combine x_i op x_j as x_j op x_i?
// False unless known. Specialize it for your own operators:
//   template <> struct topocoll::is_commutative<MyAdd, MyType> : std::true_type {};
template <class Op, class T>
struct is_commutative : std::false_type {};

namespace detail {
template <template <class> class F, class Op>
struct instance_of : std::false_type {};
template <template <class> class F, class U>
struct instance_of<F, F<U>> : std::true_type {};

// The standard function objects that commute (on arithmetic types), and min, max.
template <class Op>
inline constexpr bool commutative_op =
    instance_of<std::plus, Op>::value || instance_of<std::multiplies, Op>::value ||
    instance_of<std::bit_and, Op>::value || instance_of<std::bit_or, Op>::value ||
    instance_of<std::bit_xor, Op>::value || instance_of<std::logical_and, Op>::value ||
    instance_of<std::logical_or, Op>::value || std::is_same_v<Op, ops::min> ||
    std::is_same_v<Op, ops::max>;

// a + b is not commutative for every T (std::string concatenates), so the
// standard operators count as commutative only on arithmetic types.
template <class Op, class T>
inline constexpr bool known_commutative =
    commutative_op<std::remove_cvref_t<Op>>&& std::is_arithmetic_v<T>;
}  // namespace detail

template <class Op, class T>
requires detail::known_commutative<Op, T>
struct is_commutative<Op, T> : std::true_type {
};

template <class Op, class T>
inline constexpr bool is_commutative_v = is_commutative<std::remove_cvref_t<Op>, T>::value;

}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE
