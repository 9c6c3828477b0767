#pragma once
// topocoll::gather: all-to-one gather (the dual of scatter).
//
//   topocoll::gather<topocoll::Ring>(comm, std::span<const T>(in), std::span<T>(out), root);
//
// in: m elements on every rank; out: p*m elements at the root, block r from
// rank r (out may be empty, and is untouched, elsewhere).
//   algorithm::tree (default): the reduction tree of Algorithm 4.3 walked with
//     blocks instead of partial sums; each rank forwards its whole subtree as
//     ONE contiguous message, so message sizes double towards the root:
//     t_s log p + t_w m (p - 1) on a hypercube. The root reorders its p blocks
//     once at the end when root != 0.
//   algorithm::pipelined (Ring only): every rank sends its block towards the
//     root, nearest first, relaying those beyond it: (p - 1)(t_s + t_w m).
// Strings (std::basic_string of a trivially copyable character) travel the
// tree encoded: each block is encoded once on its rank and decoded once at
// the root.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <span>
#include <string>
#include <vector>

#include "../core/concepts.hpp"
#include "../core/errors.hpp"
#include "../core/flat_string.hpp"
#include "../core/options.hpp"
#include "../core/tags.hpp"
#include "../core/workspace.hpp"
#include "../kernels/one_to_all.hpp"
#include "../topology/topology.hpp"

