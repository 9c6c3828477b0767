#pragma once
// topocoll::broadcast: one-to-all broadcast, in place.
//
//   topocoll::broadcast<topocoll::Hypercube<>>(comm, std::span<T>(buf), root);
//
// buf holds m elements on every rank; on return every rank holds the root's.
// Algorithm 4.2 on every topology (kernels/one_to_all.hpp): the mask loop on a
// hypercube, recursive halving along each linear array of a ring or mesh, the
// k-nomial tree on Tree<K>. t_s + t_w m per step, ceil(log2 p) steps on a
// hypercube or ring (sum of ceil(log2 s_j) over the sides of a mesh).
// On a Ring or a Mesh<K>, algorithm::pipelined (chosen by automatic when the
// cost model says so: large m) streams r segments along a chain, ICS 632's
// "faster broadcast": (p - 2 + r)(t_s + t_w m / r), r = sqrt(m (p - 2) t_w / t_s)
// round a ring; on a mesh down the root's column, then along every row, one
// dimension after the other (kernels/pipeline.hpp), with r_j from each side s_j.
// algorithm::scatter_all_gather (chosen by automatic where the model prices it
// below both: large m) scatters the message in p pieces and runs the
// all-to-all broadcast of the pieces, "Improving the Speed of Some
// Communication Operations": 2 (t_s log p + t_w m (p - 1) / p) on a hypercube
// (kernels/one_to_all_pieces.hpp).
// algorithm::naive (forced; any topology, never chosen by automatic) is Section
// 4.1's baseline: the root sends the p - 1 messages one after another,
// (p - 1)(t_s + t_w m) where it has one port.
// Strings (std::basic_string of a trivially copyable character) are encoded
// once at the root and broadcast as bytes (kernels/strings.hpp), with the same
// choice made for the bytes.
//
// Broadcasts from several roots (Section 4.2.4):
//
//   topocoll::broadcast<topocoll::Ring>(comm, std::span<T>(buf), std::span<const int>(roots));
//
// buf holds roots.size() blocks of m elements; block i is roots[i]'s, filled
// there before the call, and every rank holds every block after it. roots is
// the same, in the same order, on every rank; a root outside [0, p) or one
// listed twice throws std::invalid_argument on every rank. algorithm::fold
// (automatic on Ring and Mesh<K>) is the all-gather fold in which a rank that
// is no root holds an empty block: round a ring Algorithm 4.4 pipelines the n
// broadcasts in (t_s + t_w m)(p - 1). algorithm::tree runs one tree per
// root. Elsewhere automatic takes the one the cost model prices lower
// (kernels/all_to_all_broadcast.hpp, broadcast_roots). Strings are not taken
// here: their blocks differ in length.

#include <cstddef>
#include <span>

#include "../kernels/all_to_all_broadcast.hpp"
#include "../kernels/one_to_all.hpp"
#include "../kernels/one_to_all_pieces.hpp"
#include "../kernels/strings.hpp"
#include "../plan/all_to_all_broadcast.hpp"
#include "../plan/one_to_all_pieces.hpp"
#include "../version.hpp"
#include "arguments.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE {

namespace detail {

// The algorithm a broadcast of m elements of T from root runs over l: the
// forced one, or automatic's: the pieces, the pipeline or the tree, whichever
// the cost model prices lowest. A blocking call chooses at every call, a
// persistent request once, at init (persistent.hpp). Strings stay automatic:
// their choice is made at every call, by the bytes they hold.
template <Topology Topo, class T>
algorithm broadcast_choice(const layout& l, std::size_t m, int root, const options& opt) {
  if (is_flat_string_v<T>) return opt.algo;
  return plan::one_to_all_pieces::choose<Topo, T>(
      l, m, root, all_to_all_broadcast::rs_messages::one, algorithm::scatter_all_gather, opt);
}

// broadcast's checks (stage::check), the whole call (stage::run), or the call
// without its checks (stage::started), at a persistent request's start with the
// layout and the algorithm fixed at init (planned_start).
template <Topology Topo, Transport C, OutputBuffer Buf, collective_stage Stage>
[[gnu::always_inline]] inline void checked_broadcast(C& c, Buf&& buffer, int root,
                                                     const options& opt, Stage s) {
  const std::span<buffer_value_t<Buf>> buf = out_span(buffer);
  const auto call = open_call<Topo>("broadcast", c);
  const collective_scope scope(c, call.info(buf, opt.algo, root), s);
  if (scope.checking()) {
    call.cost(opt.cost);
    call.root(root);
    check_algorithm<Topo>(call, opt.algo);
  }
  if (!scope.proceed() || call.p() == 1 || buf.empty()) return;
  const layout& l = laid_out<Topo>(s, call.p());
  auto bcast = [&]<class U>(std::span<U> b) __attribute__((always_inline)) {
    const algorithm a = call.template chosen<Topo>(
        s, l, b.size(), sizeof(U), opt,
        [root](const layout& at, std::size_t m, const options& o)
            __attribute__((always_inline)) { return broadcast_choice<Topo, U>(at, m, root, o); },
        root);
    if (a == algorithm::scatter_all_gather)
      one_to_all_pieces::scatter_all_gather<kernel_topology<Topo>>(c, l, b, root);
    else
      one_to_all::broadcast<kernel_topology<Topo>>(c, l, b, root, a, opt.cost);
  };
  if constexpr (is_flat_string_v<buffer_value_t<Buf>>)
    strings::broadcast(call.rank(), call.p(), buf, root, bcast);
  else
    bcast(buf);
}

// ... from several roots.
template <Topology Topo, Transport C, OutputBuffer Buf>
[[gnu::always_inline]] inline void checked_broadcast(C& c, Buf&& buffer, std::span<const int> roots,
                                                     const options& opt, stage s) {
  static_assert(!is_flat_string_v<buffer_value_t<Buf>>,
                "topocoll::broadcast from several roots takes blocks of equal length, not strings");
  const std::span<buffer_value_t<Buf>> buf = out_span(buffer);
  const auto call = open_call<Topo>("broadcast", c);
  const collective_scope scope(c, call.info(buf, opt.algo), s);
  if (scope.checking()) {
    call.cost(opt.cost);
    call.roots(roots, buf.size());
    check_algorithm<Topo>(call, opt.algo, "broadcast from several roots");
  }
  if (!scope.proceed() || call.p() == 1 || buf.empty()) return;
  const std::size_t m = buf.size() / roots.size();
  const layout l = Topo::shape(call.p());
  using T = buffer_value_t<Buf>;
  const algorithm a = call.template chosen<Topo>(
      s, l, m, sizeof(T), opt,
      [n = roots.size()](const layout& at, std::size_t block, const options& o)
          __attribute__((always_inline)) {
            return plan::all_to_all_broadcast::choose_roots<Topo>(at, n, block * sizeof(T), o);
          });
  all_to_all_broadcast::broadcast_roots<kernel_topology<Topo>>(
      c, l, buf, all_to_all_broadcast::roots_call{roots, m}, a, opt.cost);
}

}  // namespace detail

template <Topology Topo, Transport C, OutputBuffer Buf>
void broadcast(C& c, Buf&& buffer, int root, const options& opt = detail::default_options) {
  detail::checked_broadcast<Topo>(c, buffer, root, opt, detail::stage::run);
}

template <Topology Topo, Transport C, OutputBuffer Buf>
void broadcast(C& c, Buf&& buffer, std::span<const int> roots,
               const options& opt = detail::default_options) {
  detail::checked_broadcast<Topo>(c, buffer, roots, opt, detail::stage::run);
}

}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE
