#pragma once
// The four topology policies. A policy is a type, never instantiated; it says
//   kind            how ranks along a dimension are connected (compile time)
//   fixed_dims      the number of dimensions where the type fixes it, else -1
//   name()          "Ring", "Mesh<2>", "Hypercube<3>", "Tree<4>"
//   holds(p)        whether it can be laid over p ranks
//   shape(p)        the dimensions (a topocoll::layout)
//   to_virtual / to_real   the relabelling that makes `root` virtual rank 0
//   folding(l)      the pairing that folds ranks a fold cannot place (fold_map)
// Topologies know nothing of transports or collectives.

#include <bit>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

#include "../core/errors.hpp"
#include "../version.hpp"
#include "layout.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE {

namespace detail {
// The pairing that folds p ranks into the 2^floor(log2 p) of a hypercube
// before a fold over its dimensions (Hypercube<> on any p): the first 2e
// ranks pair up (2i, 2i + 1); virtual rank w stands for real ranks lo(w) ..
// lo(w + 1), in rank order. e = 0: no fold, the identity.
struct fold_map {
  int p = 1;  // real ranks
  int e = 0;  // folded pairs (2i, 2i+1), i < e
  constexpr int active() const { return p - e; }
  constexpr bool folded_away(int r) const { return r < 2 * e && r % 2 == 0; }
  constexpr int to_virtual(int r) const { return r < 2 * e ? r / 2 : r - e; }
  constexpr int to_real(int w) const { return w < e ? 2 * w + 1 : w + e; }
  // first real rank virtual rank w stands for; lo(active()) == p
  constexpr int lo(int w) const { return w < e ? 2 * w : w + e; }
};

// No fold: virtual ranks are real ranks (what a kernel is compiled for when
// the fold is known to be the identity).
struct no_fold {
  int p = 1;
  static constexpr int e = 0;
  static constexpr int to_real(int w) { return w; }
  constexpr operator fold_map() const { return {p, 0}; }  // for kernels that take any fold
};

// (rank - root) mod p, for any p. The k-nomial personalized exchange uses it
// alone: it shifts by whole digits, which no XOR of p = 2^k ranks would follow.
struct shift_relabel {
  static constexpr int to_virtual(const layout& l, int rank, int root) {
    return (rank - root + l.p) % l.p;
  }
  static constexpr int to_real(const layout& l, int v, int root) { return (v + root) % l.p; }
};

// XOR with j when p is a power of two, else a shift by j mod p: the pairing of
// a direct exchange, where in step j = 1 .. p - 1 v sends to pair_to(v, j, p)
// and receives from pair_from(v, j, p) (Algorithm 4.10, congestion-free under
// E-cube routing), and the relabelling for a root below.
constexpr int pair_to(int v, int j, int p) {
  return is_pow2(p) ? v ^ j : (v + j) % p;
}
constexpr int pair_from(int v, int j, int p) {
  return is_pow2(p) ? v ^ j : (v - j + p) % p;
}

// Relabelling for an arbitrary root: XOR with the root when p is a power of two
// (the seeds' idempotent mapping), (rank - root) mod p otherwise. On the mesh
// and the ring, the shift is taken per coordinate (a torus shift), so that
// every row of the virtual mesh is a row of the real one.
struct xor_or_shift_relabel {
  static constexpr fold_map folding(const layout& l) { return {l.p, 0}; }
  static constexpr int to_virtual(const layout& l, int rank, int root) {
    return pair_from(rank, root, l.p);
  }
  static constexpr int to_real(const layout& l, int v, int root) { return pair_to(v, root, l.p); }
};
struct torus_relabel {
  static constexpr fold_map folding(const layout& l) { return {l.p, 0}; }
  static constexpr int to_virtual(const layout& l, int rank, int root) {
    int v = 0;
    for (int j = 0; j < l.ndims; ++j) {
      int r = l.dims[j].radix;
      v += ((l.coord(rank, j) - l.coord(root, j) + r) % r) * l.dims[j].stride;
    }
    return v;
  }
  static constexpr int to_real(const layout& l, int v, int root) {
    int rank = 0;
    for (int j = 0; j < l.ndims; ++j) {
      int r = l.dims[j].radix;
      rank += ((l.coord(v, j) + l.coord(root, j)) % r) * l.dims[j].stride;
    }
    return rank;
  }
};
// What the policies that take any p share.
template <class Self>
struct any_p {
  static constexpr int fixed_dims = -1;  // known at run time
  static constexpr bool holds(int p) { return p >= 1; }
  static std::string why_not(int p) { return concat(Self::name(), " needs p >= 1, got ", p); }
};
}  // namespace detail

