#pragma once
// Strings (std::basic_string of a trivially copyable character) through the
// collectives: encoded once (core/flat_string.hpp), moved as bytes by the same
// kernels as any other data, decoded once. Passing the strings themselves
// would decode and re-encode them at every hop.
//
//  * broadcast: the receivers do not know the encoding's size, so the first
//    broadcast is a fixed `head` of bytes holding that size and the start of
//    the encoding (count and lengths first): a short message needs one pass
//    through the tree, a long one two. A few long strings skip the encoding:
//    once every rank has their lengths, each string's characters go from the
//    root's string straight into the others' (see doc/one_to_all.md).
//  * gather: every rank encodes its block once; every edge carries the
//    subtree's byte count, then its encodings in virtual order; the root
//    decodes each block once, straight into place.
//  * all_gather: every rank encodes its block once, the encodings (of any
//    sizes, after an all_gather of the sizes) move as bytes, every rank
//    decodes each other block once.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "../core/concepts.hpp"
#include "../core/errors.hpp"
#include "../core/flat_string.hpp"
#include "../core/options.hpp"
#include "../core/workspace.hpp"
#include "../version.hpp"
#include "all_to_all_broadcast.hpp"
#include "one_to_all.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::detail::strings {

using u64 = std::uint64_t;

// ---- broadcast -------------------------------------------------------------

inline constexpr std::size_t head = 2048;  // below Open MPI shared memory's 4 KiB eager limit
inline constexpr std::size_t head_lengths = head / sizeof(u64) - 2;  // after [size][count]
inline constexpr std::size_t direct_bytes = 32768;  // each string past the first, at least

// Whether the strings skip the encoding: it does not fit in the head, every
// length does, and each string past the first brings direct_bytes characters
// (each costs one more pass through the tree). Every rank decides from the
// head alone.
inline bool goes_direct(u64 count, u64 size) {
  return sizeof(u64) + size > head && count >= 1 && count <= head_lengths &&
         size - sizeof(u64) * (1 + count) >= (count - 1) * direct_bytes;
}

inline u64 length_at(const std::byte* enc, std::size_t i) {
  u64 len;
  std::memcpy(&len, enc + sizeof(u64) * (1 + i), sizeof len);
  return len;
}

struct broadcast_call {
  const char* name;
  int root;
  std::size_t buf_size;
  message_error mismatch(int rank, int p, u64 count, u64 size) const {
    return message_error(concat("topocoll::", name, " on rank ", rank, " of ", p, ": root ", root,
                                " broadcast ", count, " strings (", size,
                                " bytes encoded), this rank's buffer holds ", buf_size));
  }
};

// At the root: [size][count][lengths] and zeros when the strings go direct,
// else [size][encoding] (in `whole` when it does not fit the head).
template <class S>
std::byte* fill_head(std::span<const S> buf, u64 n, std::span<std::byte> first,
                     std::optional<scratch<std::byte>>& whole) {
  std::byte* enc = first.data() + sizeof(u64);
  const u64 count = buf.size();
  if (goes_direct(count, n)) {
    std::memcpy(first.data(), &n, sizeof n);
    std::memcpy(enc, &count, sizeof count);
    for (std::size_t i = 0; i < buf.size(); ++i) {
      const u64 len = buf[i].size();
      std::memcpy(enc + sizeof(u64) * (1 + i), &len, sizeof len);
    }
    std::memset(enc + sizeof(u64) * (1 + count), 0, head - sizeof(u64) * (2 + count));
    return enc;
  }
  if (sizeof(u64) + n > head) enc = whole.emplace(sizeof(u64) + n).data() + sizeof(u64);
  flat_encode(buf, enc);
  std::memcpy(enc - sizeof(u64), &n, sizeof n);
  if (whole)
    std::memcpy(first.data(), whole->data(), head);
  else  // no uninitialised bytes on the wire
    std::memset(enc + n, 0, head - sizeof(u64) - static_cast<std::size_t>(n));
  return enc;
}

// The direct path, after the head: each string's characters are broadcast
// into place. A rank whose buffer holds another count still passes every
// string on to its subtree, through a work buffer, before it throws.
template <class S, class Bcast, class Fail>
void broadcast_direct(std::span<S> buf, const std::byte* enc, bool is_root, Bcast&& bcast,
                      Fail&& fail) {
  using Ch = typename S::value_type;
  const auto count = static_cast<std::size_t>(flat_count(enc, head - sizeof(u64)));
  const bool fits = is_root || count == buf.size();
  std::optional<scratch<Ch>> pass;
  std::size_t longest = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const auto len = static_cast<std::size_t>(length_at(enc, i));
    if (fits && !is_root) buf[i].resize(len);
    longest = std::max(longest, len);
  }
  if (!fits) pass.emplace(longest);
  for (std::size_t i = 0; i < count; ++i) {
    const auto len = static_cast<std::size_t>(length_at(enc, i));
    if (len != 0) bcast(fits ? std::span<Ch>(buf[i].data(), len) : pass->span().first(len));
  }
  if (!fits) fail();
}

// bcast(span) broadcasts bytes or characters from the root with the
// collective's algorithm.
template <class S, class Bcast>
void broadcast(int rank, int p, std::span<S> buf, int root, Bcast&& bcast) {
  const broadcast_call call{"broadcast", root, buf.size()};
  u64 n = rank == root ? flat_size(std::span<const S>(buf)) : 0;
  scratch<std::byte> first(head);
  std::optional<scratch<std::byte>> whole;
  std::byte* enc = first.data() + sizeof(u64);  // where the encoding starts
  if (rank == root) enc = fill_head(std::span<const S>(buf), n, first.span(), whole);
  bcast(first.span());
  std::memcpy(&n, first.data(), sizeof n);
  if (goes_direct(flat_count(enc, head - sizeof(u64)), n)) {
    const u64 count = flat_count(enc, head - sizeof(u64));
    return broadcast_direct(buf, enc, rank == root, bcast,
                            [&] { throw call.mismatch(rank, p, count, n); });
  }
  if (sizeof(u64) + n > head) {
    if (rank != root) {
      enc = whole.emplace(sizeof(u64) + n).data() + sizeof(u64);
      std::memcpy(whole->data(), first.data(), head);
    }
    bcast(whole->span().subspan(head));
  }
  if (rank != root && !flat_decode(enc, static_cast<std::size_t>(n), buf))
    throw call.mismatch(rank, p, flat_count(enc, static_cast<std::size_t>(n)), n);
}

// ---- gather ----------------------------------------------------------------

// One rank's or one subtree's encodings, held in a work buffer.
struct piece {
  int lo;  // first virtual rank whose encoding it holds
  const std::byte* data;
  std::size_t len;
};

struct gathered {
  std::deque<scratch<std::byte>> store;  // deque: emplace_back never moves a scratch
  std::vector<piece> pieces;
  std::optional<scratch<std::byte>> joined;
  void add(int lo, std::size_t n) {
    store.emplace_back(n);
    pieces.push_back({lo, store.back().data(), n});
  }
  void sort() {
    std::sort(pieces.begin(), pieces.end(),
              [](const piece& a, const piece& b) { return a.lo < b.lo; });
  }
  // every piece, in virtual order, as one message (a leaf's own, as it is)
  std::span<const std::byte> all() {
    sort();
    if (pieces.size() == 1) return {pieces[0].data, pieces[0].len};
    std::size_t n = 0;
    for (const piece& x : pieces) n += x.len;
    joined.emplace(n);
    std::size_t at = 0;
    for (const piece& x : pieces) {
      if (x.len) std::memcpy(joined->data() + at, x.data, x.len);
      at += x.len;
    }
    return joined->span();
  }
};

// The root decodes every other block where it arrived, in virtual order.
template <Topology Topo, class S>
void decode_gathered(const one_to_all::rooted_tree<Topo>& t, gathered& g, std::span<const S> in,
                     std::span<S> out, int rank) {
  g.sort();
  const std::size_t m = in.size();
  std::size_t k = 0, at = 0;  // piece k, byte at within it
  for (int u = 0; u < t.l.p; ++u) {
    const int src = t.to_real(u);
    const std::span<S> block = out.subspan(static_cast<std::size_t>(src) * m, m);
    if (src == rank) {
      copy_to(in, block);
      continue;
    }
    while (k < g.pieces.size() && at == g.pieces[k].len) ++k, at = 0;
    const std::byte* enc = k < g.pieces.size() ? g.pieces[k].data + at : nullptr;
    const std::size_t len = enc ? flat_extent<S>(enc, g.pieces[k].len - at) : 0;
    if (len == 0 || flat_count(enc, len) != m || !flat_decode(enc, len, block))
      throw message_error(concat("topocoll::gather on rank ", rank, " of ", t.l.p, ": rank ", src,
                                 " sent ", len ? std::to_string(flat_count(enc, len)) : "no",
                                 " strings, every block holds in.size() = ", m));
    at += len;
  }
}

template <Topology Topo, Transport C, class S>
void gather(C& c, const layout& l, std::span<const S> in, std::span<S> out, int root, int tag) {
  const one_to_all::rooted_tree<Topo> t{l, root};
  const int rank = c.rank();
  gathered g;
  if (rank != root) {  // the root copies its own block at the end, not encoded
    g.add(t.to_virtual(rank), flat_size(in));
    flat_encode(in, g.store.back().data());
  }
  std::span<const std::byte> up;
  u64 n = 0;
  one_to_all::gather_sweep(
      c, t,
      [&](int lo, int) {  // a child's byte count, then its encodings
        c.recv(t.to_real(lo), tag, std::span<u64>(&n, 1));
        g.add(lo, static_cast<std::size_t>(n));
        return std::span<std::byte>(g.store.back().span());
      },
      [&](int, int parent) {
        up = g.all();
        n = up.size();
        c.send(parent, tag, std::span<const u64>(&n, 1));
        return up;
      },
      tag);
  if (rank == root) decode_gathered(t, g, in, out, rank);
}

// ---- all_gather ------------------------------------------------------------

// out's block `rank` already holds in.
template <Topology Topo, Transport C, class S>
void all_gather(C& c, const layout& l, std::span<const S> in, std::span<S> out, algorithm algo,
                int tag) {
  const int rank = c.rank();
  const auto P = static_cast<std::size_t>(l.p), m = in.size();
  scratch<u64> sizes(P);
  sizes.data()[rank] = flat_size(in);
  all_to_all_broadcast::all_gather<Topo>(c, l, cspan(sizes.span().subspan(rank, 1)), sizes.span(),
                                         all_to_all_broadcast::equal_blocks{1}, algo, tag);
  scratch<std::size_t> off(P + 1);
  off.data()[0] = 0;
  for (std::size_t r = 0; r < P; ++r)
    off.data()[r + 1] = off.data()[r] + static_cast<std::size_t>(sizes.data()[r]);
  scratch<std::byte> bytes(off.data()[P]);
  const std::span<std::byte> mine =
      bytes.span().subspan(off.data()[rank], off.data()[rank + 1] - off.data()[rank]);
  flat_encode(in, mine.data());
  all_to_all_broadcast::all_gather<Topo>(c, l, cspan(mine), bytes.span(),
                                         static_cast<const std::size_t*>(off.data()), algo, tag);
  for (int r = 0; r < l.p; ++r) {
    const std::byte* b = bytes.data() + off.data()[r];
    const std::size_t n = off.data()[r + 1] - off.data()[r];
    if (r != rank && !flat_decode(b, n, out.subspan(static_cast<std::size_t>(r) * m, m)))
      throw message_error(concat("topocoll::all_gather on rank ", rank, " of ", l.p, ": rank ", r,
                                 " contributed ", flat_count(b, n), " strings (", n,
                                 " bytes encoded), this rank contributed ", m));
  }
}

}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::detail::strings
