#pragma once
// Element types and operators the suites sweep: a plain arithmetic type, a
// user-defined trivially copyable struct, std::string, and non-commutative
// associative operators on each. Every operator here is exact (integers mod
// 2^32 or a prime, max, concatenation), so any bracketing gives the same bits
// and results compare with ==.

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>
#include <type_traits>
#include <vector>

namespace tc_test {

// 2x2 matrices modulo a prime under multiplication: associative, not commutative.
struct Mat2 {
  std::uint32_t a, b, c, d;
  friend bool operator==(const Mat2&, const Mat2&) = default;
  friend std::ostream& operator<<(std::ostream& os, const Mat2& m) {
    return os << "[" << m.a << " " << m.b << "; " << m.c << " " << m.d << "]";
  }
};
struct mat_mul {
  static constexpr std::uint64_t prime = 65521;
  Mat2 operator()(const Mat2& x, const Mat2& y) const {
    auto f = [](std::uint64_t p, std::uint64_t q, std::uint64_t r, std::uint64_t s) {
      return static_cast<std::uint32_t>((p * q + r * s) % prime);
    };
    return {f(x.a, y.a, x.b, y.c), f(x.a, y.b, x.b, y.d), f(x.c, y.a, x.d, y.c),
            f(x.c, y.b, x.d, y.d)};
  }
};

// A user's struct: trivially copyable, with padding, never registered anywhere.
struct Particle {
  double x;           // combined by max
  std::uint32_t mul;  // (mul, add) is an affine map; combined by composition,
  std::uint32_t add;  //   which is associative and not commutative
  std::int16_t kind;  // combined by min
  friend bool operator==(const Particle&, const Particle&) = default;
  friend std::ostream& operator<<(std::ostream& os, const Particle& q) {
    return os << "{" << q.x << ", " << q.mul << "x+" << q.add << ", " << q.kind << "}";
  }
};
static_assert(std::is_trivially_copyable_v<Particle>);
struct particle_op {
  Particle operator()(const Particle& l, const Particle& r) const {
    // apply l first, then r: x -> r.mul * (l.mul * x + l.add) + r.add
    return {l.x < r.x ? r.x : l.x, l.mul * r.mul, r.mul * l.add + r.add,
            r.kind < l.kind ? r.kind : l.kind};
  }
};

// String concatenation: associative, not commutative, not trivially copyable.
struct concat {
  std::string operator()(const std::string& a, const std::string& b) const { return a + b; }
};

// Deterministic input: element i of rank r, for a test identified by salt.
template <class T>
T gen(int r, std::size_t i, unsigned salt = 0);

template <>
inline int gen<int>(int r, std::size_t i, unsigned salt) {
  return static_cast<int>((static_cast<unsigned>(r) * 1000003u + static_cast<unsigned>(i) * 7919u +
                           salt * 104729u) %
                          100000u) -
         50000;
}
template <>
inline double gen<double>(int r, std::size_t i, unsigned salt) {
  return static_cast<double>(gen<int>(r, i, salt)) / 8.0;  // exact in binary
}
template <>
inline Mat2 gen<Mat2>(int r, std::size_t i, unsigned salt) {
  auto u = static_cast<std::uint32_t>(gen<int>(r, i, salt) + 50000);
  return {u % 65521, (u * 7 + 1) % 65521, (u * 13 + 5) % 65521, (u * 3 + 11) % 65521};
}
template <>
inline Particle gen<Particle>(int r, std::size_t i, unsigned salt) {
  auto u = static_cast<std::uint32_t>(gen<int>(r, i, salt) + 50000);
  return {static_cast<double>(u % 977) / 4.0, u * 2654435761u | 1u, u ^ 0x9e3779b9u,
          static_cast<std::int16_t>(u % 300)};
}
template <>
inline std::string gen<std::string>(int r, std::size_t i, unsigned salt) {
  // lengths 0..3 so empty strings are exercised too
  std::string s;
  s += static_cast<char>('A' + r % 26);
  s += std::to_string(r);
  s.resize((r + i + salt) % 4, static_cast<char>('a' + i % 26));
  return s;
}

// Rank r's m-element input.
template <class T>
std::vector<T> input(int r, std::size_t m, unsigned salt = 0) {
  std::vector<T> v(m);
  for (std::size_t i = 0; i < m; ++i) v[i] = gen<T>(r, i, salt);
  return v;
}

// x_lo op x_{lo+1} op ... op x_hi, elementwise, over ranks [lo, hi] — the
// sequential reference for every reduction.
template <class T, class Op>
std::vector<T> fold(int lo, int hi, std::size_t m, Op op, unsigned salt = 0) {
  std::vector<T> acc = input<T>(lo, m, salt);
  for (int r = lo + 1; r <= hi; ++r)
    for (std::size_t i = 0; i < m; ++i) acc[i] = op(acc[i], gen<T>(r, i, salt));
  return acc;
}

// All prefixes at once: result[r] = fold(0, r).
template <class T, class Op>
std::vector<std::vector<T>> prefixes(int p, std::size_t m, Op op, unsigned salt = 0) {
  std::vector<std::vector<T>> out;
  out.reserve(static_cast<std::size_t>(p));
  out.push_back(input<T>(0, m, salt));
  for (int r = 1; r < p; ++r) {
    out.push_back(out.back());
    for (std::size_t i = 0; i < m; ++i) out.back()[i] = op(out.back()[i], gen<T>(r, i, salt));
  }
  return out;
}

}  // namespace tc_test