// One linear array / ring of p ranks; any p.
struct Ring : detail::torus_relabel, detail::any_p<Ring> {
  static constexpr dim_kind kind = dim_kind::linear;
  static std::string name() { return "Ring"; }
  static constexpr layout shape(int p) { return layout::uniform(p, p, 1); }
};

// K-dimensional mesh (wrap-around links available: a torus); sides balanced
// like MPI_Dims_create, so any p. Ranks are row-major: the last side varies
// fastest and is dims[0].
template <int K = 2>
struct Mesh : detail::torus_relabel, detail::any_p<Mesh<K>> {
  static_assert(K >= 1, "Mesh<K> needs K >= 1 dimensions (Mesh<1> is a Ring, Mesh<2> a 2-D mesh)");
  static_assert(K <= 16, "Mesh<K> supports at most 16 dimensions");
  static constexpr dim_kind kind = dim_kind::linear;
  static std::string name() { return "Mesh<" + std::to_string(K) + ">"; }
  static constexpr std::array<int, K> sides(int p) { return detail::dims_create<K>(p); }
  // Rank r's coordinates: coordinate j runs along sides(p)[j], row-major, the
  // last fastest (layout dimension 0 is coordinate K - 1, where its side is
  // more than 1).
  static constexpr std::array<int, K> coords(int p, int r) {
    const auto s = sides(p);
    std::array<int, K> c{};
    for (int j = K - 1; j >= 0; --j) {
      c[j] = r % s[j];
      r /= s[j];
    }
    return c;
  }
  // How far apart two ranks are that differ by one in coordinate j.
  static constexpr int stride(int p, int j) {
    const auto s = sides(p);
    int t = 1;
    for (int i = K - 1; i > j; --i) t *= s[i];
    return t;
  }
  static constexpr layout shape(int p) {
    layout l;
    l.p = p;
    auto s = sides(p);
    for (int j = K - 1; j >= 0; --j) l.push(s[j]);
    return l;
  }
};

// D-dimensional hypercube: p must be 2^D. Hypercube<> (D = -1) takes any p and
// lays the ranks over the smallest hypercube that holds them.
template <int D = -1>
struct Hypercube : detail::xor_or_shift_relabel {
  static_assert(D >= -1,
                "Hypercube<D> needs D >= 0 (exactly 2^D ranks) or D = -1, the default (any number "
                "of ranks): write Hypercube<3> or Hypercube<>");
  static_assert(D <= 30, "Hypercube<D> needs 2^D ranks to fit an int: D <= 30");
  static constexpr dim_kind kind = dim_kind::binary;
  // D >= 0: the number of dimensions is a compile-time constant, and the folds
  // over them compile to the seeds' loops over i = 0 .. D - 1.
  static constexpr int fixed_dims = D;
  static std::string name() {
    return D < 0 ? "Hypercube<>" : "Hypercube<" + std::to_string(D) + ">";
  }
  static constexpr bool holds(int p) { return D < 0 ? p >= 1 : p == (1 << (D < 0 ? 0 : D)); }
  static std::string why_not(int p) {
    return detail::concat(name(), " needs 2^", D, " = ", 1 << (D < 0 ? 0 : D), " ranks, got ", p,
                          " (Hypercube<> takes any number of ranks)");
  }
  static constexpr layout shape(int p) {
    if constexpr (D >= 0)
      return fixed_shape(p, std::make_integer_sequence<int, D>{});
    else
      return layout::uniform(p, 2, detail::ceil_log2(p));
  }
  // D >= 0: layout::uniform's D dimensions written out at compile time, one
  // store each, not a loop (which -O2 does not unroll).
  template <int... J>
  static constexpr layout fixed_shape(int p, std::integer_sequence<int, J...>) {
    layout l;
    l.p = p;
    l.extent = 1 << D;
    l.ndims = D;
    ((l.dims[J] = {2, 1 << J}), ...);
    return l;
  }
  // A p that fills no whole hypercube folds into the largest one it holds.
  static constexpr detail::fold_map folding(const layout& l) {
    if (D >= 0 || l.extent == l.p) return {l.p, 0};
    return {l.p, l.p - static_cast<int>(std::bit_floor(static_cast<unsigned>(l.p)))};
  }
  // p = 2^D: the seeds' XOR, with no test of p
  static constexpr int to_virtual(const layout& l, int rank, int root) {
    if constexpr (D >= 0) return rank ^ root;
    return xor_or_shift_relabel::to_virtual(l, rank, root);
  }
  static constexpr int to_real(const layout& l, int v, int root) {
    if constexpr (D >= 0) return v ^ root;
    return xor_or_shift_relabel::to_real(l, v, root);
  }
};

