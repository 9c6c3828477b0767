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
// On a Ring, algorithm::pipelined (chosen by automatic when the cost model
// says so: large m) streams r segments around the ring, ICS 632's "faster
// broadcast": (p - 2 + r)(t_s + t_w m / r), r = sqrt(m (p - 2) t_w / t_s).
// Strings (std::basic_string of a trivially copyable character) are encoded
// once at the root and broadcast as bytes, then decoded once on every rank;
// a few long strings go from the root's strings straight into the others',
// one broadcast each, after their lengths.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <type_traits>

#include "../core/concepts.hpp"
#include "../core/errors.hpp"
#include "../core/flat_string.hpp"
#include "../core/nonblocking.hpp"
#include "../core/options.hpp"
#include "../core/tags.hpp"
#include "../core/workspace.hpp"
#include "../kernels/one_to_all.hpp"
#include "../topology/topology.hpp"

namespace topocoll {

template <Topology Topo, Transport C, OutputBuffer Buf>
void broadcast(C& c, Buf&& buffer, int root, const options& opt = {}) {
  using T = buffer_value_t<Buf>;
  namespace ota = detail::one_to_all;
  constexpr std::string_view op = "broadcast";
  const std::span<T> buf = detail::out_span(buffer);
  const int rank = c.rank();
  const int p = c.size();
  const layout l = detail::shape_or_throw<Topo>(op, rank, p);
  detail::check_root(op, rank, p, root);
  ota::check_algorithm<Topo>(op, rank, p, opt.algo);
  if (p == 1 || buf.empty()) return;
  if constexpr (detail::is_flat_string_v<T>) {
    // Strings are encoded once at the root (core/flat_string.hpp) and their
    // bytes go through the same tree; every rank decodes once. Passing the
    // strings themselves would decode and re-encode them at every hop. The
    // receivers do not know the encoding's size: the first broadcast is a
    // fixed `head` bytes holding that size and the start of the encoding
    // (the count and the lengths come first), so a short message needs one
    // pass through the tree, a long one two.
    // Few long strings skip the encoding when it does not fit in the head:
    // once every rank has the lengths, each string's characters are broadcast
    // from the root's string straight into the others' strings, with no copy
    // on either side. Each string past the first costs one more pass through
    // the tree, so the others must bring 32 KiB of characters each (every
    // length must also fit in the head). Measured, np = 4, A/B against the
    // encoded path, one string of 64 KiB: 0.58-0.71x the time of Boost.MPI's
    // broadcast against 0.85-0.99x (256 KiB: 0.39-0.55x against 0.83-0.94x).
    using u64 = std::uint64_t;
    using Ch = typename T::value_type;
    constexpr std::size_t head = 2048;  // below Open MPI shared memory's 4 KiB eager limit
    constexpr std::size_t head_lengths = head / sizeof(u64) - 2;  // after [size][count]
    constexpr std::size_t direct_bytes = 32768;
    // Every rank takes this decision from the head alone.
    auto goes_direct = [](u64 count, u64 size) {
      return sizeof(u64) + size > head && count >= 1 && count <= head_lengths &&
             size - sizeof(u64) * (1 + count) >= (count - 1) * direct_bytes;
    };
    auto mismatch = [&](u64 count, u64 size) {
      return message_error(detail::concat(
          "topocoll::broadcast on rank ", rank, " of ", p, ": root ", root, " broadcast ", count,
          " strings (", size, " bytes encoded), this rank's buffer holds ", buf.size()));
    };
    u64 n = rank == root ? detail::flat_size(std::span<const T>(buf)) : 0;
    detail::scratch<std::byte> first(head);
    std::optional<detail::scratch<std::byte>> whole;
    std::byte* enc = first.data() + sizeof(u64);  // where the encoding starts
    if (rank == root) {
      const u64 count = buf.size();
      if (goes_direct(count, n)) {  // the head holds [size][count][lengths] and zeros
        std::memcpy(first.data(), &n, sizeof n);
        std::memcpy(enc, &count, sizeof count);
        for (std::size_t i = 0; i < buf.size(); ++i) {
          const u64 len = buf[i].size();
          std::memcpy(enc + sizeof(u64) * (1 + i), &len, sizeof len);
        }
        std::memset(enc + sizeof(u64) * (1 + count), 0, head - sizeof(u64) * (2 + count));
      } else {
        if (sizeof(u64) + n > head) enc = whole.emplace(sizeof(u64) + n).data() + sizeof(u64);
        detail::flat_encode(std::span<const T>(buf), enc);
        std::memcpy(enc - sizeof(u64), &n, sizeof n);
        if (whole)
          std::memcpy(first.data(), whole->data(), head);
        else  // no uninitialised bytes on the wire
          std::memset(enc + n, 0, head - sizeof(u64) - static_cast<std::size_t>(n));
      }
    }
    broadcast<Topo>(c, first.span(), root, opt);
    std::memcpy(&n, first.data(), sizeof n);
    const u64 count = detail::flat_count(enc, head - sizeof(u64));
    if (goes_direct(count, n)) {
      auto length = [&](std::size_t i) {
        u64 len;
        std::memcpy(&len, enc + sizeof(u64) * (1 + i), sizeof len);
        return static_cast<std::size_t>(len);
      };
      // A rank whose buffer holds another count still passes every string on
      // to its subtree, through a work buffer, before it throws.
      const bool fits = rank == root || count == buf.size();
      std::optional<detail::scratch<Ch>> pass;
      if (fits && rank != root) {
        for (std::size_t i = 0; i < count; ++i) buf[i].resize(length(i));
      } else if (!fits) {
        std::size_t longest = 0;
        for (std::size_t i = 0; i < count; ++i) longest = std::max(longest, length(i));
        pass.emplace(longest);
      }
      for (std::size_t i = 0; i < count; ++i) {
        const std::size_t len = length(i);
        if (len == 0) continue;
        broadcast<Topo>(c, fits ? std::span<Ch>(buf[i].data(), len) : pass->span().first(len), root,
                        opt);
      }
      if (!fits) throw mismatch(count, n);
      return;
    }
    if (sizeof(u64) + n > head) {
      if (rank != root) {
        enc = whole.emplace(sizeof(u64) + n).data() + sizeof(u64);
        std::memcpy(whole->data(), first.data(), head);
      }
      broadcast<Topo>(c, whole->span().subspan(head), root, opt);
    }
    if (rank != root && !detail::flat_decode(enc, static_cast<std::size_t>(n), buf))
      throw mismatch(detail::flat_count(enc, static_cast<std::size_t>(n)), n);
    return;
  }
  if constexpr (std::is_same_v<Topo, Ring>) {
    if (opt.algo == algorithm::pipelined ||
        (opt.algo == algorithm::automatic && ota::ring_pipeline_wins<T>(buf.size(), p, opt.cost)))
      return ota::ring_broadcast(c, buf, root, ota::ring_segments<T>(buf.size(), p, opt.cost),
                                 detail::tag::broadcast);
  }

  // The sends to the children run concurrently where the transport allows it.
  detail::send_batch<C, T> sends(c);
  ota::for_each_link<Topo, ota::sweep::down>(
      l, Topo::to_virtual(l, rank, root), [&](const ota::link& e) {
        const int peer = Topo::to_real(l, e.peer, root);
        if (e.to_child)
          sends.send(peer, detail::tag::broadcast, std::span<const T>(buf));
        else
          c.recv(peer, detail::tag::broadcast, buf);
      });
  sends.wait();
}

}  // namespace topocoll