namespace topocoll {

namespace detail {

// gather for strings: every rank encodes its block once (core/flat_string.hpp)
// and the tree moves bytes; the root decodes each block once, straight into
// place. Forwarding the strings themselves would decode and re-encode every
// block at every hop. The sizes vary, so every edge carries two messages: the
// subtree's byte count, then its encodings, concatenated in virtual order.
// Every piece (the own encoding, each child's) lands in its own work buffer
// (core/workspace.hpp: no allocation, zero-fill or fresh page per call); a
// rank with children joins its pieces once to send them on, the root decodes
// them where they are and copies its own block, which it never encodes.
template <Topology Topo, Transport C, class T>
void gather_encoded(C& c, const layout& l, std::span<const T> in, std::span<T> out, int root) {
  namespace ota = one_to_all;
  using u64 = std::uint64_t;
  constexpr int tag = detail::tag::gather;
  const int rank = c.rank();
  const int p = c.size();
  const int v = Topo::to_virtual(l, rank, root);
  struct piece {
    int lo;  // first virtual rank whose encoding it holds
    const std::byte* data;
    std::size_t len;
  };
  std::deque<scratch<std::byte>> store;  // deque: emplace_back never moves a scratch
  std::vector<piece> pieces;
  if (rank != root) {  // the root copies its own block at the end, not encoded
    const std::size_t own = flat_size(in);
    flat_encode(in, store.emplace_back(own).data());
    pieces.push_back({v, store.back().data(), own});
  }
  auto by_virtual_rank = [&] {
    std::sort(pieces.begin(), pieces.end(),
              [](const piece& a, const piece& b) { return a.lo < b.lo; });
  };
  ota::for_each_link<Topo, ota::sweep::up>(l, v, [&](const ota::link& e) {
    const int peer = Topo::to_real(l, e.peer, root);
    if (e.to_child) {
      u64 n = 0;
      c.recv(peer, tag, std::span<u64>(&n, 1));
      scratch<std::byte>& b = store.emplace_back(static_cast<std::size_t>(n));
      c.recv(peer, tag, b.span());
      pieces.push_back({e.lo, b.data(), b.size()});
    } else {
      by_virtual_rank();
      u64 n = 0;
      for (const piece& x : pieces) n += x.len;
      c.send(peer, tag, std::span<const u64>(&n, 1));
      if (pieces.size() == 1) {  // a leaf: its own encoding, as it is
        c.send(peer, tag, std::span<const std::byte>(pieces[0].data, pieces[0].len));
      } else {
        scratch<std::byte> joined(static_cast<std::size_t>(n));
        std::size_t at = 0;
        for (const piece& x : pieces) {
          if (x.len) std::memcpy(joined.data() + at, x.data, x.len);
          at += x.len;
        }
        c.send(peer, tag, std::span<const std::byte>(joined.span()));
      }
    }
  });
  if (rank != root) return;
  by_virtual_rank();
  const std::size_t m = in.size();
  std::size_t k = 0, at = 0;  // piece k, byte at within it
  for (int u = 0; u < p; ++u) {
    const int src = Topo::to_real(l, u, root);
    if (u == v) {
      std::copy(in.begin(), in.end(), out.begin() + static_cast<std::ptrdiff_t>(src) * m);
      continue;
    }
    while (k < pieces.size() && at == pieces[k].len) ++k, at = 0;
    const std::byte* enc = k < pieces.size() ? pieces[k].data + at : nullptr;
    const std::size_t len = enc ? flat_extent<T>(enc, pieces[k].len - at) : 0;
    const std::span<T> block = out.subspan(static_cast<std::size_t>(src) * m, m);
    if (len == 0 || flat_count(enc, len) != m || !flat_decode(enc, len, block))
      throw message_error(concat("topocoll::gather on rank ", rank, " of ", p, ": rank ", src,
                                 " sent ", len ? std::to_string(flat_count(enc, len)) : "no",
                                 " strings, every block holds in.size() = ", m));
    at += len;
  }
}

}  // namespace detail

template <Topology Topo, Transport C, InputBuffer In, OutputBuffer Out>
requires std::same_as<buffer_value_t<In>, buffer_value_t<Out>>
void gather(C& c, In&& input, Out&& output, int root, const options& opt = {}) {
  using T = buffer_value_t<Out>;
  namespace ota = detail::one_to_all;
  constexpr std::string_view op = "gather";
  const std::span<const T> in = detail::in_span(input);
  const std::span<T> out = detail::out_span(output);
  const int rank = c.rank();
  const int p = c.size();
  const layout l = detail::shape_or_throw<Topo>(op, rank, p);
  detail::check_root(op, rank, p, root);
  const std::size_t m = in.size();
  const std::size_t pm = static_cast<std::size_t>(p) * m;
  detail::check_root_buffer(op, rank, p, root, "out", "p * in.size()", out.size(), pm);
  ota::check_algorithm<Topo>(op, rank, p, opt.algo);
  if (m == 0) return;
  if (p == 1) {
    std::copy(in.begin(), in.end(), out.begin());
    return;
  }
  if (opt.algo == algorithm::pipelined)
    return ota::ring_gather(c, in, out, root, detail::tag::gather);
  if constexpr (detail::is_flat_string_v<T>)
    return detail::gather_encoded<Topo>(c, l, in, out, root);

  const int v = Topo::to_virtual(l, rank, root);
  // The blocks of the virtual ranks [v, end) this rank collects, in virtual
  // order. Root 0 relabels nothing, so its out is already that buffer.
  const int end = ota::subtree_end<Topo>(l, v);
  const std::size_t n = static_cast<std::size_t>(end - v) * m;
  const bool direct = rank == root && root == 0;
  detail::scratch<T> store(!direct && end - v > 1 ? n : 0);
  std::span<const T> mine = in;  // a leaf sends its input as it is
  std::span<T> sub;
  if (direct) {
    sub = out;
    std::copy(in.begin(), in.end(), sub.begin());
    mine = sub;
  } else if (end - v > 1) {
    sub = store.span();
    std::copy(in.begin(), in.end(), sub.begin());
    mine = sub;
  }
  ota::for_each_link<Topo, ota::sweep::up>(l, v, [&](const ota::link& e) {
    const int peer = Topo::to_real(l, e.peer, root);
    if (e.to_child) {
      c.recv(peer, detail::tag::gather,
             sub.subspan(static_cast<std::size_t>(e.lo - v) * m,
                         static_cast<std::size_t>(e.hi - e.lo) * m));
    } else {
      c.send(peer, detail::tag::gather, mine);
    }
  });
  if (rank == root && root != 0) {  // virtual order -> rank order, once
    for (int u = 0; u < p; ++u) {
      auto from = store.data() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(u) * m);
      auto to = static_cast<std::size_t>(Topo::to_real(l, u, root)) * m;
      std::move(from, from + static_cast<std::ptrdiff_t>(m),
                out.begin() + static_cast<std::ptrdiff_t>(to));
    }
  }
}

}  // namespace topocoll