// K-nomial tree (Tree<2>: binomial): d = ceil(log_K p) dimensions of radix K,
// the last of radix ceil(p / K^(d-1)), any p. The last digit of a rank is
// below that radix, so the tree is the k-nomial tree; the layout is the
// smallest that holds p, and its digit groups are complete wherever p is a
// multiple of K^(d-1) (p = 2 or 3 under Tree<4>, say), where the folds run.
template <int K = 2>
struct Tree : detail::xor_or_shift_relabel, detail::any_p<Tree<K>> {
  static_assert(K >= 2, "Tree<K> needs K >= 2 children per level (Tree<2> is the binomial tree)");
  static_assert(K <= 1024, "Tree<K> supports K <= 1024");
  static constexpr dim_kind kind = dim_kind::knomial;
  static std::string name() { return "Tree<" + std::to_string(K) + ">"; }
  static constexpr layout shape(int p) {
    const int d = detail::ceil_log(p, K);
    layout l = layout::uniform(p, K, d - 1);
    l.push((p + l.extent - 1) / l.extent);
    return l;
  }
};

namespace detail {
// The naive baselines' topology (algorithm::naive): one k-nomial dimension of
// radix p, so that the root's children are all the other ranks, p - 1 edges
// out of one node. Any p; a root becomes virtual rank 0 by the shift.
struct Flat : shift_relabel, any_p<Flat> {
  static constexpr dim_kind kind = dim_kind::knomial;
  static std::string name() { return "flat"; }
  static constexpr layout shape(int p) { return layout::uniform(p, p, 1); }
  static constexpr fold_map folding(const layout& l) { return {l.p, 0}; }
};
}  // namespace detail

// A Topology policy as the collectives use it.
template <class T>
concept Topology = requires(int p, const layout& l, int r) {
  { T::kind } -> std::convertible_to<dim_kind>;
  { T::fixed_dims } -> std::convertible_to<int>;
  { T::name() } -> std::convertible_to<std::string>;
  { T::holds(p) } -> std::convertible_to<bool>;
  { T::why_not(p) } -> std::convertible_to<std::string>;
  { T::shape(p) } -> std::same_as<layout>;
  { T::to_virtual(l, r, r) } -> std::convertible_to<int>;
  { T::to_real(l, r, r) } -> std::convertible_to<int>;
  { T::folding(l) } -> std::same_as<detail::fold_map>;
};
static_assert(Topology<detail::Flat>);

// The k-nomial tree a topology runs algorithm::tree on (all_gather,
// all_reduce, reduce_scatter): its own for Tree<K>, the binomial tree (a
// hypercube's) otherwise.
template <class Topo>
struct tree_of {
  using type = Hypercube<>;
};
template <int K>
struct tree_of<Tree<K>> {
  using type = Tree<K>;
};

namespace detail {
// The policy a topology's kernels are compiled for. A kernel takes the layout
// at run time and asks the policy only what is fixed at compile time: the
// kind, the fixed dimensions, the relabelling for a root and the fold. Every
// Mesh<K> answers as the Ring does (linear dimensions, the torus shift, no
// fold) and every Tree<K> as Tree<2> (k-nomial digits, XOR or shift, no fold),
// and tree_layout takes a Tree's own layout, so their kernels are compiled
// once: the Ring's for the meshes, Tree<2>'s for the trees.
template <class Topo>
struct kernel_policy {
  using type = Topo;
};
template <int K>
struct kernel_policy<Mesh<K>> {
  static_assert(Mesh<K>::kind == Ring::kind && Mesh<K>::fixed_dims == Ring::fixed_dims &&
                    std::is_base_of_v<torus_relabel, Mesh<K>>,
                "Mesh<K> runs the Ring's kernels, so it must answer them as the Ring does");
  using type = Ring;
};
template <int K>
struct kernel_policy<Tree<K>> {
  static_assert(Tree<K>::kind == Tree<2>::kind && Tree<K>::fixed_dims == Tree<2>::fixed_dims &&
                    std::is_base_of_v<xor_or_shift_relabel, Tree<K>>,
                "Tree<K> runs Tree<2>'s kernels, so it must answer them as Tree<2> does");
  using type = Tree<2>;
};
template <class Topo>
using kernel_topology = typename kernel_policy<Topo>::type;

// The number of dimensions of Topo's layout l: a constant where the policy
// fixes it (Hypercube<D>), so that loops over them unroll.
template <class Topo>
constexpr int ndims(const layout& l) {
  if constexpr (Topo::fixed_dims >= 0)
    return Topo::fixed_dims;
  else
    return l.ndims;
}

// f(j) for every dimension j of Topo's layout l, in increasing order (or
// decreasing, Order = descending): the loop over the dimensions of the folds
// and the tree sweep. Where the policy fixes the number of dimensions (Hypercube<D>)
// the loop is unrolled at compile time and j is a std::integral_constant, so
// a step written as a generic lambda (`[&](auto j)`) is compiled once per
// dimension with j a constant, whether or not the compiler inlines it: the
// seed's loop over i = 0 .. D - 1, at -O2 as at -O3 (the unrolling is always
// inlined: -O2 kept it out of line in all_reduce's folds). Elsewhere j is an
// int.
enum class dim_order { ascending, descending };
template <class Topo, dim_order Order = dim_order::ascending, class F>
constexpr void for_each_dim(const layout& l, F&& f) {
  if constexpr (Topo::fixed_dims >= 0) {
    constexpr int d = Topo::fixed_dims;
    [&]<int... J>(std::integer_sequence<int, J...>) __attribute__((always_inline)) {
      if constexpr (Order == dim_order::ascending)
        (f(std::integral_constant<int, J>{}), ...);
      else
        (f(std::integral_constant<int, d - 1 - J>{}), ...);
    }
    (std::make_integer_sequence<int, d>{});
  } else if constexpr (Order == dim_order::ascending) {
    for (int j = 0; j < l.ndims; ++j) f(j);
  } else {
    for (int j = l.ndims - 1; j >= 0; --j) f(j);
  }
}

// Whether every virtual rank of Topo's layouts below the extent exists
// (extent == p): the Ring's and the meshes' always, Hypercube<D>'s, whose p is
// 2^D; not Hypercube<>'s or a tree's, whose layouts reach past p. Where this
// holds a fold's peers are known to exist without a test (rank_exists).
template <class Topo>
inline constexpr bool no_absent_ranks = false;
template <>
inline constexpr bool no_absent_ranks<Ring> = true;
template <int K>
inline constexpr bool no_absent_ranks<Mesh<K>> = true;
template <int D>
inline constexpr bool no_absent_ranks<Hypercube<D>> = D >= 0;

// Whether virtual rank v of Topo's layout l exists.
template <class Topo>
constexpr bool rank_exists(const layout& l, int v) {
  if constexpr (no_absent_ranks<Topo>)
    return true;
  else
    return l.exists(v);
}

// A k-nomial layout with absent ranks has incomplete digit groups: only the
// tree (gather / reduce to rank 0, then broadcast / scatter) applies there, no
// fold. Other kinds never have them.
template <Topology Topo>
constexpr bool tree_only(const layout& l) {
  return Topo::kind == dim_kind::knomial && l.extent != l.p && Topo::folding(l).e == 0;
}

// Whether the relabelling for `root` is the XOR of the seeds on a topology
// whose dimensions are all binary. Then every partial of a reduction covers an
// aligned block of 2^j REAL ranks, and the partner's block is the lower one
// exactly when bit j of the root is set: rank order survives the relabelling.
template <Topology Topo>
constexpr bool xor_on_binary_dims(const layout& l) {
  if constexpr (!std::is_base_of_v<xor_or_shift_relabel, Topo>) {
    return false;
  } else {
    if (!is_pow2(l.p)) return false;
    for (int j = 0; j < l.ndims; ++j)
      if (l.dims[j].radix != 2) return false;
    return true;
  }
}

}  // namespace detail

}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE
