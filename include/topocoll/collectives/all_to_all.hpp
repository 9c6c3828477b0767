#pragma once
// topocoll::all_to_all: all-to-all personalized communication (total exchange).
//
//   topocoll::all_to_all<topocoll::Hypercube<>>(comm, std::span<const T>(in), std::span<T>(out));
//
// in and out hold p blocks of m elements: block j of in goes to rank j, and
// block i of out came from rank i (the transpose of a row-distributed matrix).
//   algorithm::store_and_forward: a fold over the topology's dimensions with one
//     consolidated message per step and a local rearrangement per dimension:
//       Ring       (t_s + t_w m p / 2)(p - 1)                 Figure 4.18, Eq. 4.7
//       Mesh<2>    (2 t_s + t_w m p)(sqrt(p) - 1)             Figure 4.19, Eq. 4.8
//       Hypercube  (t_s + t_w m p / 2) log p                  Figure 4.20, Eq. 4.9
//       Tree<K>    (K - 1) log_K p steps of m p / K words (radix-K hypercube)
//   algorithm::pairwise: (t_s + t_w m)(p - 1), partner rank XOR j (p = 2^d,
//     Algorithm 4.10, Eq. 4.10) or (rank + j) mod p / (rank - j) mod p. On a
//     transport with non-blocking sends (mpi::Comm, loopback::Comm) every send
//     is posted at once and the blocks are received in that order: about
//     t_s + (p - 1)(t_s / 4 + t_w m).
//   algorithm::bidirectional (Ring and Mesh<K>): store-and-forward with
//     every packet going the shorter way round its ring, half of them each way
//     (Section 4.5.1): about (p - 1) t_s + t_w m p^2 / 4 on a Ring, half the
//     t_w term of Eq. 4.7, with one message at a time.
//   algorithm::naive (forced; any topology): the lecture's naive exchange,
//     every rank sending to ranks 0, 1, ..., p - 1 in that order (its own block
//     copied), so all start at rank 0, which takes the p - 1 first messages one
//     after another where a rank receives one at a time (the lecture counts p
//     such rounds, O(t_s p^2 + t_w m p^2); simulated, single-ported, the ranks
//     run out of step and take (3p - 5)(t_s + t_w m), doc/model.md).
//   algorithm::automatic (default): the cheapest of the first three under
//     options::cost (t_s + t_w * bytes per message, summed over the schedule;
//     the concurrent form for pairwise where the sends are non-blocking).
// See doc/all_to_all.md.

#include <cstddef>
#include "../kernels/personalized.hpp"
#include "../plan/personalized.hpp"
#include "../version.hpp"
#include "arguments.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE {

namespace detail {

// The algorithm an exchange of blocks of m elements of T on C runs over l:
// the forced one, or automatic's; chosen at every call, or once at init
// (persistent.hpp).
template <Topology Topo, Transport C, class T>
algorithm all_to_all_choice(const layout& l, std::size_t m, const options& opt) {
  return plan::personalized::choose_for<Topo, C, T>(l, m, opt);
}

// all_to_all's checks (stage::check), the whole call (stage::run), or the call
// without its checks (stage::started), at a persistent request's start with the
// layout and the algorithm fixed at init (planned_start).
template <Topology Topo, Transport C, class In, class Out, collective_stage Stage>
[[gnu::always_inline]] inline void checked_all_to_all(C& c, In&& input, Out&& output,
                                                      const options& opt, Stage s) {
  static_assert(block_element<buffer_value_t<Out>>,
                "all_to_all keeps scratch blocks of the element type: it must be default "
                "constructible and copy assignable");
  const auto [call, in, out] = open_call<Topo>("all_to_all", c, input, output);
  const collective_scope scope(c, call.info(in, opt.algo), s);
  if (scope.checking()) {
    call.cost(opt.cost);
    const auto P = static_cast<std::size_t>(call.p());
    if (in.size() % P != 0)
      call.reject("in holds ", in.size(), " elements, not a multiple of p = ", P,
                  " (p blocks of m elements)");
    call.size("out (in.size())", out.size(), in.size());
    check_algorithm<Topo>(call, opt.algo);
    call.in_place(in, out, 0);
  }
  if (!scope.proceed() || in.empty()) return;  // no blocks: nothing to choose or send
  const layout& l = laid_out<Topo>(s, call.p());
  const std::size_t m = in.size() / personalized::to_size(call.p());
  using T = buffer_value_t<Out>;
  const algorithm a = call.template chosen<Topo>(
      s, l, m, sizeof(T), opt,
      [](const layout& at, std::size_t n, const options& o)
          __attribute__((always_inline)) { return all_to_all_choice<Topo, C, T>(at, n, o); });
  personalized::all_to_all<kernel_topology<Topo>>(c, l, in, out, a, tag::all_to_all);
}

}  // namespace detail

template <Topology Topo, Transport C, class In, class Out>
requires BufferPair<In, Out>
void all_to_all(C& c, In&& input, Out&& output, const options& opt = detail::default_options) {
  detail::checked_all_to_all<Topo>(c, input, output, opt, detail::stage::run);
}

}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE
