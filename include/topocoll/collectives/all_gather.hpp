#pragma once
// topocoll::all_gather: all-to-all broadcast.
//
//   topocoll::all_gather<topocoll::Hypercube<>>(comm, std::span<const T>(in), std::span<T>(out));
//
// in: m elements on every rank; out: p*m elements, block r from rank r.
//   Ring       Algorithm 4.4: p - 1 steps, (t_s + t_w m)(p - 1)          (Eq. 4.2)
//   Mesh<K>    Algorithm 4.6 on K dimensions of any sides: one ring per
//              dimension with the consolidated message, sum_j (s_j - 1) steps;
//              2 t_s (sqrt p - 1) + t_w m (p - 1) on a square mesh       (Eq. 4.3)
//   Hypercube  Algorithm 4.7: messages m, 2m, 4m, ...; t_s log p + t_w m (p - 1)
//              (Eq. 4.4); a p that is no power of two folds into 2^floor(log p)
//              ranks first (one message of m before, one of p m after).
//   Tree<K>    p = K^d: recursive multiplying, per digit a direct exchange with
//              the K - 1 other digits (K - 1 messages of K^j m at digit j);
//              otherwise gather to rank 0 along the k-nomial tree, broadcast.
// Blocks are received straight into `out`: no copy but the own block's.
// options::algo: automatic, or algorithm::tree (the k-nomial tree on any
// topology: binomial unless Topo is Tree<K>).

#include <algorithm>
#include <span>
#include <string_view>
#include <vector>

#include "../core/concepts.hpp"
#include "../core/options.hpp"
#include "../core/tags.hpp"
#include "../kernels/all_to_all_bcast.hpp"
#include "../topology/topology.hpp"

namespace topocoll {

template <Topology Topo, Transport C, InputBuffer In, OutputBuffer Out>
requires std::same_as<buffer_value_t<In>, buffer_value_t<Out>>
void all_gather(C& c, In&& input, Out&& output, const options& opt = {}) {
  using T = buffer_value_t<Out>;
  namespace a2a = detail::a2a;
  constexpr std::string_view name = "all_gather";
  constexpr int tag = detail::tag::all_gather;
  const std::span<const T> in = detail::in_span(input);
  const std::span<T> out = detail::out_span(output);
  const int rank = c.rank();
  const int p = c.size();
  const layout l = detail::shape_or_throw<Topo>(name, rank, p);
  const std::size_t m = in.size();
  detail::check_size(name, rank, p, "out (p * in.size())", out.size(),
                     static_cast<std::size_t>(p) * m);
  a2a::check_algorithm(name, rank, p, opt.algo, {algorithm::tree}, Topo::name());
  if (m == 0) return;
  auto block = [&](int r) { return out.subspan(static_cast<std::size_t>(r) * m, m); };
  a2a::copy_to(in, block(rank));
  if (p == 1) return;

  // Tree<K> with absent ranks (p not a power of K) gathers and broadcasts.
  if (opt.algo == algorithm::tree || l.extent != p && Topo::kind == dim_kind::knomial) {
    a2a::tree_all_gather(c, tag, a2a::tree_shape<Topo>(p), out, m);
  } else {
    const a2a::fold_map fm = a2a::make_fold<Topo>(l);
    if (fm.folded_away(rank)) {  // hand the block to the partner, get everything back
      c.send(rank + 1, detail::tag::fold, in);
      c.recv(rank + 1, detail::tag::fold, out);
      return;
    }
    if (rank < 2 * fm.e) c.recv(rank - 1, detail::tag::fold, block(rank - 1));
    const layout vl = fm.e ? Topo::shape(fm.active()) : l;
    std::vector<std::size_t> off(static_cast<std::size_t>(fm.active()) + 1);
    for (int w = 0; w <= fm.active(); ++w) off[w] = static_cast<std::size_t>(fm.lo(w)) * m;
    a2a::all_gather_natural<Topo>(c, tag, vl, fm.to_virtual(rank), fm, out, off.data());
    if (rank < 2 * fm.e) c.send(rank - 1, detail::tag::fold, a2a::cspan(out));
  }
}

}  // namespace topocoll
