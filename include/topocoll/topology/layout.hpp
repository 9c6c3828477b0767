#pragma once
// The run-time shape of a topology on p ranks: an ordered list of dimensions in
// mixed radix. Virtual rank v has coordinate (v / stride_j) % radix_j along
// dimension j; dims[0] has stride 1. For Hypercube and Tree the radices
// multiply to an `extent` >= p: virtual ranks in [p, extent) do not exist and
// the kernels skip them. For Ring and Mesh, extent == p.

#include <array>
#include <bit>
#include <cstdint>
#include <string>

#include "../version.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE {

// How the ranks along one dimension are connected; chosen per topology at
// compile time, so the kernels pick their per-dimension step statically.
enum class dim_kind {
  binary,   // two ranks, partner = v XOR stride (hypercube)
  linear,   // radix ranks in a linear array / ring (Ring, Mesh)
  knomial,  // digit-0 rank talks to digits 1..radix-1 (k-nomial tree)
};

struct dimension {
  int radix;
  int stride;
};

struct layout {
  static constexpr int max_dims = 32;

  int p = 1;       // number of ranks
  int extent = 1;  // product of the radices (>= p)
  int ndims = 0;
  std::array<dimension, max_dims> dims;  // the first ndims are set

  constexpr int coord(int v, int j) const { return (v / dims[j].stride) % dims[j].radix; }
  // v with its coordinate along dimension j replaced by c
  constexpr int with_coord(int v, int j, int c) const {
    return v + (c - coord(v, j)) * dims[j].stride;
  }
  constexpr bool exists(int v) const { return v >= 0 && v < p; }
  // x, or p when x lies past the last rank
  constexpr int clip(int x) const { return x < p ? x : p; }

  // p ranks over d dimensions of the same radix (a hypercube, a k-nomial tree)
  static constexpr layout uniform(int p, int radix, int d) {
    layout l;
    l.p = p;
    for (int j = 0; j < d; ++j) l.push(radix);
    return l;
  }

  constexpr void push(int radix) {
    if (radix <= 1) return;  // a dimension of one rank moves nothing
    dims[ndims] = {radix, extent};
    ++ndims;
    extent *= radix;
  }
};

namespace detail {
constexpr bool is_pow2(int p) {
  return p > 0 && (p & (p - 1)) == 0;  // no popcount: a libcall on baseline x86-64
}
constexpr int ceil_log2(int p) {
  return p <= 1 ? 0 : std::bit_width(static_cast<unsigned>(p - 1));
}
constexpr int ceil_log(int p, int k) {
  int d = 0;
  for (long long e = 1; e < p; e *= k) ++d;
  return d;
}

// Balanced factorisation of p into k sides, as MPI_Dims_create: prime factors,
// largest first, each multiplies the currently smallest side; sides returned in
// non-increasing order.
template <int K>
constexpr std::array<int, K> dims_create(int p) {
  std::array<int, K> s{};
  s.fill(1);
  std::array<int, 32> primes{};
  int np = 0;
  int n = p;
  for (int f = 2; static_cast<long long>(f) * f <= n; ++f)
    while (n % f == 0) primes[np++] = f, n /= f;
  if (n > 1) primes[np++] = n;
  for (int i = np - 1; i >= 0; --i) {  // factors were found smallest first
    int smallest = 0;
    for (int j = 1; j < K; ++j)
      if (s[j] < s[smallest]) smallest = j;
    s[smallest] *= primes[i];
  }
  for (int i = 0; i < K; ++i)  // sort non-increasing (K is tiny)
    for (int j = i + 1; j < K; ++j)
      if (s[j] > s[i]) std::swap(s[i], s[j]);
  return s;
}
}  // namespace detail

}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE
