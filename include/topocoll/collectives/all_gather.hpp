#pragma once
// topocoll::all_gather: all-to-all broadcast.
//
//   topocoll::all_gather<topocoll::Hypercube<>>(comm, std::span<const T>(in), std::span<T>(out));
//
// in: m elements on every rank (it may be out's block `rank` itself,
// MPI_IN_PLACE); out: p*m elements, block r from rank r.
//   Ring       Algorithm 4.4: p - 1 steps, (t_s + t_w m)(p - 1)          (Eq. 4.2)
//   Mesh<K>    Algorithm 4.6 on K dimensions of any sides: one ring per
//              dimension with the consolidated message, sum_j (s_j - 1) steps;
//              2 t_s (sqrt p - 1) + t_w m (p - 1) on a square mesh       (Eq. 4.3)
//   Hypercube  Algorithm 4.7: messages m, 2m, 4m, ...; t_s log p + t_w m (p - 1)
//              (Eq. 4.4); a p that is no power of two folds into 2^floor(log p)
//              ranks first (one message of m before, one of p m after).
//   Tree<K>    p = r K^j, r <= K: recursive multiplying, per digit a direct
//              exchange with the other digits (K - 1 messages of K^j m at digit
//              j, r - 1 at the last); otherwise gather to rank 0 along the
//              k-nomial tree, broadcast.
// Blocks are received straight into `out`, and the own block is sent straight
// from `in`: no copy but the own block's into `out`, after its first send.
// Strings (std::basic_string of a trivially copyable character) are encoded
// once on their own rank and decoded once on every other (kernels/strings.hpp).
// options::algo: algorithm::fold (the above), algorithm::tree (gather to rank
// 0 along the k-nomial tree of any topology, binomial unless Topo is Tree<K>,
// then broadcast), algorithm::naive (forced; p one-to-all broadcasts, one per
// rank, each from its source to the p - 1 others in turn, Section 4.2's
// baseline: (p - 1)(t_s + t_w m) per broadcast), or automatic: the one of
// fold and tree the cost model prices lower.

#include <cstddef>
#include "../kernels/all_to_all_broadcast.hpp"
#include "../kernels/strings.hpp"
#include "../plan/all_to_all_broadcast.hpp"
#include "../version.hpp"
#include "arguments.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE {

namespace detail {

// The algorithm an all_gather of blocks of m elements of T runs over l: the
// forced one, or automatic's; chosen at every call, or once at init
// (persistent.hpp). Strings stay automatic: their blocks differ in length.
template <Topology Topo, class T>
algorithm all_gather_choice(const layout& l, std::size_t m, const options& opt) {
  if constexpr (is_flat_string_v<T>)
    return opt.algo;
  else
    return plan::all_to_all_broadcast::choose_all_gather<Topo>(l, m * sizeof(T), opt);
}

// all_gather's checks (stage::check), the whole call (stage::run), or the call
// without its checks (stage::started), at a persistent request's start with the
// layout and the algorithm fixed at init (planned_start).
template <Topology Topo, Transport C, class In, class Out, collective_stage Stage>
[[gnu::always_inline]] inline void checked_all_gather(C& c, In&& input, Out&& output,
                                                      const options& opt, Stage s) {
  const auto [call, in, out] = open_call<Topo>("all_gather", c, input, output);
  const collective_scope scope(c, call.info(in, opt.algo), s);
  const std::size_t m = in.size(), mine = static_cast<std::size_t>(call.rank()) * m;
  if (scope.checking()) {
    call.cost(opt.cost);
    call.size("out (p * in.size())", out.size(), static_cast<std::size_t>(call.p()) * m);
    check_algorithm<Topo>(call, opt.algo);
    call.in_place(in, out, mine);
  }
  if (!scope.proceed()) return;
  if (m == 0) return;
  if (call.p() == 1) return copy_to(in, out.subspan(mine, m));
  const layout& l = laid_out<Topo>(s, call.p());
  if constexpr (is_flat_string_v<buffer_value_t<Out>>) {
    copy_to(in, out.subspan(mine, m));
    strings::all_gather<kernel_topology<Topo>>(c, l, in, out, opt.algo, tag::all_gather);
  } else {
    all_to_all_broadcast::all_gather<kernel_topology<Topo>>(
        c, l, in, out, all_to_all_broadcast::equal_blocks{m},
        call.template chosen<Topo>(
            s, l, m, sizeof(buffer_value_t<Out>), opt,
            [](const layout& at, std::size_t n, const options& o) __attribute__((always_inline)) {
              return all_gather_choice<Topo, buffer_value_t<Out>>(at, n, o);
            }),
        tag::all_gather);
  }
}

}  // namespace detail

template <Topology Topo, Transport C, class In, class Out>
requires BufferPair<In, Out>
void all_gather(C& c, In&& input, Out&& output, const options& opt = detail::default_options) {
  detail::checked_all_gather<Topo>(c, input, output, opt, detail::stage::run);
}

}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE
