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
// Strings (std::basic_string of a trivially copyable character) are encoded
// once on their own rank (core/flat_string.hpp); the encodings, of any sizes,
// take the same path as bytes, after an all_gather of their sizes; every rank
// decodes each once, straight into `out`.
// options::algo: automatic, or algorithm::tree (the k-nomial tree on any
// topology: binomial unless Topo is Tree<K>).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "../core/concepts.hpp"
#include "../core/errors.hpp"
#include "../core/flat_string.hpp"
#include "../core/options.hpp"
#include "../core/tags.hpp"
#include "../core/workspace.hpp"
#include "../kernels/all_to_all_bcast.hpp"
#include "../topology/topology.hpp"

namespace topocoll {

namespace detail {

// The data movement of all_gather on blocks of any sizes: block r is
// buf[off[r], off[r + 1]) (p + 1 offsets) and holds rank r's data on rank r;
// on exit every rank holds every block.
template <Topology Topo, Transport C, class T>
void all_gather_blocks(C& c, int tag, const layout& l, algorithm algo, std::span<T> buf,
                       const std::size_t* off) {
  namespace a2a = detail::a2a;
  const int rank = c.rank();
  const int p = c.size();
  if (p == 1) return;
  // Tree<K> with absent ranks (p not a power of K) gathers and broadcasts.
  if (algo == algorithm::tree || l.extent != p && Topo::kind == dim_kind::knomial)
    return a2a::tree_all_gather(c, tag, a2a::tree_shape<Topo>(p), buf, off);
  auto block = [&](int r) { return buf.subspan(off[r], off[r + 1] - off[r]); };
  const a2a::fold_map fm = a2a::make_fold<Topo>(l);
  if (fm.folded_away(rank)) {  // hand the block to the partner, get everything back
    c.send(rank + 1, detail::tag::fold, a2a::cspan(block(rank)));
    c.recv(rank + 1, detail::tag::fold, buf);
    return;
  }
  if (rank < 2 * fm.e) c.recv(rank - 1, detail::tag::fold, block(rank - 1));
  const layout vl = fm.e ? Topo::shape(fm.active()) : l;
  const std::size_t* voff = off;  // virtual rank w stands for real ranks lo(w) .. lo(w + 1)
  std::optional<detail::scratch<std::size_t>> folded;
  if (fm.e) {
    folded.emplace(static_cast<std::size_t>(fm.active()) + 1);
    for (int w = 0; w <= fm.active(); ++w) folded->data()[w] = off[fm.lo(w)];
    voff = folded->data();
  }
  a2a::all_gather_natural<Topo>(c, tag, vl, fm.to_virtual(rank), fm, buf, voff);
  if (rank < 2 * fm.e) c.send(rank - 1, detail::tag::fold, a2a::cspan(buf));
}

}  // namespace detail

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
  const auto P = static_cast<std::size_t>(p);
  auto block = [&](int r) { return out.subspan(static_cast<std::size_t>(r) * m, m); };
  a2a::copy_to(in, block(rank));
  if (p == 1) return;

  if constexpr (detail::is_flat_string_v<T>) {
    // Encode the own block once, learn every block's encoded size, move the
    // bytes, decode every other block once into place.
    using u64 = std::uint64_t;
    const u64 mine = detail::flat_size(in);
    detail::scratch<u64> sizes(P);
    all_gather<Topo>(c, std::span<const u64>(&mine, 1), sizes.span(), opt);
    detail::scratch<std::size_t> off(P + 1);
    off.data()[0] = 0;
    for (std::size_t r = 0; r < P; ++r)
      off.data()[r + 1] = off.data()[r] + static_cast<std::size_t>(sizes.data()[r]);
    detail::scratch<std::byte> bytes(off.data()[P]);
    detail::flat_encode(in, bytes.data() + off.data()[rank]);
    detail::all_gather_blocks<Topo>(c, tag, l, opt.algo, bytes.span(), off.data());
    for (int r = 0; r < p; ++r) {
      if (r == rank) continue;
      const std::byte* b = bytes.data() + off.data()[r];
      const std::size_t n = off.data()[r + 1] - off.data()[r];
      if (!detail::flat_decode(b, n, block(r)))
        throw message_error(detail::concat("topocoll::all_gather on rank ", rank, " of ", p,
                                           ": rank ", r, " contributed ", detail::flat_count(b, n),
                                           " strings (", n,
                                           " bytes encoded), this rank contributed ", m));
    }
  } else {
    detail::scratch<std::size_t> off(P + 1);
    for (std::size_t r = 0; r <= P; ++r) off.data()[r] = r * m;
    detail::all_gather_blocks<Topo>(c, tag, l, opt.algo, out, off.data());
  }
}

}  // namespace topocoll
